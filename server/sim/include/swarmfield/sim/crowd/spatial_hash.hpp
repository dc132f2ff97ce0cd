#pragma once
// Uniform-grid spatial hash, rebuilt from positions every tick (stable sort by cell).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "swarmfield/sim/prefetch.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

class WorkerPool;

/// Buckets item indices by grid cell of size `cell_size` (world units, ~ interaction radius)
/// over a fixed world rectangle [0, width) x [0, height); positions outside are clamped to
/// the border cells. The result of a rebuild is the stable sort of the items by row-major cell,
/// which is unique: it does not depend on the worker pool, the thread count or the input's
/// previous order. Storage is flat arrays kept between calls: no heap allocation once capacity
/// is reached.
///
/// Cost: a rebuild is O(N + hash rows) when the items are nearly in cell order already (the
/// swarm hands them over in last tick's sorted order, and agents cross few cells per tick) and
/// O(N log N + hash rows) in the worst case; no pass over all cells, so a few agents on a big
/// map cost next to nothing (configure() is the only O(cells) call). How: a stable partition of
/// the items into bands of whole hash rows (a counting sort over rows), then, per band, an
/// insertion sort by cell of the band's keys (nearly sorted: linear), switching to std::sort
/// past a budget of moves. Each occupied cell keeps the range of its slots, and a bitmap says
/// which cells are occupied; a rebuild clears only the bits of the cells the previous one
/// occupied.
class SpatialHash {
 public:
  /// Sets the world extent (world units) and cell size; clears contents. O(cells).
  void configure(float world_width, float world_height, float cell_size);
  /// Re-buckets items 0..n-1 at (xs[i], ys[i]). xs and ys have equal length.
  void rebuild(std::span<const float> xs, std::span<const float> ys) { rebuild(xs, ys, nullptr); }
  /// As above, with the work spread over `pool` (null: on the calling thread): the band
  /// partition by chunks of items (per-chunk band counts, prefix sums in chunk order, a stable
  /// scatter), then the bands in parallel, each over its own cells and slots. Same result as on
  /// one thread, bit for bit.
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
    for_each_range_near(p, [&](std::uint32_t begin, std::uint32_t end) {
      for (std::uint32_t k = begin; k < end; ++k) fn(k);
    });
  }

  /// As for_each_slot_near, but passes each hash row's slots of the block as one range:
  /// fn(begin, end) for slots [begin, end), up to three calls (rows top to bottom), possibly
  /// empty. Lets a caller scan a row's positions several at a time (see kSlotPadding).
  template <class Fn>
  void for_each_range_near(Vec2 p, Fn&& fn) const {
    if (cols_ <= 0 || rows_ <= 0) return;  // never configured: empty
    const std::int32_t cx = cell_coord(p.x, cols_);
    const std::int32_t cy = cell_coord(p.y, rows_);
    const std::int32_t y0 = cy > 0 ? cy - 1 : 0, y1 = cy + 1 < rows_ ? cy + 1 : rows_ - 1;
    const std::int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx + 1 < cols_ ? cx + 1 : cols_ - 1;
    for_each_block_row(x0, x1, y0, y1, fn);
  }

  /// As for_each_range_near, but leaves out the block's outer columns and rows that hold no
  /// point within `radius` of p, where that holds whatever the float rounding: every position
  /// within `radius` that for_each_range_near passes is passed, in the same order. Only where
  /// the whole 3x3 block is inside the grid's inner cells (the border ones also hold positions
  /// clamped into them: outside the world, NaN), so every position in the block is finite.
  template <class Fn>
  void for_each_range_within(Vec2 p, float radius, Fn&& fn) const {
    if (cols_ <= 0 || rows_ <= 0) return;  // never configured: empty
    const std::int32_t cx = cell_coord(p.x, cols_);
    const std::int32_t cy = cell_coord(p.y, rows_);
    std::int32_t y0 = cy > 0 ? cy - 1 : 0, y1 = cy + 1 < rows_ ? cy + 1 : rows_ - 1;
    std::int32_t x0 = cx > 0 ? cx - 1 : 0, x1 = cx + 1 < cols_ ? cx + 1 : cols_ - 1;
    if (cx >= 2 && cy >= 2 && cx + 2 < cols_ && cy + 2 < rows_) {
      // p and the reach in cells as cell_coord scales them (p is inside: cx, cy are inner). An
      // inner column k holds only positions v with k <= v / cell < k + 1, so one whose near edge
      // is `reach` cells from p holds none within radius. The margin: 0.1% of the radius, 0.001
      // cell, and the rounding of v / cell and p / cell (a few ulps of their size, 3e-7 each).
      const float fx = p.x * inv_cell_size_, fy = p.y * inv_cell_size_;
      const float reach = radius * inv_cell_size_ * 1.001f + 1e-3f;
      const float reach_x = reach + 3e-7f * fx, reach_y = reach + 3e-7f * fy;
      if (fx - static_cast<float>(cx) >= reach_x) x0 = cx;
      if (static_cast<float>(x1) - fx >= reach_x) x1 = cx;
      if (fy - static_cast<float>(cy) >= reach_y) y0 = cy;
      if (static_cast<float>(y1) - fy >= reach_y) y1 = cy;
    }
    for_each_block_row(x0, x1, y0, y1, fn);
  }

  /// Hints the CPU to fetch what for_each_range_near(p, ...) will read (the block's cell
  /// ranges), so a caller can ask a few queries ahead; no effect on any result. The cell table
  /// is megabytes on a big map, and a query on its own waits for main memory. (prefetch_line:
  /// GCC takes a function whose only effect is a __builtin_prefetch for a pure one and drops the call.)
  void prefetch_near(Vec2 p) const noexcept {
    if (cols_ <= 0 || rows_ <= 0) return;
    const std::int32_t cx = cell_coord(p.x, cols_);
    const std::int32_t cy = cell_coord(p.y, rows_);
    const std::int32_t y0 = cy > 0 ? cy - 1 : 0, y1 = cy + 1 < rows_ ? cy + 1 : rows_ - 1;
    const std::size_t x = static_cast<std::size_t>(cx > 0 ? cx - 1 : 0);
    for (std::int32_t y = y0; y <= y1; ++y) {
      prefetch_line(ranges_.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(cols_) + x);
    }
  }

  /// Item indices in cell-sorted order (slot -> index), from the last rebuild().
  [[nodiscard]] std::span<const std::uint32_t> items() const noexcept { return items_; }
  /// Positions in cell-sorted order (slot -> position), copied by the last rebuild().
  [[nodiscard]] std::span<const float> sorted_xs() const noexcept { return {sorted_xs_.data(), items_.size()}; }
  [[nodiscard]] std::span<const float> sorted_ys() const noexcept { return {sorted_ys_.data(), items_.size()}; }
  /// sorted_xs().data() and sorted_ys().data() may be read up to this many floats past their
  /// size() (the values there are unspecified), so a scan can load a fixed group of
  /// slots at once without a bounds check on the last one.
  static constexpr std::size_t kSlotPadding = 4;

  [[nodiscard]] float cell_size() const noexcept { return cell_size_; }
  [[nodiscard]] std::int32_t columns() const noexcept { return cols_; }
  [[nodiscard]] std::int32_t rows() const noexcept { return rows_; }

 private:
  /// floor(v / cell) clamped to [0, limit - 1] (NaN and negatives to 0). For f >= 0, truncation
  /// is floor, so no std::floor (a library call on baseline x86-64; this runs per query).
  [[nodiscard]] std::int32_t cell_coord(float v, std::int32_t limit) const noexcept {
    const float f = v * inv_cell_size_;
    if (!(f >= 0.0f)) return 0;  // also catches NaN
    return f < static_cast<float>(limit) ? static_cast<std::int32_t>(f) : limit - 1;
  }

  /// fn(begin, end) once per occupied hash row y0..y1 of the block of columns x0..x1 (x1 - x0 <=
  /// 2): the occupied cells of the row's block (from the bitmap, which stays in cache), then the
  /// first one's begin and the last one's end: they hold consecutive slots, so that is the block
  /// row's whole range. Empty rows read no cell range at all.
  template <class Fn>
  void for_each_block_row(std::int32_t x0, std::int32_t x1, std::int32_t y0, std::int32_t y1, Fn& fn) const {
    for (std::int32_t y = y0; y <= y1; ++y) {
      const std::uint64_t bits = block_bits(y, x0, x1);
      if (bits == 0) continue;
      const std::size_t row = static_cast<std::size_t>(y) * static_cast<std::size_t>(cols_) + static_cast<std::size_t>(x0);
      const auto first = static_cast<std::size_t>(std::countr_zero(bits));
      const auto last = static_cast<std::size_t>(63 - std::countl_zero(bits));
      fn(ranges_[row + first].begin, ranges_[row + last].end);
    }
  }

  /// Occupancy bits of cells x0..x1 (x1 - x0 <= 2) of hash row y, cell x0 in bit 0: one
  /// unaligned 8-byte load from the byte holding x0's bit, taken as little-endian (occupied_
  /// has 8 bytes of padding at the end; bits of the next row that come along are masked off).
  [[nodiscard]] std::uint64_t block_bits(std::int32_t y, std::int32_t x0, std::int32_t x1) const noexcept {
    const std::uint8_t* bytes = occupied_.data() + static_cast<std::size_t>(y) * bytes_per_row_;
    std::uint64_t word;
    std::memcpy(&word, bytes + (static_cast<std::size_t>(x0) >> 3), sizeof word);
    if constexpr (std::endian::native == std::endian::big) word = byteswap64(word);
    const std::uint64_t bits = word >> (static_cast<unsigned>(x0) & 7u);
    return bits & ((std::uint64_t{2} << static_cast<unsigned>(x1 - x0)) - 1u);
  }
  static constexpr std::uint64_t byteswap64(std::uint64_t v) noexcept {
    std::uint64_t r = 0;
    for (int i = 0; i < 8; ++i) r = (r << 8) | ((v >> (8 * i)) & 0xFFu);
    return r;
  }

  /// Slots [begin, end) of one occupied cell (stale for an empty one: see occupied_).
  struct CellRange {
    std::uint32_t begin;
    std::uint32_t end;
  };

  float cell_size_ = 1.0f;
  float inv_cell_size_ = 1.0f;
  std::int32_t cols_ = 0;
  std::int32_t rows_ = 0;
  // Bands of whole hash rows (contiguous cell ranges), sorted in parallel; one row per band
  // unless the grid has more than kMaxBands rows.
  std::size_t bands_ = 1;
  std::size_t band_rows_ = 1;
  std::vector<std::uint32_t> band_counts_;      // per item chunk x band: count, then first output slot
  std::vector<std::uint32_t> band_start_;       // per band: first slot; size bands_ + 1
  std::vector<std::uint32_t> prev_band_start_;  // band_start_ of the previous rebuild
  std::vector<std::uint64_t> band_keys_;        // (cell << 32 | index) grouped by band, then sorted
  std::vector<std::uint16_t> band_of_row_;      // per hash row: its band
  std::vector<std::uint16_t> item_band_;        // per item: its band
  std::vector<std::uint32_t> item_cell_;        // per item: its cell (row-major)
  std::vector<CellRange> ranges_;               // per cell (row-major); valid where occupied_ says so
  // One bit per cell (cell x of a row: byte x / 8, bit x % 8), set when the cell holds an item.
  // Each hash row starts a new byte, so the bands (whole rows) update disjoint bytes in
  // parallel. Small (cells / 8 bytes) and read first by every query, so empty cells cost no
  // access to the big ranges_ table.
  std::vector<std::uint8_t> occupied_;
  std::size_t bytes_per_row_ = 1;
  std::vector<std::uint32_t> slot_cell_;        // per slot: its cell
  std::vector<std::uint32_t> prev_slot_cell_;   // slot_cell_ of the previous rebuild (cells to reset)
  std::vector<std::uint32_t> items_;
  std::vector<float> sorted_xs_, sorted_ys_;
};

}  // namespace swarmfield::sim
