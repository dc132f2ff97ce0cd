// The steering's ways (steering_ways.hpp): escape, the straight line in the octile cone, route
// commitment once the blend points back, and making way for the smallest size class.
#include "steering_ways.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <numbers>

#include "swarmfield/sim/crowd/wall_collision.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim::crowd_detail {

namespace {

constexpr float kMakeWayBack = 0.5f;
constexpr float kMakeWayDrift = 0.05f;
constexpr float kMakeWayProbe = 0.5f;  // cells

}  // namespace

Vec2 escape_direction(const GridMap& grid, const IntegrationField& integration, Vec2 p, std::int32_t cx,
                      std::int32_t cy, std::int32_t range, int size_class, float cell_size) noexcept {
  float best_d2 = std::numeric_limits<float>::infinity();
  Vec2 best{};
  for (std::int32_t y = cy - range; y <= cy + range; ++y) {
    for (std::int32_t x = cx - range; x <= cx + range; ++x) {
      if (!integration.reachable(x, y) || !grid.walkable(x, y)) continue;
      const Vec2 d = block_center({x, y}, size_class, cell_size) - p;
      const float d2 = dot(d, d);
      if (d2 < best_d2) {
        best_d2 = d2;
        best = d;
      }
    }
  }
  return normalized_or_zero(best);
}

Vec2 straight_in_shortest_cone(const GridMap& grid, const IntegrationField& field, std::int32_t bx, std::int32_t by,
                               Vec2 p, std::span<const Vec2> goals, Vec2 flow_dir) noexcept {
  if (goals.empty() || !field.reachable(bx, by)) return flow_dir;
  float best_d2 = std::numeric_limits<float>::infinity();
  Vec2 to_goal{};
  for (const Vec2 g : goals) {
    const Vec2 d = g - p;
    const float d2 = dot(d, d);
    if (d2 < best_d2) {
      best_d2 = d2;
      to_goal = d;
    }
  }
  if (!(best_d2 > 1e-6f) || !std::isfinite(best_d2)) return flow_dir;
  // The two directions bracketing to_goal (FlowDirection order: E, SE, S, SW, W, NW, N, NE;
  // y down): the octant of (x, y) by signs and which component is larger.
  const float ax = std::fabs(to_goal.x);
  const float ay = std::fabs(to_goal.y);
  int a = 0;  // the orthogonal one
  int b = 0;  // the diagonal one
  if (to_goal.x >= 0.0f && to_goal.y >= 0.0f) {
    a = ax >= ay ? 0 : 2;
    b = 1;
  } else if (to_goal.x < 0.0f && to_goal.y >= 0.0f) {
    a = ax >= ay ? 4 : 2;
    b = 3;
  } else if (to_goal.x < 0.0f) {
    a = ax >= ay ? 4 : 6;
    b = 5;
  } else {
    a = ax >= ay ? 0 : 6;
    b = 7;
  }
  const std::uint32_t own = field.raw(bx, by);
  const std::uint32_t cost = grid.cost(bx, by);
  const auto shortest = [&](int k) {
    const CellCoord o = kDirectionOffsets[static_cast<std::size_t>(k)];
    const std::int32_t nx = bx + o.x;
    const std::int32_t ny = by + o.y;
    if (!field.reachable(nx, ny) || !grid.walkable(nx, ny)) return false;
    const bool diagonal = (k & 1) != 0;
    if (diagonal && (!grid.walkable(nx, by) || !grid.walkable(bx, ny))) return false;
    const std::uint32_t n = field.raw(nx, ny);
    return n < own && own - n == (diagonal ? kDiagonalStep : kOrthogonalStep) * cost;
  };
  if (!shortest(a) || !shortest(b)) return flow_dir;
  return to_goal * (1.0f / std::sqrt(best_d2));
}

Vec2 keep_route_reversing(const GridMap& map, const FlowField& flow, const IntegrationField& integration,
                                            std::int32_t cx, std::int32_t cy, Vec2 desired, Vec2 v,
                                            float min_speed, bool strict) noexcept {
  const float speed = length(v);
  if (!(speed >= min_speed)) return desired;
  const Vec2 own_arrow = direction_vector(flow.at(cx, cy));
  if (dot(own_arrow, v) > 0.0f) return own_arrow;
  if (!integration.reachable(cx, cy)) return desired;
  const Vec2 u = v * (1.0f / speed);
  const std::uint32_t own = integration.raw(cx, cy);
  bool open = strict;  // and the 8 neighbours all walkable
  for (const CellCoord o : kDirectionOffsets) open = open && map.walkable(cx + o.x, cy + o.y);
  if (!open) {
    // A neighbour cell roughly ahead (within 67.5 degrees of v) still downhill.
    constexpr float kCos67 = 0.38268343f;
    for (std::size_t d = 0; d < kDirectionOffsets.size(); ++d) {
      const CellCoord o = kDirectionOffsets[d];
      if (dot(direction_vector(static_cast<FlowDirection>(d)), u) < kCos67) continue;
      const std::int32_t ax = cx + o.x, ay = cy + o.y;
      if (!integration.reachable(ax, ay) || integration.raw(ax, ay) >= own) continue;
      if (o.x != 0 && o.y != 0 && (!map.walkable(ax, cy) || !map.walkable(cx, ay))) continue;  // corner
      return u;
    }
    return desired;
  }
  // The field's drop per cell of travel toward neighbour d (cost units; a blocked, unreachable or
  // corner-cutting step counts as a climb).
  const auto drop_rate = [&](std::size_t d) {
    const CellCoord o = kDirectionOffsets[d];
    const std::int32_t ax = cx + o.x, ay = cy + o.y;
    if (!integration.reachable(ax, ay)) return -1.0f;
    if (o.x != 0 && o.y != 0 && (!map.walkable(ax, cy) || !map.walkable(cx, ay))) return -1.0f;  // corner
    const float drop = static_cast<float>(own) - static_cast<float>(integration.raw(ax, ay));
    return o.x != 0 && o.y != 0 ? drop * (1.0f / std::numbers::sqrt2_v<float>) : drop;
  };
  // The two neighbour directions bracketing u (FlowDirection order: E, SE, S, SW, W, NW, N, NE,
  // 45 degrees apart clockwise with y down) and u's parts along them (u = a e1 + b e2, a, b >= 0).
  float angle = std::atan2(u.y, u.x);
  if (angle < 0.0f) angle += 2.0f * std::numbers::pi_v<float>;
  const auto d1 = static_cast<std::size_t>(angle * (4.0f / std::numbers::pi_v<float>)) & 7u;
  const std::size_t d2 = (d1 + 1) & 7u;
  const Vec2 e1 = direction_vector(static_cast<FlowDirection>(d1));
  const Vec2 e2 = direction_vector(static_cast<FlowDirection>(d2));
  const float det = e1.x * e2.y - e1.y * e2.x;  // sin 45 degrees
  const float a = (u.x * e2.y - u.y * e2.x) / det;
  const float b = (e1.x * u.y - e1.y * u.x) / det;
  // Going on along u must itself go downhill: a neighbour ahead that is lower (the rule before
  // 2026-12-08) is not enough. Over open ground an octile field drops toward the diagonal next to
  // a heading 70 degrees off the goal: a walker knocked sideways at the start of a march by the
  // spawn's overlap correction kept that heading for 20 steps (80 ticks at far stepping's level
  // 2), and led its neighbour off with it.
  if (a * drop_rate(d1) + b * drop_rate(d2) > 0.0f) return u;
  return desired;
}

Vec2 make_way(const SwarmTick& t, Vec2 p, Vec2 v, float radius, std::uint32_t id) noexcept {
  if (!t.nav->has_class(1)) return {};
  const NavSample small = t.nav->sample(1, p);
  switch (small.status) {
    case NavStatus::kFollow:
    case NavStatus::kFollowFlow:
    case NavStatus::kGoalInSight: {
      const Vec2 f = small.direction;
      // On the ridge of the smallest class's field (the cell a step back along its path is no
      // farther from its goal than this one: their ways part here), nobody's way is to be made:
      // hold. Brutes in a room whose 1-cell doors none of them fits walked back from every door to
      // the room's middle and jostled there at full speed to the end (the room with doors at its
      // corners, 2,000 mixed, seeds 1-8: 35-51 brutes faster than 1 cell/s at 100 s; now 5-14).
      // Before a brute with no way shoved through smaller kinds (gather_neighbours_of_kinds),
      // holding there changed which brutes ended wedged in a corner door's mouth, and the corner
      // doors stalled over 2 s in 4 of those 8 seeds (up to 31 s; 2 of 8 without it).
      const IntegrationField& small_field = t.nav->fields(1).integration();
      const CellCoord here = t.map.world_to_cell(p), back = t.map.world_to_cell(p - f * t.cs);
      if (small_field.reachable(here.x, here.y) && small_field.reachable(back.x, back.y) &&
          small_field.raw(back.x, back.y) <= small_field.raw(here.x, here.y)) {
        return {};
      }
      const Vec2 across{-f.y, f.x};
      const float drift = dot(v, across);
      const bool left = std::abs(drift) > kMakeWayDrift ? drift > 0.0f : (id & 1u) != 0;
      // Wedged in a corner, in front of a door flush with it (walls across both axes of the
      // path): back along the door's wall (the one the path points into more), away from the
      // door. Across the path is into the other wall or into the crowd pressing on the door: a
      // brute held a corner door's mouth for 6 s. Elsewhere (beside a door's mouth) the side
      // rule below already slides it back along the wall half the time; always doing so held a
      // brute in the mixed door room's mouth for 9 s.
      const float probe = kMakeWayProbe * t.cs;
      const float body = 0.9f * radius;  // a disc pressed a little into a wall still slides along it
      const float sx = f.x < 0.0f ? -1.0f : 1.0f, sy = f.y < 0.0f ? -1.0f : 1.0f;
      if (!square_fits(t.map, p + Vec2{sx * probe, 0.0f}, body) && !square_fits(t.map, p + Vec2{0.0f, sy * probe}, body)) {
        return std::abs(f.x) >= std::abs(f.y) ? Vec2{0.0f, -sy} : Vec2{-sx, 0.0f};
      }
      return normalized_or_zero((left ? across : across * -1.0f) - f * kMakeWayBack);
    }
    default:
      return {};
  }
}

}  // namespace swarmfield::sim::crowd_detail
