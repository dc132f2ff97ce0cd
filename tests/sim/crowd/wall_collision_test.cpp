// Wall collision (server/sim/src/crowd/wall_collision.cpp): sliding along walls, diagonal
// corners, moving out of walls.
#include "swarmfield/sim/crowd/wall_collision.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "swarm_test_support.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::test;

TEST_CASE("slide_along_walls keeps discs out of walls and never cuts a diagonal corner") {
  const std::uint64_t seed = test_seed(77);
  SplitMix rng{seed};
  // Random walls, ~30 % blocked.
  GridMap map(40, 40);
  for (std::int32_t y = 0; y < 40; ++y) {
    for (std::int32_t x = 0; x < 40; ++x) {
      if (rng.below(10) < 3) map.set_cost(x, y, kBlockedCost);
    }
  }
  const float r = 0.35f;
  int checked = 0;
  for (int k = 0; k < 20000; ++k) {
    const Vec2 start = move_out_of_walls(map, {rng.uniform(0.0f, 40.0f), rng.uniform(0.0f, 40.0f)}, r);
    REQUIRE(map.walkable_at(start));
    REQUIRE(wall_overlap(map, start, r) <= 1e-4f);
    const Vec2 move{rng.uniform(-2.0f, 2.0f), rng.uniform(-2.0f, 2.0f)};
    const Vec2 end = slide_along_walls(map, start, move, r);
    REQUIRE(map.walkable_at(end));
    CHECK(wall_overlap(map, end, r) <= 1e-4f);
    // Never further than asked on either axis.
    CHECK(std::abs(end.x - start.x) <= std::abs(move.x) + 1e-5f);
    CHECK(std::abs(end.y - start.y) <= std::abs(move.y) + 1e-5f);
    ++checked;
  }
  CHECK(checked == 20000);

  // C1's "X" gap: (5,3) and (4,4) touch at a corner; nothing passes between them.
  AsciiScene x_gap(
      "##########\n"
      "#A...#...#\n"
      "#....#...#\n"
      "#....#...#\n"
      "#...#....#\n"
      "#...#..P.#\n"
      "#...#....#\n"
      "#........#\n"
      "##########\n");
  for (const float tiny_r : {0.35f, 0.05f, 0.01f}) {
    const Vec2 near_corner{4.9f, 3.9f};  // in (4,3), next to the shared corner (5,4)
    const Vec2 end = slide_along_walls(x_gap.map, near_corner, {0.3f, 0.3f}, tiny_r);
    const CellCoord c = x_gap.map.world_to_cell(end);
    CAPTURE(tiny_r);
    CHECK(c == CellCoord{4, 3});
  }
}

TEST_CASE("move_out_of_walls picks the nearest walkable cell and handles garbage") {
  AsciiScene scene(
      "#####\n"
      "#...#\n"
      "#.#.#\n"
      "#...#\n"
      "#####\n");
  // Inside the pillar at x.99: nearest walkable cell is to the east.
  const Vec2 out = move_out_of_walls(scene.map, {2.99f, 2.5f}, 0.35f);
  CHECK(scene.map.world_to_cell(out) == CellCoord{3, 2});
  CHECK(out.x == doctest::Approx(3.35f));
  CHECK(out.y == doctest::Approx(2.5f));
  // Off the map: clamped back onto the nearest walkable cell.
  CHECK(scene.map.walkable_at(move_out_of_walls(scene.map, {-50.0f, 2.5f}, 0.35f)));
  CHECK(scene.map.walkable_at(move_out_of_walls(scene.map, {-1e30f, 1e30f}, 0.35f)));
  const Vec2 nan_out = move_out_of_walls(scene.map, {std::nanf(""), 1.0f}, 0.35f);
  CHECK(scene.map.walkable_at(nan_out));
  // No walkable cell at all: returned unchanged, no crash.
  GridMap solid(4, 4, kBlockedCost);
  const Vec2 same = move_out_of_walls(solid, {1.5f, 1.5f}, 0.35f);
  CHECK(same == Vec2{1.5f, 1.5f});
}
