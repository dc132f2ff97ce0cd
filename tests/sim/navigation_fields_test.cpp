// NavigationFields: rebuild only when goal cells or the map revision change.
#include <doctest/doctest.h>

#include <vector>

#include "swarmfield/sim/navigation_fields.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::ascii;

TEST_CASE("navigation: rebuilds on goal cell change, never for a move inside the cell") {
  const GridMap m(20, 20);
  NavigationFields nav;
  CHECK(nav.rebuild_count() == 0);
  const std::vector<CellCoord> g1{m.world_to_cell({5.1f, 5.1f})};
  CHECK(nav.update(m, g1));
  CHECK(nav.rebuild_count() == 1);
  CHECK(nav.integration().raw(5, 5) == 0);
  CHECK(nav.flow().at(6, 5) == FlowDirection::kW);
  // Same cell, different position inside it.
  const std::vector<CellCoord> g1b{m.world_to_cell({5.9f, 5.4f})};
  CHECK_FALSE(nav.update(m, g1b));
  CHECK(nav.rebuild_count() == 1);
  // Another cell.
  const std::vector<CellCoord> g2{m.world_to_cell({6.0f, 5.4f})};
  CHECK(nav.update(m, g2));
  CHECK(nav.rebuild_count() == 2);
  CHECK(nav.integration().raw(6, 5) == 0);
  CHECK(nav.goals().size() == 1);
  CHECK(nav.goals()[0] == CellCoord{6, 5});
}

TEST_CASE("navigation: goals compare as a sequence") {
  const GridMap m(10, 10);
  NavigationFields nav;
  CHECK(nav.update(m, std::vector<CellCoord>{{1, 1}, {8, 8}}));
  CHECK_FALSE(nav.update(m, std::vector<CellCoord>{{1, 1}, {8, 8}}));
  CHECK(nav.update(m, std::vector<CellCoord>{{8, 8}, {1, 1}}));  // order changed
  CHECK(nav.update(m, std::vector<CellCoord>{{8, 8}}));          // one player left
  CHECK(nav.update(m, std::vector<CellCoord>{}));                // nobody
  CHECK_FALSE(nav.update(m, std::vector<CellCoord>{}));
  CHECK(nav.rebuild_count() == 4);
}

TEST_CASE("navigation: rebuilds on a map revision change, not on a no-op set_cost") {
  GridMap m(10, 10);
  NavigationFields nav;
  const std::vector<CellCoord> g{{0, 0}};
  nav.update(m, g);
  m.set_cost(3, 3, kDefaultCost);  // unchanged value: same revision
  CHECK_FALSE(nav.update(m, g));
  m.set_cost(3, 3, kBlockedCost);
  CHECK(nav.update(m, g));
  CHECK_FALSE(nav.integration().reachable(3, 3));
  CHECK(nav.rebuild_count() == 2);
  nav.invalidate();
  CHECK(nav.update(m, g));
  CHECK(nav.rebuild_count() == 3);
  const GridMap bigger(12, 10);
  CHECK(nav.update(bigger, g));  // another size
  CHECK(nav.integration().width() == 12);
}

TEST_CASE("navigation: C5 player alternating between two cells rebuilds once per change") {
  const GridMap m = ascii(R"(
##########
#........#
#.######.#
#A######P#
#.######.#
#........#
##########
)");
  NavigationFields nav;
  // 30 Hz for 6 s; the player switches between (8,2) and (8,4) every 0.5 s (15 ticks) and
  // jitters inside the cell between switches.
  std::uint64_t changes = 0;
  CellCoord last{-1, -1};
  for (int tick = 0; tick < 180; ++tick) {
    const bool upper = (tick / 15) % 2 == 0;
    const float jitter = 0.1f + 0.05f * static_cast<float>(tick % 7);
    const Vec2 player{8.0f + jitter, (upper ? 2.0f : 4.0f) + jitter};
    const CellCoord cell = m.world_to_cell(player);
    if (!(cell == last)) ++changes;
    last = cell;
    const std::vector<CellCoord> goals{cell};
    nav.update(m, goals);
  }
  CHECK(changes == 12);
  CHECK(nav.rebuild_count() == changes);
}
