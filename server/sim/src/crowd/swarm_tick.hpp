#pragma once
// What every phase of one Swarm::step reads: the map and fields, the tick's constants, and the
// agents' positions in hash-slot order. Built once per step by Swarm::step_impl (swarm.cpp) and
// passed to the phase units (swarm_steering.cpp, swarm_separation.cpp, swarm_motion.cpp).
// Internal to server/sim/src/crowd.
#include <cstddef>
#include <cstdint>

#include "crowd_math.hpp"
#include "swarmfield/sim/crowd/wall_collision.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/flow_field.hpp"
#include "swarmfield/sim/nav/integration_field.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim::crowd_detail {

// How many agents ahead the phases prefetch map, field and hash cells.
inline constexpr std::size_t kPrefetchAgents = 8;

struct SwarmTick {
  const GridMap& map;
  const FlowField& flow;
  const IntegrationField* integration;  // null: cannot tell unreachable cells from goals
  std::size_t n = 0;                    // agents

  // Map geometry.
  float cs = 1.0f;  // cell size
  std::int32_t map_w = 0, map_h = 0;
  float map_wf = 0.0f, map_hf = 0.0f;  // map_w, map_h as floats
  float inv_cs = 1.0f;                 // for prefetch hints only
  // Unit cells (the usual case): for 0 <= v < W, cell_of(v) is truncation, so the open-cell test
  // needs only float compares (same answer as cell_of plus bounds checks, NaN included).
  bool unit_cells = false;
  // Per map cell: 1 when the cell and its 8 neighbours are walkable (Swarm::open_cells_).
  const std::uint8_t* open = nullptr;

  // Agent constants (world units, seconds).
  float dt = 0.0f, inv_dt = 0.0f;
  float radius = 0.0f;    // wall collision radius (wall_collision_radius)
  float max_step = 0.0f;  // max_speed * dt
  float max_step2 = 0.0f;
  float sep_r = 0.0f, sep_r2 = 0.0f, inv_sep_r = 0.0f;  // separation kernel radius R
  float contact_d = 0.0f;  // two radii: discs touch
  float press_d = 0.0f;    // contact_d * (1 - press_overlap)
  float stiffness = 0.0f, contact_stiffness = 0.0f;
  float max_force = 0.0f;     // obstacle force clamp
  float commit_speed = 0.0f;  // route commitment above this speed
  bool have_obstacles = false;
  bool yield = false;
  float yield_fraction = 1.0f;
  float max_turn = 0.0f;  // radians per tick
  // The fast path of wall sliding is valid while a move cannot reach past the 3x3 block.
  bool small_moves = false;
  // slide_round_corner() returns its p1 unchanged when neither axis lost more than this.
  float corner_eps = 0.0f;
  bool has_invalid = false;  // repair found no walkable cell for some agent

  // The agents' positions at the start of the tick, in hash-slot order (the hash's sorted copy).
  const std::uint32_t* items = nullptr;  // slot -> index before the reorder
  const float* sxs = nullptr;
  const float* sys = nullptr;
};

/// Whether a disc centred at `from` is in an open cell (see SwarmTick::open).
inline bool is_open(const SwarmTick& t, Vec2 from) noexcept {
  if (t.unit_cells) {
    return from.x >= 0.0f && from.y >= 0.0f && from.x < t.map_wf && from.y < t.map_hf &&
           t.open[t.map.index(static_cast<std::int32_t>(from.x), static_cast<std::int32_t>(from.y))] != 0;
  }
  const std::int32_t cx = cell_of(from.x, t.cs), cy = cell_of(from.y, t.cs);
  return cx >= 0 && cy >= 0 && cx < t.map_w && cy < t.map_h && t.open[t.map.index(cx, cy)] != 0;
}

/// slide_along_walls, with the fast path of a short move from an open cell (`from_open`: the
/// caller knows is_open(from)); the same result either way.
inline Vec2 slide_known(const SwarmTick& t, Vec2 from, Vec2 move, bool from_open) noexcept {
  if (t.small_moves && std::abs(move.x) <= t.max_step && std::abs(move.y) <= t.max_step && from_open) {
    return from + move;
  }
  return slide_along_walls(t.map, from, move, t.radius);
}

/// slide_along_walls with the open-cell fast path.
inline Vec2 slide(const SwarmTick& t, Vec2 from, Vec2 move) noexcept {
  if (t.small_moves && std::abs(move.x) <= t.max_step && std::abs(move.y) <= t.max_step && is_open(t, from)) {
    return from + move;
  }
  return slide_along_walls(t.map, from, move, t.radius);
}

}  // namespace swarmfield::sim::crowd_detail
