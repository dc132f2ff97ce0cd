#include "swarmfield/server/spawn_point.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace swarmfield::server {

sim::Vec2 centre_most_walkable(const sim::GridMap& map) {
  const std::int32_t w = map.width();
  const std::int32_t h = map.height();
  const sim::CellCoord mid{w / 2, h / 2};
  if (w <= 0 || h <= 0) return {};
  std::int64_t best_d2 = std::numeric_limits<std::int64_t>::max();
  sim::CellCoord best = mid;
  bool found = false;
  const std::int32_t max_ring = std::max(w, h);
  for (std::int32_t r = 0; r <= max_ring; ++r) {
    // Every cell of ring r is at least r away; once r*r exceeds the best, nothing closer remains.
    if (found && static_cast<std::int64_t>(r) * r > best_d2) break;
    for (std::int32_t y = mid.y - r; y <= mid.y + r; ++y) {
      const bool edge_row = (y == mid.y - r || y == mid.y + r);
      for (std::int32_t x = mid.x - r; x <= mid.x + r; x += (edge_row || r == 0) ? 1 : 2 * r) {
        if (!map.walkable(x, y)) continue;
        const std::int64_t dx = x - mid.x, dy = y - mid.y;
        const std::int64_t d2 = dx * dx + dy * dy;
        if (d2 < best_d2 || (d2 == best_d2 && (y < best.y || (y == best.y && x < best.x)))) {
          best_d2 = d2;
          best = {x, y};
          found = true;
        }
      }
    }
  }
  return map.cell_center(found ? best : mid);
}

}  // namespace swarmfield::server
