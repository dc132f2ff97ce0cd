#pragma once
// The map a client receives (protocol::MapAssembler's decompressed cost bytes) as a sim::GridMap,
// so the client can run the same field algorithms as the server on it.
#include <cstdint>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::client {

/// Builds a GridMap from row-major cost bytes (width*height of them; 0 is read as 1, since the
/// cost field's passable range is 1..254). false (and `out` untouched) when the sizes do not
/// match or a side is < 1.
[[nodiscard]] bool grid_map_from_costs(std::int32_t width, std::int32_t height, float cell_size,
                                       const std::vector<std::uint8_t>& costs, sim::GridMap& out);

}  // namespace swarmfield::client
