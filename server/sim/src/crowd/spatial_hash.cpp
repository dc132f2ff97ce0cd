// SpatialHash: uniform grid rebuilt by a band partition and per-band sorts into flat arrays.
#include "swarmfield/sim/crowd/spatial_hash.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "swarmfield/sim/huge_pages.hpp"
#include "swarmfield/sim/worker_pool.hpp"

namespace swarmfield::sim {

namespace {
// Upper bound on hash cells so a degenerate configure() (huge world, tiny cell) cannot ask for
// gigabytes; the cell size is raised instead. 1 << 24 cells = 128 MiB of cell ranges (8 bytes
// per cell) and 2 MiB of occupancy bits.
constexpr double kMaxCells = static_cast<double>(1u << 24);
// At most this many bands of hash rows (band ids are 16-bit): one row per band up to here, so
// an item that changes rows moves in the band partition, and the per-band sort by cell only
// sees moves along a row (few: nearly sorted input stays nearly sorted). Items per chunk of the
// band partition.
constexpr std::size_t kMaxBands = 4096;
constexpr std::size_t kItemChunk = 4096;
// Parallel tasks of the per-band pass (several per thread, so threads balance).
constexpr std::size_t kBandTasks = 64;
// How many items ahead the layout of a band prefetches its cell ranges.
constexpr std::uint32_t kRangePrefetch = 8;

std::int32_t cells_along(float extent, float cell_size) noexcept {
  const double n = std::ceil(static_cast<double>(extent) / static_cast<double>(cell_size));
  if (!(n >= 1.0)) return 1;  // also NaN
  return static_cast<std::int32_t>(std::min(n, kMaxCells));
}

/// Sorts keys[0, n) ascending. Insertion sort first: linear on nearly sorted input, the common
/// case (last tick's order, a few agents one cell further along the row). Past a budget of moves
/// (input far from sorted: the first rebuild, teleports) it hands over to std::sort, so the worst
/// case stays O(n log n). Keys are unique (the item index is in the low bits), so the result is
/// the same whichever sort finishes it.
void sort_keys(std::uint64_t* keys, std::size_t n) noexcept {
  std::size_t budget = 4 * n + 64;
  for (std::size_t j = 1; j < n; ++j) {
    const std::uint64_t key = keys[j];
    std::size_t m = j;
    while (m > 0 && keys[m - 1] > key) {
      keys[m] = keys[m - 1];
      --m;
    }
    keys[m] = key;
    const std::size_t moved = j - m;
    if (moved > budget) {
      std::sort(keys, keys + n);
      return;
    }
    budget -= moved;
  }
}
/// Rebuild step 2. Prefix sums, bands outer and chunks inner: each (chunk, band) count becomes
/// the first slot of that chunk's items of that band, so band order then item order is kept.
/// band_start[b] gets band b's first slot (band_start[bands]: the item count).
void band_prefix_sums(std::uint32_t* counts, std::size_t bands, std::size_t chunks,
                      std::uint32_t* band_start) noexcept {
  std::uint32_t running = 0;
  for (std::size_t b = 0; b < bands; ++b) {
    band_start[b] = running;
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
      const std::uint32_t k = counts[chunk * bands + b];
      counts[chunk * bands + b] = running;
      running += k;
    }
  }
  band_start[bands] = running;
}

/// Rebuild step 3. Stable scatter of the items into their bands, as sort keys (cell, then
/// index); `next` holds each (chunk, band)'s first slot (step 2) and is advanced.
void scatter_keys(WorkerPool* pool, std::size_t count, std::size_t bands, std::uint32_t* next_slots,
                  const std::uint16_t* item_band, const std::uint32_t* item_cell, std::uint64_t* keys) {
  parallel_for(pool, count, kItemChunk, [&](std::size_t begin, std::size_t end, std::size_t chunk) {
    std::uint32_t* next = next_slots + chunk * bands;
    for (std::size_t i = begin; i < end; ++i) {
      keys[next[item_band[i]]++] = (static_cast<std::uint64_t>(item_cell[i]) << 32) | static_cast<std::uint64_t>(i);
    }
  });
}

/// Occupancy bit of a cell, for cells visited in ascending order from the first row of a band
/// (the row is tracked, not divided out).
struct BitCursor {
  std::uint8_t* occupied;
  std::size_t bytes_per_row;
  std::uint32_t cols, row, row_start;
  std::uint8_t* byte(std::uint32_t cell, std::uint8_t& bit) noexcept {
    while (cell - row_start >= cols) {
      ++row;
      row_start += cols;
    }
    const std::uint32_t x = cell - row_start;
    bit = static_cast<std::uint8_t>(1u << (x & 7u));
    return occupied + static_cast<std::size_t>(row) * bytes_per_row + (x >> 3);
  }
};

/// What rebuild step 4 reads and writes, band by band (bands own disjoint cells and slots).
struct BandArrays {
  std::span<const float> xs, ys;                  // positions, by item
  std::uint64_t* keys;                            // (cell << 32 | item), grouped by band (step 3)
  const std::uint32_t* band_start;                // this rebuild's first slot per band
  const std::uint32_t* prev_band_start;           // the previous rebuild's
  const std::uint32_t* prev_cell;                 // the previous rebuild's cell per slot
  std::uint32_t* slot_cell;                       // out: cell per slot
  std::uint32_t* items;                           // out: item per slot
  float* out_x;                                   // out: positions per slot
  float* out_y;
  std::uint8_t* occupied;                         // occupancy bits, bytes_per_row per hash row
  std::size_t bytes_per_row;
  std::uint32_t cols, band_rows;
};

/// Rebuild step 4a: clears the occupancy bits of the cells band b held in the previous rebuild.
void clear_band_bits(const BandArrays& a, std::size_t b) noexcept {
  const auto first_row = static_cast<std::uint32_t>(b) * a.band_rows;
  BitCursor cleared{a.occupied, a.bytes_per_row, a.cols, first_row, first_row * a.cols};
  const std::uint32_t* prev_cell = a.prev_cell;
  for (std::uint32_t s = a.prev_band_start[b], e = a.prev_band_start[b + 1]; s < e; ++s) {
    std::uint8_t bit = 0;
    std::uint8_t* byte = cleared.byte(prev_cell[s], bit);
    *byte = static_cast<std::uint8_t>(*byte & ~bit);
  }
}

/// Rebuild step 4b: sorts band b's keys, then lays out its items (slot order), each cell's slot
/// range and its occupancy bit. `ranges` is SpatialHash::CellRange (private, so deduced).
void lay_out_band(const BandArrays& a, auto* ranges, std::size_t b) noexcept {
  const std::uint32_t j0 = a.band_start[b], j1 = a.band_start[b + 1];
  if (j0 == j1) return;
  std::uint64_t* keys = a.keys;
  std::uint32_t* items = a.items;
  std::uint32_t* slot_cell = a.slot_cell;
  float* out_x = a.out_x;
  float* out_y = a.out_y;
  const std::span<const float> xs = a.xs, ys = a.ys;
  sort_keys(keys + j0, j1 - j0);
  auto last = static_cast<std::uint32_t>(keys[j0] >> 32);
  ranges[last].begin = j0;
  const auto first_row = static_cast<std::uint32_t>(b) * a.band_rows;
  BitCursor marked{a.occupied, a.bytes_per_row, a.cols, first_row, first_row * a.cols};
  auto mark = [&](std::uint32_t cell) noexcept {
    std::uint8_t bit = 0;
    *marked.byte(cell, bit) |= bit;
  };
  mark(last);
  for (std::uint32_t j = j0; j < j1; ++j) {
#if defined(__GNUC__) || defined(__clang__)
    // Cells of spread-out items are far apart in the (megabyte) range table: ask for the
    // line a few items ahead (with intent to write; no effect on any result).
    if (j + kRangePrefetch < j1) __builtin_prefetch(ranges + (keys[j + kRangePrefetch] >> 32), 1);
#endif
    const auto cell = static_cast<std::uint32_t>(keys[j] >> 32);
    const auto i = static_cast<std::uint32_t>(keys[j]);
    items[j] = i;
    out_x[j] = xs[i];
    out_y[j] = ys[i];
    slot_cell[j] = cell;
    if (cell != last) {
      ranges[last].end = j;
      ranges[cell].begin = j;
      mark(cell);
      last = cell;
    }
  }
  ranges[last].end = j1;
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
  band_rows_ = (rows + kMaxBands - 1) / kMaxBands;
  bands_ = (rows + band_rows_ - 1) / band_rows_;
  band_of_row_.resize(rows);
  for (std::size_t y = 0; y < rows; ++y) band_of_row_[y] = static_cast<std::uint16_t>(y / band_rows_);
  band_start_.assign(bands_ + 1, 0u);
  prev_band_start_.assign(bands_ + 1, 0u);  // no previous rebuild: no cell to reset
  band_counts_.assign(bands_ * WorkerPool::chunk_count(items_.capacity(), kItemChunk), 0u);
  assign_huge(ranges_, static_cast<std::size_t>(cols_) * rows, CellRange{0u, 0u});
  bytes_per_row_ = (static_cast<std::size_t>(cols_) + 7) / 8;
  assign_huge(occupied_, bytes_per_row_ * rows + 8, std::uint8_t{0});  // + 8: block_bits() reads 8 bytes from any byte of a row
  items_.clear();
  item_cell_.clear();
  sorted_xs_.clear();
  sorted_ys_.clear();
  band_keys_.clear();
  item_band_.clear();
  slot_cell_.clear();
  prev_slot_cell_.clear();
}

void SpatialHash::reserve(std::size_t items) {
  items_.reserve(items);
  item_cell_.reserve(items);
  sorted_xs_.reserve(items + kSlotPadding);
  sorted_ys_.reserve(items + kSlotPadding);
  band_keys_.reserve(items);
  item_band_.reserve(items);
  slot_cell_.reserve(items);
  prev_slot_cell_.reserve(items);
  const std::size_t counts = bands_ * WorkerPool::chunk_count(items, kItemChunk);
  if (band_counts_.size() < counts) band_counts_.resize(counts);
}

void SpatialHash::rebuild(std::span<const float> xs, std::span<const float> ys, WorkerPool* pool) {
  if (cols_ <= 0 || rows_ <= 0) configure(0.0f, 0.0f, cell_size_);
  const std::size_t n = std::min(xs.size(), ys.size());
  // Indices are stored as u32; a swarm never holds more than that.
  const std::size_t count = std::min<std::size_t>(n, std::numeric_limits<std::uint32_t>::max());
  // The previous rebuild's slots and band ranges say which cells to reset (swap: no copy).
  slot_cell_.swap(prev_slot_cell_);
  band_start_.swap(prev_band_start_);
  items_.resize(count);  // no allocation once capacity is reached
  item_cell_.resize(count);
  sorted_xs_.resize(count + kSlotPadding, 0.0f);  // readable padding (see kSlotPadding)
  sorted_ys_.resize(count + kSlotPadding, 0.0f);
  band_keys_.resize(count);
  item_band_.resize(count);
  slot_cell_.resize(count);
  const std::size_t bands = bands_;
  const std::size_t chunks = WorkerPool::chunk_count(count, kItemChunk);
  if (band_counts_.size() < bands * chunks) band_counts_.resize(bands * chunks);  // only past reserve()
  std::uint32_t* counts = band_counts_.data();
  // 1. Cell and band of every item, and per chunk of items how many fall in each band.
  std::uint32_t* item_cell = item_cell_.data();
  std::uint16_t* item_band = item_band_.data();
  parallel_for(pool, count, kItemChunk, [&](std::size_t begin, std::size_t end, std::size_t chunk) {
    std::uint32_t* own = counts + chunk * bands;
    std::fill(own, own + bands, 0u);
    for (std::size_t i = begin; i < end; ++i) {
      const std::int32_t cy = cell_coord(ys[i], rows_);
      const std::size_t c = static_cast<std::size_t>(cy) * static_cast<std::size_t>(cols_) +
                            static_cast<std::size_t>(cell_coord(xs[i], cols_));
      const std::uint16_t b = band_of_row_[static_cast<std::size_t>(cy)];
      item_cell[i] = static_cast<std::uint32_t>(c);
      item_band[i] = b;
      ++own[b];
    }
  });
  // 2. and 3. Each (chunk, band)'s first slot; the items scattered into their bands as keys.
  band_prefix_sums(counts, bands, chunks, band_start_.data());
  scatter_keys(pool, count, bands, counts, item_band, item_cell, band_keys_.data());
  // 4. Per band (disjoint cells and slots): reset the cells the band occupied last time, sort its
  //    keys, and lay out the items and each cell's slot range.
  const BandArrays arrays{xs, ys, band_keys_.data(), band_start_.data(), prev_band_start_.data(),
                          prev_slot_cell_.data(), slot_cell_.data(), items_.data(), sorted_xs_.data(),
                          sorted_ys_.data(), occupied_.data(), bytes_per_row_,
                          static_cast<std::uint32_t>(cols_), static_cast<std::uint32_t>(band_rows_)};
  CellRange* ranges = ranges_.data();
  const std::size_t band_task = std::max<std::size_t>(1, (bands + kBandTasks - 1) / kBandTasks);
  parallel_for(pool, bands, band_task, [&](std::size_t b_begin, std::size_t b_end, std::size_t) {
    for (std::size_t b = b_begin; b < b_end; ++b) {
      clear_band_bits(arrays, b);
      lay_out_band(arrays, ranges, b);
    }
  });
}

}  // namespace swarmfield::sim
