// A map repeated n x n times.
#include "swarmfield/sim/map/tiled_map.hpp"

#include <utility>
#include <vector>

namespace swarmfield::sim {

GridMap tiled_map(const GridMap& tile, int n) {
  if (n < 1) n = 1;
  const std::int32_t w = tile.width() * n, h = tile.height() * n;
  std::vector<std::uint8_t> costs(static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
  for (std::int32_t y = 0; y < h; ++y)
    for (std::int32_t x = 0; x < w; ++x)
      costs[static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + static_cast<std::size_t>(x)] =
          tile.cost(x % tile.width(), y % tile.height());
  return GridMap::from_costs(w, h, std::move(costs), tile.cell_size());
}

}  // namespace swarmfield::sim
