// Wall collision (server/sim/src/crowd/wall_collision.cpp): sliding along walls, diagonal
// corners, moving out of walls.
#include "swarmfield/sim/crowd/wall_collision.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "swarm_test_support.hpp"
#include "test_maps.hpp"

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
  AsciiScene x_gap(test::kDiagonalGapMap);
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

TEST_CASE("big discs (0.5 to 2 cells): sliding never lets the disc overlap a wall, from any fitting start") {
  const std::uint64_t seed = test_seed(2024);
  SplitMix rng{seed};
  // Rooms and pillars: random 1..3-cell blocks on a 60 x 60 map, ~20 % blocked.
  GridMap map(60, 60);
  for (int k = 0; k < 160; ++k) {
    const std::int32_t x = rng.below(60), y = rng.below(60), bw = 1 + rng.below(3), bh = 1 + rng.below(3);
    for (std::int32_t yy = y; yy < y + bh; ++yy) {
      for (std::int32_t xx = x; xx < x + bw; ++xx) map.set_cost(xx, yy, kBlockedCost);
    }
  }
  ClearanceMap clearance;
  clearance.build(map);
  int checked = 0, stopped = 0;
  for (const float r : {0.5f, 0.75f, 0.9f, 1.0f, 1.4f, 2.0f}) {
    CAPTURE(r);
    for (int k = 0; k < 3000; ++k) {
      Vec2 start;
      REQUIRE(move_disc_out_of_walls(map, clearance, {rng.uniform(0.0f, 60.0f), rng.uniform(0.0f, 60.0f)}, r, start));
      REQUIRE(square_fits(map, start, r));
      REQUIRE(wall_overlap(map, start, r) <= 2e-4f);
      Vec2 p = start;
      for (int step = 0; step < 5; ++step) {  // a short walk: each start must be the last end
        const Vec2 move{rng.uniform(-1.5f, 1.5f), rng.uniform(-1.5f, 1.5f)};
        const Vec2 end = slide_along_walls(map, p, move, r);
        CHECK(wall_overlap(map, end, r) <= 2e-4f);  // the touching tolerance (wall_span_epsilon)
        CHECK(square_fits(map, end, r));
        CHECK(std::abs(end.x - p.x) <= std::abs(move.x) + 1e-5f);
        CHECK(std::abs(end.y - p.y) <= std::abs(move.y) + 1e-5f);
        if (length(end - p) + 1e-3f < length(move)) ++stopped;
        p = end;
        ++checked;
      }
    }
  }
  MESSAGE(checked << " slides, " << stopped << " stopped short by a wall");
  CHECK(stopped > checked / 10);  // the walls were in the way often enough to mean something
}

TEST_CASE("move_disc_out_of_walls puts a big disc where it fits, nearest first, and says when nothing fits") {
  AsciiScene scene(
      "##############\n"
      "#............#\n"
      "#............#\n"
      "#............#\n"
      "######..######\n"
      "######..######\n"
      "#............#\n"
      "##############\n");
  ClearanceMap clearance;
  clearance.build(scene.map);
  Vec2 out;
  // r 1.4 (class 3) pushed into the top wall of the 3-row room: back down to y = 1 + 1.4.
  REQUIRE(move_disc_out_of_walls(scene.map, clearance, {7.0f, 0.5f}, 1.4f, out));
  CHECK(out.x == doctest::Approx(7.0f));
  CHECK(out.y == doctest::Approx(2.4f));
  CHECK(wall_overlap(scene.map, out, 1.4f) <= 1e-4f);
  // Already fitting: unchanged.
  REQUIRE(move_disc_out_of_walls(scene.map, clearance, {5.0f, 2.5f}, 1.4f, out));
  CHECK(out == Vec2{5.0f, 2.5f});
  // r 0.9 (class 2) in the 2-wide neck: to its nearest side, 0.9 from the post at x = 6;
  // r 1.4 in the neck goes to the room above.
  REQUIRE(move_disc_out_of_walls(scene.map, clearance, {6.6f, 5.0f}, 0.9f, out));
  CHECK(out.x == doctest::Approx(6.9f));
  CHECK(out.y == doctest::Approx(5.0f));
  REQUIRE(move_disc_out_of_walls(scene.map, clearance, {7.0f, 5.0f}, 1.4f, out));
  CHECK(wall_overlap(scene.map, out, 1.4f) <= 2e-4f);
  CHECK(out.y < 4.0f);
  // The one-row corridor at the bottom: a class-2 disc goes up through the neck, not into it.
  REQUIRE(move_disc_out_of_walls(scene.map, clearance, {2.0f, 6.5f}, 0.8f, out));
  CHECK(wall_overlap(scene.map, out, 0.8f) <= 1e-4f);
  // r 2 (class 4) fits nowhere on this map; a clearance map of another revision is refused.
  const Vec2 before{1.0f, 1.0f};
  out = before;
  CHECK_FALSE(move_disc_out_of_walls(scene.map, clearance, {7.0f, 2.0f}, 2.0f, out));
  CHECK(out == before);
  GridMap changed = scene.map;
  changed.set_cost(3, 3, kBlockedCost);
  CHECK_FALSE(move_disc_out_of_walls(changed, clearance, {7.0f, 2.0f}, 0.9f, out));
  // Garbage input: searched from the map centre.
  ClearanceMap changed_clearance;
  changed_clearance.build(changed);
  REQUIRE(move_disc_out_of_walls(changed, changed_clearance, {std::nanf(""), 1e30f}, 0.9f, out));
  CHECK(square_fits(changed, out, 0.9f));
}

TEST_CASE("square_fits is the slide's collision square") {
  AsciiScene scene(
      "#####\n"
      "#...#\n"
      "#...#\n"
      "#...#\n"
      "#####\n");
  CHECK(square_fits(scene.map, {2.5f, 2.5f}, 1.5f));    // the 3 x 3 room exactly
  CHECK_FALSE(square_fits(scene.map, {2.6f, 2.5f}, 1.5f));
  CHECK(square_fits(scene.map, {1.35f, 1.35f}, 0.35f));  // touching two walls
  CHECK_FALSE(square_fits(scene.map, {1.3f, 2.5f}, 0.35f));
  CHECK_FALSE(square_fits(scene.map, {std::nanf(""), 2.5f}, 0.35f));
}
