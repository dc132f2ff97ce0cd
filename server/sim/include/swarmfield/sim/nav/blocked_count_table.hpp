#pragma once
// Summed-area table of blocked cells: the number of blocked cells in any rectangle in O(1),
// which makes a conservative line-of-sight test cost a few reads per segment.
#include <cstdint>
#include <span>
#include <vector>

namespace swarmfield::sim {

class IntegrationField;

/// Counts of blocked cells over the map snapshot of an IntegrationField (its search_words():
/// blocked there = blocked in the map as it was at the build's begin(); off-map cells count as
/// blocked). Summed-area table (Crow 1984, "Summed-area tables for texture mapping"; Viola &
/// Jones' "integral image"): one u32 per padded cell, (width + 3) x (height + 3) words.
class BlockedCountTable {
 public:
  /// Starts a table for `integration`'s snapshot (which must be complete): sizes it (allocating
  /// only when the map is larger than any before) and marks every row unbuilt.
  void begin(const IntegrationField& integration);
  /// Builds the next rows, at least one and about `budget` work units (kLinearCellsPerWorkUnit
  /// cells per unit); returns the units spent. Rows depend on the rows above, so they are built
  /// in order; done() says when the table is usable.
  std::uint64_t advance(const IntegrationField& integration, std::uint64_t budget);
  [[nodiscard]] bool done() const noexcept { return next_row_ >= rows_; }

  /// Reserves the table for a `width` x `height` map so a later begin() allocates nothing.
  void reserve(std::int32_t width, std::int32_t height);
  /// Blocked cells in the rectangle of cells [x0, x1] x [y0, y1] (inclusive; cells -1 and width()
  /// / height() are the blocked border; the rectangle must lie within it). Only when done().
  [[nodiscard]] std::uint32_t blocked_in(std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1) const noexcept {
    // Table entry (r, q) counts the padded cells of rows < r and columns < q; cell x is padded x + 1.
    const std::size_t s = stride_;
    const std::uint32_t* t = table_.data();
    const std::size_t q0 = static_cast<std::size_t>(x0 + 1), q1 = static_cast<std::size_t>(x1 + 2);
    const std::size_t r0 = static_cast<std::size_t>(y0 + 1) * s, r1 = static_cast<std::size_t>(y1 + 2) * s;
    return t[r1 + q1] - t[r0 + q1] - t[r1 + q0] + t[r0 + q0];
  }
  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }

 private:
  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::size_t stride_ = 0;     // width + 3 words per table row
  std::size_t rows_ = 0;       // height + 3 table rows
  std::size_t next_row_ = 0;   // next table row to build
  std::vector<std::uint32_t> table_;
};

}  // namespace swarmfield::sim
