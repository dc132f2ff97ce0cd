#pragma once
// Flow field: one byte per cell naming the neighbour to step to.
#include <array>
#include <cstdint>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Directions, y grows downward (row index). Index = value stored in the flow field.
enum class FlowDirection : std::uint8_t { kE = 0, kSE, kS, kSW, kW, kNW, kN, kNE, kNone = 8 };
inline constexpr std::array<CellCoord, 8> kDirectionOffsets = {{
    {1, 0}, {1, 1}, {0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}, {1, -1}}};

/// Unit world-space vector of a direction (diagonals already normalized); {0,0} for kNone.
[[nodiscard]] Vec2 direction_vector(FlowDirection d) noexcept;

/// Per cell: the direction to the 8-neighbour with the lowest integration value, under the
/// same no-corner-cutting rule, and only when that value is lower than the cell's own.
/// kNone for goals, blocked and unreachable cells. Ties: the orthogonal direction wins over
/// a diagonal, then the lowest enum value (deterministic).
class FlowField {
 public:
  /// Whole field of `integration` (build_rows() over every row: the blocked cells are those of
  /// the map snapshot the integration was built on, which `map` is expected to still be). A
  /// size mismatch with `map` leaves every cell kNone.
  void build(const GridMap& map, const IntegrationField& integration);
  /// Rows [y_begin, y_end) (cells, clamped to the field) of the field of `integration`,
  /// computed from its search snapshot (IntegrationField::search_words()), i.e. with the
  /// blocked cells of the map as it was at the integration's begin()/build(), whatever the map
  /// is now. Same directions as build() on that map. First sizes the field to the
  /// integration's (allocating only when it grows); rows outside the range keep their contents,
  /// so a field can be built a slice at a time (NavigationFields does). If `integration` is in
  /// progress or has no snapshot, the rows are kNone. Cost: ~0.4 ns per cell with AVX-512, ~1 ns
  /// with AVX2 (clones picked at run time on x86-64), ~2.5 ns without.
  void build_rows(const IntegrationField& integration, std::int32_t y_begin, std::int32_t y_end);
  /// Reserves the buffer for a `width` x `height` field so a later build allocates nothing
  /// (the current field is left as it is).
  void reserve(std::int32_t width, std::int32_t height);

  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }
  /// Direction of a cell; kNone out of bounds.
  [[nodiscard]] FlowDirection at(std::int32_t x, std::int32_t y) const noexcept {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return FlowDirection::kNone;
    return static_cast<FlowDirection>(dirs_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)]);
  }
  [[nodiscard]] const std::vector<std::uint8_t>& directions() const noexcept { return dirs_; }

 private:
  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::vector<std::uint8_t> dirs_;
};

/// Smoothed direction at a world position: bilinear blend of the four surrounding cell-centre
/// samples (each a unit vector), skipping blocked and kNone samples, then normalized. If the
/// blend is ~zero, falls back to the direction of the cell `p` lies in. Returns {0,0} only when
/// that is kNone too. Removes the 45-degree jumps at cell borders that make crowds jitter.
/// Also skipped: a sample diagonal to p's own (walkable) cell when a cell between them is
/// blocked, since it lies across a wall corner. Blends shorter than 1e-3 count as ~zero.
/// Non-finite `p` gives {0,0}.
[[nodiscard]] Vec2 sample_flow(const GridMap& map, const FlowField& flow, Vec2 p) noexcept;

}  // namespace swarmfield::sim
