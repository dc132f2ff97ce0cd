#pragma once
// Clearance map: per cell, the side of the largest all-walkable square whose top-left corner is
// that cell (capped at kMaxSizeClass) -- what a big agent needs to know to plan and to stand.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim {

/// Largest size class (footprint kMaxSizeClass x kMaxSizeClass cells, radius up to 2 cells).
inline constexpr int kMaxSizeClass = 4;

/// "True clearance" of Harabor & Botea, "Hierarchical Path Planning for Multi-Size Agents in
/// Heterogeneous Environments" (IEEE CIG 2008): clearance(x, y) = the largest s such that the
/// s x s square of cells with top-left (x, y) lies on the map and is all walkable, capped at
/// kMaxSizeClass; 0 for blocked cells. Computed by the usual dynamic programme, bottom-right to
/// top-left: c(x, y) = 1 + min(c(x + 1, y), c(x, y + 1), c(x + 1, y + 1)) on walkable cells,
/// off-map cells counting as 0 (so the map edge is a wall). A block of size n with top-left b
/// fits iff clearance(b) >= n. Costs are ignored (any cost below kBlockedCost is walkable).
class ClearanceMap {
 public:
  /// Recomputes the map for `map` (one pass, ~1-2 ns per cell); allocates only when the map is
  /// larger than any before. Remembers the map's revision (see revision()).
  void build(const GridMap& map);
  /// Follows cost changes at `cells` (GridMap::changes_since() of the revision built for):
  /// recomputes only the cells whose square can hold a changed cell (up to kMaxSizeClass - 1
  /// cells up and left of each), in the same bottom-right-to-top-left order, and takes `map`'s
  /// revision. The result equals build(map). False (nothing done) when the map was never built
  /// or `map` has another size: call build() then. Allocates only scratch for the cell list.
  bool update(const GridMap& map, std::span<const CellCoord> cells);
  /// True if the map was built for `map`'s size and revision (no rebuild needed).
  [[nodiscard]] bool matches(const GridMap& map) const noexcept {
    return built_ && map.width() == width_ && map.height() == height_ && map.revision() == revision_;
  }

  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }
  /// Map revision the clearance was built for.
  [[nodiscard]] std::uint32_t revision() const noexcept { return revision_; }
  /// Clearance of a cell in cells (0..kMaxSizeClass); 0 off the map.
  [[nodiscard]] std::uint8_t at(std::int32_t x, std::int32_t y) const noexcept {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return 0;
    return values_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)];
  }
  /// True if the `size_class` x `size_class` block with top-left `block` is on the map and all
  /// walkable (size_class in 1..kMaxSizeClass; other values: false).
  [[nodiscard]] bool fits(CellCoord block, int size_class) const noexcept {
    return size_class >= 1 && size_class <= kMaxSizeClass && at(block.x, block.y) >= size_class;
  }
  /// The largest value of the map (0..kMaxSizeClass; 0 before a build): the biggest size class
  /// that fits anywhere. O(1): build() and update() keep a count of cells per value.
  [[nodiscard]] std::uint8_t largest() const noexcept {
    for (std::size_t v = kMaxSizeClass; v > 0; --v) {
      if (counts_[v] != 0) return static_cast<std::uint8_t>(v);
    }
    return 0;
  }
  /// Row-major values, width() * height() bytes.
  [[nodiscard]] const std::vector<std::uint8_t>& values() const noexcept { return values_; }

 private:
  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::uint32_t revision_ = 0;
  bool built_ = false;
  std::vector<std::uint8_t> values_;
  std::vector<std::size_t> scratch_;  // cells to recompute (update())
  std::array<std::size_t, kMaxSizeClass + 1> counts_{};  // cells per value (largest())
};

}  // namespace swarmfield::sim
