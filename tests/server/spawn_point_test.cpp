#include <doctest/doctest.h>

#include "swarmfield/server/spawn_point.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

#include <cstdlib>
#include <vector>

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

TEST_CASE("player_spawn_point: players round the centre, apart, never behind a wall") {
  // A 21 x 21 open square with a walled pocket east of the centre (x 13..15, y 8..12): cells
  // inside it are near the centre but sealed off: no walk from the centre reaches them.
  const sim::GridMap m = ascii(
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      "............#####....\n"
      "............#...#....\n"
      "............#...#....\n"
      "............#...#....\n"
      "............#...#....\n"
      "............#####....\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n"
      ".....................\n");
  const sim::Vec2 centre = server::centre_most_walkable(m);
  std::vector<sim::Vec2> players;
  for (int k = 0; k < 8; ++k) {
    const sim::Vec2 at = server::player_spawn_point(m, {}, centre, players);
    const sim::CellCoord c = m.world_to_cell(at);
    INFO("player " << k << " at " << c.x << "," << c.y);
    CHECK(m.walkable(c));
    CHECK_FALSE((c.x >= 13 && c.x <= 15 && c.y >= 8 && c.y <= 11));  // never inside the sealed pocket
    CHECK(std::abs(c.x - 10) <= server::kSpawnRadiusCells);
    CHECK(std::abs(c.y - 10) <= server::kSpawnRadiusCells);
    for (const sim::Vec2 q : players) CHECK(sim::length(q - at) >= server::kSpawnSpacingCells - 1e-3f);
    players.push_back(at);
  }
  CHECK(m.world_to_cell(players.front()) == m.world_to_cell(centre));  // the first at the centre
  // The same players give the same point (the recording stores it, but replays of old files and
  // tests rely on the rule being a function).
  CHECK(server::player_spawn_point(m, {}, centre, players).x == server::player_spawn_point(m, {}, centre, players).x);
}

TEST_CASE("player_spawn_point: the map's spawn cells, the one farthest from the players first") {
  const sim::GridMap m = ascii(
      "..........\n"
      "..........\n"
      "..........\n"
      "..........\n"
      "..........\n");
  const std::vector<sim::CellCoord> spawns = {{0, 0}, {9, 0}, {0, 4}, {9, 4}};
  std::vector<sim::Vec2> players;
  const sim::Vec2 first = server::player_spawn_point(m, spawns, {5.0f, 2.5f}, players);
  CHECK(m.world_to_cell(first) == sim::CellCoord{0, 0});  // none there yet: the first listed
  players.push_back(first);
  const sim::Vec2 second = server::player_spawn_point(m, spawns, {5.0f, 2.5f}, players);
  CHECK(m.world_to_cell(second) == sim::CellCoord{9, 4});  // the opposite corner
  players.push_back(second);
  const sim::CellCoord third = m.world_to_cell(server::player_spawn_point(m, spawns, {5.0f, 2.5f}, players));
  CHECK((third == sim::CellCoord{9, 0} || third == sim::CellCoord{0, 4}));
  // A spawn cell in a wall (a broken file) is never used.
  const sim::GridMap walled = ascii("#.\n..\n");
  CHECK(walled.world_to_cell(server::player_spawn_point(walled, std::vector<sim::CellCoord>{{0, 0}}, {1.0f, 1.0f}, {})) !=
        sim::CellCoord{0, 0});
}
