// NavigationFields: rebuild the integration + flow pair only when its inputs changed.
#include "swarmfield/sim/navigation_fields.hpp"

#include <algorithm>

namespace swarmfield::sim {

bool NavigationFields::update(const GridMap& map, std::span<const CellCoord> goal_cells) {
  const bool same_goals = std::equal(goal_cells.begin(), goal_cells.end(), goals_.begin(), goals_.end());
  const bool same_map = map.revision() == map_revision_ && map.width() == integration_.width() &&
                        map.height() == integration_.height();
  if (valid_ && same_goals && same_map) return false;
  goals_.assign(goal_cells.begin(), goal_cells.end());
  map_revision_ = map.revision();
  integration_.build(map, goals_);
  flow_.build(map, integration_);
  valid_ = true;
  ++rebuilds_;
  return true;
}

}  // namespace swarmfield::sim
