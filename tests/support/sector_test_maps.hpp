#pragma once
// Maps for the hierarchical navigation tests: walled rooms with doors (every path crosses
// sector borders at portals) and random walkable goals.
#include <cstdint>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "test_maps.hpp"

namespace swarmfield::sim::test {

/// Rooms of `side` x `side` cells (the sectors) walled along their borders, a one-cell door in
/// each wall between two rooms, and scattered blocked cells inside: every path from a room to
/// another goes through a door pair, i.e. through portals.
inline GridMap walled_rooms(std::uint64_t seed, std::int32_t rooms_x, std::int32_t rooms_y, std::int32_t side) {
  TestRng rng{seed};
  GridMap m = random_map(seed, rooms_x * side, rooms_y * side, 12, false);
  for (std::int32_t rx = 0; rx < rooms_x; ++rx)
    for (std::int32_t ry = 0; ry < rooms_y; ++ry) {
      const std::int32_t x0 = rx * side, y0 = ry * side;
      if (rx + 1 < rooms_x) {  // wall on the room's east column, door at a random row
        const std::int32_t door = 1 + rng.below(side - 2);
        for (std::int32_t y = 0; y < side; ++y) m.set_cost(x0 + side - 1, y0 + y, y == door ? kDefaultCost : kBlockedCost);
        m.set_cost(x0 + side, y0 + door, kDefaultCost);  // the door's other cell
      }
      if (ry + 1 < rooms_y) {  // wall on the room's south row
        const std::int32_t door = 1 + rng.below(side - 2);
        for (std::int32_t x = 0; x < side; ++x) m.set_cost(x0 + x, y0 + side - 1, x == door ? kDefaultCost : kBlockedCost);
        m.set_cost(x0 + door, y0 + side, kDefaultCost);
      }
    }
  return m;
}

/// `count` walkable cells of `m` drawn with `seed`.
inline std::vector<CellCoord> walkable_goals(const GridMap& m, std::uint64_t seed, int count) {
  TestRng rng{seed};
  std::vector<CellCoord> goals;
  while (static_cast<int>(goals.size()) < count) {
    const CellCoord c{rng.below(m.width()), rng.below(m.height())};
    if (m.walkable(c)) goals.push_back(c);
  }
  return goals;
}

}  // namespace swarmfield::sim::test
