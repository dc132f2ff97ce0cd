#pragma once
// Deterministic procedural city: the embedded default map.
#include <cstdint>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim {

struct CityParams {
  std::int32_t width = 256;   ///< cells
  std::int32_t height = 256;  ///< cells
  std::uint64_t seed = 1;
};

/// Generates a city: a grid of roads (cost 1) between building blocks (blocked), sidewalks
/// along them (cost 2), alleys cut through blocks (cost 3), and a few open plazas (cost 1).
/// The map border is walkable road. Every walkable cell is 8-connected to every other
/// (unreachable pockets are filled in as blocked). Same params = byte-identical map.
/// Sizes below 32 x 32 are raised to 32, sizes above 8192 lowered to 8192 (the largest map side
/// the loader and the wire take). Layout: arterial
/// boulevards (6-8 cells wide) every 70-120 cells, local streets (3-4 cells) every 14-34 cells
/// per superblock, sometimes a diagonal avenue; plazas carry a fountain and trees (blocked
/// cells). Platform-independent: mt19937_64 with our own range mapping, no floating point.
[[nodiscard]] GridMap generate_city(const CityParams& params);

}  // namespace swarmfield::sim
