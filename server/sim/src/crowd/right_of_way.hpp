#pragma once
// Who gives way in the neighbour gather (Swarm::gather_neighbours_of_kinds): right of way
// (goes_first), pushing past a neighbour with no way (pushes_past_stuck), other routes
// (on_other_route), shoving through cross traffic (shoves_across) and bulldozing
// (drop_bulldozed). Internal to server/sim/src/crowd; used by gather_kernel.hpp.
#include <cmath>
#include <cstdint>

#include "crowd_rules.hpp"
#include "gather_agent.hpp"
#include "swarm_tick.hpp"

namespace swarmfield::sim::crowd_detail {

using namespace crowd_rules;  // NOLINT: the rules' constants, read throughout

/// Right of way (the agent's over neighbour `m`): nearer the goal (priority), then the lower id.
/// Between two agents of a larger size class than 1 (`both_large`), one of them near a wall (not
/// both on wide open ground), that both move, both have a way, both by the field (no goal in
/// sight: in sight a priority is the exact straight distance) and whose priorities differ by less
/// than kFrontBand, the one in front along their two paths (the sum of their unit path
/// directions) goes first: their blocks' field values are coarse, and a brute on a 2-cell door's
/// mouth, a fraction of a cell off the door's row, yielded to one behind it squarely on the row,
/// which could not pass it (standoffs of minutes). Head-on, "in front" means nothing: by the
/// field. Antisymmetric bit for bit (the two passes negate one dot product), so exactly one of a
/// pair goes first. (On open ground, or round a pile, it only stirred the rim.)
SWARMFIELD_ALWAYS_INLINE inline bool goes_first(const GatherInput& in, const GatherAgent& a, std::uint32_t m,
                                                bool both_large) noexcept {
  const bool prior = a.prio < in.nprio[m] || (a.prio == in.nprio[m] && a.id < in.nid[m]);
  if (!both_large || !a.moving || (a.wide_open && (in.nopen[m] & kWideOpen) != 0)) return prior;
  if (a.prio == kUnreachable || in.nprio[m] == kUnreachable) return prior;  // no way: nothing to take turns at
  if (!a.by_field || !std::isinf(in.ngoal_room[m])) return prior;
  const std::uint32_t gap = a.prio > in.nprio[m] ? a.prio - in.nprio[m] : in.nprio[m] - a.prio;
  if (gap >= kFrontBand) return prior;
  const float mx = in.npx[m], my = in.npy[m];
  const float ml = std::sqrt(mx * mx + my * my);
  if (!(ml > kMovingPath)) return prior;
  const float sx = a.skx + mx / ml, sy = a.sky + my / ml;
  // Head-on (paths more than 120 degrees apart) "in front" means nothing: by the field.
  if (sx * sx + sy * sy < 1.0f) return prior;
  const float ahead = (a.px - in.nx[m]) * sx + (a.py - in.ny[m]) * sy;
  return ahead == 0.0f ? prior : ahead > 0.0f;
}

/// An agent with a way to a goal pushes past a neighbour `m` with none that its path only grazes
/// (approach below kGrazeStuck): m does not limit its free path.
SWARMFIELD_ALWAYS_INLINE inline bool pushes_past_stuck(const GatherInput& in, const GatherAgent& a, std::uint32_t m,
                                                       float approach) noexcept {
  return a.prio != kUnreachable && in.nprio[m] == kUnreachable && approach < kGrazeStuck;
}

/// Neighbour `m` is on another route than the agent: nearer the goal by more than kShoveRouteGap
/// (side by side, a smaller kind's way is the shorter by that much).
SWARMFIELD_ALWAYS_INLINE inline bool on_other_route(const GatherInput& in, const GatherAgent& a, std::uint32_t m) noexcept {
  return in.nprio[m] < a.prio && a.prio - in.nprio[m] > kShoveRouteGap;
}

/// An agent of a larger size class than `m` that shoves (GatherAgent::shoves) goes through m when
/// m is on another route (on_other_route) and m's own path crosses the agent's (kShoveCross): m
/// does not limit its free path.
SWARMFIELD_ALWAYS_INLINE inline bool shoves_across(const GatherInput& in, const GatherAgent& a, std::uint32_t m) noexcept {
  if (!a.shoves || !on_other_route(in, a, m)) return false;
  const float along = in.npx[m] * a.skx + in.npy[m] * a.sky;  // m's path rate along ours
  const float len2 = in.npx[m] * in.npx[m] + in.npy[m] * in.npy[m];
  return len2 > 0.0f && (along < 0.0f || along * along < kShoveCross * kShoveCross * len2);
}

/// Bulldozing (mixed kinds): an agent that shoves (GatherAgent::shoves: held up last tick, with a
/// way to a goal out of sight, or a larger kind with no way at all, making way) goes through the
/// neighbours of a smaller size class on another route (on_other_route; every neighbour with a
/// way, for one with none), whatever their heading: they count for nothing in its gather (no
/// kernel, contact or free path), and the contact projection moves them out of its way
/// (Swarm::project_contacts_of). Copies the other slots[0, n) to `out` in order and returns how
/// many; marks `s.other_route` when one it drops touches it ahead (the steering then takes the
/// congestion field's way round that crowd). Without it a brute whose way crossed the funnel
/// of runners and walkers converging on a 1-cell gap was held in it, pressed by the funnel's
/// kernel and contacts, for up to 13 s (issue 19's gap scene).
SWARMFIELD_ALWAYS_INLINE inline std::uint32_t drop_bulldozed(const GatherInput& in, const GatherAgent& a,
                                                             const std::uint32_t* slots, std::uint32_t n,
                                                             std::uint32_t* out, GatherSums& s) noexcept {
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t m = slots[i];
    const crowd_detail::PairTick& pair = a.pair_row[in.nkind[m]];
    if (pair.larger != 0 && on_other_route(in, a, m)) {
      const float dx = in.nx[m] - a.px, dy = in.ny[m] - a.py;
      if (dx * a.skx + dy * a.sky > 0.0f && dx * dx + dy * dy < pair.cd * pair.cd) s.other_route = 1;
      continue;
    }
    out[kept++] = m;
  }
  return kept;
}

}  // namespace swarmfield::sim::crowd_detail
