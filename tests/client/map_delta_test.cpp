// The server's MapDeltas on the client's copy of the map (apply_map_delta): costs set, the
// barricades kept and dropped, cells outside the map skipped and counted, old revisions ignored.
#include <doctest/doctest.h>

#include "swarmfield/client/map_delta.hpp"

namespace client = swarmfield::client;
namespace protocol = swarmfield::protocol;
namespace sim = swarmfield::sim;

TEST_CASE("a MapDelta sets each cell's cost and keeps the barricades with their health") {
  sim::GridMap map(10, 8, sim::kDefaultCost, 0.5f);
  map.set_cost(4, 4, 3);
  client::MapChangeState state;
  const std::uint32_t before = map.revision();

  // Two barricades built (one damaged), a road made an alley, a cell outside the map.
  REQUIRE(client::apply_map_delta(
      protocol::MapDelta{7, {{2, 3, 255, 255}, {3, 3, 255, 60}, {4, 4, 2, 0}, {10, 0, 255, 255}, {0, 8, 255, 255}}}, map,
      state));
  CHECK(map.cost(2, 3) == sim::kBlockedCost);
  CHECK(map.cost(3, 3) == sim::kBlockedCost);
  CHECK(map.cost(4, 4) == 2);
  CHECK_FALSE(map.walkable(2, 3));
  CHECK(map.revision() == before + 3);  // three costs changed: fields built on the map rebuild
  CHECK(state.barricades == client::Barricades{{3 * 10 + 2, 255}, {3 * 10 + 3, 60}});
  CHECK(state.cells_skipped == 2);
  CHECK(state.revision == 7);
  CHECK(state.deltas_applied == 1);

  // A revision not newer than the last applied: ignored whole.
  CHECK_FALSE(client::apply_map_delta(protocol::MapDelta{7, {{5, 5, 255, 255}}}, map, state));
  CHECK_FALSE(client::apply_map_delta(protocol::MapDelta{2, {{2, 3, 1, 0}}}, map, state));
  CHECK(state.deltas_ignored == 2);
  CHECK(map.cost(5, 5) == sim::kDefaultCost);
  CHECK(map.cost(2, 3) == sim::kBlockedCost);
  CHECK(state.barricades.size() == 2);

  // Newer: one barricade destroyed (the road again), the other repaired; the same cost twice
  // does not move the map's revision.
  const std::uint32_t mid = map.revision();
  REQUIRE(client::apply_map_delta(protocol::MapDelta{8, {{2, 3, 1, 0}, {3, 3, 255, 255}}}, map, state));
  CHECK(map.cost(2, 3) == sim::kDefaultCost);
  CHECK(map.revision() == mid + 1);
  CHECK(state.barricades == client::Barricades{{3 * 10 + 3, 255}});
  CHECK(state.revision == 8);
  CHECK(state.deltas_applied == 2);
}

TEST_CASE("the first MapDelta is applied whatever its revision; a cost of 0 reads as 1") {
  sim::GridMap map(4, 4);
  map.set_cost(1, 1, 200);
  client::MapChangeState state;
  REQUIRE(client::apply_map_delta(protocol::MapDelta{0, {{1, 1, 0, 0}}}, map, state));
  CHECK(map.cost(1, 1) == sim::kDefaultCost);
  CHECK(state.deltas_applied == 1);
  CHECK_FALSE(client::apply_map_delta(protocol::MapDelta{0, {{1, 1, 255, 9}}}, map, state));
  REQUIRE(client::apply_map_delta(protocol::MapDelta{1, {{1, 1, 255, 9}}}, map, state));
  CHECK(state.barricades == client::Barricades{{1 * 4 + 1, 9}});
}

TEST_CASE("a MapDelta on an empty map (none received) skips every cell without harm") {
  sim::GridMap map;
  client::MapChangeState state;
  REQUIRE(client::apply_map_delta(protocol::MapDelta{3, {{0, 0, 255, 255}, {65535, 65535, 1, 0}}}, map, state));
  CHECK(state.cells_skipped == 2);
  CHECK(state.barricades.empty());
}
