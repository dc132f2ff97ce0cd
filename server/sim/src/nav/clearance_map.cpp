// ClearanceMap: Harabor & Botea's true clearance by the bottom-right-to-top-left programme.
#include "swarmfield/sim/nav/clearance_map.hpp"

#include <algorithm>

namespace swarmfield::sim {

void ClearanceMap::build(const GridMap& map) {
  width_ = std::max(map.width(), 0);
  height_ = std::max(map.height(), 0);
  revision_ = map.revision();
  built_ = true;
  const auto w = static_cast<std::size_t>(width_);
  const auto h = static_cast<std::size_t>(height_);
  values_.resize(w * h);
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
  }
}

}  // namespace swarmfield::sim
