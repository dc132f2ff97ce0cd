#pragma once
// map.world_to_cell() for the per-agent reads of the sector fields (sample() and the portal
// fallback's steer()): private to src/nav.
#include <cstdint>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim::nav_detail {

/// map.world_to_cell(p) (floor of p / cell size), without its out-of-line double division for
/// the usual unit cells: there truncation is floor for 0 <= v < 2^24.
inline CellCoord cell_at(const GridMap& map, Vec2 p) noexcept {
  constexpr float kExact = 16777216.0f;
  if (map.cell_size() == 1.0f && p.x >= 0.0f && p.y >= 0.0f && p.x < kExact && p.y < kExact) {
    return {static_cast<std::int32_t>(p.x), static_cast<std::int32_t>(p.y)};
  }
  return map.world_to_cell(p);
}

}  // namespace swarmfield::sim::nav_detail
