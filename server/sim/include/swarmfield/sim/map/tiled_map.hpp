#pragma once
// A map repeated n x n times: big maps from real ones (MovingAI street maps tiled to 4096 and
// 8192 cells a side for the hierarchical navigation's tests and benchmarks).
#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim {

/// `tile` repeated `n` x `n` times (n >= 1; n < 1 counts as 1), same cell size, revision 0.
[[nodiscard]] GridMap tiled_map(const GridMap& tile, int n);

}  // namespace swarmfield::sim
