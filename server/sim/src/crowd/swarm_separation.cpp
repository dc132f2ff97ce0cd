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

// Held by a neighbour: centres closer than this many contact distances, and the neighbour
// within acos(kHeldAhead) of the agent's path.
constexpr float kHeldContact = 1.1f;
// Crushed: summed overlaps with the neighbours above this many contact distances (a crowd packed
// past contact, as a spawn can be); see gather_neighbours_of_kinds.
constexpr float kCrushed = 0.6f;
constexpr float kHeldAhead = 0.0f;
// Ticks an agent yields to agents crossing its way before it stops yielding to them (fairness:
// nobody starves on a door post while a stream goes by).
constexpr std::uint32_t kPatienceTicks = 20;
// Touching the goal's disc: the room left to it below this many of the agent's diameters.
constexpr float kGoalTouch = 0.05f;
// A step round the agent ahead is looked for when the path brings the agent less than
// kSideTrigger of a step closer, and taken when it brings it kSideMargin of a step closer still.
constexpr float kSideTrigger = 0.5f;
constexpr float kSideMargin = 0.05f;
// A side step must be free for at least this much of a step: slivers of room between packed
// neighbours are not a way round (taking them keeps a pile creeping for ever).
constexpr float kSideMinFree = 0.75f;
// Touching, for the blocker a step round goes round: centres closer than this many contact
// distances. A walk round may take the agent this much (cosine) away from its goal direction.
constexpr float kTouching = 1.05f;
constexpr float kRoundSlack = 0.05f;
// Below this length of the steering's part along the blocker, the blocker is dead ahead.
constexpr float kSlideMin = 0.1f;
// Side steps turn a moving agent (last speed above kTurnAbove of its max) round the agents ahead
// (overtaking in a stream); a held agent walks round the agent it is held by. Neither goes
// against the way it moved last tick, when faster than kReverseBelow of its max.
constexpr float kTurnAbove = 0.5f;
constexpr float kReverseBelow = 0.1f;
// The directions tried: the steering direction turned by these angles either way (cos, sin).
constexpr float kSideCos[2] = {0.76604444f, 0.25881905f};  // 40 and 75 degrees
constexpr float kSideSin[2] = {0.64278761f, 0.96592583f};

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
  const std::uint8_t* nstream;  // 1 = moved at speed last tick
  float inv_r, cd, pd, yf;
  bool press_all;  // the flow-field step: push on into every neighbour overlapped past pd
};

/// One agent's side of the gather.
struct GatherAgent {
  float px, py;    // position
  float skx, sky;  // unit direction of its path (when moving)
  std::uint32_t id, prio;
  bool moving;
  bool impatient;  // waited kPatienceTicks for converging agents: no longer yields to them
  const crowd_detail::PairTick* pair_row;  // its kind's row of the pair table
};

/// What the gather accumulates for one agent.
struct GatherSums {
  float sx = 0.0f, sy = 0.0f;  // kernel sum
  float kx = 0.0f, ky = 0.0f;  // contact sum
  float allow;                 // free path along the path direction
  std::uint32_t count = 0, coincident = 0, rank = 0;
  std::uint32_t anchored = 0;  // touches a neighbour ahead with right of way that rested last tick
  float yield_allow;           // the free path left by neighbours converging on the agent's path
  float press_allow;           // the free path pushing on into every neighbour it overlaps past pd
  float overlap = 0.0f;        // summed disc overlaps, in contact distances (how crushed it is)
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
    s.overlap += (cd - d) / cd;
    const float c = (cd - d) * 0.5f * inv_d;
    s.kx += dx * c;
    s.ky += dy * c;
  }
  // Held: touching a neighbour ahead that rested last tick and goes first (rest is earned only
  // through a chain of such contacts from a goal; see gather_neighbours_of_kinds).
  if (kRest && in.nrest[m] != 0 && !prior && d < cd * kHeldContact && approach > kHeldAhead) s.anchored = 1;
  if (!a.moving) return;
  if (approach <= 0.0f) return;  // m is beside or behind
  // Head-on or converging (m's path also closes in on us): one of the two must go first, or
  // both wait for ever (the two-agent arch at a door). The one with right of way (nearer the
  // goal, then the lower id) ignores the other, whose own pass makes it yield.
  const float m_approach = -(in.npx[m] * ux + in.npy[m] * uy);
  // Already pressed into m by more than press_overlap, and m yields to us: push on (a jammed
  // crowd clears only if its members push; the contact term keeps it bounded). Never into a
  // neighbour that goes first: that shoves it off the door it is passing (the two-agent jam).
  const bool pressed = d < pd;
  if (pressed && (prior || in.press_all)) return;
  const bool converging = m_approach > 0.0f;
  // An agent that has waited kPatienceTicks for agents crossing its way stops waiting for those
  // that stream by (moved at speed last tick): they yield to it instead (it has no right of way
  // over them, so their own pass makes them keep clear), and an agent on a door post gets into
  // the stream. For agents that stand (a full queue) it waits on.
  if (converging && (prior || (a.impatient && in.nstream[m] != 0))) return;
  const float free = in.yf * free_path(d, approach, cd);
  s.allow = std::min(s.allow, free);
  if (!pressed) s.press_allow = std::min(s.press_allow, free);
  if (converging) {
    s.yield_allow = std::min(s.yield_allow, free);
    // Yielding: keep clear of where m is heading too (one diameter along its path), or m walks
    // into us and shoves us back the next tick.
    const float wx = in.nx[m] + in.npx[m] * cd - a.px, wy = in.ny[m] + in.npy[m] * cd - a.py;
    const float wd = std::sqrt(wx * wx + wy * wy);
    if (wd > 1e-6f) {
      const float ahead = (a.skx * wx + a.sky * wy) / wd;
      if (ahead > 0.0f) {
        const float clear = in.yf * free_path(wd, ahead, cd);
        s.allow = std::min(s.allow, clear);
        s.yield_allow = std::min(s.yield_allow, clear);
        if (!pressed) s.press_allow = std::min(s.press_allow, clear);
      }
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
    alignas(16) float tx[4], ty[4], cx[4], cy[4], ov[4];
    _mm_store_ps(tx, _mm_and_ps(kernel_on, _mm_mul_ps(dx, w)));
    _mm_store_ps(ty, _mm_and_ps(kernel_on, _mm_mul_ps(dy, w)));
    _mm_store_ps(cx, _mm_and_ps(touching, _mm_mul_ps(dx, c)));
    _mm_store_ps(cy, _mm_and_ps(touching, _mm_mul_ps(dy, c)));
    _mm_store_ps(ov, _mm_and_ps(touching, _mm_div_ps(_mm_sub_ps(cd, d), cd)));
    for (std::uint32_t j = 0; j < 4; ++j) {
      s.sx += tx[j];
      s.sy += ty[j];
      s.kx += cx[j];
      s.ky += cy[j];
      s.overlap += ov[j];
    }
    if (!a.moving) continue;
    const __m128 ux = _mm_mul_ps(_mm_xor_ps(dx, sign), inv_d);
    const __m128 uy = _mm_mul_ps(_mm_xor_ps(dy, sign), inv_d);
    const __m128 approach = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), ux), _mm_mul_ps(_mm_set1_ps(a.sky), uy));
    const std::uint32_t way_bits = ours(m0) | (ours(m1) << 1) | (ours(m2) << 2) | (ours(m3) << 3);
    if constexpr (kRest) {
      // Held: touching a neighbour ahead that rested last tick and goes first (gather_one).
      const std::uint32_t rest_bits = static_cast<std::uint32_t>(in.nrest[m0] != 0) |
                                      (static_cast<std::uint32_t>(in.nrest[m1] != 0) << 1) |
                                      (static_cast<std::uint32_t>(in.nrest[m2] != 0) << 2) |
                                      (static_cast<std::uint32_t>(in.nrest[m3] != 0) << 3);
      const std::uint32_t near_bits = static_cast<std::uint32_t>(_mm_movemask_ps(
          _mm_and_ps(normal, _mm_and_ps(_mm_cmplt_ps(d, _mm_mul_ps(cd, _mm_set1_ps(kHeldContact))),
                                        _mm_cmpgt_ps(approach, _mm_set1_ps(kHeldAhead))))));
      if ((rest_bits & ~way_bits & near_bits) != 0) s.anchored = 1;
    }
    const __m128 npx = _mm_setr_ps(in.npx[m0], in.npx[m1], in.npx[m2], in.npx[m3]);
    const __m128 npy = _mm_setr_ps(in.npy[m0], in.npy[m1], in.npy[m2], in.npy[m3]);
    const __m128 m_approach = _mm_xor_ps(_mm_add_ps(_mm_mul_ps(npx, ux), _mm_mul_ps(npy, uy)), sign);
    const __m128 converging = _mm_cmpgt_ps(m_approach, zero);
    const __m128 prior = lane_mask(way_bits);
    const __m128 pressed = _mm_cmplt_ps(d, pd);
    // Ignored: pressed into a neighbour that yields to us, and converging ones that yield to us
    // (or all converging ones, impatient). Goes on past "approach <= 0" as gather_one (NaN too).
    const std::uint32_t stream_bits = static_cast<std::uint32_t>(in.nstream[m0] != 0) |
                                      (static_cast<std::uint32_t>(in.nstream[m1] != 0) << 1) |
                                      (static_cast<std::uint32_t>(in.nstream[m2] != 0) << 2) |
                                      (static_cast<std::uint32_t>(in.nstream[m3] != 0) << 3);
    const __m128 ignored = _mm_or_ps(_mm_and_ps(pressed, in.press_all ? lane_mask(15u) : prior),
                                     _mm_and_ps(converging, lane_mask(a.impatient ? way_bits | stream_bits : way_bits)));
    const __m128 yields = _mm_andnot_ps(ignored, _mm_and_ps(normal, _mm_cmpnle_ps(approach, zero)));
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
    alignas(16) float f1[4], f2[4], p1[4], p2[4], y1[4];
    _mm_store_ps(f1, first);
    _mm_store_ps(f2, second);
    _mm_store_ps(p1, select4(pressed, inf, first));
    _mm_store_ps(p2, select4(pressed, inf, second));
    alignas(16) float y2[4];
    _mm_store_ps(y1, select4(converging, first, inf));
    _mm_store_ps(y2, second);
    for (std::uint32_t j = 0; j < 4; ++j) {
      s.allow = std::min(s.allow, f1[j]);
      s.allow = std::min(s.allow, f2[j]);
      s.press_allow = std::min(s.press_allow, p1[j]);
      s.press_allow = std::min(s.press_allow, p2[j]);
      s.yield_allow = std::min(s.yield_allow, y1[j]);
      s.yield_allow = std::min(s.yield_allow, y2[j]);
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

template <bool kMixed>
Swarm::SideStep Swarm::side_step(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k,
                                 Vec2 p, Vec2 s0, Vec2 path_dir, bool turns, bool round) const {
  // The neighbours within the query radius: offsets, distances and contact distances.
  constexpr std::uint32_t kMaxNear = 96;
  float ndx[kMaxNear], ndy[kMaxNear], nd[kMaxNear], ncd[kMaxNear];
  std::uint8_t nkind_near[kMaxNear];
  std::uint32_t near = 0;
  bool overflow = false;
  const std::uint8_t self_kind = kMixed ? t.kind[k] : t.only_kind;
  const crowd_detail::PairTick* const row = t.pairs + self_kind * kMaxAgentKinds;
  const float r2 = kMixed ? kt.query_r2 : row[self_kind].r2;
  const float* const nx = t.sxs;
  const float* const ny = t.sys;
  hash_.for_each_range_near(p, [&](std::uint32_t first, std::uint32_t last) {
    for (std::uint32_t m = first; m < last; ++m) {
      if (m == k) continue;
      const float dx = nx[m] - p.x, dy = ny[m] - p.y;
      const float d2 = dx * dx + dy * dy;
      if (!(d2 < r2) || d2 < crowd_detail::kCoincidentDist2) continue;
      if (near == kMaxNear) {
        overflow = true;
        return;
      }
      ndx[near] = dx;
      ndy[near] = dy;
      nd[near] = std::sqrt(d2);
      ncd[near] = row[kMixed ? t.kind[m] : self_kind].cd;
      nkind_near[near] = kMixed ? t.kind[m] : self_kind;
      ++near;
    }
  });
  SideStep best;
  if (overflow) return best;  // a heap of agents far denser than packing: no way round to find
  // The agent that blocks the path: touching it, the most nearly ahead.
  float block_approach = 0.0f;
  std::uint32_t blocker = kMaxNear;
  for (std::uint32_t j = 0; j < near; ++j) {
    if (nd[j] > ncd[j] * kTouching) continue;
    const float approach = (path_dir.x * ndx[j] + path_dir.y * ndy[j]) / nd[j];
    if (approach > block_approach) {
      block_approach = approach;
      blocker = j;
    }
  }
  // Overtaking: an agent turns round the agents ahead when it moves at speed, or when the one
  // that holds it up (the shortest free path along its path) is of a slower kind. Agents of one
  // kind queueing do not shuffle.
  if (!turns && kMixed) {
    float shortest = std::numeric_limits<float>::infinity();
    std::uint32_t slowest = kMaxNear;
    for (std::uint32_t j = 0; j < near; ++j) {
      const float approach = (path_dir.x * ndx[j] + path_dir.y * ndy[j]) / nd[j];
      if (approach <= 0.0f) continue;
      const float f = free_path(nd[j], approach, ncd[j]);
      if (f < shortest) {
        shortest = f;
        slowest = j;
      }
    }
    turns = slowest != kMaxNear && t.kinds[nkind_near[slowest]].max_step < kt.max_step;
  }
  // The candidates: s0 turned both ways by each angle, and the tangent of the blocker on the
  // goal's side (both sides as good when it is dead ahead: the side the agent already moves
  // to, else one by id). Each slid along walls where the agent is near one.
  constexpr int kCandidates = 5;
  float ux[kCandidates], uy[kCandidates], along[kCandidates], free[kCandidates];
  float scale[kCandidates];                // world units of travel per unit of move budget
  float cx[kCandidates], cy[kCandidates];  // the un-slid unit direction the move is made along
  const float max_step = kt.max_step;
  const bool open = open_here_[k] != 0;
  int candidates = turns ? 4 : 0;
  for (int c = 0; c < 4; ++c) {
    const float co = kSideCos[c >> 1], si = (c & 1) != 0 ? -kSideSin[c >> 1] : kSideSin[c >> 1];
    cx[c] = s0.x * co - s0.y * si;
    cy[c] = s0.x * si + s0.y * co;
  }
  if (round && blocker != kMaxNear) {
    // Round the blocker: slide along it (the steering less its part toward the blocker, as
    // along a wall), or, with the blocker dead ahead, its tangent on the side the agent already
    // moves to, else one by id.
    const float nx_b = ndx[blocker] / nd[blocker], ny_b = ndy[blocker] / nd[blocker];
    const float into = s0.x * nx_b + s0.y * ny_b;
    float tx = s0.x - into * nx_b, ty = s0.y - into * ny_b;
    const float tl = std::sqrt(tx * tx + ty * ty);
    if (tl > kSlideMin) {
      tx /= tl;
      ty /= tl;
    } else {
      tx = -ny_b;
      ty = nx_b;
      float side = tx * vxs_[k] + ty * vys_[k];
      if (std::abs(side) < 1e-6f) side = (ids_[k] & 1u) != 0 ? 1.0f : -1.0f;
      if (side < 0.0f) {
        tx = -tx;
        ty = -ty;
      }
    }
    cx[candidates] = tx;
    cy[candidates] = ty;
    ++candidates;
  }
  const int round_candidate = round && blocker != kMaxNear ? candidates - 1 : -1;
  for (int c = 0; c < candidates; ++c) {
    Vec2 path{cx[c], cy[c]};
    if (!open) {
      const Vec2 move = path * max_step;
      Vec2 q = slide_along_walls(t.map, p, move, kt.radius);
      if ((q.x - p.x != move.x || q.y - p.y != move.y) && may_round_corner(p, q, move, t.corner_eps)) {
        q = slide_round_corner(t.map, p, q, move, max_step, kt.radius);
      }
      path = (q - p) * (1.0f / max_step);
    }
    const float len = length(path);
    scale[c] = len;
    if (len < 0.2f) {  // into a wall
      ux[c] = uy[c] = 0.0f;
      free[c] = 0.0f;
    } else {
      ux[c] = path.x / len;
      uy[c] = path.y / len;
      free[c] = std::min(len * max_step, std::max(goal_room_[k], 0.0f));
    }
    along[c] = ux[c] * s0.x + uy[c] * s0.y;
  }
  for (std::uint32_t j = 0; j < near; ++j) {
    const float inv_d = 1.0f / nd[j];
    for (int c = 0; c < candidates; ++c) {
      const float approach = (ux[c] * ndx[j] + uy[c] * ndy[j]) * inv_d;
      if (approach <= 0.0f) continue;
      free[c] = std::min(free[c], free_path(nd[j], approach, ncd[j]));
    }
  }
  const float vx = vxs_[k], vy = vys_[k];
  const float slow2 = kReverseBelow * kReverseBelow * max_step * max_step * t.inv_dt * t.inv_dt;
  const bool moved = vx * vx + vy * vy > slow2;
  for (int c = 0; c < candidates; ++c) {
    if (free[c] < kSideMinFree * max_step || scale[c] <= 0.0f) continue;
    // Never a step back against the way the agent moved last tick: no dithering, no orbits.
    if (moved && cx[c] * vx + cy[c] * vy < 0.0f) continue;
    // The tangent walks round the blocker even when it brings the agent no closer this tick
    // (dead ahead); the turned directions must bring it closer.
    const bool is_round = c == round_candidate;
    if (!is_round && along[c] <= 0.0f) continue;
    if (is_round && along[c] < -kRoundSlack) continue;
    const float progress = free[c] * std::max(along[c], 0.0f);
    // Of two sides as good, keep turning the way the agent already moves (no dithering).
    const float bias = 1e-3f * max_step * (cx[c] * vxs_[k] + cy[c] * vys_[k]);
    if (!best.found || progress + bias > best.progress + best.bias) {
      best.found = true;
      best.round = is_round;
      best.progress = progress;
      best.bias = bias;
      best.ux = cx[c];
      best.uy = cy[c];
      best.allow = free[c] / scale[c];
    }
  }
  return best;
}

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
  // The crowd rules of the World's step (any-angle navigation, NavigationSet): walking round,
  // side steps, patience, no pushing into agents that go first. The flow-field step (no
  // NavigationSet: tests and benchmarks of the bare swarm) keeps the plain queueing rules.
  const bool crowd_rules = t.nav != nullptr;
  const GatherInput in{nx,         ny,      nid,     nprio, npx, npy, nkind, nrest, streaming_.data(),
                       only.inv_r, only.cd, only.pd, yf,    !crowd_rules};
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
    const bool impatient = crowd_rules && wait_[k] >= kPatienceTicks;
    const GatherAgent agent{px, py, skx, sky, self_id, self_prio, moving, impatient, t.pairs + self_kind * kMaxAgentKinds};
    GatherSums sums;
    // A goal in sight limits the move too: the agent stops where its disc touches the goal's.
    sums.allow = max_step;  // the free path among agents; the goal's limit comes after
    sums.yield_allow = max_step;
    sums.press_allow = max_step;
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
    const float sx = sums.sx, sy = sums.sy, kx = sums.kx, ky = sums.ky;
    // Crushed (overlapping its neighbours by more than kCrushed diameters in all, e.g. a
    // spawn packed past contact): it pushes on into every agent it overlaps past press_overlap,
    // right of way or not; only pressure clears such a crowd. Otherwise it never pushes into an
    // agent that goes first (the two-agent jam at a door).
    const bool crushed = sums.overlap > kCrushed;
    const float agents_free = crushed ? sums.press_allow : sums.allow;  // along the path, among agents only
    const float allow = std::min(agents_free, std::max(goal_room_[k], 0.0f));
    const std::uint32_t count = sums.count, coincident = sums.coincident, rank = sums.rank;
    // The move: along the path up to the free path; when that is mostly blocked, a step round
    // the agent ahead (side_step) if that brings the agent closer. Rest is earned, not caught:
    // an agent rests only when held (touching the goal's disc, or a neighbour ahead with right
    // of way that rested last tick: a chain of contacts from a goal) and no move brings it
    // closer; it wakes when a move opens by wake_above of a step or its hold goes. A queue
    // behind an agent that merely waits never rests, and an agent whose way round is open walks
    // round. Hysteresis: rest_below to rest, wake_above to wake.
    const float s0x = steer_x_[k], s0y = steer_y_[k];
    float move_x = s0x, move_y = s0y;
    float travel = 0.0f, progress = 0.0f;
    if (moving) {
      travel = std::min(allow, path_len * max_step);
      progress = travel * (skx * s0x + sky * s0y);
    }
    float move_allow = moving ? allow / path_len : max_step;
    bool walks_round = false;  // takes a step round the agent ahead
    const bool held = sums.anchored != 0 || (goal_room_[k] <= kGoalTouch * kt.contact_d);
    // Only agents in the way call for a side step (walls are the path's business), and only an
    // agent held by a resting crowd walks round it with no progress this tick: in a queue that
    // merely waits, walking round would only shuffle agents to and fro.
    if (crowd_rules && moving && coincident == 0 && agents_free < kSideTrigger * path_len * max_step &&
        progress < kSideTrigger * max_step) {
      const float v2 = vxs_[k] * vxs_[k] + vys_[k] * vys_[k];
      const bool turns = v2 * dt * dt > kTurnAbove * kTurnAbove * max_step * max_step;
      const SideStep side = side_step<kMixed>(t, kt, k, {px, py}, {s0x, s0y}, {skx, sky}, turns, held);
      // An agent at rest stays so unless a side step brings it wake_above of a step closer: it
      // does not set off round its neighbours again each time a sliver of room opens.
      const bool settled = nrest[k] != 0;
      const bool closer = side.found && side.progress > progress + kSideMargin * max_step &&
                          (!settled || side.progress >= wake_above * max_step);
      const bool round = side.found && side.round && held && !settled && progress < rest_below * max_step;
      if (closer || round) {
        move_x = side.ux;
        move_y = side.uy;
        move_allow = side.allow;
        progress = side.progress;
        walks_round = true;
      }
    }
    const bool was_resting = nrest[k] != 0;
    const bool resting = yield && held && !walks_round &&
                         (!moving || progress < (was_resting ? wake_above : rest_below) * max_step);
    // Waiting for agents that cross its way (they have right of way) counts up; see impatient.
    const bool waiting = moving && !resting && !walks_round && sums.yield_allow < kSideTrigger * path_len * max_step;
    wait_[k] = waiting ? static_cast<std::uint16_t>(std::min<std::uint32_t>(wait_[k] + 1u, 0xFFFFu)) : 0;
    rest_out[k] = resting ? 1 : 0;
    chunk_rest |= resting;
    allow_[k] = resting ? 0.0f : move_allow;
    move_x_[k] = move_x;
    move_y_[k] = move_y;
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

template Swarm::SideStep Swarm::side_step<true>(const crowd_detail::SwarmTick&, const crowd_detail::KindTick&,
                                                 std::size_t, Vec2, Vec2, Vec2, bool, bool) const;
template Swarm::SideStep Swarm::side_step<false>(const crowd_detail::SwarmTick&, const crowd_detail::KindTick&,
                                                  std::size_t, Vec2, Vec2, Vec2, bool, bool) const;
template void Swarm::gather_neighbours_of_kinds<true, true>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);
template void Swarm::gather_neighbours_of_kinds<true, false>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);
template void Swarm::gather_neighbours_of_kinds<false, true>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);
template void Swarm::gather_neighbours_of_kinds<false, false>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);

}  // namespace swarmfield::sim
