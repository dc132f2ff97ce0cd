#include <doctest/doctest.h>

#include "swarmfield/server/spawn_point.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

using namespace swarmfield;

namespace {
sim::GridMap ascii(const char* text) {
  sim::GridMap m;
  sim::MapError e;
  REQUIRE(sim::parse_ascii_map(text, "test", m, e));
  return m;
}
}  // namespace

TEST_CASE("spawn_point: the centre cell when walkable") {
  const sim::GridMap m = ascii(".....\n.....\n.....\n.....\n.....\n");
  const sim::Vec2 p = server::centre_most_walkable(m);
  CHECK(m.world_to_cell(p) == sim::CellCoord{2, 2});
  CHECK(p.x == doctest::Approx(2.5f));
}

TEST_CASE("spawn_point: the nearest walkable cell when the centre is blocked") {
  const sim::GridMap m = ascii(
      "#######\n"
      "#######\n"
      "#######\n"
      "#######\n"
      "####..#\n"
      "#######\n"
      "#######\n");
  CHECK(m.world_to_cell(server::centre_most_walkable(m)) == sim::CellCoord{4, 4});
}

TEST_CASE("spawn_point: prefers Euclidean distance over ring order") {
  // Centre (4,4). (7,7) is on ring 3 but sqrt(18) away; (4,0) is on ring 4 but only 4 away.
  const sim::GridMap m = ascii(
      "####.####\n"
      "#########\n"
      "#########\n"
      "#########\n"
      "#########\n"
      "#########\n"
      "#########\n"
      "#######.#\n"
      "#########\n");
  CHECK(m.world_to_cell(server::centre_most_walkable(m)) == sim::CellCoord{4, 0});
}
