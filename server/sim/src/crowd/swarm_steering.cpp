// The steering phase of the swarm step (see Swarm::step): per agent, the desired direction from
// the smoothed flow field (holding on a goal, escaping from unreachable cells, route commitment
// when the flow flips behind it), the obstacle force from the static hash, the unit steering
// direction, and the path a full step along it takes once walls are slid along. Reads only the
// agent's own state, so it comes before the neighbour pass, which needs every agent's path.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <span>

#include "lattice_sampler.hpp"
#include "crowd_rules.hpp"
#include "pile_levelling.hpp"
#include "steering_ways.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim {

using crowd_detail::cell_of;
using crowd_detail::escape_direction;
using crowd_detail::keep_route;
using crowd_detail::make_way;
using crowd_detail::pursuit_direction;
using crowd_detail::straight_in_shortest_cone;
using crowd_detail::id_direction;
using crowd_detail::LatticeSampler;
using crowd_detail::level_pile;
using crowd_detail::pile_sector_of;

namespace {

using crowd_detail::kPrefetchAgents;
// goal_room_ of an agent with no goal in sight: no limit.
constexpr float kNoGoalLimit = std::numeric_limits<float>::infinity();
constexpr std::size_t kCellRing = 16;  // > kPrefetchAgents, a power of two
// Streaming: last tick's speed at least this fraction of the kind's max (Swarm::streaming_).
constexpr float kStreamSpeed = 0.25f;
constexpr float kFreeFlowSpeed = 0.9f;
// In sight of a standing goal, the congestion field's way is for agents farther than this many
// cells from touching it (nearer, an agent packs straight at the goal), and only where that way
// turns from the straight line at the goal by more than 30 degrees (cos below kSightDetourCos)
// and less than 120 (cos above kSightDetourBackCos).
constexpr float kSightDetourCells = 6.0f;
constexpr float kSightDetourCos = 0.8660254f;
constexpr float kSightDetourBackCos = -0.5f;
// Out of sight of its goal, the congestion field's way may turn back from the exact way (by 90
// degrees or more) only for an agent within this many cells of its goal (exact field, cost units
// / kOrthogonalStep).
constexpr float kBackDetourCells = 32.0f;
// A plugged queue's way out (see plugged_queue in desired_on_navigation): taken where the ground
// this many cells along it is a detour or on an unplugged route.
constexpr float kQueueOutCells = 1.5f;

/// What the steering's prefetch reads: the map, field and any-angle tables (null when absent).
struct SteerTables {
  const std::uint8_t* map_costs;
  const std::uint8_t* flow_dirs;     // null when the flow field does not match the map
  const std::uint32_t* field_words;  // the integration's padded search words (one-cell border)
  const std::uint32_t* aa_waypoints;  // the class-1 any-angle layer, when it matches the map
  const std::uint16_t* aa_goal_words;
  bool hierarchical;
};

/// Agents in slot order walk the map row by row but far apart along a row, so nearly every agent
/// reads new cache lines of the map, flow and integration fields: fetch them for the agent in
/// slot `ahead` at cell (fx, fy) (no effect on any result).
SWARMFIELD_ALWAYS_INLINE inline void prefetch_steering(const crowd_detail::SwarmTick& t, const SteerTables& tab,
                                                       const LatticeSampler& class1, std::size_t ahead,
                                                       std::int32_t fx, std::int32_t fy) noexcept {
  const std::int32_t map_w = t.map_w;
  if (!(fx >= 0 && fy >= 0 && fx < map_w && fy + 1 < t.map_h)) return;
  const std::size_t at = t.map.index(fx, fy);
  // The map rows of the bilinear blend's square (the sector fields' sample): fy - 1 and fy when
  // the agent is in the upper half of its cell, else fy and fy + 1.
  const bool upper = t.sys[ahead] - static_cast<float>(fy) * t.cs < 0.5f * t.cs && fy > 0;
  const auto row = static_cast<std::size_t>(map_w);
  __builtin_prefetch(tab.map_costs + at);
  __builtin_prefetch(tab.map_costs + (upper ? at - row : at + row));
  __builtin_prefetch(t.open + (at >> 6));
  if (tab.flow_dirs != nullptr) {
    __builtin_prefetch(tab.flow_dirs + at);
    __builtin_prefetch(tab.flow_dirs + at + row);
  }
  if (tab.field_words != nullptr) {
    __builtin_prefetch(tab.field_words + (static_cast<std::size_t>(fy) + 1) * (row + 2) + static_cast<std::size_t>(fx) + 1);
  }
  if (tab.hierarchical) t.nav->prefetch_sample(fx, fy);
  if (tab.aa_waypoints != nullptr && fy >= 1 && fx >= 1 && class1.in_region(fx, fy)) {
    // The any-angle samples round the agent: lattice rows fy - 1 and fy (class 1), read only in
    // the any-angle region (most agents of a big map are beyond it).
    const std::size_t up = at - row - 1;
    __builtin_prefetch(tab.aa_waypoints + up);
    __builtin_prefetch(tab.aa_waypoints + up + row);
    __builtin_prefetch(tab.aa_goal_words + up);
    __builtin_prefetch(tab.aa_goal_words + up + row);
  }
}

/// The right of way of an agent at p in `block` following a route of the field value `value`
/// along `desired`: the value less how far the agent is past the block's centre along its way,
/// so agents of one block (two at a door) take turns by who is ahead.
inline std::uint32_t route_priority(std::uint32_t value, Vec2 p, Vec2 desired, CellCoord block, int size_class,
                                    float cs) noexcept {
  const Vec2 ahead = p - block_center(block, size_class, cs);
  const float along = (ahead.x * desired.x + ahead.y * desired.y) / cs * static_cast<float>(kOrthogonalStep);
  const float v = static_cast<float>(value) - along;
  return v <= 0.0f ? 0 : (v < 4.0e9f ? static_cast<std::uint32_t>(v) : kUnreachable - 1);
}

}  // namespace

// Any-angle navigation for the agent's size class (NavigationSet): straight at the goal's exact
// position where it is in sight, else toward the waypoint of the field path; sets prio_[k].
SWARMFIELD_ALWAYS_INLINE inline Vec2 Swarm::desired_on_navigation(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k,
                                  Vec2 p, std::int32_t cx, std::int32_t cy, Vec2 v, LatticeSampler& class1,
                                  const LatticeSampler* samplers, float& goal_room) {
  const float cs = t.cs;
  const bool hierarchical = t.nav->hierarchical();
  const int size_class = kt.size_class;
  const NavigationFields& fields = t.nav->fields(size_class);
  // Last tick's gather: in another route's crowd (kOtherRouteBit; this tick's gather sets it anew).
  const bool other_route = (perm_commit_[k] & kOtherRouteBit) != 0;
  NavSample sample;
  const bool fast = size_class == 1 ? class1.sample_at_cell(t.map, p, cx, cy, sample)
                                    : samplers[size_class - 1].sample(t.map, p, sample);
  // In hierarchical mode the near fields' trust check of the sample gives the priority too.
  CellCoord sampled_block{NavigationSet::kNoBlock, NavigationSet::kNoBlock};
  std::uint32_t sampled_priority = kUnreachable;
  if (!fast) sample = t.nav->sample(size_class, p, sampled_block, sampled_priority);
  const GridMap& grid = size_class == 1 ? t.map : t.nav->class_grid(size_class);
  const CellCoord block = size_class == 1 ? CellCoord{cx, cy} : reference_block(p, size_class, cs);
  const IntegrationField& field = fields.integration();
  Vec2 desired{};
  bool levels = false;  // walks round the pile (level_pile)
  switch (sample.status) {
    case NavStatus::kGoalInSight: {
      // Stop where the disc touches the player's (no walking into the player); the rest of the
      // way is the free path's limit on this tick's move.
      const Vec2 to_goal = sample.target - p;
      const float dist = length(to_goal);
      goal_room = dist - kt.stop_distance;
      const crowd_detail::GoalLead* lead =
          sample.goal >= 0 && static_cast<std::size_t>(sample.goal) < t.goal_leads.size()
              ? &t.goal_leads[static_cast<std::size_t>(sample.goal)]
              : nullptr;
      // (A goal on the move holds nobody: see choose_move.)
      const bool moves = lead != nullptr && lead->speed > 0.0f;
      goal_moves_[k] = moves ? 1 : 0;
      if (goal_room > 0.0f) desired = moves ? pursuit_direction(*lead, to_goal, dist, kt.max_step * t.inv_dt)
                                            : sample.direction;
      // Levelling the pile: the profile's input (any standing goal in sight) and, on open ground,
      // the walk round (level_pile).
      if (lead != nullptr && !moves && dist > 0.0f) {
        const std::size_t sector = pile_sector_of(to_goal);
        sight_goal_[k] = static_cast<std::int16_t>(sample.goal);
        pile_sector_[k] = static_cast<std::uint8_t>(sector);
        pile_dist_[k] = dist + 0.5f * kt.contact_d;  // its outer edge
        // Only in the open (the cell and its 8 neighbours walkable): at a door or in a corridor
        // the way round is the walls' business.
        if (t.pile_profile != nullptr && static_cast<std::size_t>(sample.goal) < t.pile_goals && goal_room > 0.0f &&
            cx >= 0 && cy >= 0 && cx < t.map_w && cy < t.map_h && crowd_detail::open_at(t.open, t.map.index(cx, cy))) {
          const std::size_t base = static_cast<std::size_t>(sample.goal) * crowd_detail::kPileSectors;
          // At rest last tick: may stand in a tongue of the pile (level_pile; its cell for the wide test).
          const Vec2 way = level_pile(t, kt, t.pile_profile + base, t.pile_room + base, sector, to_goal, dist, desired, v,
                                      perm_resting_[k] != 0, t.map.index(cx, cy));
          levels = way.x != desired.x || way.y != desired.y;
          desired = way;
        }
      }
      break;
    }
    case NavStatus::kFollow:
    case NavStatus::kFollowFlow:  // beyond the any-angle range: the smoothed flow
      desired = sample.direction;
      if (sample.status == NavStatus::kFollowFlow && !hierarchical) {
        desired = straight_in_shortest_cone(grid, field, block.x, block.y, p, t.nav->goal_positions(size_class), desired);
      }
      if (kt.commit_speed > 0.0f) {
        // (A far agent steps on one tick in 2^level: see steer_agents.)
        const std::uint32_t level = perm_far_[k].far;
        desired = commit_route(k, desired,
                               keep_route(grid, fields.flow(), field, block.x, block.y, desired, v, kt.commit_speed,
                                          true),
                               1u << level);
      }
      break;
    case NavStatus::kNoRoute:
      // A blocked or unreachable block: the blend of the neighbouring samples, else the nearest
      // reachable block, else hold.
      desired = sample.direction;
      if (desired.x == 0.0f && desired.y == 0.0f) {
        desired = escape_direction(grid, field, p, block.x, block.y, kEscapeSearchCells, size_class, cs);
      }
      // No way to any goal for this size (a brute in a room whose doors only smaller kinds fit):
      // it makes way for those that have one, walking against the smallest class's path, so it
      // never stands in the queue of a door it cannot pass (crowd pressure from behind would
      // otherwise press it into the door's mouth and close the door to everyone).
      // Whole-map mode only: in hierarchical mode kNoRoute also means "not routed yet" (routes
      // are built time-sliced), where the agent should wait for its route, not wander off.
      if (desired.x == 0.0f && desired.y == 0.0f && size_class > 1 && !hierarchical) {
        desired = make_way(t, p, v, kt.radius, perm_ids_[k]);
      }
      break;
    case NavStatus::kAtGoal:
    case NavStatus::kNoField:
      break;  // hold
  }
  // A crowd on the exact route (the congestion field values the block well above the exact
  // field): the congestion field's way, round the crowd or by another way, unless the agent
  // rests. Whole-map mode only (the congestion fields are not built otherwise). Not for an agent
  // in a crowded block itself (it is in the crowd: leaving would only stir it; the detour bit
  // says so). In sight of its goal only while the goal stands, farther than kSightDetourCells
  // from touching it, and where the congestion field's way turns from the straight line at the
  // goal by 30 to 120 degrees: round a pile that arrived from one side to its thin side and
  // the player's back (without it, late arrivals, brutes most, stop behind the pile and wall
  // the player in on one side). Where both ways agree (a queue in a dead end, where every way
  // leads through the same crowd) the agent packs straight at the goal as before: following the
  // congestion way there only sent agents wandering from one less crowded cell to the next. Nor
  // does it back away from the goal (beyond 120 degrees): agents on the rim of a pile that has
  // wrapped round circled it for over a minute, looking for a thinner side. Out of sight, a way
  // that turns back from the exact way is for agents near the goal only (kBackDetourCells), and
  // once taken is kept while it still turns back (kBackDetourBit).
  const bool out_of_sight = sample.status == NavStatus::kFollow || sample.status == NavStatus::kFollowFlow;
  const bool sight_detour = sample.status == NavStatus::kGoalInSight && goal_moves_[k] == 0 &&
                            goal_room > kSightDetourCells * cs;
  std::uint8_t& detour_state = perm_commit_[k];
  const bool was_back = (detour_state & kBackDetourBit) != 0;
  bool back = false;
  // In a queue whose exact route runs through a plugged passage (CongestionFields::
  // plugged_route(): a 1- or 2-cell gap or door with agents at rest in it, sealed by the pile
  // beyond it), out of sight, in a block with a way round (crowded or at the queue's rim): the
  // queue waits for nothing, so even at rest and from a crowded block the agent takes the
  // congestion field's way when it leads out of the queue: onto ground kQueueOutCells on where
  // arrivals take it too (its detour bit) or whose own exact route is free of plugs
  // (unplugged_route: the mouth of the other opening, whose arrivals need no detour). The
  // queue's rim walks off first, then whoever the rim's leaving uncovers. The gap wall with the
  // player 3 cells past the gap: the queue behind the wall stood to the end while the other
  // opening stayed free. Only where a passage is plugged: letting every resting queue do so
  // sent a street junction's resting arms round the blocks from one arm to the next
  // (`rest_final` 0.85 -> 0.83, jitter 346 -> 600). Without the unplugged ground, the crowd
  // pressed against the wall beside a wide opening (its exact route running along the wall to
  // the plugged gap) met the arrivals coming down to the opening head-on and ~400 stood there
  // (the gap wall's tool seed 6); with the way taken only where it turned back by more than 120
  // degrees, a room's crowd by its W door, bound for the plugged N door, let the W door pass
  // 2 agents a second at most (the door room with the player just outside its N door).
  // Larger kinds (the route marks are class 1's, read at the block's top-left cell) also in
  // sight of the goal, where the way turns from the straight line by more than 30 degrees:
  // brutes in that room with 2-cell doors, seen by the player through its plugged N door in a
  // cone, walked out of it toward another door on the congestion way and, out of sight no
  // longer, straight back into it, at full speed for minutes (a sixth of the ~500 brutes; 164-186
  // inside at 150 s, tool seeds 1-6; now 54-100, 7-22 of them moving). Not class 1 in sight:
  // the gap wall's queue within sight of the player through the plugged gap then turned toward
  // the wide opening behind the agents pressing at the gap and stood there (wide opening 40
  // cells off: 6 -> 21 of 600 left at the gap).
  const bool on_plugged_route = t.congestion != nullptr && !hierarchical &&
                                (out_of_sight || (sight_detour && size_class > 1)) &&
                                t.congestion->plugged_route(block.x, block.y);
  const bool plugged_queue = on_plugged_route && (t.congestion->detour_in_crowd(size_class, block.x, block.y) ||
                                                 t.congestion->detour(size_class, block.x, block.y));
  if (t.congestion != nullptr && !hierarchical && (perm_resting_[k] == 0 || plugged_queue) &&
      (out_of_sight || sight_detour)) {
    // Held last tick by smaller kinds on another route (kOtherRouteBit: a brute walking along a
    // wall to its opening under the funnel of runners and walkers converging on their 1-cell
    // gap), the agent is in a crowd that is not its own route's: it takes the way round even
    // from a crowded block (detour_in_crowd) and even back from the goal far from it. Before,
    // brutes on the funnel's far side stood there as a lid for up to 35 s.
    const bool held_larger = other_route && out_of_sight;
    const bool crowd_on_route = t.congestion->detour(size_class, block.x, block.y) ||
                                (held_larger && t.congestion->detour_in_crowd(size_class, block.x, block.y));
    if (crowd_on_route || plugged_queue || (was_back && out_of_sight)) {
      const float shift = 0.5f * static_cast<float>(size_class - 1) * cs;
      const Vec2 way = sample_flow(grid, t.congestion->flow(size_class), p - Vec2{shift, shift});
      const float turn = dot(way, desired);  // in sight: cos of the way's angle to the straight line
      bool take = false;
      bool leads_out = false;
      if (plugged_queue) {
        const CellCoord out = t.map.world_to_cell(p + way * (kQueueOutCells * cs));
        leads_out = t.congestion->detour(size_class, out.x, out.y) || t.congestion->unplugged_route(out.x, out.y);
      }
      if (way.x == 0.0f && way.y == 0.0f) {
        take = false;
      } else if (!out_of_sight) {
        // (A plugged queue's way out, larger kinds only, also back from the goal: see above.)
        take = turn < kSightDetourCos && ((crowd_on_route && turn > kSightDetourBackCos) || leads_out);
      } else if (turn > 0.0f) {
        take = crowd_on_route || leads_out;
      } else {
        // Back from the goal, out of sight: only near it (kBackDetourCells), where the crowd the
        // congestion field saw is the one the agent would meet; then until the way no longer
        // turns back, whatever the blocks it crosses say (the detour bit changes with every
        // build and is off on crowded blocks). Farther out the crowd moves on before the agent
        // arrives: brutes 50-180 cells from the player on the Paris junction turned back for
        // 2-3 s and again (12 runs of >= 2 s over 6 seeds; now none). On a route through a
        // plugged passage (marked to kPluggedReachCells) the crowd does not move on: the way back
        // is near there too (the gap wall with its wide opening 40 cells from the gap: arrivals
        // 32-45 cells out ran along the wall to the plug against those coming back).
        const bool near = on_plugged_route || (field.reachable(block.x, block.y) &&
                                               static_cast<float>(field.raw(block.x, block.y)) <=
                                                   kBackDetourCells * static_cast<float>(kOrthogonalStep));
        take = was_back || (crowd_on_route && (near || held_larger)) || leads_out;
        back = take;
      }
      if (take) {
        desired = way;
        goal_room = kNoGoalLimit;
      }
    }
  }
  detour_state = static_cast<std::uint8_t>(back ? detour_state | kBackDetourBit : detour_state & ~kBackDetourBit);
  // Hierarchical mode has no whole-map field: the near fields' values round the goals.
  prio_[k] = hierarchical ? (sampled_block == block ? sampled_priority : t.nav->priority(size_class, block))
                          : (field.reachable(block.x, block.y) ? field.raw(block.x, block.y) : kUnreachable);
  if (goal_room != kNoGoalLimit) {
    // A goal in sight: the straight distance to it, in the field's units (cells x
    // kOrthogonalStep), so agents of one cell still take turns by who is nearer, not by id.
    const float dist = std::max(0.0f, goal_room + kt.stop_distance) * static_cast<float>(kOrthogonalStep);
    prio_[k] = dist < 4.0e9f ? static_cast<std::uint32_t>(dist) : kUnreachable - 1;
  } else if (prio_[k] != kUnreachable && (desired.x != 0.0f || desired.y != 0.0f)) {
    prio_[k] = route_priority(prio_[k], p, desired, block, size_class, cs);
  }
  // An agent walking round the pile crosses the rim agents' ways, and by straight distance it
  // would push on into the one ahead of it, or they into it: neither gives way to the other
  // (in its own pass it yields to everyone: see gather_neighbours_of_kinds; here everyone
  // yields to it). With straight distances for right of way the walk round overlapped 0.7-3
  // pairs of agents by more than 10% of the smaller radius per frame; now 0.03-0.6.
  pile_level_[k] = levels ? 1 : 0;
  if (levels) prio_[k] = 0;
  return desired;
}

// The bare flow field (no NavigationSet: the swarm's own step in tests and benchmarks); sets
// prio_[k] from the integration field.
SWARMFIELD_ALWAYS_INLINE inline Vec2 Swarm::desired_on_flow(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k, Vec2 p,
                            std::int32_t cx, std::int32_t cy, Vec2 v) {
  const IntegrationField* const integration = t.integration;
  Vec2 desired{};
  if (t.flow.at(cx, cy) != FlowDirection::kNone) {
    desired = sample_flow(t.map, t.flow, p);
    if (integration != nullptr && kt.commit_speed > 0.0f) {
      desired = commit_route(k, desired, keep_route(t.map, t.flow, *integration, cx, cy, desired, v, kt.commit_speed, false));
    }
  } else if (integration != nullptr && !integration->reachable(cx, cy)) {
    desired = escape_direction(t.map, *integration, p, cx, cy, kEscapeSearchCells, 1, t.cs);
  }
  // else: a goal cell (or no integration to tell): hold.
  // Right of way in the neighbour pass: the lower integration value (nearer the goal) first.
  prio_[k] = integration != nullptr && integration->reachable(cx, cy) ? integration->raw(cx, cy) : kUnreachable;
  return desired;
}

// The obstacles' push on an agent at p (id for a direction when it sits on an obstacle's
// centre), capped at max_force.
inline Vec2 Swarm::obstacle_force(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, Vec2 p,
                           std::uint32_t id) const {
  Vec2 force{};
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
  return force;
}

void Swarm::steer_agents(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end) {
  const GridMap& map = t.map;
  const FlowField& flow = t.flow;
  const IntegrationField* const integration = t.integration;
  const float cs = t.cs;
  const float* const sxs = t.sxs;
  const float* const sys = t.sys;
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
  class1.set_far_bits(t.far_bits);
  // The class-1 any-angle layer, when it matches the map (prefetch hints only).
  const AnyAngleField* aa = t.nav != nullptr && t.nav->has_class(1) ? &t.nav->fields(1).any_angle() : nullptr;
  const bool aa_fits = aa != nullptr && aa->width() == t.map_w && aa->height() == t.map_h;
  const bool flow_fits = flow.width() == t.map_w && flow.height() == t.map_h &&
                         flow.directions().size() == static_cast<std::size_t>(t.map_w) * static_cast<std::size_t>(t.map_h);
  const SteerTables tables{
      map.costs().data(),
      flow_fits ? flow.directions().data() : nullptr,
      integration != nullptr && !integration->search_words().empty() ? integration->search_words().data() : nullptr,
      aa_fits ? aa->waypoints().data() : nullptr,
      aa_fits ? aa->goal_words().data() : nullptr,
      t.nav != nullptr && t.nav->hierarchical()};
  // Map cell of agents k .. k + kPrefetchAgents (ring, indexed by slot): computed once, for the
  // prefetch, and used again when the agent's turn comes.
  static_assert((kCellRing & (kCellRing - 1)) == 0 && kCellRing > kPrefetchAgents);
  std::int32_t ring_x[kCellRing], ring_y[kCellRing];
  for (std::size_t k = begin; k < std::min(end, begin + kPrefetchAgents); ++k) {
    ring_x[k & (kCellRing - 1)] = cell_of(sxs[k], cs);
    ring_y[k & (kCellRing - 1)] = cell_of(sys[k], cs);
  }
  for (std::size_t k = begin; k < end; ++k) {
    if (k + kPrefetchAgents < t.n) {
      const std::size_t ahead = k + kPrefetchAgents;
      const std::int32_t fx = cell_of(sxs[ahead], cs), fy = cell_of(sys[ahead], cs);
      ring_x[ahead & (kCellRing - 1)] = fx;
      ring_y[ahead & (kCellRing - 1)] = fy;
      prefetch_steering(t, tables, class1, ahead, fx, fy);
    }
    // The agent's reordered state (see step_impl: perm_* until the swap after this phase).
    const crowd_detail::KindTick& kt = mixed ? t.kinds[t.kind[k]] : only_kt;
    const Vec2 v{perm_vxs_[k], perm_vys_[k]};
    const Vec2 p{sxs[k], sys[k]};
    const std::int32_t cx = ring_x[k & (kCellRing - 1)], cy = ring_y[k & (kCellRing - 1)];  // cell_of(p)
    float goal_room = kNoGoalLimit;  // how far it may still move toward a goal in sight
    goal_moves_[k] = t.any_goal_moving ? 1 : 0;  // out of sight: some goal (in sight: its own, below)
    sight_goal_[k] = -1;
    pile_level_[k] = 0;
    const bool open_here = kt.small_moves && cx >= 0 && cy >= 0 && cx < t.map_w && cy < t.map_h &&
                           crowd_detail::open_at(t.open, map.index(cx, cy));
    // A far agent holding this tick (swarm_far_step.cpp): far at its last gather, and this tick
    // not one of its level's. Its neighbours read the steering of its last step; the gather holds it.
    Swarm::FarState& far = perm_far_[k];
    far.shown = crowd_detail::kShowTrue;  // (the gather sets it for a far agent)
    const bool holds =
        far.far != 0 && crowd_detail::far_holds(t, perm_ids_[k], far.far) && perm_burst_[k] == 0 && perm_resting_[k] == 0;
    asleep_[k] = holds ? crowd_detail::kFarHold : 0;
    if (holds) {
      goal_room_[k] = kNoGoalLimit;
      prio_[k] = far.prio;
      steer_x_[k] = path_x_[k] = far.path_x;
      steer_y_[k] = path_y_[k] = far.path_y;
    } else {
      const Vec2 desired = t.nav != nullptr ? desired_on_navigation(t, kt, k, p, cx, cy, v, class1, samplers, goal_room)
                                            : desired_on_flow(t, kt, k, p, cx, cy, v);
      goal_room_[k] = goal_room;
      const Vec2 force = t.have_obstacles ? obstacle_force(t, kt, p, perm_ids_[k]) : Vec2{};
      const Vec2 steer = normalized_or_zero(desired * params_.flow_weight + force);
      steer_x_[k] = steer.x;
      steer_y_[k] = steer.y;
      // Where a full step along the steering actually goes once walls are slid along and posts
      // rounded: along a wall only the tangential part moves the agent, and the free path must
      // be measured along that (an agent pressed on a wall slides into neighbours its steering
      // direction alone would pass by).
      Vec2 probe = steer;
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
      far.prio = prio_[k];
      far.path_x = probe.x;
      far.path_y = probe.y;
    }
    // Bit 2: the 5 x 5 cells round the agent's all walkable (the 3 x 3 round it all open), where
    // the contact projection applies (swarm_contacts.cpp). Only when the cell itself is open, so
    // its 8 neighbours are map cells.
    std::uint8_t open_bits = 0;
    if (open_here) {
      const bool wide = crowd_detail::wide_open_at(t.open, map.index(cx, cy), static_cast<std::size_t>(t.map_w));
      open_bits = wide ? 3 : 1;
    }
    open_here_[k] = open_bits;
    // Moving at speed last tick (a stream going by: an impatient agent stops yielding to it), or
    // not (held up: a larger kind in its way backs off), and flowing freely (a leader a chasing
    // agent counts on going on).
    const float top2 = kt.max_step * kt.max_step * t.inv_dt * t.inv_dt;
    const bool stream = dot(v, v) >= kStreamSpeed * kStreamSpeed * top2;
    streaming_[k] = static_cast<std::uint8_t>((stream ? crowd_rules::kStreamBit : crowd_rules::kStoodBit) |
                                              (dot(v, v) >= kFreeFlowSpeed * kFreeFlowSpeed * top2 ? crowd_rules::kFreeFlowBit : 0));
  }
}

}  // namespace swarmfield::sim
