// The server's MapDeltas on the client's copy of the map (map_delta.hpp).
#include "swarmfield/client/map_delta.hpp"

namespace swarmfield::client {

bool apply_map_delta(const protocol::MapDelta& delta, sim::GridMap& map, MapChangeState& state) {
  if (state.deltas_applied > 0 && delta.revision <= state.revision) {
    ++state.deltas_ignored;
    return false;
  }
  for (const protocol::MapCellChange& cell : delta.cells) {
    if (!map.in_bounds(cell.x, cell.y)) {
      ++state.cells_skipped;
      continue;
    }
    map.set_cost(cell.x, cell.y, cell.cost == 0 ? sim::kDefaultCost : cell.cost);
    const auto index = static_cast<std::uint32_t>(map.index(cell.x, cell.y));
    if (cell.barricade != 0) {
      state.barricades[index] = cell.barricade;
    } else {
      state.barricades.erase(index);
    }
  }
  state.revision = delta.revision;
  ++state.deltas_applied;
  return true;
}

}  // namespace swarmfield::client
