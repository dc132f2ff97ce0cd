// ClearanceMap: Harabor & Botea's true clearance by the bottom-right-to-top-left programme.
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"

#include <algorithm>
#include <functional>

#include "swarmfield/sim/huge_pages.hpp"

namespace swarmfield::sim {

void ClearanceMap::build(const GridMap& map) {
  width_ = std::max(map.width(), 0);
  height_ = std::max(map.height(), 0);
  revision_ = map.revision();
  built_ = true;
  const auto w = static_cast<std::size_t>(width_);
  const auto h = static_cast<std::size_t>(height_);
  if (values_.size() != w * h) assign_huge(values_, w * h, std::uint8_t{0});
  counts_.fill(0);
  if (w == 0 || h == 0) return;
  const std::uint8_t* cost = map.costs().data();
  std::uint8_t* out = values_.data();
  constexpr auto kCap = static_cast<std::uint8_t>(kMaxSizeClass);
  // Bottom row and right column: a square of side 2 would leave the map, so clearance <= 1.
  for (std::size_t y = h; y-- > 0;) {
    const std::uint8_t* c = cost + y * w;
    std::uint8_t* row = out + y * w;
    const std::uint8_t* below = y + 1 < h ? out + (y + 1) * w : nullptr;
    row[w - 1] = c[w - 1] != kBlockedCost ? 1 : 0;
    for (std::size_t x = w - 1; x-- > 0;) {
      if (c[x] == kBlockedCost) {
        row[x] = 0;
        continue;
      }
      if (below == nullptr) {
        row[x] = 1;
        continue;
      }
      const std::uint8_t m = std::min({row[x + 1], below[x], below[x + 1]});
      row[x] = static_cast<std::uint8_t>(std::min<int>(m + 1, kCap));
    }
    for (std::size_t x = 0; x < w; ++x) ++counts_[row[x]];
  }
}

bool ClearanceMap::update(const GridMap& map, std::span<const CellCoord> cells) {
  if (!built_ || map.width() != width_ || map.height() != height_) return false;
  revision_ = map.revision();
  const auto w = static_cast<std::size_t>(width_);
  scratch_.clear();
  constexpr std::int32_t kReach = kMaxSizeClass - 1;  // a square of side <= kMaxSizeClass
  for (const CellCoord c : cells) {
    if (!map.in_bounds(c.x, c.y)) continue;
    for (std::int32_t y = std::max(c.y - kReach, 0); y <= c.y; ++y)
      for (std::int32_t x = std::max(c.x - kReach, 0); x <= c.x; ++x) scratch_.push_back(map.index(x, y));
  }
  // Each value reads its east, south and south-east neighbours, all at larger row-major
  // indices: descending order recomputes those first when they are affected too.
  std::sort(scratch_.begin(), scratch_.end(), std::greater<>{});
  scratch_.erase(std::unique(scratch_.begin(), scratch_.end()), scratch_.end());
  const std::uint8_t* cost = map.costs().data();
  const auto h = static_cast<std::size_t>(height_);
  constexpr auto kCap = static_cast<std::uint8_t>(kMaxSizeClass);
  for (const std::size_t i : scratch_) {
    const std::size_t x = i % w, y = i / w;
    std::uint8_t v = 0;
    if (cost[i] != kBlockedCost) {
      v = 1;  // the last row or column: a square of side 2 would leave the map
      if (x + 1 < w && y + 1 < h) {
        const std::uint8_t m = std::min({values_[i + 1], values_[i + w], values_[i + w + 1]});
        v = static_cast<std::uint8_t>(std::min<int>(m + 1, kCap));
      }
    }
    --counts_[values_[i]];
    ++counts_[v];
    values_[i] = v;
  }
  // A bulk change (GridMap::bulk_change_limit()) grows the scratch to tens of MiB:
  // not kept for the usual few cells.
  if (scratch_.capacity() > (std::size_t{1} << 20)) std::vector<std::size_t>().swap(scratch_);
  return true;
}

}  // namespace swarmfield::sim
