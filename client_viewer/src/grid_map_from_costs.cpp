#include "swarmfield/client/grid_map_from_costs.hpp"

#include <utility>

namespace swarmfield::client {

bool grid_map_from_costs(std::int32_t width, std::int32_t height, float cell_size,
                         const std::vector<std::uint8_t>& costs, sim::GridMap& out) {
  if (width < 1 || height < 1 ||
      costs.size() != static_cast<std::size_t>(width) * static_cast<std::size_t>(height)) {
    return false;
  }
  sim::GridMap map(width, height, sim::kDefaultCost, cell_size);
  std::size_t i = 0;
  for (std::int32_t y = 0; y < height; ++y) {
    for (std::int32_t x = 0; x < width; ++x, ++i) {
      const std::uint8_t c = costs[i] == 0 ? sim::kDefaultCost : costs[i];
      if (c != sim::kDefaultCost) map.set_cost(x, y, c);
    }
  }
  out = std::move(map);
  return true;
}

}  // namespace swarmfield::client
