#pragma once
// Where players appear: the walkable cell closest to the map centre.
#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::server {

/// Centre (world units) of the walkable cell nearest (Euclidean, in cells) to the map centre;
/// ties go to the first in row-major order. Searches square rings outward and stops once no
/// closer cell can exist. The map centre itself when no cell is walkable.
[[nodiscard]] sim::Vec2 centre_most_walkable(const sim::GridMap& map);

}  // namespace swarmfield::server
