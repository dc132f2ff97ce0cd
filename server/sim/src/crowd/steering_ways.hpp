#pragma once
// The ways the steering phase (swarm_steering.cpp) picks among, besides the field's own: escaping
// from a block no field reaches, the straight line inside the octile cone of shortest moves, route
// commitment when the flow points back, making way for the smallest size class, and pursuit of a
// goal on the move. Internal to server/sim/src/crowd.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim::crowd_detail {

/// Direction (unit) from `p` to the centre of the nearest block (cell for class 1) that
/// `integration` can reach on the class grid `grid`, within `range` blocks (Chebyshev) of p's
/// block (cx, cy), or {0,0} when there is none.
Vec2 escape_direction(const GridMap& grid, const IntegrationField& integration, Vec2 p, std::int32_t cx,
                      std::int32_t cy, std::int32_t range, int size_class, float cell_size) noexcept;

/// Far from its goal (beyond the any-angle range, where an agent follows the smoothed
/// eight-direction flow), the direction straight at the nearest of `goals` (world units) when
/// it lies between two neighbouring directions that are both shortest-path moves from the block
/// (bx, by) of `field` on the class grid `grid` (each step's drop is exactly its length times
/// the block's cost; a diagonal only past two open corners); else `flow_dir` unchanged. Why: an
/// octile field has two shortest moves over most of open ground (an orthogonal and a diagonal
/// one), and a flow field names one of them, the same in a whole wedge round the goal, so the
/// paths of a wide body of agents all turn onto one line (the axis or the diagonal through the
/// goal, whichever the tie rule favours) and jam there in open ground: 600 walkers marching at a
/// player ~225 cells away along an axis had 78% of them below a tenth of their speed. Taking
/// the straight line whenever it is a shortest path keeps their paths parallel (Bresenham's
/// line through the octile cone); where walls leave a single shortest move, the flow is kept.
Vec2 straight_in_shortest_cone(const GridMap& grid, const IntegrationField& field, std::int32_t bx, std::int32_t by,
                               Vec2 p, std::span<const Vec2> goals, Vec2 flow_dir) noexcept;

/// keep_route() once the blend points back (dot(desired, v) < 0): out of line, it is rare.
[[gnu::noinline]] Vec2 keep_route_reversing(const GridMap& map, const FlowField& flow, const IntegrationField& integration,
                                            std::int32_t cx, std::int32_t cy, Vec2 desired, Vec2 v,
                                            float min_speed, bool strict) noexcept;

/// Route commitment (hysteresis): the smoothed flow direction `desired` at an agent in cell
/// (cx, cy) that moved with velocity `v` last tick. When the blend points back (more than 90
/// degrees from v), the agent does not reverse if it can keep going: first, when its own cell's
/// arrow is still within 90 degrees of v, it follows that arrow (the blend was pulled back by a
/// neighbouring cell, e.g. one whose tie between two equal routes broke the other way); else,
/// when going on along v still goes downhill in `integration`, it keeps going along v: both
/// ways are then (nearly) as good, and reversing would only make it dither each time a goal
/// flickers between two cells (C5) or a tie in the field flips. Downhill along v: with `strict`
/// (the swarm's NavigationSet step; not the bare flow-field step of tests and benchmarks) and
/// on open ground (the 8 neighbours walkable), the drops per cell of travel to the two
/// neighbours bracketing v, weighted by v's parts along them, sum to more than 0 (a lower
/// neighbour ahead is not enough: an octile field has one for headings up to ~110 degrees off
/// the goal); else a neighbour within 67.5 degrees of v (legal step, no corner cut) is lower
/// than the agent's cell (the strict test beside walls pinned agents on a chokepoint's posts
/// for 90 ticks, C8). Below `min_speed` the blend wins.
/// The common case (the blend does not point back: no square root) is inline.
inline Vec2 keep_route(const GridMap& map, const FlowField& flow, const IntegrationField& integration, std::int32_t cx,
                       std::int32_t cy, Vec2 desired, Vec2 v, float min_speed, bool strict) noexcept {
  if (dot(desired, v) >= 0.0f) return desired;
  return keep_route_reversing(map, flow, integration, cx, cy, desired, v, min_speed, strict);
}

/// The way an agent at p (velocity v last tick) with no route for its own size makes way for
/// agents of the smallest class: across their path there and back against it by kMakeWayBack,
/// unit; {0, 0} where they have no path. Across, not straight back: the crowd behind presses
/// along the path, so walking back into it gets nowhere (a brute held in a door's mouth for
/// 70 s), while to the side nobody pushes. The side is the one it already drifts to (faster than
/// kMakeWayDrift world units per second across the path), else the one its id picks: a side
/// fixed by id alone sends half the brutes beside a door across the door's mouth. Wedged in a
/// corner (its disc, `radius` world units, cannot move kMakeWayProbe cells along either axis of
/// the path), back along the wall the path points into more instead.
Vec2 make_way(const SwarmTick& t, Vec2 p, Vec2 v, float radius, std::uint32_t id) noexcept;

/// Pursuit of a goal on the move (Swarm::step): the unit direction from an agent `to_goal`
/// (world units, length `dist`) away from the goal, at `speed` world units per second, to the
/// point ahead of the goal along its velocity where the two can meet: the earliest t > 0 with
/// |to_goal + V t| = speed t (V the goal's velocity), else (a goal faster than the agent and
/// not coming its way) t = dist / speed (Reynolds 1999); the lead |V| t at most
/// kPursuitLeadRatio * dist and the goal's clear run ahead. The meeting point, not Reynolds'
/// lead alone: an agent ahead of a goal that comes at it would otherwise turn and run ahead of
/// it. The root in the form c / (-b + sqrt(b^2 - ac)) of a t^2 + 2 b t + c = 0, which holds
/// for a = 0 too (goal and agent at one speed) and is positive exactly when a meeting exists.
inline Vec2 pursuit_direction(const GoalLead& lead, Vec2 to_goal, float dist, float speed) noexcept {
  const float a = lead.speed * lead.speed - speed * speed;
  const float b = dot(to_goal, lead.unit) * lead.speed;
  const float c = dist * dist;
  const float disc = b * b - a * c;
  const float den = disc >= 0.0f ? std::sqrt(disc) - b : 0.0f;
  const float t = den > 0.0f ? c / den : dist / speed;
  const float ahead = std::min({lead.speed * t, Swarm::kPursuitLeadRatio * dist, lead.run});
  return normalized_or_zero(to_goal + lead.unit * ahead);
}

}  // namespace swarmfield::sim::crowd_detail
