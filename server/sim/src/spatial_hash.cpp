// SpatialHash: uniform grid rebuilt by counting sort into flat arrays.
#include "swarmfield/sim/spatial_hash.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "swarmfield/sim/worker_pool.hpp"

namespace swarmfield::sim {

namespace {
// Upper bound on hash cells so a degenerate configure() (huge world, tiny cell) cannot ask for
// gigabytes; the cell size is raised instead. 1 << 24 cells = 64 MiB of cell_start_.
constexpr double kMaxCells = static_cast<double>(1u << 24);
// Bands of hash rows sorted independently (a few per thread, so threads balance; each band's
// cells stay small enough to count in cache). Items per chunk of the band partition.
constexpr std::size_t kMaxBands = 64;
constexpr std::size_t kItemChunk = 4096;

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
  const auto rows = static_cast<std::size_t>(rows_);
  const std::size_t band_rows = (rows + kMaxBands - 1) / kMaxBands;
  band_cells_ = band_rows * static_cast<std::size_t>(cols_);
  bands_ = (rows + band_rows - 1) / band_rows;
  band_of_row_.resize(rows);
  for (std::size_t y = 0; y < rows; ++y) band_of_row_[y] = static_cast<std::uint8_t>(y / band_rows);
  band_start_.assign(bands_ + 1, 0u);
  band_counts_.assign(bands_ * WorkerPool::chunk_count(items_.capacity(), kItemChunk), 0u);
  cell_start_.assign(static_cast<std::size_t>(cols_) * rows + 1, 0u);
  items_.clear();
  item_cell_.clear();
  sorted_xs_.clear();
  sorted_ys_.clear();
  band_items_.clear();
  item_band_.clear();
}

void SpatialHash::reserve(std::size_t items) {
  items_.reserve(items);
  item_cell_.reserve(items);
  sorted_xs_.reserve(items);
  sorted_ys_.reserve(items);
  band_items_.reserve(items);
  item_band_.reserve(items);
  const std::size_t counts = bands_ * WorkerPool::chunk_count(items, kItemChunk);
  if (band_counts_.size() < counts) band_counts_.resize(counts);
}

void SpatialHash::rebuild(std::span<const float> xs, std::span<const float> ys, WorkerPool* pool) {
  if (cols_ <= 0 || rows_ <= 0) configure(0.0f, 0.0f, cell_size_);
  const std::size_t n = std::min(xs.size(), ys.size());
  const std::size_t cells = cell_start_.size() - 1;
  // Indices are stored as u32; a swarm never holds more than that.
  const std::size_t count = std::min<std::size_t>(n, std::numeric_limits<std::uint32_t>::max());
  items_.resize(count);      // no allocation once capacity is reached
  item_cell_.resize(count);
  sorted_xs_.resize(count);
  sorted_ys_.resize(count);
  band_items_.resize(count);
  item_band_.resize(count);
  const std::size_t bands = bands_;
  const std::size_t chunks = WorkerPool::chunk_count(count, kItemChunk);
  if (band_counts_.size() < bands * chunks) band_counts_.resize(bands * chunks);  // only past reserve()
  std::uint32_t* counts = band_counts_.data();
  std::uint32_t* item_cell = item_cell_.data();
  std::uint8_t* item_band = item_band_.data();
  std::uint32_t* band_items = band_items_.data();

  // 1. Cell and band of every item, and per chunk of items how many fall in each band.
  parallel_for(pool, count, kItemChunk, [&](std::size_t begin, std::size_t end, std::size_t chunk) {
    std::uint32_t* own = counts + chunk * bands;
    std::fill(own, own + bands, 0u);
    for (std::size_t i = begin; i < end; ++i) {
      const std::int32_t cy = cell_coord(ys[i], rows_);
      const std::size_t c = static_cast<std::size_t>(cy) * static_cast<std::size_t>(cols_) +
                            static_cast<std::size_t>(cell_coord(xs[i], cols_));
      const std::uint8_t b = band_of_row_[static_cast<std::size_t>(cy)];
      item_cell[i] = static_cast<std::uint32_t>(c);
      item_band[i] = b;
      ++own[b];
    }
  });
  // 2. Prefix sums, bands outer and chunks inner: each (chunk, band) count becomes the first
  //    slot of that chunk's items of that band, so band order then item order is kept.
  std::uint32_t running = 0;
  for (std::size_t b = 0; b < bands; ++b) {
    band_start_[b] = running;
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
      const std::uint32_t k = counts[chunk * bands + b];
      counts[chunk * bands + b] = running;
      running += k;
    }
  }
  band_start_[bands] = running;
  // 3. Stable scatter of the items into their bands.
  parallel_for(pool, count, kItemChunk, [&](std::size_t begin, std::size_t end, std::size_t chunk) {
    std::uint32_t* next = counts + chunk * bands;
    for (std::size_t i = begin; i < end; ++i) band_items[next[item_band[i]]++] = static_cast<std::uint32_t>(i);
  });
  // 4. Counting sort of each band over its own cells (disjoint ranges of cell_start_ and of the
  //    output slots).
  const std::size_t band_cells = band_cells_;
  parallel_for(pool, bands, 1, [&](std::size_t b, std::size_t, std::size_t) {
    const std::size_t c0 = b * band_cells;
    const std::size_t c1 = std::min(cells, c0 + band_cells);
    std::uint32_t* start = cell_start_.data();
    const std::uint32_t j0 = band_start_[b], j1 = band_start_[b + 1];
    std::fill(start + c0, start + c1, 0u);
    for (std::uint32_t j = j0; j < j1; ++j) ++start[item_cell[band_items[j]]];
    // Inclusive prefix sums from the band's first slot: start[c] = one past the last slot of c.
    std::uint32_t sum = j0;
    for (std::size_t c = c0; c < c1; ++c) {
      sum += start[c];
      start[c] = sum;
    }
    // Place back to front, decrementing: afterwards start[c] is the first slot of cell c and
    // items inside a cell are in ascending index order (stable, so queries are deterministic).
    for (std::uint32_t j = j1; j-- > j0;) {
      const std::uint32_t i = band_items[j];
      const std::uint32_t slot = --start[item_cell[i]];
      items_[slot] = i;
      sorted_xs_[slot] = xs[i];
      sorted_ys_[slot] = ys[i];
    }
  });
  cell_start_[cells] = running;
}

}  // namespace swarmfield::sim
