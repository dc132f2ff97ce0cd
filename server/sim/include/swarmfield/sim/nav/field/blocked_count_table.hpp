#pragma once
// Summed-area table of blocked cells: the number of blocked cells in any rectangle in O(1),
// which makes a conservative line-of-sight test cost a few reads per segment.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace swarmfield::sim {

class IntegrationField;

/// Counts of blocked cells over the map snapshot of an IntegrationField (its search_words():
/// blocked there = blocked in the map as it was at the build's begin(); off-map cells count as
/// blocked). Summed-area table (Crow 1984, "Summed-area tables for texture mapping"; Viola &
/// Jones' "integral image"), (width + 3) x (height + 3) entries of 16 bits: the sums are kept
/// modulo 2^16, which gives the exact count of any rectangle of fewer than 2^16 cells (the
/// four-corner difference is taken modulo 2^16 too); blocked_in() splits larger rectangles into
/// such strips. Half the memory of 32-bit sums (32 MiB instead of 64 at 4096 x 4096).
class BlockedCountTable {
 public:
  /// Starts a table for `integration`'s snapshot (which must be complete): sizes it (allocating
  /// only when the map is larger than any before) and marks every row unbuilt.
  void begin(const IntegrationField& integration);
  /// Builds the next rows, at least one and about `budget` work units (kLinearCellsPerWorkUnit
  /// cells per unit); returns the units spent. Rows depend on the rows above, so they are built
  /// in order; done() says when the table is usable.
  /// `costs` (optional, the width x height row-major costs of the map the build runs on): a cell
  /// of cost above 1 blocks sight too. Sight lets an agent leave its field path for a straight
  /// segment, which is only as cheap as the path over cells of the least cost: a straight line
  /// through a costlier cell (a barricade the field weighs at the time to break it, rough
  /// ground) is not what the field priced, so the any-angle layer must not take it.
  std::uint64_t advance(const IntegrationField& integration, std::uint64_t budget,
                        const std::uint8_t* costs = nullptr);
  [[nodiscard]] bool done() const noexcept { return next_row_ >= rows_; }

  /// Reserves the table for a `width` x `height` map so a later begin() allocates nothing.
  void reserve(std::int32_t width, std::int32_t height);
  /// Blocked cells in the rectangle of cells [x0, x1] x [y0, y1] (inclusive; cells -1 and width()
  /// / height() are the blocked border; the rectangle must lie within it). Only when done().
  [[nodiscard]] std::uint32_t blocked_in(std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1) const noexcept {
    const auto cols = static_cast<std::uint32_t>(x1 - x0 + 1);
    const auto rows = static_cast<std::uint32_t>(y1 - y0 + 1);
    if (static_cast<std::uint64_t>(cols) * rows < kExactCells) [[likely]] return strip(x0, y0, x1, y1);
    // Strips of at most kExactCells - 1 cells (a row of up to 65537 cells is cut in two).
    std::uint32_t total = 0;
    if (cols >= kExactCells) {
      for (std::int32_t y = y0; y <= y1; ++y) {
        const std::int32_t mid = x0 + static_cast<std::int32_t>(cols / 2);
        total += strip(x0, y, mid - 1, y) + strip(mid, y, x1, y);
      }
      return total;
    }
    const auto band = static_cast<std::int32_t>((kExactCells - 1) / cols);
    for (std::int32_t y = y0; y <= y1; y += band) total += strip(x0, y, x1, std::min(y1, y + band - 1));
    return total;
  }
  /// blocked_in() of a rectangle of fewer than 65536 cells (one row or column of a map of side
  /// <= 65534, for instance): the O(1) four-corner count without blocked_in()'s size check.
  [[nodiscard]] std::uint32_t blocked_in_small(std::int32_t x0, std::int32_t y0, std::int32_t x1,
                                               std::int32_t y1) const noexcept {
    return strip(x0, y0, x1, y1);
  }
  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }

 private:
  static constexpr std::uint64_t kExactCells = 65536;  // rectangles below this count exactly mod 2^16
  /// The count of a rectangle of fewer than kExactCells cells.
  [[nodiscard]] std::uint32_t strip(std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1) const noexcept {
    // Table entry (r, q) counts the padded cells of rows < r and columns < q, modulo 2^16;
    // cell x is padded x + 1.
    const std::size_t s = stride_;
    const std::uint16_t* t = table_.data();
    const std::size_t q0 = static_cast<std::size_t>(x0 + 1), q1 = static_cast<std::size_t>(x1 + 2);
    const std::size_t r0 = static_cast<std::size_t>(y0 + 1) * s, r1 = static_cast<std::size_t>(y1 + 2) * s;
    return static_cast<std::uint16_t>(t[r1 + q1] - t[r0 + q1] - t[r1 + q0] + t[r0 + q0]);
  }

  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::size_t stride_ = 0;     // width + 3 entries per table row
  std::size_t rows_ = 0;       // height + 3 table rows
  std::size_t next_row_ = 0;   // next table row to build
  std::vector<std::uint16_t> table_;
};

}  // namespace swarmfield::sim
