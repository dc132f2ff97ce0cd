#pragma once
// Baseline for the field rebuild benchmark: the textbook Dijkstra a game programmer would write
// first (binary heap with lazy deletion, float costs), plus the same flow extraction rule.
#include <cstdint>
#include <queue>
#include <span>
#include <utility>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::bench {

/// Multi-source Dijkstra over a GridMap's cost field, written the textbook way so the field
/// benchmark has an honest reference point (CLRS 24.3 with a binary heap; the "lazy deletion"
/// variant: a cell is pushed again whenever its distance improves and stale entries are
/// skipped when popped, as in most game-programming texts, instead of a decrease-key).
///
/// Same rules as sim::IntegrationField so the distances agree: 8-connected, a step into cell
/// n costs cost(n) orthogonally and cost(n) * sqrt(2) diagonally, a diagonal step is forbidden
/// when either orthogonal cell it passes is blocked (no corner cutting), blocked / out-of-bounds
/// goals are ignored. Differences that are the point of the comparison: float costs (not
/// integers), std::priority_queue<pair<float,int>> (not a bucket queue), bounds checks per
/// neighbour (no padded border). The distance and heap buffers are kept between builds, so no
/// allocation is timed once warm (that favours the baseline, never ours).
class HeapDijkstra {
 public:
  /// Distances (cost units; cells on a unit-cost map) from the nearest goal to every cell;
  /// +infinity for blocked and unreachable cells. Returns the number of cells settled.
  std::size_t build(const sim::GridMap& map, std::span<const sim::CellCoord> goals);

  /// Distance of cell (x, y) after the last build(); +infinity when unreachable.
  [[nodiscard]] float distance(std::int32_t x, std::int32_t y) const noexcept {
    return dist_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)];
  }
  [[nodiscard]] const std::vector<float>& distances() const noexcept { return dist_; }
  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }

 private:
  using Entry = std::pair<float, std::int32_t>;  // (distance, cell index)
  /// std::priority_queue (min-heap) whose storage can be cleared and reserved, so the heap's
  /// capacity survives between builds.
  struct MinHeap : std::priority_queue<Entry, std::vector<Entry>, std::greater<>> {
    void clear() noexcept { c.clear(); }
    void reserve(std::size_t n) { c.reserve(n); }
  };

  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::vector<float> dist_;
  MinHeap heap_;
};

/// The flow extraction of sim::FlowField written as a plain scalar loop over float distances:
/// per cell, the direction (sim::FlowDirection order: E SE S SW W NW N NE, 8 = none) of the
/// 8-neighbour with the lowest distance, diagonals only when both orthogonal cells passed are
/// walkable, only when strictly lower than the cell's own; orthogonals win ties over diagonals,
/// then the lowest direction index. 8 (none) for goals, blocked and unreachable cells.
/// `out` is resized to width * height.
void extract_flow(const sim::GridMap& map, std::span<const float> distances, std::vector<std::uint8_t>& out);

}  // namespace swarmfield::bench
