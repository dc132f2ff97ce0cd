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
#include <cmath>
#include <limits>

#include "crowd_rules.hpp"
#include "gather_kernel.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::sim {

using crowd_detail::id_direction;
using crowd_detail::kCoincidentDist2;
using crowd_detail::kPrefetchAgents;

using namespace crowd_rules;  // NOLINT: the rules' constants, read throughout
using crowd_detail::GatherAgent;
using crowd_detail::GatherInput;
using crowd_detail::GatherSums;
using crowd_detail::gather_hits;

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

// Fetch a few agents ahead what the query and the move will read: the hash's cell ranges and
// the open-cell byte (megabyte tables read at scattered places when agents are spread out; no
// effect on any result).
SWARMFIELD_ALWAYS_INLINE inline void prefetch_gather(const crowd_detail::SwarmTick& t, const SpatialHash& hash,
                                                     std::size_t k) noexcept {
  if (k + kPrefetchAgents >= t.n) return;
  const Vec2 ahead{t.sxs[k + kPrefetchAgents], t.sys[k + kPrefetchAgents]};
  hash.prefetch_near(ahead);
  if (ahead.x >= 0.0f && ahead.y >= 0.0f && ahead.x < t.map_wf * t.cs && ahead.y < t.map_hf * t.cs) {
    // Only a hint: any cell near the agent's will do (truncation, a reciprocal).
    const auto fx = static_cast<std::int32_t>(ahead.x * t.inv_cs), fy = static_cast<std::int32_t>(ahead.y * t.inv_cs);
    __builtin_prefetch(t.open + (t.map.index(std::min(fx, t.map_w - 1), std::min(fy, t.map_h - 1)) >> 6));
  }
}

// Neighbours in two steps: the distance test over the candidate slots, four at a time and
// without a branch per candidate, collecting the hits in query order; then the hits, in that
// order (gather_hits), a batch at a time.
template <bool kMixed, bool kRest>
SWARMFIELD_ALWAYS_INLINE inline Swarm::NearSlots Swarm::query_neighbours(const GatherInput& in, const GatherAgent& a,
                                                                         float r2, std::uint32_t self, GatherSums& sums,
                                                                         std::uint32_t* hit_slot, float contact_r2,
                                                                         std::uint32_t* contacts,
                                                                         std::uint32_t& contact_count) const {
  const float px = a.px, py = a.py;
  const float* const nx = in.nx;
  const float* const ny = in.ny;
  // Slots of the agent's neighbours within R into hit_slot (kNearKeep + 4 entries: room for one
  // more group of four), all of them when they fit (side_step reads them again), else a batch
  // of kNearKeep at a time.
  std::uint32_t hits = 0;
  bool complete = true;
#if defined(SWARMFIELD_SIMD_GATHER)
  const __m128 vpx = _mm_set1_ps(px), vpy = _mm_set1_ps(py), vr2 = _mm_set1_ps(r2), vc2 = _mm_set1_ps(contact_r2);
#endif
  std::uint32_t kept = 0;  // neighbours within the contact radius
  // (Columns and rows of the block beyond R and the contact radius hold no hit: left out, the
  // hits are the same.)
  const float radius = std::sqrt(std::max(r2, contact_r2));
  hash_.for_each_range_within({px, py}, radius, [&](std::uint32_t first, std::uint32_t last) SWARMFIELD_ALWAYS_INLINE {
    // Four slots per step; slots past `last` (up to 3, inside the hash's padding, see
    // SpatialHash::kSlotPadding) are loaded but masked out.
    for (std::uint32_t m0 = first; m0 < last; m0 += 4) {
#if defined(SWARMFIELD_SIMD_GATHER)
      const __m128 dxv = _mm_sub_ps(vpx, _mm_loadu_ps(nx + m0));
      const __m128 dyv = _mm_sub_ps(vpy, _mm_loadu_ps(ny + m0));
      const __m128 d2v = _mm_add_ps(_mm_mul_ps(dxv, dxv), _mm_mul_ps(dyv, dyv));
      // Within R: !(d2 >= r2), the definition's test (true for NaN too).
      auto mask = static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmpnge_ps(d2v, vr2)));
      auto contact_mask = static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmplt_ps(d2v, vc2)));
#else
      std::uint32_t mask = 0, contact_mask = 0;
      for (std::uint32_t j = 0; j < 4 && m0 + j < last; ++j) {
        const float dx = px - nx[m0 + j], dy = py - ny[m0 + j];
        mask |= static_cast<std::uint32_t>(!(dx * dx + dy * dy >= r2)) << j;
        contact_mask |= static_cast<std::uint32_t>(dx * dx + dy * dy < contact_r2) << j;
      }
#endif
      const std::uint32_t left = last - m0;
      const std::uint32_t in_range = (left >= 4 ? 15u : (1u << left) - 1u) & ~(self - m0 < 4u ? 1u << (self - m0) : 0u);
      mask &= in_range;
      contact_mask &= in_range;
#if defined(SWARMFIELD_SIMD_GATHER)
      // With several kinds, within their own pair's reach (the mask used the widest pair's): a
      // runner among runners is not kept for every runner a brute's reach away. (Lanes past
      // `last` read the last slot's kind: they are masked out.)
      if (kMixed && contact_mask != 0) {
        const std::uint32_t top = last - 1;
        const crowd_detail::PairTick* const row = a.pair_row;
        const __m128 pc2 = _mm_setr_ps(row[in.nkind[m0]].contact_r2, row[in.nkind[std::min(m0 + 1, top)]].contact_r2,
                                       row[in.nkind[std::min(m0 + 2, top)]].contact_r2,
                                       row[in.nkind[std::min(m0 + 3, top)]].contact_r2);
        contact_mask &= static_cast<std::uint32_t>(_mm_movemask_ps(_mm_cmplt_ps(d2v, pc2)));
      }
#else
      if constexpr (kMixed) {
        for (std::uint32_t j = 0; j < 4 && m0 + j < last; ++j) {
          const float dx = px - nx[m0 + j], dy = py - ny[m0 + j];
          if (!(dx * dx + dy * dy < a.pair_row[in.nkind[m0 + j]].contact_r2)) contact_mask &= ~(1u << j);
        }
      }
#endif
      // Candidates close enough to touch the agent after the move, in query order.
      while (contact_mask != 0) {
        if (kept < crowd_detail::kContactSlots) contacts[kept] = m0 + static_cast<std::uint32_t>(std::countr_zero(contact_mask));
        ++kept;
        contact_mask &= contact_mask - 1u;
      }
      // Append the masked-in slots without branching: write each, advance past the kept ones.
      hit_slot[hits] = m0;
      hits += mask & 1u;
      hit_slot[hits] = m0 + 1;
      hits += (mask >> 1) & 1u;
      hit_slot[hits] = m0 + 2;
      hits += (mask >> 2) & 1u;
      hit_slot[hits] = m0 + 3;
      hits += mask >> 3;
      if (hits >= kNearKeep) {
        gather_hits<kMixed, kRest>(in, a, hit_slot, hits, sums);
        hits = 0;
        complete = false;
      }
    }
  });
  gather_hits<kMixed, kRest>(in, a, hit_slot, hits, sums);
  contact_count = kept;
  return {hit_slot, hits, complete};
}

// The move: along the path up to the free path; when that is mostly blocked, a step round the
// agent ahead (side_step) if that brings the agent closer. Rest is earned, not caught: an agent
// rests only when held (touching the goal's disc, or a neighbour ahead with right of way that
// rested last tick: a chain of contacts from a goal) and no move brings it closer; it wakes
// when a move opens by wake_above of a step or its hold goes. A queue behind an agent that
// merely waits never rests, and an agent whose way round is open walks round. Hysteresis:
// rest_below to rest, wake_above to wake.
template <bool kMixed>
SWARMFIELD_ALWAYS_INLINE inline bool Swarm::choose_move(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt,
                                                        std::size_t k, const GatherAgent& a, float path_len,
                                                        const GatherSums& sums, const NearSlots& near,
                                                        bool crowd_rules) {
  const float max_step = kt.max_step;
  const float rest_below = t.rest_below, wake_above = t.wake_above;
  // Crushed (overlapping its neighbours by more than kCrushed diameters in all, e.g. a spawn
  // packed past contact): it pushes on into every agent it overlaps past press_overlap, right of
  // way or not; only pressure clears such a crowd. Otherwise it never pushes into an agent that
  // goes first (the two-agent jam at a door).
  const bool crushed = sums.overlap > kCrushed;
  const float agents_free = crushed ? sums.press_allow : sums.allow;  // along the path, among agents only
  const float allow = std::min(agents_free, std::max(goal_room_[k], 0.0f));
  const bool moving = a.moving;
  const float s0x = steer_x_[k], s0y = steer_y_[k];
  float move_x = s0x, move_y = s0y;
  float travel = 0.0f, progress = 0.0f;
  if (moving) {
    travel = std::min(allow, path_len * max_step);
    progress = travel * (a.skx * s0x + a.sky * s0y);
  }
  float move_allow = moving ? allow / path_len : max_step;
  bool walks_round = false;  // takes a step round the agent ahead
  const auto take = [&](const SideStep& side) {
    move_x = side.ux;
    move_y = side.uy;
    move_allow = side.allow;
    progress = side.progress;
    walks_round = true;
  };
  // Touching a goal holds only while the goal stands: behind a player on the move no rest starts
  // (it would spread through the chasing crowd and leave it standing as the player runs).
  const bool held = sums.anchored != 0 || (goal_room_[k] <= kGoalTouch * kt.contact_d && goal_moves_[k] == 0);
  const bool was_resting = resting_[k] != 0;
  // Only agents in the way call for a side step (walls are the path's business), and only an
  // agent held by a resting crowd walks round it with no progress this tick: in a queue that
  // merely waits, walking round would only shuffle agents to and fro.
  // Chasing a goal on the move, an agent held below kOvertakeTrigger of its step by a slower one
  // ahead looks for a way past it too (overtaking: discs that keep apart cannot push through).
  const float trigger = a.chasing ? kOvertakeTrigger : kSideTrigger;
  if (crowd_rules && moving && sums.coincident == 0 && agents_free < trigger * path_len * max_step &&
      progress < trigger * max_step) {
    const float v2 = vxs_[k] * vxs_[k] + vys_[k] * vys_[k];
    const bool turns = v2 * kt.dt * kt.dt > kTurnAbove * kTurnAbove * max_step * max_step;
    const SideStep side = side_step<kMixed>(t, kt, k, {a.px, a.py}, {s0x, s0y}, {a.skx, a.sky}, turns, held, near);
    // An agent at rest stays so unless a side step brings it wake_above of a step closer: it does
    // not set off round its neighbours again each time a sliver of room opens. On wide open
    // ground it also walks round the agent dead ahead when that way opens to free ground toward
    // the goal (SideStep::opens): the side of a resting line, not the rim of a pile.
    const bool closer = side.found && side.progress > progress + kSideMargin * max_step &&
                        (!was_resting || side.progress >= wake_above * max_step);
    const bool round = side.found && side.round && held && (!was_resting || side.opens) && progress < rest_below * max_step;
    if (closer || round) take(side);
  }
  // Making way (kMixed, the goal on the move): pressed from behind by a faster kind, turn to the
  // side away from it while that still keeps most of a step toward the goal, so the faster one
  // gets by instead of following at our speed.
  if (kMixed && crowd_rules && a.chasing && moving && !walks_round && sums.coincident == 0) {
    const float wl = std::sqrt(sums.wx * sums.wx + sums.wy * sums.wy);
    if (wl > 1e-3f) {
      Vec2 dir{s0x + kMakeWayTurn * sums.wx / wl, s0y + kMakeWayTurn * sums.wy / wl};
      dir = dir * (1.0f / length(dir));
      const SideStep side =
          side_step<kMixed>(t, kt, k, {a.px, a.py}, {s0x, s0y}, {a.skx, a.sky}, false, false, near, &dir);
      if (side.found && side.progress >= kMakeWayProgress * max_step) take(side);
    }
  }
  // Backing off (a larger size class near a wall): blocked, and in the way of a neighbour with right
  // of way that it touches and that is held up (GatherSums::bx): a step away from it when that
  // way is free, so the one with right of way gets by (a brute on a 2-cell door's mouth).
  if (crowd_rules && moving && !walks_round && sums.coincident == 0 && (sums.bx != 0.0f || sums.by != 0.0f) &&
      agents_free < kSideTrigger * path_len * max_step) {
    const float bl = std::sqrt(sums.bx * sums.bx + sums.by * sums.by);
    if (bl > 1e-3f) {
      const Vec2 dir{sums.bx / bl, sums.by / bl};
      const SideStep side =
          side_step<kMixed>(t, kt, k, {a.px, a.py}, {s0x, s0y}, {a.skx, a.sky}, false, false, near, &dir, true);
      if (side.found) {
        take(side);
        move_allow = std::min(side.allow, kBackOffStep * max_step);
      }
    }
  }
  const bool resting = t.yield && held && !walks_round &&
                       (!moving || progress < (was_resting ? wake_above : rest_below) * max_step);
  // Waiting for agents that cross its way (they have right of way) counts up; see impatient.
  const bool waiting = moving && !resting && !walks_round && sums.yield_allow < kSideTrigger * path_len * max_step;
  wait_[k] = waiting ? static_cast<std::uint16_t>(std::min<std::uint32_t>(wait_[k] + kt.ticks, 0xFFFFu)) : 0;
  perm_resting_[k] = resting ? 1 : 0;
  allow_[k] = resting ? 0.0f : move_allow;
  move_x_[k] = move_x;
  move_y_[k] = move_y;
  return resting;
}

// The overlap correction of the agent in slot k, or its burst displacement (chunk `begin`).
SWARMFIELD_ALWAYS_INLINE inline void Swarm::correct_overlap(const crowd_detail::SwarmTick& t,
                                                            const crowd_detail::KindTick& kt, std::size_t k,
                                                            std::size_t begin, const GatherSums& sums, bool resting) {
  const float max_step = kt.max_step;
  Vec2 corr{};
  std::uint8_t burst = 0;
  if (sums.coincident > 0) {
    // Stacked on other agents: this tick's whole displacement is the agent's point of the
    // stack's burst pattern (burst_pattern.hpp) times max_step. The pattern may not exist yet,
    // and this phase runs on several threads: leave the rank and the group size, and
    // Swarm::start_bursts() looks the point up after the phase.
    corr = {static_cast<float>(sums.rank), static_cast<float>(sums.coincident + 1)};
    burst = 2;
    burst_chunks_[begin / t.chunk] = 1;
  } else if (burst_ticks_[k] > 0 && max_step > 0.0f) {
    // Still bursting out of a stack: repeat last tick's displacement, so the stack's Vogel disc
    // keeps its shape and only grows (see burst_ticks()).
    const float inv_step = 1.0f / max_step;
    corr = {vxs_[k] * kt.dt * inv_step, vys_[k] * kt.dt * inv_step};
    burst = 1;
    --burst_ticks_[k];
  } else {
    // The mean kernel reaches past contact (R > 2r): it spreads a moving crowd across a street,
    // but at rest it alone would hold agents R apart and keep a packed crowd creeping. It acts in
    // proportion to how freely the agent moves this tick (its free path over max_step); a
    // blocked or holding agent feels only the contact term.
    const float freedom = resting ? 0.0f : 1.0f;
    const float mean = sums.count > 0 ? freedom / static_cast<float>(sums.count) : 0.0f;
    corr = {sums.sx * mean * kt.stiffness + sums.kx * kt.contact_stiffness,
            sums.sy * mean * kt.stiffness + sums.ky * kt.contact_stiffness};
  }
  corr_x_[k] = corr.x;
  corr_y_[k] = corr.y;
  bursting_[k] = burst;
}

template <bool kMixed, bool kRest>
void Swarm::gather_neighbours_of_kinds(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end) {
  const float* const sxs = t.sxs;
  const float* const sys = t.sys;
  // Local copies of what the neighbour loop reads: this pass stores bytes (burst ticks), which
  // may alias any memory, so values reached through `t` or `this` would be reloaded each time.
  const std::uint32_t* const nid = ids_.data();
  const std::uint32_t* const nprio = prio_.data();
  const float* const npx = path_x_.data();
  const float* const npy = path_y_.data();
  const std::uint8_t* const nkind = t.kind;
  // With one kind, its pair's constants for every hit (unused with several).
  const crowd_detail::PairTick& only = t.pairs[t.only_kind * kMaxAgentKinds + t.only_kind];
  const std::uint8_t only_kind = t.only_kind;
  const crowd_detail::KindTick only_kt = t.kinds[only_kind];
  const bool yield = t.yield;
  // The crowd rules of the World's step (any-angle navigation, NavigationSet): walking round,
  // side steps, patience, no pushing into agents that go first. The flow-field step (no
  // NavigationSet: tests and benchmarks of the bare swarm) keeps the plain queueing rules.
  const bool crowd_rules = t.nav != nullptr;
  // Shoving compares priorities of two size classes' fields: whole-map fields only (in
  // hierarchical mode a priority is a near field's value, not a distance to the goal).
  const bool may_shove = kMixed && crowd_rules && !t.nav->hierarchical();
  // Rest flags: last tick's (slot order) are read for the neighbours (in.nrest); this tick's go
  // to the spare buffer, swapped in at the end of the step.
  const GatherInput in{sxs,
                       sys,
                       nid,
                       nprio,
                       npx,
                       npy,
                       nkind,
                       resting_.data(),
                       streaming_.data(),
                       vxs_.data(),
                       vys_.data(),
                       only.inv_r,
                       only.cd,
                       only.pd,
                       t.yield_fraction,
                       crowd_rules ? t.dt : 0.0f,
                       !crowd_rules,
                       open_here_.data(),
                       goal_room_.data(),
                       only.both_large != 0};
  std::uint32_t* const contacts = contacts_.data();
  std::uint8_t* const contact_count = contact_count_.data();
  bool chunk_rest = false;  // some agent of the chunk rests this tick
  bool chunk_far = false;   // some agent of the chunk is far (SwarmParams::far_step_cells)
  std::uint32_t hit_slot[kNearKeep + 4];  // the query's hits (query_neighbours)
  static_assert(kNearKeep + 4 <= crowd_detail::kMaxGatherHits, "gather_hits compacts a batch into kMaxGatherHits");
  const bool sleep_on = t.sleep_ticks != 0;
  std::uint32_t chunk_sleepers = 0;
  for (std::size_t k = begin; k < end; ++k) {
    prefetch_gather(t, hash_, k);
    // Last tick's gather's kOtherRouteBit (the steering read it); this gather sets it anew.
    const bool bulldozed = kMixed && (commit_[k] & kOtherRouteBit) != 0;
    if (kMixed) commit_[k] = static_cast<std::uint8_t>(commit_[k] & ~kOtherRouteBit);
    // A far agent holding this tick (the steering decided it, and skipped its own): still far.
    if (asleep_[k] == crowd_detail::kFarHold) {
      hold_far(k);
      Swarm::FarState& held = far_[k];
      if (held.step_ticks != 0) {
        held.shown = std::min(crowd_detail::far_lead(t, nid[k], held.far), held.step_ticks);
      }
      chunk_far = true;
      continue;
    }
    // With one kind, every agent is of it: its constants from a local copy (this pass stores
    // bytes, so the table itself would be read again for every agent).
    const std::uint8_t self_kind = kMixed ? nkind[k] : only_kind;
    const crowd_detail::KindTick& near_kt = kMixed ? t.kinds[self_kind] : only_kt;
    // Sleep (swarm_sleep.cpp): calm long enough, unmarked and steering as last tick, the agent
    // holds at rest without a gather; quiet (2): calm so far this tick, integrate_agents decides.
    // The steering's signature only where it is read: an agent that rested last tick (may it
    // sleep?), or rests now or has calm neighbours (below); else kNoSignature.
    std::uint8_t quiet = 0;
    std::uint32_t signature = crowd_detail::kNoSignature;
    bool signed_now = false;
    if (sleep_on && in.nrest[k] != 0) {
      signature = steering_signature(k);
      signed_now = true;
      if (t.sleep_hold && wake_[k] == 0 && signature == signature_[k]) {
        if (calm_[k] >= t.sleep_ticks) {
          hold_asleep(k, signature);
          chunk_rest = true;
          ++chunk_sleepers;
          continue;
        }
        quiet = crowd_detail::kQuiet;
      }
    }
    // Far stepping (SwarmParams::far_step_cells): a far agent steps on one tick in 2 (level 1) or
    // 4 (level 2: twice as far) with as many times dt, and holds on the others (hold_far).
    const bool far = t.far_prio != 0 && quiet == 0 && in.nrest[k] == 0 && pile_level_[k] == 0 &&
                     nprio[k] != kUnreachable && nprio[k] >= t.far_prio && std::isinf(goal_room_[k]) &&
                     burst_ticks_[k] == 0;
    chunk_far |= far;
    const std::uint8_t level = far ? crowd_detail::far_level(t, nprio[k]) : 0;
    far_[k].far = level;
    if (far && t.far_step) {
      if (crowd_detail::far_holds(t, nid[k], level)) {
        hold_far(k);  // (a new level: shown where it is, FarState::shown)
        continue;
      }
      quiet = level == 2 ? crowd_detail::kFarStep2 : crowd_detail::kFarStep;
    }
    asleep_[k] = quiet;
    if ((quiet & crowd_detail::kFarSteps) != 0) {
      Swarm::FarState& stepping = far_[k];
      stepping.prev_x = sxs[k];
      stepping.prev_y = sys[k];
      stepping.step_ticks = static_cast<std::uint8_t>(1u << level);
      stepping.shown = 0;
    } else {
      far_[k].step_ticks = 0;
    }
    const crowd_detail::KindTick& kt = (quiet & crowd_detail::kFarSteps) != 0 ? crowd_detail::step_kind(t, quiet, self_kind)
                                                                             : near_kt;
    // Candidates within the query radius: the pair's R with one kind, the largest pair R
    // over the kinds present with several (gather_one then tests each pair's own R); for a far
    // step the far pairs' (SwarmTick::far_pairs), which reach as far as the step can.
    const bool far_now = (quiet & crowd_detail::kFarSteps) != 0;
    const crowd_detail::PairTick* const pair_table = far_now ? t.far_pairs : t.pairs;
    const float r2 = kMixed ? kt.query_r2 : pair_table[t.only_kind * kMaxAgentKinds + t.only_kind].r2;
    // Direction and rate (world units per unit of move budget) of this agent's actual path.
    const float path_len = std::sqrt(npx[k] * npx[k] + npy[k] * npy[k]);
    const bool moving = yield && path_len > kMovingPath;
    const float skx = moving ? npx[k] / path_len : 0.0f, sky = moving ? npy[k] / path_len : 0.0f;
    const bool impatient = crowd_rules && wait_[k] >= kPatienceTicks;
    // An agent walking round the pile (level_pile) yields to everyone in its own pass, as
    // everyone yields to it in theirs (its prio_ is 0): neither pushes into the other.
    const std::uint32_t own_prio = pile_level_[k] != 0 ? kUnreachable : nprio[k];
    // Held up last tick (below kShoveBelow of its top speed), with a way to a goal out of sight
    // (nor walking a congestion detour round a standing goal in sight): a larger kind shoves
    // through cross traffic of smaller ones on another route (shoves_across). In sight of its goal
    // every path converges on it (a pile's rim would be shoved into), and one moving at speed is
    // not held up by cross traffic anyway.
    const float v2 = vxs_[k] * vxs_[k] + vys_[k] * vys_[k];
    // A larger kind with no way to any goal (making way: make_way) shoves too: wedged in a door's
    // corner by the smaller kinds pressing on the door, a brute stood there for 93 s.
    const bool way_ok = own_prio != kUnreachable ? std::isinf(goal_room_[k]) && sight_goal_[k] < 0
                                                 : pile_level_[k] == 0 && kt.size_class > 1;
    const bool shoves = may_shove && moving && way_ok &&
                        (bulldozed || v2 * kt.dt * kt.dt < kShoveBelow * kShoveBelow * kt.max_step * kt.max_step);
    // Brutes near walls with no goal in sight take turns by who is in front (goes_first) and back
    // off for one with the way (GatherSums::bx).
    const bool large = t.pairs[self_kind * kMaxAgentKinds + self_kind].both_large != 0;
    const bool by_field = std::isinf(goal_room_[k]);
    const bool wide_open = (open_here_[k] & crowd_detail::kWideOpen) != 0;
    const GatherAgent agent{sxs[k],    sys[k],    skx,
                            sky,       nid[k],    own_prio,
                            moving,    impatient, crowd_rules && goal_moves_[k] != 0,
                            pair_table + self_kind * kMaxAgentKinds, wide_open,
                            shoves,    large && own_prio != kUnreachable && by_field && !wide_open,
                            large,     by_field};
    GatherSums sums;
    // A goal in sight limits the move too: the agent stops where its disc touches the goal's.
    sums.allow = kt.max_step;  // the free path among agents; the goal's limit comes after
    sums.yield_allow = kt.max_step;
    sums.press_allow = kt.max_step;
    std::uint32_t kept = 0;
    const NearSlots near = query_neighbours<kMixed, kRest>(in, agent, r2, static_cast<std::uint32_t>(k), sums, hit_slot,
                                                           t.kind_contact_r2[self_kind],
                                                           contacts + k * crowd_detail::kContactSlots, kept);
    contact_count[k] = static_cast<std::uint8_t>(std::min<std::uint32_t>(kept, crowd_detail::kContactSlots + 1));
    if (kMixed && sums.other_route != 0) {
      commit_[k] = static_cast<std::uint8_t>(commit_[k] | kOtherRouteBit);
      shove_chunks_[begin / t.chunk] = 1;
    }
    const bool resting = choose_move<kMixed>(t, kt, k, agent, path_len, sums, near, crowd_rules);
    chunk_rest |= resting;
    correct_overlap(t, kt, k, begin, sums, resting);
    // Whether a neighbour within its query radius could sleep on the next tick (then the move
    // decides whether it stirs them: integrate_agents, stir_neighbours).
    if (sleep_on) {
      const bool near_calm = t.calm_ready && has_calm_neighbour(t, near.slots, near.count, near.complete);
      if (near_calm) asleep_[k] |= crowd_detail::kNearCalm;
      if (!signed_now && (resting || near_calm)) signature = steering_signature(k);
      perm_signature_[k] = signature;
    }
  }
  if (chunk_rest) rest_chunks_[begin / t.chunk] = 1;
  if (chunk_far) far_chunks_[begin / t.chunk] = 1;
  if (chunk_sleepers != 0) {
    sleep_chunks_[begin / t.chunk] = chunk_sleepers;
    calm_chunks_[begin / t.chunk] = 1;  // a sleeper's calm count is past the threshold
  }
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
