// ClearanceMap against a brute-force reference (largest all-walkable square per top-left cell).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "benchmark_maps.hpp"
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;

namespace {

/// Largest s <= kMaxSizeClass whose s x s square at top-left (x, y) is on the map and walkable.
int brute_clearance(const GridMap& m, std::int32_t x, std::int32_t y) {
  int best = 0;
  for (int s = 1; s <= kMaxSizeClass; ++s) {
    bool ok = true;
    for (int dy = 0; dy < s && ok; ++dy)
      for (int dx = 0; dx < s && ok; ++dx) ok = m.walkable(x + dx, y + dy);
    if (!ok) break;
    best = s;
  }
  return best;
}

void check_against_brute(const GridMap& m, const ClearanceMap& c) {
  REQUIRE(c.width() == m.width());
  REQUIRE(c.height() == m.height());
  std::size_t mismatches = 0;
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x)
      if (c.at(x, y) != brute_clearance(m, x, y)) {
        if (mismatches++ < 5) MESSAGE("mismatch at (" << x << "," << y << "): " << int(c.at(x, y)) << " vs "
                                                     << brute_clearance(m, x, y));
      }
  CHECK(mismatches == 0);
}

}  // namespace

TEST_CASE("clearance: hand-made corridors") {
  const GridMap m = test::ascii(R"(
#######
#.....#
#.....#
###.###
#.....#
#######
)");
  ClearanceMap c;
  c.build(m);
  CHECK(c.at(1, 1) == 2);  // rows 1-2 are 5 wide, 2 high
  CHECK(c.at(5, 1) == 1);  // right edge of the room
  CHECK(c.at(3, 3) == 1);  // the 1-cell door
  CHECK(c.at(2, 2) == 1);  // the square below it hits the wall of row 3
  CHECK(c.at(0, 0) == 0);  // blocked
  CHECK(c.at(-1, 0) == 0);
  CHECK(c.at(7, 0) == 0);
  CHECK(c.fits({1, 1}, 2));
  CHECK_FALSE(c.fits({1, 1}, 3));
  CHECK_FALSE(c.fits({1, 1}, 0));
  CHECK(c.matches(m));
  check_against_brute(m, c);
}

TEST_CASE("clearance: open map is capped at kMaxSizeClass and shrinks toward the edge") {
  const GridMap m(10, 7);
  ClearanceMap c;
  c.build(m);
  CHECK(c.at(0, 0) == kMaxSizeClass);
  CHECK(c.at(9, 0) == 1);
  CHECK(c.at(8, 5) == 2);
  CHECK(c.at(7, 4) == 3);
  check_against_brute(m, c);
}

TEST_CASE("clearance: random maps match the brute-force reference exactly") {
  std::mt19937 rng(20261201);
  for (int trial = 0; trial < 60; ++trial) {
    const std::int32_t w = 1 + static_cast<std::int32_t>(rng() % 40);
    const std::int32_t h = 1 + static_cast<std::int32_t>(rng() % 40);
    const double density = 0.02 * static_cast<double>(trial % 25);
    std::bernoulli_distribution blocked(density);
    std::uniform_int_distribution<int> cost(1, 254);
    std::vector<std::uint8_t> costs(static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
    for (auto& v : costs) v = blocked(rng) ? kBlockedCost : static_cast<std::uint8_t>(cost(rng));
    const GridMap m = GridMap::from_costs(w, h, costs);
    ClearanceMap c;
    c.build(m);
    CAPTURE(trial);
    check_against_brute(m, c);
  }
}

TEST_CASE("clearance: Boston_0_256 matches the brute-force reference; matches() follows revisions") {
  GridMap m = test::boston_256();
  ClearanceMap c;
  c.build(m);
  check_against_brute(m, c);
  CHECK(c.matches(m));
  m.set_cost(10, 10, m.walkable(10, 10) ? kBlockedCost : kDefaultCost);
  CHECK_FALSE(c.matches(m));
  c.build(m);  // rebuilt on the same buffer
  CHECK(c.matches(m));
  check_against_brute(m, c);
}

TEST_CASE("clearance: update() after a series of changes equals a whole build (edges, corners, clusters)") {
  GridMap m = test::boston_256();
  ClearanceMap c;
  c.build(m);
  test::TestRng rng{11};
  for (int round = 0; round < 40; ++round) {
    CAPTURE(round);
    const std::uint32_t since = m.revision();
    const int count = 1 + rng.below(12);
    for (int k = 0; k < count; ++k) {
      CellCoord at{rng.below(m.width()), rng.below(m.height())};
      if (round % 5 == 1) at = {rng.below(2) * (m.width() - 1), rng.below(m.height())};  // map edges
      if (round % 5 == 2) at = {rng.below(2) * (m.width() - 1), rng.below(2) * (m.height() - 1)};  // corners
      if (round % 5 == 3 && k > 0) at = {at.x % 8 + 100, at.y % 8 + 100};  // a cluster
      const std::uint8_t cost = rng.below(3) == 0 ? static_cast<std::uint8_t>(1 + rng.below(9))
                                                  : (m.walkable(at) ? kBlockedCost : kDefaultCost);
      m.set_cost(at.x, at.y, cost);
    }
    std::span<const CellCoord> changed;
    REQUIRE(m.changes_since(since, changed));
    REQUIRE(c.update(m, changed));
    CHECK(c.matches(m));
    ClearanceMap fresh;
    fresh.build(m);
    REQUIRE(c.values() == fresh.values());
    REQUIRE(c.largest() == *std::max_element(fresh.values().begin(), fresh.values().end()));
  }
  check_against_brute(m, c);
  CHECK_FALSE(c.update(GridMap(3, 3), {}));  // another size: refused
  ClearanceMap never;
  CHECK_FALSE(never.update(m, {}));
}

TEST_CASE("clearance: largest() is the biggest class that fits anywhere, through builds and updates") {
  GridMap m(6, 6, kBlockedCost);
  ClearanceMap c;
  CHECK(c.largest() == 0);
  c.build(m);
  CHECK(c.largest() == 0);
  const std::uint32_t since = m.revision();
  for (std::int32_t y = 1; y <= 3; ++y)
    for (std::int32_t x = 1; x <= 3; ++x) m.set_cost(x, y, kDefaultCost);  // a 3 x 3 room
  std::span<const CellCoord> changed;
  REQUIRE(m.changes_since(since, changed));
  REQUIRE(c.update(m, changed));
  CHECK(c.largest() == 3);
  const std::uint32_t before_wall = m.revision();
  m.set_cost(2, 2, kBlockedCost);  // a pillar in the middle: only 1 x 1 blocks are left
  REQUIRE(m.changes_since(before_wall, changed));
  REQUIRE(c.update(m, changed));
  CHECK(c.largest() == 1);
  c.build(GridMap(10, 10));
  CHECK(c.largest() == kMaxSizeClass);
}
