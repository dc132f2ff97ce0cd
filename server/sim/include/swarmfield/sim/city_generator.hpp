#pragma once
// Deterministic procedural city: the embedded default map.
#include <cstdint>

#include "swarmfield/sim/grid_map.hpp"

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
/// Sizes below 32 x 32 are raised to 32.
[[nodiscard]] GridMap generate_city(const CityParams& params);

}  // namespace swarmfield::sim
