#pragma once
// The neighbour gather of the separation pass (Swarm::gather_neighbours_of_kinds), for one agent
// over the slots that passed the distance test. Internal to server/sim/src/crowd; included by
// swarm_separation.cpp (its functions are forced inline into that pass) and swarm_side_step.cpp
// (free_path4, select4).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "crowd_rules.hpp"
#include "gather_agent.hpp"
#include "right_of_way.hpp"
#include "swarm_tick.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace swarmfield::sim::crowd_detail {

using namespace crowd_rules;  // NOLINT: the rules' constants, read throughout

// ---------------------------------------------------------------------------------------------
// Neighbour gather of the separation pass (see step_impl), for one agent over a list of slots
// that passed the distance test. Written twice: four hits at a time with SSE2 (x86-64), and one
// at a time (the definition); both perform the same IEEE operations on the same values, so the
// results are the same bit for bit. The SSE2 version computes every term for every hit and masks
// out the ones the definition skips, instead of branching on each test (the tests are close to
// coin flips in a crowd, and mispredicted branches cost more than the arithmetic). Masked terms
// are +0 or +infinity: sums start at +0 and a sum is -0 only when both addends are, so adding +0
// changes nothing, and min(allow, +inf) is allow.

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
  bool faster = false;  // m's kind is faster than ours
  bool larger = false;  // our size class is above m's
  bool both_large = in.both_large;
  if constexpr (kMixed) {
    const crowd_detail::PairTick& pair = a.pair_row[in.nkind[m]];
    if (!(d2 < pair.r2)) return;
    inv_r = pair.inv_r;
    cd = pair.cd;
    pd = pair.pd;
    faster = pair.faster != 0;
    larger = pair.larger != 0;
    both_large = pair.both_large != 0;
  }
  ++s.count;
  if (d2 < kCoincidentDist2) {  // no direction: handled by id (see step_impl)
    ++s.coincident;
    if (in.nid[m] < a.id) ++s.rank;
    return;
  }
  const float d = std::sqrt(d2);
  const float inv_d = 1.0f / d;
  // Kernel weight; inv_d normalizes (dx, dy). 0 beyond R (a far step's free path looks further).
  const float w = std::max(0.0f, 1.0f - d * inv_r) * inv_d;
  // Unit vector toward m, and how fast moving along the path closes in on it.
  const float ux = -dx * inv_d, uy = -dy * inv_d;
  const float approach = a.skx * ux + a.sky * uy;
  const bool prior = goes_first(in, a, m, both_large);
  // A neighbour ahead that was at rest last tick, over which a moving agent has right of way:
  // its kernel does not push the agent back (it yields by contact only; else two agents pin
  // each other on a door's posts, the one with right of way held off by the other's presence).
  // On open ground, nor does the kernel of one it touches (kHeldContact) that goes first: the
  // agent is held there, by contact. Pushed back by that kernel, an agent on a pile's rim took
  // a step round into the pile, was pushed out again over the next ticks and stepped in again,
  // never at rest (a mixed pile's brutes, the surround of 600: 12% of the agents moving 5 s after
  // arriving, 66 of them brutes). Near walls the kernel stays: without it the agents that reach
  // a pile against a wall first stay where they touch it, and the pile grows holes (the door
  // room's corner piles: fill 0.73 -> 0.69, 15 of 16 sectors round the player).
  if (!(kRest && a.moving && in.nrest[m] != 0 && approach > 0.0f && (prior || (a.wide_open && d < cd * kHeldContact)))) {
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
  // A faster kind behind or beside, heading into us, while the goal moves: make way to the side
  // away from it (the lateral part of the way from m to us).
  if (kMixed && a.chasing && faster && approach <= 0.0f && d < cd * kMakeWayContact &&
      -(in.npx[m] * ux + in.npy[m] * uy) > kMakeWayHeading) {
    const float along_s = -ux * a.skx - uy * a.sky;
    s.wx += -ux - along_s * a.skx;
    s.wy += -uy - along_s * a.sky;
  }
  if (approach <= 0.0f) return;  // m is beside or behind
  if (pushes_past_stuck(in, a, m, approach)) return;
  if (kMixed && larger && shoves_across(in, a, m)) return;
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
  if (converging && (prior || (a.impatient && (in.nstream[m] & kStreamBit) != 0))) return;
  if (kMixed && larger && a.shoves && on_other_route(in, a, m)) s.other_route = 1;
  const float room = free_path(d, approach, cd);
  float free = in.yf * room;
  // A leader: m ahead, not coming our way, flowing freely last tick (at kFreeFlowSpeed of its
  // top speed) and on along our path. It likely moves on this tick too, so the room is measured
  // to where that takes it (car following: a stream keeps its speed instead of each agent
  // waiting a tick for the gap the one ahead opened). A leader held up last tick is likely held
  // up again: counting on it would only press into it. Only for an agent whose goal moves.
  // The room grows by at most how far the leader goes along our path.
  const float lx = in.nvx[m] * in.lead_dt, ly = in.nvy[m] * in.lead_dt;
  const float along = a.skx * lx + a.sky * ly;
  if (a.chasing && !converging && along > 0.0f && (in.nstream[m] & kFreeFlowBit) != 0) {
    const float ldx = dx - lx, ldy = dy - ly;
    const float ld = std::sqrt(ldx * ldx + ldy * ldy);
    const float lapproach = -(a.skx * ldx + a.sky * ldy) / ld;
    const float lfree = lapproach > 0.0f ? free_path(ld, lapproach, cd) : std::numeric_limits<float>::infinity();
    free = in.yf * std::min(lfree, room + along);
  }
  s.allow = std::min(s.allow, free);
  if (!pressed) s.press_allow = std::min(s.press_allow, free);
  if (converging) {
    // Backing off: yielding to m does not clear m's way when our disc is in it. Two brutes
    // converging on a 2-cell door's mouth along its wall stood there for minutes, the one with
    // right of way pressed back by the one yielding to it.
    if (a.backs_off && !prior && d < cd * kBackOffContact && m_approach > kBackOffHeading &&
        (in.nstream[m] & kStoodBit) != 0) {
      s.bx += dx * inv_d;
      s.by += dy * inv_d;
    }
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

/// Hits gather_hits() takes at most (the query's batch, Swarm::kNearKeep + 4).
inline constexpr std::uint32_t kMaxGatherHits = 132;

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

/// Bit j set when slot mj's byte in `flags` has a bit of `mask` set (lane j = slot mj).
inline std::uint32_t flag_bits(const std::uint8_t* flags, std::uint8_t mask, std::uint32_t m0, std::uint32_t m1,
                               std::uint32_t m2, std::uint32_t m3) noexcept {
  return static_cast<std::uint32_t>((flags[m0] & mask) != 0) | (static_cast<std::uint32_t>((flags[m1] & mask) != 0) << 1) |
         (static_cast<std::uint32_t>((flags[m2] & mask) != 0) << 2) |
         (static_cast<std::uint32_t>((flags[m3] & mask) != 0) << 3);
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
  [[maybe_unused]] std::uint32_t within[kMaxGatherHits];
  [[maybe_unused]] std::uint32_t unshoved[kMaxGatherHits];
  if constexpr (kMixed) {
    if (a.shoves) {
      n = drop_bulldozed(in, a, slots, n, unshoved, s);
      slots = unshoved;
    }
    // The hits come from the widest pair's radius (a runner's query reaches a brute's R): in a
    // packed mixed crowd most of them are beyond their own pair's R and count for nothing. Keep
    // those within it first, in order (the same d2 test as below, bit for bit), so the full
    // pass below runs on whole groups of neighbours: the sums are the same, as a hit beyond
    // its R only ever added zeros (and infinities to minima).
    std::uint32_t kept = 0;
    for (std::uint32_t i = 0; i < n; i += 4) {
      const std::uint32_t lanes = n - i < 4 ? n - i : 4;
      const std::uint32_t m0 = slots[i], m1 = lanes > 1 ? slots[i + 1] : m0, m2 = lanes > 2 ? slots[i + 2] : m0,
                          m3 = lanes > 3 ? slots[i + 3] : m0;
      const __m128 dx = _mm_sub_ps(px, _mm_setr_ps(in.nx[m0], in.nx[m1], in.nx[m2], in.nx[m3]));
      const __m128 dy = _mm_sub_ps(py, _mm_setr_ps(in.ny[m0], in.ny[m1], in.ny[m2], in.ny[m3]));
      const __m128 d2 = _mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy));
      const __m128 r2 = _mm_setr_ps(a.pair_row[in.nkind[m0]].r2, a.pair_row[in.nkind[m1]].r2,
                                    a.pair_row[in.nkind[m2]].r2, a.pair_row[in.nkind[m3]].r2);
      const auto mask = static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmplt_ps(d2, r2))) & ((1u << lanes) - 1u);
      within[kept] = m0;
      kept += mask & 1u;
      within[kept] = m1;
      kept += (mask >> 1) & 1u;
      within[kept] = m2;
      kept += (mask >> 2) & 1u;
      within[kept] = m3;
      kept += mask >> 3;
    }
    slots = within;
    n = kept;
  }
  const __m128 one = _mm_set1_ps(1.0f), zero = _mm_setzero_ps();
  __m128 inv_r = _mm_set1_ps(in.inv_r), cd = _mm_set1_ps(in.cd), pd = _mm_set1_ps(in.pd);
  const __m128 yf = _mm_set1_ps(in.yf);
  const __m128 inf = _mm_set1_ps(std::numeric_limits<float>::infinity());
  for (std::uint32_t i = 0; i < n; i += 4) {
    const std::uint32_t lanes = n - i < 4 ? n - i : 4;
    std::uint32_t valid_bits = (1u << lanes) - 1u;
    std::uint32_t faster_bits = 0;  // (kMixed) lanes of a faster kind
    std::uint32_t larger_bits = 0;  // (kMixed) lanes of a smaller size class than ours
    // Missing lanes repeat the first hit (any valid slot; they are masked out).
    const std::uint32_t m0 = slots[i], m1 = lanes > 1 ? slots[i + 1] : m0, m2 = lanes > 2 ? slots[i + 2] : m0,
                        m3 = lanes > 3 ? slots[i + 3] : m0;
    const __m128 nx = _mm_setr_ps(in.nx[m0], in.nx[m1], in.nx[m2], in.nx[m3]);
    const __m128 ny = _mm_setr_ps(in.ny[m0], in.ny[m1], in.ny[m2], in.ny[m3]);
    const __m128 dx = _mm_sub_ps(px, nx), dy = _mm_sub_ps(py, ny);
    const __m128 d2 = _mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy));
    if constexpr (kMixed) {
      // Each lane's pair constants; a hit beyond its pair's r2 (R, or a far step's reach:
      // SwarmTick::far_pairs) is not a neighbour (as gather_one).
      const crowd_detail::PairTick& p0 = a.pair_row[in.nkind[m0]];
      const crowd_detail::PairTick& p1 = a.pair_row[in.nkind[m1]];
      const crowd_detail::PairTick& p2 = a.pair_row[in.nkind[m2]];
      const crowd_detail::PairTick& p3 = a.pair_row[in.nkind[m3]];
      const __m128 r2 = _mm_setr_ps(p0.r2, p1.r2, p2.r2, p3.r2);
      valid_bits &= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmplt_ps(d2, r2)));
      inv_r = _mm_setr_ps(p0.inv_r, p1.inv_r, p2.inv_r, p3.inv_r);
      cd = _mm_setr_ps(p0.cd, p1.cd, p2.cd, p3.cd);
      pd = _mm_setr_ps(p0.pd, p1.pd, p2.pd, p3.pd);
      faster_bits = p0.faster | (p1.faster << 1) | (p2.faster << 2) | (p3.faster << 3);
      larger_bits = p0.larger | (p1.larger << 1) | (p2.larger << 2) | (p3.larger << 3);
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
    const __m128 w = _mm_mul_ps(_mm_max_ps(zero, _mm_sub_ps(one, _mm_mul_ps(d, inv_r))), inv_d);
    const __m128 touching = _mm_and_ps(normal, _mm_cmplt_ps(d, cd));
    const __m128 c = _mm_mul_ps(_mm_mul_ps(_mm_sub_ps(cd, d), _mm_set1_ps(0.5f)), inv_d);
    // Right of way over m (nearer the goal, then the lower id).
    auto ours = [&](std::uint32_t m) noexcept {
      if (a.large && (kMixed ? a.pair_row[in.nkind[m]].both_large != 0 : in.both_large)) {
        return static_cast<std::uint32_t>(goes_first(in, a, m, true));
      }
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
        const std::uint32_t rest_bits = flag_bits(in.nrest, 0xFF, m0, m1, m2, m3);
        if (rest_bits != 0) {
          const std::uint32_t way = ours(m0) | (ours(m1) << 1) | (ours(m2) << 2) | (ours(m3) << 3);
          const __m128 held = a.wide_open ? _mm_cmplt_ps(d, _mm_mul_ps(cd, _mm_set1_ps(kHeldContact))) : zero;
          const __m128 skip = _mm_and_ps(lane_mask(rest_bits), _mm_or_ps(lane_mask(way), held));
          kernel_on = _mm_andnot_ps(_mm_and_ps(_mm_cmpgt_ps(approach_of(), zero), skip), normal);
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
      const std::uint32_t rest_bits = flag_bits(in.nrest, 0xFF, m0, m1, m2, m3);
      const std::uint32_t near_bits = static_cast<std::uint32_t>(_mm_movemask_ps(
          _mm_and_ps(normal, _mm_and_ps(_mm_cmplt_ps(d, _mm_mul_ps(cd, _mm_set1_ps(kHeldContact))),
                                        _mm_cmpgt_ps(approach, _mm_set1_ps(kHeldAhead))))));
      if ((rest_bits & ~way_bits & near_bits) != 0) s.anchored = 1;
    }
    const __m128 npx = _mm_setr_ps(in.npx[m0], in.npx[m1], in.npx[m2], in.npx[m3]);
    const __m128 npy = _mm_setr_ps(in.npy[m0], in.npy[m1], in.npy[m2], in.npy[m3]);
    const __m128 m_approach = _mm_xor_ps(_mm_add_ps(_mm_mul_ps(npx, ux), _mm_mul_ps(npy, uy)), sign);
    const __m128 converging = _mm_cmpgt_ps(m_approach, zero);
    if (kMixed && a.chasing && (faster_bits & valid_bits) != 0) {
      // Making way for a faster kind heading into us from behind or beside (gather_one).
      const __m128 press = _mm_and_ps(
          _mm_and_ps(normal, lane_mask(faster_bits)),
          _mm_and_ps(_mm_and_ps(_mm_cmple_ps(approach, zero), _mm_cmplt_ps(d, _mm_mul_ps(cd, _mm_set1_ps(kMakeWayContact)))),
                     _mm_cmpgt_ps(m_approach, _mm_set1_ps(kMakeWayHeading))));
      if (_mm_movemask_ps(press) != 0) {
        const __m128 skx = _mm_set1_ps(a.skx), sky = _mm_set1_ps(a.sky);
        const __m128 ax = _mm_xor_ps(ux, sign), ay = _mm_xor_ps(uy, sign);
        const __m128 along_s = _mm_add_ps(_mm_mul_ps(ax, skx), _mm_mul_ps(ay, sky));
        alignas(16) float lx4[4], ly4[4];
        _mm_store_ps(lx4, _mm_and_ps(press, _mm_sub_ps(ax, _mm_mul_ps(along_s, skx))));
        _mm_store_ps(ly4, _mm_and_ps(press, _mm_sub_ps(ay, _mm_mul_ps(along_s, sky))));
        for (std::uint32_t j = 0; j < 4; ++j) {
          s.wx += lx4[j];
          s.wy += ly4[j];
        }
      }
    }
    const __m128 prior = lane_mask(way_bits);
    const __m128 pressed = _mm_cmplt_ps(d, pd);
    // Ignored: pressed into a neighbour that yields to us, and converging ones that yield to us
    // (or all converging ones, impatient). Goes on past "approach <= 0" as gather_one (NaN too).
    const std::uint32_t stream_bits = flag_bits(in.nstream, kStreamBit, m0, m1, m2, m3);
    __m128 ignored = _mm_or_ps(_mm_and_ps(pressed, in.press_all ? lane_mask(15u) : prior),
                               _mm_and_ps(converging, lane_mask(a.impatient ? way_bits | stream_bits : way_bits)));
    if (a.prio != kUnreachable) {
      // Grazing neighbours with no way to a goal (pushes_past_stuck).
      const std::uint32_t stuck_bits = static_cast<std::uint32_t>(in.nprio[m0] == kUnreachable) |
                                       (static_cast<std::uint32_t>(in.nprio[m1] == kUnreachable) << 1) |
                                       (static_cast<std::uint32_t>(in.nprio[m2] == kUnreachable) << 2) |
                                       (static_cast<std::uint32_t>(in.nprio[m3] == kUnreachable) << 3);
      if (stuck_bits != 0) {
        ignored = _mm_or_ps(ignored, _mm_and_ps(lane_mask(stuck_bits), _mm_cmplt_ps(approach, _mm_set1_ps(kGrazeStuck))));
      }
      // Cross traffic of a smaller size class on another route (shoves_across).
      auto other_route = [&](std::uint32_t m) noexcept {
        return static_cast<std::uint32_t>(on_other_route(in, a, m));
      };
      if (kMixed && a.shoves && (larger_bits & valid_bits) != 0) {
        larger_bits &= other_route(m0) | (other_route(m1) << 1) | (other_route(m2) << 2) | (other_route(m3) << 3);
      }
      if (kMixed && a.shoves && (larger_bits & valid_bits) != 0) {
        const __m128 along = _mm_add_ps(_mm_mul_ps(npx, _mm_set1_ps(a.skx)), _mm_mul_ps(npy, _mm_set1_ps(a.sky)));
        const __m128 len2 = _mm_add_ps(_mm_mul_ps(npx, npx), _mm_mul_ps(npy, npy));
        const __m128 crosses = _mm_and_ps(
            _mm_cmpgt_ps(len2, zero),
            _mm_or_ps(_mm_cmplt_ps(along, zero),
                      _mm_cmplt_ps(_mm_mul_ps(along, along), _mm_mul_ps(_mm_set1_ps(kShoveCross * kShoveCross), len2))));
        ignored = _mm_or_ps(ignored, _mm_and_ps(lane_mask(larger_bits), crosses));
      }
    }
    const __m128 yields = _mm_andnot_ps(ignored, _mm_and_ps(normal, _mm_cmpnle_ps(approach, zero)));
    // (Under a.shoves larger_bits holds the lanes on another route only.)
    if (kMixed && a.shoves) s.other_route |= static_cast<std::uint32_t>(_mm_movemask_ps(yields)) & larger_bits & valid_bits;
    // Leaders (gather_one): ahead, not converging, moved on along our path last tick.
    const __m128 lead_dt = _mm_set1_ps(in.lead_dt);
    const __m128 lx = _mm_mul_ps(_mm_setr_ps(in.nvx[m0], in.nvx[m1], in.nvx[m2], in.nvx[m3]), lead_dt);
    const __m128 ly = _mm_mul_ps(_mm_setr_ps(in.nvy[m0], in.nvy[m1], in.nvy[m2], in.nvy[m3]), lead_dt);
    const __m128 along = _mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), lx), _mm_mul_ps(_mm_set1_ps(a.sky), ly));
    // (A leader held up last tick is likely held up again: only those that flowed freely.)
    const std::uint32_t flowing_bits = flag_bits(in.nstream, kFreeFlowBit, m0, m1, m2, m3);
    const __m128 leads =
        _mm_and_ps(lane_mask(flowing_bits), _mm_andnot_ps(converging, _mm_cmpgt_ps(along, zero)));
    __m128 free_now = free_path4(d, approach, cd);
    if (a.chasing && _mm_movemask_ps(_mm_and_ps(leads, yields)) != 0) {
      const __m128 ldx = _mm_sub_ps(dx, lx), ldy = _mm_sub_ps(dy, ly);
      const __m128 ld = _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(ldx, ldx), _mm_mul_ps(ldy, ldy)));
      const __m128 lapproach = _mm_div_ps(
          _mm_xor_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), ldx), _mm_mul_ps(_mm_set1_ps(a.sky), ldy)), sign), ld);
      const __m128 lfree = _mm_min_ps(select4(_mm_cmpgt_ps(lapproach, zero), free_path4(ld, lapproach, cd), inf),
                                       _mm_add_ps(free_now, along));
      free_now = select4(leads, lfree, free_now);
    }
    const __m128 first = select4(yields, _mm_mul_ps(yf, free_now), inf);
    // Yielding to a converging m: also keep clear of where it is heading.
    const __m128 wx = _mm_sub_ps(_mm_add_ps(nx, _mm_mul_ps(npx, cd)), px);
    const __m128 wy = _mm_sub_ps(_mm_add_ps(ny, _mm_mul_ps(npy, cd)), py);
    const __m128 wd = _mm_sqrt_ps(_mm_add_ps(_mm_mul_ps(wx, wx), _mm_mul_ps(wy, wy)));
    const __m128 ahead =
        _mm_div_ps(_mm_add_ps(_mm_mul_ps(_mm_set1_ps(a.skx), wx), _mm_mul_ps(_mm_set1_ps(a.sky), wy)), wd);
    const __m128 second_on = _mm_and_ps(_mm_and_ps(yields, converging),
                                        _mm_and_ps(_mm_cmpgt_ps(wd, _mm_set1_ps(1e-6f)), _mm_cmpgt_ps(ahead, zero)));
    const __m128 second = select4(second_on, _mm_mul_ps(yf, free_path4(wd, ahead, cd)), inf);
    if (a.backs_off) {
      // Backing off (gather_one): away from a neighbour with right of way that we yield to,
      // touching, heading into us, held up last tick.
      const std::uint32_t stood_bits = flag_bits(in.nstream, kStoodBit, m0, m1, m2, m3);
      const __m128 back = _mm_and_ps(
          _mm_and_ps(_mm_and_ps(yields, converging), lane_mask(stood_bits)),
          _mm_and_ps(_mm_cmplt_ps(d, _mm_mul_ps(cd, _mm_set1_ps(kBackOffContact))),
                     _mm_cmpgt_ps(m_approach, _mm_set1_ps(kBackOffHeading))));
      if (_mm_movemask_ps(back) != 0) {
        alignas(16) float bx4[4], by4[4];
        _mm_store_ps(bx4, _mm_and_ps(back, _mm_mul_ps(dx, inv_d)));
        _mm_store_ps(by4, _mm_and_ps(back, _mm_mul_ps(dy, inv_d)));
        for (std::uint32_t j = 0; j < 4; ++j) {
          s.bx += bx4[j];
          s.by += by4[j];
        }
      }
    }
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
  [[maybe_unused]] std::uint32_t unshoved[kMaxGatherHits];
  if constexpr (kMixed) {
    if (a.shoves) {
      n = drop_bulldozed(in, a, slots, n, unshoved, s);
      slots = unshoved;
    }
  }
  for (std::uint32_t i = 0; i < n; ++i) gather_one<kMixed, kRest>(in, a, slots[i], s);
}
#endif

}  // namespace swarmfield::sim::crowd_detail
