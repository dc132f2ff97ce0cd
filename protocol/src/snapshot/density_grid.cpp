// Density grid of untracked agents (see density_grid.hpp).
#include "swarmfield/protocol/snapshot/density_grid.hpp"

#include <algorithm>
#include <bit>

namespace swarmfield::protocol {
namespace {

constexpr unsigned kOriginBits = 14;  // 0..16383 >= kMaxDensityOrigin
constexpr unsigned kSideBits = 7;     // 0..127 >= kMaxDensityGridSide
constexpr unsigned kLevelBits = 4;
constexpr unsigned kRunOrder = 1;

}  // namespace

std::uint8_t DensityGrid::level_at_cell(std::int32_t cx, std::int32_t cy) const noexcept {
  if (empty() || cx < origin_x || cy < origin_y) return 0;
  const std::int64_t gx = (std::int64_t{cx} - origin_x) >> cell_log2;
  const std::int64_t gy = (std::int64_t{cy} - origin_y) >> cell_log2;
  if (gx >= width || gy >= height) return 0;
  const std::size_t i = static_cast<std::size_t>(gy) * width + static_cast<std::size_t>(gx);
  return i < levels.size() ? levels[i] : 0;
}

std::uint8_t density_level(std::uint32_t count) noexcept {
  if (count == 0) return 0;
  return static_cast<std::uint8_t>(std::min<std::uint32_t>(15, static_cast<std::uint32_t>(std::bit_width(count))));
}

std::uint32_t density_level_floor(std::uint8_t level) noexcept {
  if (level == 0) return 0;
  return 1u << (std::min<std::uint8_t>(level, 15) - 1);
}

void set_density_grid_geometry(DensityGrid& grid, std::int32_t x0, std::int32_t y0, std::int32_t x1,
                               std::int32_t y1) {
  x0 = std::clamp(x0, 0, kMaxDensityOrigin);
  y0 = std::clamp(y0, 0, kMaxDensityOrigin);
  x1 = std::clamp(x1, 0, kMaxDensityOrigin);
  y1 = std::clamp(y1, 0, kMaxDensityOrigin);
  grid.clear();
  if (x1 <= x0 || y1 <= y0) return;
  for (unsigned log2 = 0; log2 <= kMaxDensityCellLog2; ++log2) {
    const std::int32_t side = 1 << log2;
    const std::int32_t ox = (x0 / side) * side, oy = (y0 / side) * side;
    const std::int32_t w = (x1 - ox + side - 1) / side, h = (y1 - oy + side - 1) / side;
    if (w <= static_cast<std::int32_t>(kMaxDensityGridSide) && h <= static_cast<std::int32_t>(kMaxDensityGridSide)) {
      grid.origin_x = ox;
      grid.origin_y = oy;
      grid.cell_log2 = static_cast<std::uint8_t>(log2);
      grid.width = static_cast<std::uint8_t>(w);
      grid.height = static_cast<std::uint8_t>(h);
      grid.levels.assign(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), 0);
      return;
    }
  }
}

namespace {

/// The baseline's level for square i of `grid` (same world position, same square size), else 0.
std::uint8_t baseline_level(const DensityGrid& grid, const DensityGrid& baseline, std::size_t i) noexcept {
  if (baseline.empty() || baseline.cell_log2 != grid.cell_log2) return 0;
  const auto gx = static_cast<std::int32_t>(i % grid.width), gy = static_cast<std::int32_t>(i / grid.width);
  return baseline.level_at_cell(grid.origin_x + (gx << grid.cell_log2), grid.origin_y + (gy << grid.cell_log2));
}

}  // namespace

void write_density_grid(BitWriter& out, const DensityGrid& grid, const DensityGrid& baseline) {
  out.write_bits(static_cast<std::uint32_t>(grid.origin_x), kOriginBits);
  out.write_bits(static_cast<std::uint32_t>(grid.origin_y), kOriginBits);
  out.write_bits(grid.cell_log2, 4);
  out.write_bits(grid.width, kSideBits);
  out.write_bits(grid.height, kSideBits);
  const std::size_t n = static_cast<std::size_t>(grid.width) * grid.height;
  std::uint32_t run = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t level = i < grid.levels.size() ? grid.levels[i] : 0;
    if (level == baseline_level(grid, baseline, i)) {
      ++run;
      continue;
    }
    out.write_exp_golomb(run, kRunOrder);
    out.write_bits(level & 0x0Fu, kLevelBits);
    run = 0;
  }
  if (run > 0) out.write_exp_golomb(run, kRunOrder);
}

bool read_density_grid(BitReader& in, DensityGrid& grid, const DensityGrid& baseline) {
  const auto ox = static_cast<std::int32_t>(in.read_bits(kOriginBits));
  const auto oy = static_cast<std::int32_t>(in.read_bits(kOriginBits));
  const auto log2 = in.read_bits(4);
  const auto w = in.read_bits(kSideBits);
  const auto h = in.read_bits(kSideBits);
  if (in.failed() || ox > kMaxDensityOrigin || oy > kMaxDensityOrigin || log2 > kMaxDensityCellLog2 ||
      w > kMaxDensityGridSide || h > kMaxDensityGridSide || w == 0 || h == 0) {
    return false;
  }
  grid.origin_x = ox;
  grid.origin_y = oy;
  grid.cell_log2 = static_cast<std::uint8_t>(log2);
  grid.width = static_cast<std::uint8_t>(w);
  grid.height = static_cast<std::uint8_t>(h);
  const std::size_t n = static_cast<std::size_t>(w) * h;
  grid.levels.resize(n);
  std::size_t i = 0;
  while (i < n) {
    const std::uint32_t run = in.read_exp_golomb(kRunOrder);
    if (in.failed() || run > n - i) return false;
    for (std::uint32_t r = 0; r < run; ++r, ++i) grid.levels[i] = baseline_level(grid, baseline, i);
    if (i == n) break;
    grid.levels[i] = static_cast<std::uint8_t>(in.read_bits(kLevelBits));
    ++i;
  }
  return !in.failed();
}

}  // namespace swarmfield::protocol
