#pragma once
// Lower-bound baseline for the field rebuild benchmark: breadth-first search with unit steps.
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::bench {

/// Multi-source 8-neighbour breadth-first search (Moore 1959) with a flat array as the FIFO
/// queue: every step costs 1 whatever its direction or the cell's cost, so it is not a correct
/// integration field (diagonals are too cheap, costs are ignored). It visits exactly the cells
/// a correct search visits (same 8-connectivity, same no-corner-cutting rule, blocked cells and
/// blocked goals skipped) and does the least work per cell possible: one FIFO push and pop, no
/// ordering, no bounds checks (it runs on a copy with a one-cell blocked border, like ours).
/// Its time is a floor for any single-pass field builder on the same map. Buffers are kept
/// between builds; the padded copy is rebuilt (and timed) every build, as ours is.
class GridBfs {
 public:
  /// Hop counts from the nearest goal. Returns the number of cells reached.
  std::size_t build(const sim::GridMap& map, std::span<const sim::CellCoord> goals);
  /// Hops of cell (x, y) after the last build(); -1 for blocked and unreachable cells.
  [[nodiscard]] std::int32_t hops(std::int32_t x, std::int32_t y) const noexcept {
    const std::int32_t v = padded_[static_cast<std::size_t>(y + 1) * padded_width_ + static_cast<std::size_t>(x + 1)];
    return v < 0 ? -1 : v;
  }

 private:
  std::size_t padded_width_ = 0;
  std::vector<std::int32_t> padded_;  // -2 blocked, -1 not reached, else hops
  std::vector<std::int32_t> queue_;   // each cell enters at most once: size = cell count
};

}  // namespace swarmfield::bench
