// SpatialHash: uniform grid rebuilt by counting sort into flat arrays.
#include "swarmfield/sim/spatial_hash.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace swarmfield::sim {

namespace {
// Upper bound on hash cells so a degenerate configure() (huge world, tiny cell) cannot ask for
// gigabytes; the cell size is raised instead. 1 << 24 cells = 64 MiB of cell_start_.
constexpr double kMaxCells = static_cast<double>(1u << 24);

std::int32_t cells_along(float extent, float cell_size) noexcept {
  const double n = std::ceil(static_cast<double>(extent) / static_cast<double>(cell_size));
  if (!(n >= 1.0)) return 1;  // also NaN
  return static_cast<std::int32_t>(std::min(n, kMaxCells));
}
}  // namespace

void SpatialHash::configure(float world_width, float world_height, float cell_size) {
  if (!std::isfinite(world_width) || world_width < 0.0f) world_width = 0.0f;
  if (!std::isfinite(world_height) || world_height < 0.0f) world_height = 0.0f;
  if (!std::isfinite(cell_size) || cell_size <= 0.0f) cell_size = 1.0f;
  // Keep the grid within kMaxCells by growing the cells (queries stay correct: bigger cells
  // only return more candidates).
  while (static_cast<double>(cells_along(world_width, cell_size)) *
             static_cast<double>(cells_along(world_height, cell_size)) >
         kMaxCells) {
    cell_size *= 2.0f;
  }
  cell_size_ = cell_size;
  inv_cell_size_ = 1.0f / cell_size;
  cols_ = cells_along(world_width, cell_size);
  rows_ = cells_along(world_height, cell_size);
  cell_start_.assign(static_cast<std::size_t>(cols_) * static_cast<std::size_t>(rows_) + 1, 0u);
  items_.clear();
  item_cell_.clear();
  sorted_xs_.clear();
  sorted_ys_.clear();
}

void SpatialHash::reserve(std::size_t items) {
  items_.reserve(items);
  item_cell_.reserve(items);
  sorted_xs_.reserve(items);
  sorted_ys_.reserve(items);
}

void SpatialHash::rebuild(std::span<const float> xs, std::span<const float> ys) {
  if (cols_ <= 0 || rows_ <= 0) configure(0.0f, 0.0f, cell_size_);
  const std::size_t n = std::min(xs.size(), ys.size());
  const std::size_t cells = cell_start_.size() - 1;
  // Indices are stored as u32; a swarm never holds more than that.
  const std::size_t count = std::min<std::size_t>(n, std::numeric_limits<std::uint32_t>::max());
  items_.resize(count);      // no allocation once capacity is reached
  item_cell_.resize(count);
  sorted_xs_.resize(count);
  sorted_ys_.resize(count);

  // Count per cell into cell_start_[c].
  std::fill(cell_start_.begin(), cell_start_.end(), 0u);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t c = static_cast<std::size_t>(cell_coord(ys[i], rows_)) * static_cast<std::size_t>(cols_) +
                          static_cast<std::size_t>(cell_coord(xs[i], cols_));
    item_cell_[i] = static_cast<std::uint32_t>(c);
    ++cell_start_[c];
  }
  // Inclusive prefix sums: cell_start_[c] = one past the last slot of cell c.
  std::uint32_t running = 0;
  for (std::size_t c = 0; c < cells; ++c) {
    running += cell_start_[c];
    cell_start_[c] = running;
  }
  cell_start_[cells] = running;
  // Place back to front, decrementing: afterwards cell_start_[c] is the first slot of cell c
  // and items inside a cell are in ascending index order (stable, so queries are deterministic).
  for (std::size_t i = count; i-- > 0;) {
    const std::uint32_t slot = --cell_start_[item_cell_[i]];
    items_[slot] = static_cast<std::uint32_t>(i);
    sorted_xs_[slot] = xs[i];
    sorted_ys_[slot] = ys[i];
  }
}

}  // namespace swarmfield::sim
