// BlockedCountTable: summed-area table of the blocked cells of an integration's map snapshot.
#include "swarmfield/sim/nav/field/blocked_count_table.hpp"

#include <algorithm>

#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::sim {

void BlockedCountTable::begin(const IntegrationField& integration) {
  width_ = integration.width();
  height_ = integration.height();
  stride_ = static_cast<std::size_t>(std::max(width_, 0)) + 3;
  rows_ = static_cast<std::size_t>(std::max(height_, 0)) + 3;
  table_.resize(stride_ * rows_);
  next_row_ = 0;
  const std::size_t pw = static_cast<std::size_t>(std::max(width_, 0)) + 2;
  if (integration.search_words().size() != pw * (rows_ - 1)) {
    // No usable snapshot (a build in progress, or none yet): an empty table, nothing to query.
    width_ = 0;
    height_ = 0;
    stride_ = 3;
    rows_ = 3;
    table_.assign(stride_ * rows_, std::uint16_t{0});
    next_row_ = rows_;
  }
}

void BlockedCountTable::reserve(std::int32_t width, std::int32_t height) {
  if (width <= 0 || height <= 0) return;
  table_.reserve((static_cast<std::size_t>(width) + 3) * (static_cast<std::size_t>(height) + 3));
}

std::uint64_t BlockedCountTable::advance(const IntegrationField& integration, std::uint64_t budget,
                                         const std::uint8_t* costs) {
  if (done()) return 0;
  const std::span<const std::uint32_t> words = integration.search_words();
  const std::size_t pw = stride_ - 1;  // padded width: width + 2
  const std::uint64_t row_units = linear_work_units(pw);
  std::uint64_t spent = 0;
  std::uint16_t* t = table_.data();
  do {
    std::uint16_t* row = t + next_row_ * stride_;
    if (next_row_ == 0) {
      std::fill(row, row + stride_, std::uint16_t{0});
    } else {
      // Row r sums padded rows < r: the row above plus the running count of padded row r - 1
      // (modulo 2^16, see the header).
      const std::uint16_t* above = row - stride_;
      const std::uint32_t* in = words.data() + (next_row_ - 1) * pw;
      std::uint16_t run = 0;
      row[0] = 0;
      // This is padded row p = next_row_ - 1, map row p - 1 (a one-cell border round the map:
      // padded rows 1..height, columns 1..width are the map's).
      const std::size_t p = next_row_ - 1;
      const std::size_t map_width = pw - 2, map_height = rows_ - 3;
      const std::uint8_t* c = costs != nullptr && p >= 1 && p <= map_height ? costs + (p - 1) * map_width : nullptr;
      for (std::size_t q = 0; q < pw; ++q) {
        const bool costly = c != nullptr && q >= 1 && q <= pw - 2 && c[q - 1] > 1;
        run = static_cast<std::uint16_t>(run + (in[q] == IntegrationField::kSearchBlocked || costly ? 1u : 0u));
        row[q + 1] = static_cast<std::uint16_t>(above[q + 1] + run);
      }
    }
    ++next_row_;
    spent += row_units;
  } while (next_row_ < rows_ && spent < budget);
  return spent;
}

}  // namespace swarmfield::sim
