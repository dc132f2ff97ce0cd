#pragma once
// Integration field: cost-to-nearest-goal of every cell.
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "swarmfield/sim/grid_map.hpp"

namespace swarmfield::sim {

/// Integration values are integers in units of 1/kOrthogonalStep of one cost unit, so a
/// bucket queue can be used and sums are exact. kDiagonalStep / kOrthogonalStep = 1393/985
/// = 1.41421320 (a Pell-number convergent of sqrt(2), relative error 2.6e-7), so on unit-cost
/// maps value / 985 equals the exact octile distance well within the 1e-4 of MovingAI's
/// rounded `.scen` lengths. Largest path cost representable: ~4.3e6 cost units.
inline constexpr std::uint32_t kOrthogonalStep = 985;
inline constexpr std::uint32_t kDiagonalStep = 1393;
inline constexpr std::uint32_t kUnreachable = std::numeric_limits<std::uint32_t>::max();

/// Cost-to-goal of every cell (Dijkstra from all goals at once). 8-connected: an orthogonal
/// step into cell n costs cost(n) * kOrthogonalStep, a diagonal one cost(n) * kDiagonalStep,
/// and a diagonal step is forbidden when either orthogonal cell it passes is blocked (no corner
/// cutting; the rule of Sturtevant 2012, "Benchmarks for Grid-Based Pathfinding").
/// Blocked cells and cells no goal can reach hold kUnreachable. Goals out of bounds or on
/// blocked cells are ignored. Buffers are kept between builds (no allocation once warm).
/// Queue: buckets of width kOrthogonalStep (the smallest possible step), which makes every
/// cell of the lowest non-empty bucket final, so each bucket is drained in FIFO order with no
/// heap (Dial 1969; Dinitz's bucket-width rule). O(cells + max_value / kOrthogonalStep).
class IntegrationField {
 public:
  /// Full rebuild for `goals` (cells) on `map`.
  void build(const GridMap& map, std::span<const CellCoord> goals);
  /// Point query: the same search, stopped as soon as `target`'s value is final. Afterwards
  /// raw(target) / cost_to_goal(target) are exact, as is every value below it; other cells may
  /// hold tentative values or kUnreachable, and reachable_count() counts the settled cells.
  /// Not for flow fields. A blocked, unreachable or off-map target means a full search.
  void build_until(const GridMap& map, std::span<const CellCoord> goals, CellCoord target);

  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }
  /// Raw value (1/985 cost units) of an in-bounds cell; kUnreachable when unreachable/blocked.
  [[nodiscard]] std::uint32_t raw(std::int32_t x, std::int32_t y) const noexcept {
    return values_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)];
  }
  /// Cost to the nearest goal in cost units (cells on a unit-cost map); +infinity if unreachable.
  [[nodiscard]] double cost_to_goal(std::int32_t x, std::int32_t y) const noexcept;
  [[nodiscard]] bool reachable(std::int32_t x, std::int32_t y) const noexcept {
    return x >= 0 && y >= 0 && x < width_ && y < height_ && raw(x, y) != kUnreachable;
  }
  [[nodiscard]] const std::vector<std::uint32_t>& values() const noexcept { return values_; }
  /// Number of cells with a finite value after the last build.
  [[nodiscard]] std::size_t reachable_count() const noexcept { return reachable_count_; }

 private:
  void build_impl(const GridMap& map, std::span<const CellCoord> goals, const CellCoord* target);

  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::size_t reachable_count_ = 0;
  std::vector<std::uint32_t> values_;
  // Scratch kept between builds so a warm rebuild allocates nothing. The search runs on a copy
  // with a one-cell blocked border (no bounds checks in the inner loop); see the .cpp.
  std::vector<std::uint8_t> padded_costs_;    // only for maps with costs other than 1 and 255
  std::vector<std::uint32_t> padded_values_;  // 0 blocked, max unreached, else value + 1
  std::vector<std::vector<std::uint32_t>> buckets_;  // circular bucket queue, see the .cpp
};

}  // namespace swarmfield::sim
