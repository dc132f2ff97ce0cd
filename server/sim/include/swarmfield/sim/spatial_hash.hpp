#pragma once
// Uniform-grid spatial hash, rebuilt from positions every tick by counting sort.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

class WorkerPool;

/// Buckets item indices by grid cell of size `cell_size` (world units, ~ interaction radius)
/// over a fixed world rectangle [0, width) x [0, height); positions outside are clamped to
/// the border cells. rebuild() is O(N + cells) into flat arrays kept between calls: no heap
/// allocation once capacity is reached. The result of a rebuild is the stable counting sort of
/// the items by cell, which is unique: it does not depend on the worker pool or thread count.
class SpatialHash {
 public:
  /// Sets the world extent (world units) and cell size; clears contents.
  void configure(float world_width, float world_height, float cell_size);
  /// Re-buckets items 0..n-1 at (xs[i], ys[i]). xs and ys have equal length.
  void rebuild(std::span<const float> xs, std::span<const float> ys) { rebuild(xs, ys, nullptr); }
  /// As above, with the work spread over `pool` (null: on the calling thread). Parallel
  /// counting sort: items are first partitioned into bands of hash rows (per-chunk band counts,
  /// prefix sums in chunk order, a stable scatter), then each band is counting-sorted over its
  /// own range of cells. Same result as the sequential sort, bit for bit.
  void rebuild(std::span<const float> xs, std::span<const float> ys, WorkerPool* pool);
  /// Reserves room for `items` items so rebuild() with up to that many allocates nothing.
  void reserve(std::size_t items);

  /// Calls fn(index) for every item in the 3x3 block of hash cells around p. Order: hash rows
  /// top to bottom, cells left to right, ascending index inside a cell (deterministic).
  template <class Fn>
  void for_each_near(Vec2 p, Fn&& fn) const {
    for_each_slot_near(p, [&](std::uint32_t slot) { fn(items_[slot]); });
  }

  /// As for_each_near, but passes the item's slot: its position in the cell-sorted order, so
  /// items()[slot] is its index and sorted_xs()[slot], sorted_ys()[slot] its position. The
  /// slots of one hash row of the block are contiguous, so scanning them reads memory in order
  /// (the cache-friendly way to gather neighbours).
  template <class Fn>
  void for_each_slot_near(Vec2 p, Fn&& fn) const {
    if (cols_ <= 0 || rows_ <= 0) return;  // never configured: empty
    const std::int32_t cx = cell_coord(p.x, cols_);
    const std::int32_t cy = cell_coord(p.y, rows_);
    const std::int32_t y0 = cy > 0 ? cy - 1 : 0, y1 = cy + 1 < rows_ ? cy + 1 : rows_ - 1;
    const std::int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx + 1 < cols_ ? cx + 1 : cols_ - 1;
    for (std::int32_t y = y0; y <= y1; ++y) {
      const std::size_t row = static_cast<std::size_t>(y) * static_cast<std::size_t>(cols_);
      const std::uint32_t begin = cell_start_[row + static_cast<std::size_t>(x0)];
      const std::uint32_t end = cell_start_[row + static_cast<std::size_t>(x1) + 1];
      for (std::uint32_t k = begin; k < end; ++k) fn(k);
    }
  }

  /// Item indices in cell-sorted order (slot -> index), from the last rebuild().
  [[nodiscard]] std::span<const std::uint32_t> items() const noexcept { return items_; }
  /// Positions in cell-sorted order (slot -> position), copied by the last rebuild().
  [[nodiscard]] std::span<const float> sorted_xs() const noexcept { return sorted_xs_; }
  [[nodiscard]] std::span<const float> sorted_ys() const noexcept { return sorted_ys_; }

  [[nodiscard]] float cell_size() const noexcept { return cell_size_; }
  [[nodiscard]] std::int32_t columns() const noexcept { return cols_; }
  [[nodiscard]] std::int32_t rows() const noexcept { return rows_; }

 private:
  [[nodiscard]] std::int32_t cell_coord(float v, std::int32_t limit) const noexcept {
    const float f = std::floor(v * inv_cell_size_);
    if (!(f >= 0.0f)) return 0;  // also catches NaN
    const auto c = static_cast<std::int32_t>(f < static_cast<float>(limit) ? f : static_cast<float>(limit - 1));
    return c;
  }

  float cell_size_ = 1.0f;
  float inv_cell_size_ = 1.0f;
  std::int32_t cols_ = 0;
  std::int32_t rows_ = 0;
  // Bands of whole hash rows (contiguous cell ranges of band_cells_ cells), sorted in parallel.
  std::size_t bands_ = 1;
  std::size_t band_cells_ = 1;
  std::vector<std::uint32_t> band_counts_;  // per item chunk x band: count, then first output slot
  std::vector<std::uint32_t> band_start_;   // per band: first slot; size bands_ + 1
  std::vector<std::uint32_t> band_items_;   // item indices grouped by band, ascending within a band
  std::vector<std::uint8_t> band_of_row_;   // per hash row: its band (bands_ <= 64)
  std::vector<std::uint8_t> item_band_;     // per item: its band
  // cell_start_[c] .. cell_start_[c+1] index items_ for cell c (row-major). Size cols*rows+1.
  std::vector<std::uint32_t> cell_start_;
  std::vector<std::uint32_t> items_;
  std::vector<std::uint32_t> item_cell_;
  std::vector<float> sorted_xs_, sorted_ys_;
};

}  // namespace swarmfield::sim
