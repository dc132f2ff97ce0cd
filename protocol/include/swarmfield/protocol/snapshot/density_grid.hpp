#pragma once
// Coarse density grid of the agents a client does not track individually, so a viewer of a
// large area still sees where the horde is (protocol/SNAPSHOTS.md, "Density grid"). The grid
// covers the client's view rectangle with at most kMaxDensityGridSide x kMaxDensityGridSide
// squares of a power-of-two number of map cells; each square holds a 4-bit level, a log2 bucket
// of its agent count. Coded as changes against the baseline's grid, cell by world position, so a
// panning view costs only the squares whose level changed or that scrolled into view.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "swarmfield/protocol/snapshot/bit_stream.hpp"

namespace swarmfield::protocol {

inline constexpr std::uint32_t kMaxDensityGridSide = 64;  ///< squares per side
inline constexpr unsigned kMaxDensityCellLog2 = 13;       ///< square side up to 8192 map cells
inline constexpr std::int32_t kMaxDensityOrigin = 8192;   ///< origin in map cells, 0..this

struct DensityGrid {
  std::int32_t origin_x = 0;   ///< map cells (multiple of the square side)
  std::int32_t origin_y = 0;
  std::uint8_t cell_log2 = 0;  ///< square side = 2^cell_log2 map cells
  std::uint8_t width = 0;      ///< squares, 0 = no grid
  std::uint8_t height = 0;
  std::vector<std::uint8_t> levels;  ///< width * height, row-major, each 0..15

  [[nodiscard]] bool empty() const noexcept { return width == 0 || height == 0; }
  /// No grid (every field back to its default; the level buffer keeps its capacity).
  void clear() noexcept {
    origin_x = origin_y = 0;
    cell_log2 = width = height = 0;
    levels.clear();
  }
  /// Level of the square covering map cell (cx, cy); 0 outside the grid.
  [[nodiscard]] std::uint8_t level_at_cell(std::int32_t cx, std::int32_t cy) const noexcept;
  friend bool operator==(const DensityGrid&, const DensityGrid&) = default;
};

/// Level of a count: 0 for none, else 1 + floor(log2(count)), at most 15 (16384 agents or more).
[[nodiscard]] std::uint8_t density_level(std::uint32_t count) noexcept;
/// Smallest count with `level` (0, 1, 2, 4, 8, ...): what a client may draw for a square.
[[nodiscard]] std::uint32_t density_level_floor(std::uint8_t level) noexcept;

/// Sets the geometry of `grid` to cover the map-cell rectangle [x0, x1) x [y0, y1) (clamped to
/// 0..kMaxDensityOrigin): the smallest power-of-two square side that covers it in at most
/// kMaxDensityGridSide squares a side, origin rounded down to that side. Levels all 0. An empty
/// rectangle gives an empty grid.
void set_density_grid_geometry(DensityGrid& grid, std::int32_t x0, std::int32_t y0, std::int32_t x1,
                               std::int32_t y1);
/// Adds one agent at map cell (cx, cy) to a count array laid out like `grid.levels` (ignored
/// outside the grid). Inline: called for every untracked agent of every view, every snapshot.
inline void count_density_agent(const DensityGrid& grid, std::vector<std::uint32_t>& counts, std::int32_t cx,
                                std::int32_t cy) noexcept {
  if (grid.empty() || cx < grid.origin_x || cy < grid.origin_y) return;
  const std::int64_t gx = (std::int64_t{cx} - grid.origin_x) >> grid.cell_log2;
  const std::int64_t gy = (std::int64_t{cy} - grid.origin_y) >> grid.cell_log2;
  if (gx >= grid.width || gy >= grid.height) return;
  const std::size_t i = static_cast<std::size_t>(gy) * grid.width + static_cast<std::size_t>(gx);
  if (i < counts.size()) ++counts[i];
}

/// Writes `grid` as changes against `baseline` (may be empty): geometry (origin 14+14 bits,
/// cell_log2 4 bits, width and height 7 bits each), then runs: Exp-Golomb(1) count of squares
/// whose level equals the baseline's level at the same map cell, then the new level in 4 bits,
/// until the grid is covered (the last run may end the grid without a level).
void write_density_grid(BitWriter& out, const DensityGrid& grid, const DensityGrid& baseline);
/// Reads a grid written by write_density_grid against the same `baseline`. False (grid
/// unspecified) on out-of-range geometry, runs past the end, or a reader failure.
[[nodiscard]] bool read_density_grid(BitReader& in, DensityGrid& grid, const DensityGrid& baseline);

}  // namespace swarmfield::protocol
