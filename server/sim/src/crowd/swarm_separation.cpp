// The separation phase of the swarm step (see Swarm::step): per agent, a gather over the
// neighbours within R found through the spatial hash, giving
//   - separation: the mean over neighbours closer than R of away_unit * (1 - d / R) (SPEC);
//   - contact: for discs that overlap, the sum of away_unit * (2r - d) / 2, i.e. each of a pair
//     removes half the overlap. The mean alone dilutes the push between two overlapping agents
//     by the neighbour count (in a cluster of 30 they part at 2 * stiffness / 30 per tick and
//     stay stacked for seconds); the contact term is what keeps discs apart;
//   - the free path: how far the agent may move along its path before its disc would touch a
//     neighbour ahead (free_path()), so agents queue behind the one in front instead of stepping
//     into it and being pushed back the next tick (the period-2 jitter of a pressed crowd, which
//     never loses its kinetic energy);
//   - coincident agents (a stack on one point), which burst out along a pattern
//     (burst_pattern.hpp) that grows by max_speed * dt a tick until the stack is clear.
// Output per slot: the overlap correction (or the burst displacement) and the move allowance.
#include <algorithm>
#include <bit>
#include <limits>

#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace swarmfield::sim {

using crowd_detail::id_direction;
using crowd_detail::kCoincidentDist2;
using crowd_detail::kPrefetchAgents;

namespace {

/// How far (world units) a disc may move along a unit direction before it touches another disc:
/// the other's centre is at distance `d` in a direction whose cosine with the move is
/// `approach` (> 0), and discs touch at `contact_d`. Exact for the straight sweep: the smallest
/// L >= 0 with |d u - L s| = contact_d, or +infinity when the sweep passes by. 0 when the
/// discs already overlap (any such move brings them closer).
inline float free_path(float d, float approach, float contact_d) noexcept {
  if (d <= contact_d) return 0.0f;
  const float disc = d * d * approach * approach - (d * d - contact_d * contact_d);
  if (disc < 0.0f) return std::numeric_limits<float>::infinity();
  return std::max(0.0f, d * approach - std::sqrt(disc));
}

// ---------------------------------------------------------------------------------------------
// Neighbour gather of the separation pass (see step_impl), for one agent over a list of slots
// that passed the distance test. Written twice: four hits at a time with SSE2 (x86-64), and one
// at a time (the definition); both perform the same IEEE operations on the same values, so the
// results are the same bit for bit. The SSE2 version computes every term for every hit and masks
// out the ones the definition skips, instead of branching on each test (the tests are close to
// coin flips in a crowd, and mispredicted branches cost more than the arithmetic). Masked terms
// are +0 or +infinity: sums start at +0 and a sum is -0 only when both addends are, so adding +0
// changes nothing, and min(allow, +inf) is allow.

/// The separation pass's view of the other agents (slot-indexed arrays) and its constants: with
/// one kind, inv_r, cd and pd are those of its pair; with several (kMixed below), each hit's pair
/// constants come from the agent's row of the pair table, indexed by the neighbour's kind.
struct GatherInput {
  const float* nx;
  const float* ny;
  const std::uint32_t* nid;
  const std::uint32_t* nprio;
  const float* npx;
  const float* npy;
  const std::uint8_t* nkind;
  const std::uint8_t* nrest;  // 1 = at rest last tick
  float inv_r, cd, pd, yf;
};

/// One agent's side of the gather.
struct GatherAgent {
  float px, py;    // position
  float skx, sky;  // unit direction of its path (when moving)
  std::uint32_t id, prio;
  bool moving;
  const crowd_detail::PairTick* pair_row;  // its kind's row of the pair table
};

/// What the gather accumulates for one agent.
struct GatherSums {
  float sx = 0.0f, sy = 0.0f;  // kernel sum
  float kx = 0.0f, ky = 0.0f;  // contact sum
  float allow;                 // free path along the path direction
  std::uint32_t count = 0, coincident = 0, rank = 0;
};

/// The definition: one neighbour slot `m` within the query radius of the agent (m is not the
/// agent). With one kind that radius is the pair's R; with several (kMixed) it is the largest
/// pair R and the hit counts only within its own pair's R. kRest: some agent rested last tick
/// (without, the kernel rule for neighbours at rest below never applies: the code is left out).
template <bool kMixed, bool kRest>
SWARMFIELD_ALWAYS_INLINE inline void gather_one(const GatherInput& in, const GatherAgent& a, std::uint32_t m,
                                                GatherSums& s) noexcept {
  const float dx = a.px - in.nx[m], dy = a.py - in.ny[m];
  const float d2 = dx * dx + dy * dy;
  float inv_r = in.inv_r, cd = in.cd, pd = in.pd;
  if constexpr (kMixed) {
    const crowd_detail::PairTick& pair = a.pair_row[in.nkind[m]];
    if (!(d2 < pair.r2)) return;
    inv_r = pair.inv_r;
    cd = pair.cd;
    pd = pair.pd;
  }
  ++s.count;
  if (d2 < kCoincidentDist2) {  // no direction: handled by id (see step_impl)
    ++s.coincident;
    if (in.nid[m] < a.id) ++s.rank;
    return;
  }
  const float d = std::sqrt(d2);
  const float inv_d = 1.0f / d;
  const float w = (1.0f - d * inv_r) * inv_d;  // kernel weight; inv_d normalizes (dx, dy)
  // Unit vector toward m, and how fast moving along the path closes in on it.
  const float ux = -dx * inv_d, uy = -dy * inv_d;
  const float approach = a.skx * ux + a.sky * uy;
  const bool prior = a.prio < in.nprio[m] || (a.prio == in.nprio[m] && a.id < in.nid[m]);
  // A neighbour ahead that was at rest last tick, over which a moving agent has right of way:
  // its kernel does not push the agent back (it yields by contact only; else two agents pin
  // each other on a door's posts, the one with right of way held off by the other's presence).
  if (!(kRest && a.moving && in.nrest[m] != 0 && prior && approach > 0.0f)) {
    s.sx += dx * w;
    s.sy += dy * w;
  }
  if (d < cd) {
    const float c = (cd - d) * 0.5f * inv_d;
    s.kx += dx * c;
    s.ky += dy * c;
  }
  if (!a.moving) return;
  if (approach <= 0.0f) return;  // m is beside or behind
  // Already pressed into m by more than press_overlap: a jammed crowd (a packed spawn, a mob at
  // a door) only clears if its members push on; the contact term keeps it bounded.
  if (d < pd) return;
  // Head-on or converging (m's path also closes in on us): one of the two must go first, or
  // both wait for ever (the two-agent arch at a door). The one with right of way (nearer the
  // goal, then the lower id) ignores the other, whose own pass makes it yield.
  const float m_approach = -(in.npx[m] * ux + in.npy[m] * uy);
  const bool converging = m_approach > 0.0f;
  if (converging && prior) return;
  s.allow = std::min(s.allow, in.yf * free_path(d, approach, cd));
  if (converging) {
    // Yielding: keep clear of where m is heading too (one diameter along its path), or m walks
    // into us and shoves us back the next tick.
    const float wx = in.nx[m] + in.npx[m] * cd - a.px, wy = in.ny[m] + in.npy[m] * cd - a.py;
    const float wd = std::sqrt(wx * wx + wy * wy);
    if (wd > 1e-6f) {
      const float ahead = (a.skx * wx + a.sky * wy) / wd;
      if (ahead > 0.0f) s.allow = std::min(s.allow, in.yf * free_path(wd, ahead, cd));
    }
  }
}

#if defined(__SSE2__) && !defined(SWARMFIELD_NO_SIMD)
#define SWARMFIELD_SIMD_GATHER 1

/// All-ones in the lanes whose bit is set in the index (lane 0 = bit 0).
alignas(16) constexpr std::uint32_t kLaneMasks[16][4] = {
    {0, 0, 0, 0},  {~0u, 0, 0, 0},  {0, ~0u, 0, 0},  {~0u, ~0u, 0, 0},  {0, 0, ~0u, 0},  {~0u, 0, ~0u, 0},
    {0, ~0u, ~0u, 0},  {~0u, ~0u, ~0u, 0},  {0, 0, 0, ~0u},  {~0u, 0, 0, ~0u},  {0, ~0u, 0, ~0u},  {~0u, ~0u, 0, ~0u},
    {0, 0, ~0u, ~0u},  {~0u, 0, ~0u, ~0u},  {0, ~0u, ~0u, ~0u},  {~0u, ~0u, ~0u, ~0u}};

inline __m128 lane_mask(std::uint32_t bits) noexcept {
  return _mm_castsi128_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(kLaneMasks[bits & 15u])));
}

/// free_path() on four lanes: same operations, the branches as selects.
inline __m128 free_path4(__m128 d, __m128 approach, __m128 cd) noexcept {
  const __m128 d_sq = _mm_mul_ps(d, d);
  const __m128 disc = _mm_sub_ps(_mm_mul_ps(_mm_mul_ps(d_sq, approach), approach), _mm_sub_ps(d_sq, _mm_mul_ps(cd, cd)));
  const __m128 x = _mm_sub_ps(_mm_mul_ps(d, approach), _mm_sqrt_ps(disc));
  const __m128 zero = _mm_setzero_ps();
  const __m128 clamped = _mm_and_ps(_mm_cmplt_ps(zero, x), x);  // std::max(0, x): 0 unless 0 < x
  const __m128 inf = _mm_set1_ps(std::numeric_limits<float>::infinity());
  const __m128 beyond = _mm_cmplt_ps(disc, zero);                // the sweep passes by
  const __m128 r = _mm_or_ps(_mm_and_ps(beyond, inf), _mm_andnot_ps(beyond, clamped));
  return _mm_andnot_ps(_mm_cmple_ps(d, cd), r);                  // already touching: 0
}

/// Selects a where mask is set, else b.
inline __m128 select4(__m128 mask, __m128 a, __m128 b) noexcept {
  return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}

/// gather_one() for the hits slots[0, n), four at a time, in order.
template <bool kMixed, bool kRest>
SWARMFIELD_ALWAYS_INLINE inline void gather_hits(const GatherInput& in, const GatherAgent& a, const std::uint32_t* slots,
                                                 std::uint32_t n, GatherSums& s) noexcept {
  const __m128 px = _mm_set1_ps(a.px), py = _mm_set1_ps(a.py);
  const __m128 one = _mm_set1_ps(1.0f), zero = _mm_setzero_ps();
  __m128 inv_r = _mm_set1_ps(in.inv_r), cd = _mm_set1_ps(in.cd), pd = _mm_set1_ps(in.pd);
  const __m128 yf = _mm_set1_ps(in.yf);
  const __m128 inf = _mm_set1_ps(std::numeric_limits<float>::infinity());
  for (std::uint32_t i = 0; i < n; i += 4) {
    const std::uint32_t lanes = n - i < 4 ? n - i : 4;
    std::uint32_t valid_bits = (1u << lanes) - 1u;
    // Missing lanes repeat the first hit (any valid slot; they are masked out).
    const std::uint32_t m0 = slots[i], m1 = lanes > 1 ? slots[i + 1] : m0, m2 = lanes > 2 ? slots[i + 2] : m0,
                        m3 = lanes > 3 ? slots[i + 3] : m0;
    const __m128 nx = _mm_setr_ps(in.nx[m0], in.nx[m1], in.nx[m2], in.nx[m3]);
    const __m128 ny = _mm_setr_ps(in.ny[m0], in.ny[m1], in.ny[m2], in.ny[m3]);
    const __m128 dx = _mm_sub_ps(px, nx), dy = _mm_sub_ps(py, ny);
    const __m128 d2 = _mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy));
    if constexpr (kMixed) {
      // Each lane's pair constants; a hit beyond its pair's R is not a neighbour (as gather_one).
      const crowd_detail::PairTick& p0 = a.pair_row[in.nkind[m0]];
      const crowd_detail::PairTick& p1 = a.pair_row[in.nkind[m1]];
      const crowd_detail::PairTick& p2 = a.pair_row[in.nkind[m2]];
      const crowd_detail::PairTick& p3 = a.pair_row[in.nkind[m3]];
      const __m128 r2 = _mm_setr_ps(p0.r2, p1.r2, p2.r2, p3.r2);
      valid_bits &= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmplt_ps(d2, r2)));
      inv_r = _mm_setr_ps(p0.inv_r, p1.inv_r, p2.inv_r, p3.inv_r);
      cd = _mm_setr_ps(p0.cd, p1.cd, p2.cd, p3.cd);
      pd = _mm_setr_ps(p0.pd, p1.pd, p2.pd, p3.pd);
    }
    const __m128 coincident = _mm_cmplt_ps(d2, _mm_set1_ps(kCoincidentDist2));
    const auto coincident_bits = static_cast<std::uint32_t>(_mm_movemask_ps(coincident)) & valid_bits;
    if constexpr (kMixed) {
      s.count += static_cast<std::uint32_t>(std::popcount(valid_bits));
    } else {
      s.count += lanes;
    }
    if (coincident_bits != 0) {  // rare: a stack of agents on one point
      const std::uint32_t m[4] = {m0, m1, m2, m3};
      for (std::uint32_t j = 0; j < 4; ++j) {
        if ((coincident_bits >> j) & 1u) {
          ++s.coincident;
          if (in.nid[m[j]] < a.id) ++s.rank;
        }
      }
    }
    const __m128 normal = _mm_andnot_ps(coincident, lane_mask(valid_bits));
    const __m128 d = _mm_sqrt_ps(d2);
    const __m128 inv_d = _mm_div_ps(one, d);
    const __m128 w = _mm_mul_ps(_mm_sub_ps(one, _mm_mul_ps(d, inv_r)), inv_d);
    const __m128 touching = _mm_and_ps(normal, _mm_cmplt_ps(d, cd));
    const __m128 c = _mm_mul_ps(_mm_mul_ps(_mm_sub_ps(cd, d), _mm_set1_ps(0.5f)), inv_d);
    // Right of way over m (nearer the goal, then the lower id).
    auto ours = [&](std::uint32_t m) noexcept {
      return static_cast<std::uint32_t>((a.prio < in.nprio[m]) | ((a.prio == in.nprio[m]) & (a.id < in.nid[m])));
    };
    const __m128 sign = _mm_set1_ps(-0.0f);  // xor with it: the unary minus
    // How fast moving along the path closes in on each hit (as below, where ux, uy are kept).
    auto approach_of = [&]() noexcept {
      const __m128 ux = _mm_mul_ps(_mm_xor_ps(dx, sign), inv_d);
      const __m128 uy = _mm_mul_ps(_mm_xor_ps(dy, sign), inv_d);
      return _mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), ux), _mm_mul_ps(_mm_set1_ps(a.sky), uy));
    };
    __m128 kernel_on = normal;
    if constexpr (kRest) {
      if (a.moving) {
        // No kernel from a neighbour ahead at rest last tick over which we have right of way
        // (gather_one). Only in a crowd closing in on a goal in sight: nobody rests otherwise.
        const std::uint32_t rest_bits = static_cast<std::uint32_t>(in.nrest[m0] != 0) |
                                        (static_cast<std::uint32_t>(in.nrest[m1] != 0) << 1) |
                                        (static_cast<std::uint32_t>(in.nrest[m2] != 0) << 2) |
                                        (static_cast<std::uint32_t>(in.nrest[m3] != 0) << 3);
        if (rest_bits != 0) {
          const std::uint32_t skip = rest_bits & (ours(m0) | (ours(m1) << 1) | (ours(m2) << 2) | (ours(m3) << 3));
          kernel_on = _mm_andnot_ps(_mm_and_ps(_mm_cmpgt_ps(approach_of(), zero), lane_mask(skip)), normal);
        }
      }
    }
    alignas(16) float tx[4], ty[4], cx[4], cy[4];
    _mm_store_ps(tx, _mm_and_ps(kernel_on, _mm_mul_ps(dx, w)));
    _mm_store_ps(ty, _mm_and_ps(kernel_on, _mm_mul_ps(dy, w)));
    _mm_store_ps(cx, _mm_and_ps(touching, _mm_mul_ps(dx, c)));
    _mm_store_ps(cy, _mm_and_ps(touching, _mm_mul_ps(dy, c)));
    for (std::uint32_t j = 0; j < 4; ++j) {
      s.sx += tx[j];
      s.sy += ty[j];
      s.kx += cx[j];
      s.ky += cy[j];
    }
    if (!a.moving) continue;
    const __m128 ux = _mm_mul_ps(_mm_xor_ps(dx, sign), inv_d);
    const __m128 uy = _mm_mul_ps(_mm_xor_ps(dy, sign), inv_d);
    const __m128 approach = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), ux), _mm_mul_ps(_mm_set1_ps(a.sky), uy));
    // Goes on past "approach <= 0" and "d < pd" (NaN goes on, as in gather_one).
    const __m128 ahead_of_us = _mm_and_ps(_mm_cmpnle_ps(approach, zero), _mm_cmpnlt_ps(d, pd));
    const __m128 npx = _mm_setr_ps(in.npx[m0], in.npx[m1], in.npx[m2], in.npx[m3]);
    const __m128 npy = _mm_setr_ps(in.npy[m0], in.npy[m1], in.npy[m2], in.npy[m3]);
    const __m128 m_approach = _mm_xor_ps(_mm_add_ps(_mm_mul_ps(npx, ux), _mm_mul_ps(npy, uy)), sign);
    const __m128 converging = _mm_cmpgt_ps(m_approach, zero);
    // Right of way over m: ignore m when converging.
    const std::uint32_t way_bits = ours(m0) | (ours(m1) << 1) | (ours(m2) << 2) | (ours(m3) << 3);
    const __m128 yields = _mm_andnot_ps(_mm_and_ps(converging, lane_mask(way_bits)), _mm_and_ps(normal, ahead_of_us));
    const __m128 first = select4(yields, _mm_mul_ps(yf, free_path4(d, approach, cd)), inf);
    // Yielding to a converging m: also keep clear of where it is heading.
    const __m128 wx = _mm_sub_ps(_mm_add_ps(nx, _mm_mul_ps(npx, cd)), px);
    const __m128 wy = _mm_sub_ps(_mm_add_ps(ny, _mm_mul_ps(npy, cd)), py);
    const __m128 wd = _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(wx, wx), _mm_mul_ps(wy, wy)));
    const __m128 ahead =
        _mm_div_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), wx), _mm_mul_ps(_mm_set1_ps(a.sky), wy)), wd);
    const __m128 second_on = _mm_and_ps(_mm_and_ps(yields, converging),
                                        _mm_and_ps(_mm_cmpgt_ps(wd, _mm_set1_ps(1e-6f)), _mm_cmpgt_ps(ahead, zero)));
    const __m128 second = select4(second_on, _mm_mul_ps(yf, free_path4(wd, ahead, cd)), inf);
    alignas(16) float f1[4], f2[4];
    _mm_store_ps(f1, first);
    _mm_store_ps(f2, second);
    for (std::uint32_t j = 0; j < 4; ++j) {
      s.allow = std::min(s.allow, f1[j]);
      s.allow = std::min(s.allow, f2[j]);
    }
  }
}
#else
template <bool kMixed, bool kRest>
SWARMFIELD_ALWAYS_INLINE inline void gather_hits(const GatherInput& in, const GatherAgent& a, const std::uint32_t* slots,
                                                 std::uint32_t n, GatherSums& s) noexcept {
  for (std::uint32_t i = 0; i < n; ++i) gather_one<kMixed, kRest>(in, a, slots[i], s);
}
#endif

}  // namespace

void Swarm::gather_neighbours(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end) {
  if (t.mixed) {
    if (any_rest_) {
      gather_neighbours_of_kinds<true, true>(t, begin, end);
    } else {
      gather_neighbours_of_kinds<true, false>(t, begin, end);
    }
  } else if (any_rest_) {
    gather_neighbours_of_kinds<false, true>(t, begin, end);
  } else {
    gather_neighbours_of_kinds<false, false>(t, begin, end);
  }
}

template <bool kMixed, bool kRest>
void Swarm::gather_neighbours_of_kinds(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end) {
  const std::size_t n = t.n;
  const float* const sxs = t.sxs;
  const float* const sys = t.sys;
  const float dt = t.dt;
  // Local copies of what the neighbour loop reads: this pass stores bytes (burst ticks), which
  // may alias any memory, so values reached through `t` or `this` would be reloaded each time.
  const float* const nx = sxs;
  const float* const ny = sys;
  const std::uint32_t* const nid = ids_.data();
  const std::uint32_t* const nprio = prio_.data();
  const float* const npx = path_x_.data();
  const float* const npy = path_y_.data();
  const std::uint8_t* const nkind = t.kind;
  // With one kind, its pair's constants for every hit (unused with several).
  const crowd_detail::PairTick& only = t.pairs[t.only_kind * kMaxAgentKinds + t.only_kind];
  const std::uint8_t only_kind = t.only_kind;
  const crowd_detail::KindTick only_kt = t.kinds[only_kind];
  const float yf = t.yield_fraction;
  const bool yield = t.yield;
  const float contact_stiffness = t.contact_stiffness;
  const float rest_below = t.rest_below, wake_above = t.wake_above;
  const std::uint64_t* const open = t.open;
  const float map_wf = t.map_wf, map_hf = t.map_hf, cs = t.cs, inv_cs = t.inv_cs;
  const std::int32_t map_w = t.map_w, map_h = t.map_h;
  const GridMap& map = t.map;
  // Rest flags: last tick's (slot order) are read for the neighbours; this tick's go to the
  // spare buffer, swapped in at the end of the step.
  const std::uint8_t* const nrest = resting_.data();
  std::uint8_t* const rest_out = perm_resting_.data();
  const GatherInput in{nx, ny, nid, nprio, npx, npy, nkind, nrest, only.inv_r, only.cd, only.pd, yf};
  // Slots of the current agent's neighbours within R, a batch at a time (room for one more
  // group of four past the batch).
  constexpr std::uint32_t kHitBatch = 64;
  std::uint32_t hit_slot[kHitBatch + 4];
  bool chunk_rest = false;  // some agent of the chunk rests this tick
  for (std::size_t k = begin; k < end; ++k) {
    // Fetch a few agents ahead what the query and the move will read: the hash's cell ranges
    // and the open-cell byte (megabyte tables read at scattered places when agents are spread
    // out; no effect on any result).
    if (k + kPrefetchAgents < n) {
      const Vec2 ahead{sxs[k + kPrefetchAgents], sys[k + kPrefetchAgents]};
      hash_.prefetch_near(ahead);
      if (ahead.x >= 0.0f && ahead.y >= 0.0f && ahead.x < map_wf * cs && ahead.y < map_hf * cs) {
        // Only a hint: any cell near the agent's will do (truncation, a reciprocal).
        const auto fx = static_cast<std::int32_t>(ahead.x * inv_cs), fy = static_cast<std::int32_t>(ahead.y * inv_cs);
        __builtin_prefetch(open + (map.index(std::min(fx, map_w - 1), std::min(fy, map_h - 1)) >> 6));
      }
    }
    const float px = sxs[k], py = sys[k];
    // With one kind, every agent is of it: its constants from a local copy (this pass stores
    // bytes, so the table itself would be read again for every agent).
    const std::uint8_t self_kind = kMixed ? nkind[k] : only_kind;
    const crowd_detail::KindTick& kt = kMixed ? t.kinds[self_kind] : only_kt;
    const float max_step = kt.max_step;
    // Candidates within the query radius: the pair's R with one kind, the largest pair R
    // over the kinds present with several (gather_one then tests each pair's own R).
    const float r2 = kMixed ? kt.query_r2 : only.r2;
    const auto self = static_cast<std::uint32_t>(k);
    const std::uint32_t self_id = nid[k];
    const std::uint32_t self_prio = nprio[k];
    // Direction and rate (world units per unit of move budget) of this agent's actual path.
    const float path_len = std::sqrt(npx[k] * npx[k] + npy[k] * npy[k]);
    const bool moving = yield && path_len > 1e-4f;
    const float skx = moving ? npx[k] / path_len : 0.0f, sky = moving ? npy[k] / path_len : 0.0f;
    // Neighbours in two steps: the distance test over the candidate slots, four at a time and
    // without a branch per candidate, collecting the hits in query order; then the hits, in
    // that order (gather_hits).
    const GatherAgent agent{px, py, skx, sky, self_id, self_prio, moving, t.pairs + self_kind * kMaxAgentKinds};
    GatherSums sums;
    // A goal in sight limits the move too: the agent stops where its disc touches the goal's.
    sums.allow = std::min(max_step, std::max(goal_room_[k], 0.0f));
    std::uint32_t hits = 0;
#if defined(SWARMFIELD_SIMD_GATHER)
    const __m128 vpx = _mm_set1_ps(px), vpy = _mm_set1_ps(py), vr2 = _mm_set1_ps(r2);
#endif
    hash_.for_each_range_near({px, py}, [&](std::uint32_t first, std::uint32_t last) SWARMFIELD_ALWAYS_INLINE {
      // Four slots per step; slots past `last` (up to 3, inside the hash's padding, see
      // SpatialHash::kSlotPadding) are loaded but masked out.
      for (std::uint32_t m0 = first; m0 < last; m0 += 4) {
#if defined(SWARMFIELD_SIMD_GATHER)
        const __m128 dxv = _mm_sub_ps(vpx, _mm_loadu_ps(nx + m0));
        const __m128 dyv = _mm_sub_ps(vpy, _mm_loadu_ps(ny + m0));
        const __m128 d2v = _mm_add_ps(_mm_mul_ps(dxv, dxv), _mm_mul_ps(dyv, dyv));
        // Within R: !(d2 >= r2), the definition's test (true for NaN too).
        auto mask = static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmpnge_ps(d2v, vr2)));
#else
        std::uint32_t mask = 0;
        for (std::uint32_t j = 0; j < 4 && m0 + j < last; ++j) {
          const float dx = px - nx[m0 + j], dy = py - ny[m0 + j];
          mask |= static_cast<std::uint32_t>(!(dx * dx + dy * dy >= r2)) << j;
        }
#endif
        const std::uint32_t left = last - m0;
        mask &= left >= 4 ? 15u : (1u << left) - 1u;
        if (self - m0 < 4u) mask &= ~(1u << (self - m0));
        // Append the masked-in slots without branching: write each, advance past the kept ones.
        hit_slot[hits] = m0;
        hits += mask & 1u;
        hit_slot[hits] = m0 + 1;
        hits += (mask >> 1) & 1u;
        hit_slot[hits] = m0 + 2;
        hits += (mask >> 2) & 1u;
        hit_slot[hits] = m0 + 3;
        hits += mask >> 3;
        if (hits >= kHitBatch) {
          gather_hits<kMixed, kRest>(in, agent, hit_slot, hits, sums);
          hits = 0;
        }
      }
    });
    gather_hits<kMixed, kRest>(in, agent, hit_slot, hits, sums);
    const float sx = sums.sx, sy = sums.sy, kx = sums.kx, ky = sums.ky, allow = sums.allow;
    const std::uint32_t count = sums.count, coincident = sums.coincident, rank = sums.rank;
    // Rest (hysteresis on the free path), for agents closing in on a goal in sight (the crowd
    // round a player; goal_room_ is finite only then): an agent whose way is blocked (free path
    // below rest_below of a step) comes to rest and stays there, moving only when pushed, until
    // its way opens by more than wake_above of a step (the agent ahead left, the goal moved).
    // Without it a blocked agent creeps into every sliver of room its neighbours' contact
    // corrections open, and a packed crowd never stops. An agent touching the goal (holding)
    // rests too. Agents following a route keep flowing (queues: crowd scenario C4).
    bool resting = false;
    if (yield && goal_room_[k] < std::numeric_limits<float>::infinity()) {
      const bool was_resting = nrest[k] != 0;
      resting = !moving || allow < (was_resting ? wake_above : rest_below) * max_step;
    }
    rest_out[k] = resting ? 1 : 0;
    chunk_rest |= resting;
    allow_[k] = resting ? 0.0f : (moving ? allow / path_len : max_step);
    Vec2 corr{};
    std::uint8_t burst = 0;
    if (coincident > 0) {
      // Stacked on other agents: this tick's whole displacement is the agent's point of the
      // stack's burst pattern (burst_pattern.hpp) times max_step. The pattern may not exist
      // yet, and this phase runs on several threads: leave the rank and the group size, and
      // Swarm::start_bursts() looks the point up after the phase.
      corr = {static_cast<float>(rank), static_cast<float>(coincident + 1)};
      burst = 2;
      burst_chunks_[begin / t.chunk] = 1;
    } else if (burst_ticks_[k] > 0 && max_step > 0.0f) {
      // Still bursting out of a stack: repeat last tick's displacement, so the stack's Vogel
      // disc keeps its shape and only grows (see burst_ticks()).
      const float inv_step = 1.0f / max_step;
      corr = {vxs_[k] * dt * inv_step, vys_[k] * dt * inv_step};
      burst = 1;
      --burst_ticks_[k];
    } else {
      // The mean kernel reaches past contact (R > 2r): it spreads a moving crowd across a
      // street, but at rest it alone would hold agents R apart and keep a packed crowd
      // creeping. It acts in proportion to how freely the agent moves this tick (its free path
      // over max_step); a blocked or holding agent feels only the contact term.
      const float freedom = resting ? 0.0f : 1.0f;
      const float mean = count > 0 ? freedom / static_cast<float>(count) : 0.0f;
      const float stiffness = kt.stiffness;
      corr = {sx * mean * stiffness + kx * contact_stiffness, sy * mean * stiffness + ky * contact_stiffness};
    }
    corr_x_[k] = corr.x;
    corr_y_[k] = corr.y;
    bursting_[k] = burst;
  }
  if (chunk_rest) rest_chunks_[begin / t.chunk] = 1;
}

// A burst lasts until the pattern's spacing is this many diameters. (More does not help: with
// the eight-direction flow, agents converging after the burst press each other as much.)
constexpr float kBurstClearance = 1.0f;

void Swarm::start_bursts(const crowd_detail::SwarmTick& t) {
  for (std::size_t c = 0; c < burst_chunks_.size(); ++c) {
    if (burst_chunks_[c] == 0) continue;  // (the flags stay: step_impl integrates these chunks next)
    const std::size_t end = std::min(t.n, (c + 1) * t.chunk);
    for (std::size_t k = c * t.chunk; k < end; ++k) {
      if (bursting_[k] != 2) continue;
      // Exact: ranks and group sizes are far below 2^24.
      const auto rank = static_cast<std::uint32_t>(corr_x_[k]), group = static_cast<std::uint32_t>(corr_y_[k]);
      const Vec2 point = burst_patterns_.point(rank, group);
      corr_x_[k] = point.x;
      corr_y_[k] = point.y;
      bursting_[k] = 1;
      // The pattern grows by max_step a tick; the burst lasts until its spacing reaches
      // kBurstClearance diameters: ceil(k * contact_d / (spacing * max_step)), 1 to 255 ticks
      // (this one included).
      const crowd_detail::KindTick& kt = t.kinds[t.kind[k]];
      const float spacing = burst_patterns_.spacing(group);
      float ticks = 1.0f;
      if (kt.max_step > 0.0f && spacing > 0.0f) ticks = std::ceil(kBurstClearance * kt.contact_d / (spacing * kt.max_step));
      if (!(ticks >= 1.0f)) ticks = 1.0f;
      burst_ticks_[k] = static_cast<std::uint8_t>(std::min(ticks, 255.0f) - 1.0f);
    }
  }
}

template void Swarm::gather_neighbours_of_kinds<true, true>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);
template void Swarm::gather_neighbours_of_kinds<true, false>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);
template void Swarm::gather_neighbours_of_kinds<false, true>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);
template void Swarm::gather_neighbours_of_kinds<false, false>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);

}  // namespace swarmfield::sim
