// The steering phase of the swarm step (see Swarm::step): per agent, the desired direction from
// the smoothed flow field (holding on a goal, escaping from unreachable cells, route commitment
// when the flow flips behind it), the obstacle force from the static hash, the unit steering
// direction, and the path a full step along it takes once walls are slid along. Reads only the
// agent's own state, so it comes before the neighbour pass, which needs every agent's path.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "lattice_sampler.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim {

using crowd_detail::cell_of;
using crowd_detail::id_direction;
using crowd_detail::LatticeSampler;

namespace {

using crowd_detail::kPrefetchAgents;
// goal_room_ of an agent with no goal in sight: no limit.
constexpr float kNoGoalLimit = std::numeric_limits<float>::infinity();
constexpr std::size_t kCellRing = 16;  // > kPrefetchAgents, a power of two
// Streaming: last tick's speed at least this fraction of the kind's max (Swarm::streaming_).
constexpr float kStreamSpeed = 0.25f;

/// Direction (unit) from `p` to the centre of the nearest block (cell for class 1) that
/// `integration` can reach on the class grid `grid`, within `range` blocks (Chebyshev) of p's
/// block (cx, cy), or {0,0} when there is none.
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

/// keep_route() once the blend points back (dot(desired, v) < 0): out of line, it is rare.
[[gnu::noinline]] Vec2 keep_route_reversing(const GridMap& map, const FlowField& flow, const IntegrationField& integration,
                                            std::int32_t cx, std::int32_t cy, Vec2 desired, Vec2 v,
                                            float min_speed) noexcept {
  const float speed = length(v);
  if (!(speed >= min_speed)) return desired;
  const Vec2 own_arrow = direction_vector(flow.at(cx, cy));
  if (dot(own_arrow, v) > 0.0f) return own_arrow;
  if (!integration.reachable(cx, cy)) return desired;
  const Vec2 u = v * (1.0f / speed);
  const std::uint32_t own = integration.raw(cx, cy);
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

/// Route commitment (hysteresis): the smoothed flow direction `desired` at an agent in cell
/// (cx, cy) that moved with velocity `v` last tick. When the blend points back (more than 90
/// degrees from v), the agent does not reverse if it can keep going: first, when its own cell's
/// arrow is still within 90 degrees of v, it follows that arrow (the blend was pulled back by a
/// neighbouring cell, e.g. one whose tie between two equal routes broke the other way); else,
/// when a neighbour cell roughly ahead (within 67.5 degrees of v, legal step, no corner cut) is
/// still downhill in `integration` (lower than the agent's cell), it keeps going along v: both
/// ways are then (nearly) as good, and reversing would only make it dither each time a goal
/// flickers between two cells (C5) or a tie in the field flips. Below `min_speed` the blend wins.
/// The common case (the blend does not point back: no square root) is inline.
inline Vec2 keep_route(const GridMap& map, const FlowField& flow, const IntegrationField& integration, std::int32_t cx,
                       std::int32_t cy, Vec2 desired, Vec2 v, float min_speed) noexcept {
  if (dot(desired, v) >= 0.0f) return desired;
  return keep_route_reversing(map, flow, integration, cx, cy, desired, v, min_speed);
}

}  // namespace

void Swarm::steer_agents(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end) {
  const GridMap& map = t.map;
  const FlowField& flow = t.flow;
  const IntegrationField* const integration = t.integration;
  const std::size_t n = t.n;
  const float cs = t.cs;
  const std::int32_t map_w = t.map_w, map_h = t.map_h;
  const std::uint64_t* const open = t.open;
  const float* const sxs = t.sxs;
  const float* const sys = t.sys;
  // The integration's values live in its padded search words (one-cell border).
  const std::uint32_t* const field_words =
      integration != nullptr && !integration->search_words().empty() ? integration->search_words().data() : nullptr;
  const std::uint8_t* const flow_dirs = flow.directions().data();
  const std::uint8_t* const map_costs = map.costs().data();
  // With one kind, every agent is of it: its constants from a local copy (this pass stores
  // bytes, so the table itself would be read again for every agent).
  const bool mixed = t.mixed;
  const crowd_detail::KindTick only_kt = t.kinds[t.only_kind];
  // The fast paths of NavigationSet::sample(), one per size class present.
  LatticeSampler samplers[kMaxSizeClass];
  if (t.nav != nullptr) {
    for (int c = 1; c <= kMaxSizeClass; ++c) samplers[c - 1] = LatticeSampler(*t.nav, map, c);
  }
  // Class 1's by value: the common class, its fields then stay in registers or fixed slots.
  LatticeSampler class1 = samplers[0];
  const bool hierarchical = t.nav != nullptr && t.nav->hierarchical();
  class1.set_far_bits(t.far_bits);
  // The class-1 any-angle layer, when it matches the map (prefetch hints only).
  const AnyAngleField* aa = t.nav != nullptr && t.nav->has_class(1) ? &t.nav->fields(1).any_angle() : nullptr;
  const bool aa_fits = aa != nullptr && aa->width() == map_w && aa->height() == map_h;
  const std::uint32_t* const aa_waypoints = aa_fits ? aa->waypoints().data() : nullptr;
  const std::uint16_t* const aa_goal_words = aa_fits ? aa->goal_words().data() : nullptr;
  const bool flow_fits = flow.width() == map_w && flow.height() == map_h &&
                         flow.directions().size() == static_cast<std::size_t>(map_w) * static_cast<std::size_t>(map_h);
  // Map cell of agents k .. k + kPrefetchAgents (ring, indexed by slot): computed once, for the
  // prefetch, and used again when the agent's turn comes.
  static_assert((kCellRing & (kCellRing - 1)) == 0 && kCellRing > kPrefetchAgents);
  std::int32_t ring_x[kCellRing], ring_y[kCellRing];
  for (std::size_t k = begin; k < std::min(end, begin + kPrefetchAgents); ++k) {
    ring_x[k & (kCellRing - 1)] = cell_of(sxs[k], cs);
    ring_y[k & (kCellRing - 1)] = cell_of(sys[k], cs);
  }
  for (std::size_t k = begin; k < end; ++k) {
    // Agents in slot order walk the map row by row but far apart along a row, so nearly every
    // agent reads new cache lines of the map, flow and integration fields: fetch them a few
    // agents ahead (no effect on any result).
    if (k + kPrefetchAgents < n) {
      const std::int32_t fx = cell_of(sxs[k + kPrefetchAgents], cs), fy = cell_of(sys[k + kPrefetchAgents], cs);
      ring_x[(k + kPrefetchAgents) & (kCellRing - 1)] = fx;
      ring_y[(k + kPrefetchAgents) & (kCellRing - 1)] = fy;
      if (fx >= 0 && fy >= 0 && fx < map_w && fy + 1 < map_h) {
        const std::size_t at = map.index(fx, fy);
        // The map rows of the bilinear blend's square (the sector fields' sample): fy - 1 and fy
        // when the agent is in the upper half of its cell, else fy and fy + 1.
        const bool upper = sys[k + kPrefetchAgents] - static_cast<float>(fy) * cs < 0.5f * cs && fy > 0;
        __builtin_prefetch(map_costs + at);
        __builtin_prefetch(map_costs + (upper ? at - static_cast<std::size_t>(map_w) : at + static_cast<std::size_t>(map_w)));
        __builtin_prefetch(open + (at >> 6));
        if (flow_fits) {
          __builtin_prefetch(flow_dirs + at);
          __builtin_prefetch(flow_dirs + at + static_cast<std::size_t>(map_w));
        }
        if (field_words != nullptr) {
          __builtin_prefetch(field_words + (static_cast<std::size_t>(fy) + 1) * (static_cast<std::size_t>(map_w) + 2) +
                             static_cast<std::size_t>(fx) + 1);
        }
        if (hierarchical) t.nav->prefetch_sample(fx, fy);
        if (aa_waypoints != nullptr && fy >= 1 && fx >= 1 && class1.in_region(fx, fy)) {
          // The any-angle samples round the agent: lattice rows fy - 1 and fy (class 1), read
          // only in the any-angle region (most agents of a big map are beyond it).
          const std::size_t up = at - static_cast<std::size_t>(map_w) - 1;
          __builtin_prefetch(aa_waypoints + up);
          __builtin_prefetch(aa_waypoints + up + static_cast<std::size_t>(map_w));
          __builtin_prefetch(aa_goal_words + up);
          __builtin_prefetch(aa_goal_words + up + static_cast<std::size_t>(map_w));
        }
      }
    }
    // The agent's reordered state (see step_impl: perm_* until the swap after this phase).
    const std::uint32_t id = perm_ids_[k];
    const crowd_detail::KindTick& kt = mixed ? t.kinds[t.kind[k]] : only_kt;
    const float vx = perm_vxs_[k], vy = perm_vys_[k];
    const Vec2 p{sxs[k], sys[k]};
    const std::int32_t cx = ring_x[k & (kCellRing - 1)], cy = ring_y[k & (kCellRing - 1)];  // cell_of(p)
    Vec2 desired{};
    float goal_room = kNoGoalLimit;  // how far it may still move toward a goal in sight
    if (t.nav != nullptr) {
      // Any-angle navigation for the agent's size class (NavigationSet): straight at the goal's
      // exact position where it is in sight, else toward the waypoint of the field path.
      const int size_class = kt.size_class;
      const NavigationFields& fields = t.nav->fields(size_class);
      NavSample sample;
      const bool fast = size_class == 1 ? class1.sample_at_cell(map, p, cx, cy, sample) : samplers[size_class - 1].sample(map, p, sample);
      // In hierarchical mode the near fields' trust check of the sample gives the priority too.
      CellCoord sampled_block{NavigationSet::kNoBlock, NavigationSet::kNoBlock};
      std::uint32_t sampled_priority = kUnreachable;
      if (!fast) sample = t.nav->sample(size_class, p, sampled_block, sampled_priority);
      const GridMap& grid = size_class == 1 ? map : t.nav->class_grid(size_class);
      const CellCoord block = size_class == 1 ? CellCoord{cx, cy} : reference_block(p, size_class, cs);
      const IntegrationField& field = fields.integration();
      switch (sample.status) {
        case NavStatus::kGoalInSight:
          // Stop where the disc touches the player's (no walking into the player); the rest of
          // the way is the free path's limit on this tick's move.
          goal_room = length(sample.target - p) - kt.stop_distance;
          if (goal_room > 0.0f) desired = sample.direction;
          break;
        case NavStatus::kFollow:
        case NavStatus::kFollowFlow:  // beyond the any-angle range: the smoothed flow
          desired = sample.direction;
          if (kt.commit_speed > 0.0f) {
            desired = commit_route(k, desired, keep_route(grid, fields.flow(), field, block.x, block.y, desired, {vx, vy},
                                                          kt.commit_speed));
          }
          break;
        case NavStatus::kNoRoute:
          // A blocked or unreachable block: the blend of the neighbouring samples, else the
          // nearest reachable block, else hold.
          desired = sample.direction;
          if (desired.x == 0.0f && desired.y == 0.0f) {
            desired = escape_direction(grid, field, p, block.x, block.y, kEscapeSearchCells, size_class, cs);
          }
          break;
        case NavStatus::kAtGoal:
        case NavStatus::kNoField:
          break;  // hold
      }
      // A crowd on the exact route (the congestion field values the block well above the exact
      // field): the congestion field's way, round the crowd or by another way, unless the agent
      // rests. Whole-map mode only (the congestion fields are not built otherwise).
      // Not for an agent in sight of its goal (it packs round it, walking round the pile), nor
      // for one in a crowded block itself (it is in the crowd: leaving would only stir it; the
      // detour bit says so).
      if (t.congestion != nullptr && !hierarchical && perm_resting_[k] == 0 &&
          (sample.status == NavStatus::kFollow || sample.status == NavStatus::kFollowFlow) &&
          t.congestion->detour(size_class, block.x, block.y)) {
        const float shift = 0.5f * static_cast<float>(size_class - 1) * cs;
        const Vec2 way = sample_flow(grid, t.congestion->flow(size_class), p - Vec2{shift, shift});
        if (way.x != 0.0f || way.y != 0.0f) {
          desired = way;
          goal_room = kNoGoalLimit;
        }
      }
      // Hierarchical mode has no whole-map field: the near fields' values round the goals.
      prio_[k] = hierarchical ? (sampled_block == block ? sampled_priority : t.nav->priority(size_class, block))
                              : (field.reachable(block.x, block.y) ? field.raw(block.x, block.y) : kUnreachable);
      if (goal_room != kNoGoalLimit) {
        // A goal in sight: the straight distance to it, in the field's units (cells x
        // kOrthogonalStep), so agents of one cell still take turns by who is nearer, not by id.
        const float dist = std::max(0.0f, goal_room + kt.stop_distance) * static_cast<float>(kOrthogonalStep);
        prio_[k] = dist < 4.0e9f ? static_cast<std::uint32_t>(dist) : kUnreachable - 1;
      } else if (prio_[k] != kUnreachable && (desired.x != 0.0f || desired.y != 0.0f)) {
        // Following a route: the block's value less how far the agent is past the block's centre
        // along its way, so agents of one block (two at a door) take turns by who is ahead.
        const Vec2 ahead = p - block_center(block, size_class, cs);
        const float along = (ahead.x * desired.x + ahead.y * desired.y) / cs * static_cast<float>(kOrthogonalStep);
        const float value = static_cast<float>(prio_[k]) - along;
        prio_[k] = value <= 0.0f ? 0 : (value < 4.0e9f ? static_cast<std::uint32_t>(value) : kUnreachable - 1);
      }
    } else {
      if (flow.at(cx, cy) != FlowDirection::kNone) {
        desired = sample_flow(map, flow, p);
        if (integration != nullptr && kt.commit_speed > 0.0f) {
          desired = commit_route(k, desired, keep_route(map, flow, *integration, cx, cy, desired, {vx, vy}, kt.commit_speed));
        }
      } else if (integration != nullptr && !integration->reachable(cx, cy)) {
        desired = escape_direction(map, *integration, p, cx, cy, kEscapeSearchCells, 1, cs);
      }
      // else: a goal cell (or no integration to tell): hold.
      // Right of way in the neighbour pass: the lower integration value (nearer the goal) first.
      prio_[k] = integration != nullptr && integration->reachable(cx, cy) ? integration->raw(cx, cy) : kUnreachable;
    }
    goal_room_[k] = goal_room;

    Vec2 force{};
    if (t.have_obstacles) {
      obstacle_hash_.for_each_near(p, [&](std::uint32_t o_index) {
        const Obstacle& o = obstacles_[o_index];
        const Vec2 away = p - o.center;
        const float dist = length(away);
        const float surface = dist - o.radius;
        if (surface >= kt.sep_r) return;
        const float w = 1.0f - std::max(surface, 0.0f) * kt.inv_sep_r;
        const Vec2 u = dist > 1e-6f ? away * (1.0f / dist) : id_direction(id);
        force += u * w;
      });
      const float f = length(force);
      if (f > t.max_force) force = force * (t.max_force / f);
    }
    const Vec2 steer = normalized_or_zero(desired * params_.flow_weight + force);
    steer_x_[k] = steer.x;
    steer_y_[k] = steer.y;
    // Where a full step along the steering actually goes once walls are slid along and posts
    // rounded: along a wall only the tangential part moves the agent, and the free path must
    // be measured along that (an agent pressed on a wall slides into neighbours its steering
    // direction alone would pass by).
    Vec2 probe = steer;
    const bool open_here =
        kt.small_moves && cx >= 0 && cy >= 0 && cx < map_w && cy < map_h && crowd_detail::open_at(open, map.index(cx, cy));
    if (!open_here && kt.max_step > 0.0f && (steer.x != 0.0f || steer.y != 0.0f)) {
      const Vec2 move = steer * kt.max_step;
      Vec2 q = slide_along_walls(map, p, move, kt.radius);
      if (q.x - p.x != move.x || q.y - p.y != move.y) {
        if (may_round_corner(p, q, move, t.corner_eps)) q = slide_round_corner(map, p, q, move, kt.max_step, kt.radius);
        probe = (q - p) * (1.0f / kt.max_step);
      }
    }
    path_x_[k] = probe.x;
    path_y_[k] = probe.y;
    open_here_[k] = open_here ? 1 : 0;
    // Moving at speed last tick (a stream going by: an impatient agent stops yielding to it).
    streaming_[k] = vx * vx + vy * vy >= kStreamSpeed * kStreamSpeed * kt.max_step * kt.max_step * t.inv_dt * t.inv_dt ? 1 : 0;
  }
}

}  // namespace swarmfield::sim
