// GridMap: construction, costs, revision, world <-> cell conversion.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

using namespace swarmfield::sim;

TEST_CASE("grid map: size, fill, out-of-bounds reads as blocked") {
  const GridMap m(4, 3, 7);
  CHECK(m.width() == 4);
  CHECK(m.height() == 3);
  CHECK(m.cell_count() == 12);
  CHECK(m.cost(3, 2) == 7);
  CHECK(m.cost(-1, 0) == kBlockedCost);
  CHECK(m.cost(4, 0) == kBlockedCost);
  CHECK(m.cost(0, 3) == kBlockedCost);
  CHECK_FALSE(m.walkable(0, -1));
  CHECK(m.walkable_count() == 12);
  const GridMap negative(-5, 2);
  CHECK(negative.cell_count() == 0);
}

TEST_CASE("grid map: set_cost bumps the revision only on a change") {
  GridMap m(3, 3);
  const auto r0 = m.revision();
  m.set_cost(1, 1, kDefaultCost);  // same value
  CHECK(m.revision() == r0);
  m.set_cost(1, 1, kBlockedCost);
  CHECK(m.revision() == r0 + 1);
  CHECK_FALSE(m.walkable(1, 1));
  CHECK(m.walkable_count() == 8);
  m.set_cost(5, 5, kBlockedCost);  // out of bounds: ignored
  CHECK(m.revision() == r0 + 1);
}

TEST_CASE("grid map: walkable_count follows every set_cost (costs between walkable values, blocks, reopenings)") {
  std::vector<std::uint8_t> costs(7 * 5, kDefaultCost);
  costs[3] = kBlockedCost;
  costs[12] = kBlockedCost;
  GridMap m = GridMap::from_costs(7, 5, costs);
  CHECK(m.walkable_count() == 33);
  GridMap blocked(4, 4, kBlockedCost);
  CHECK(blocked.walkable_count() == 0);
  blocked.set_cost(2, 2, 5);
  CHECK(blocked.walkable_count() == 1);
  const auto count = [](const GridMap& g) {
    std::size_t n = 0;
    for (std::int32_t y = 0; y < g.height(); ++y)
      for (std::int32_t x = 0; x < g.width(); ++x) n += g.walkable(x, y) ? 1 : 0;
    return n;
  };
  std::uint32_t state = 12345;
  for (int i = 0; i < 500; ++i) {
    state = state * 1664525u + 1013904223u;
    const auto x = static_cast<std::int32_t>((state >> 8) % 9) - 1;  // one column off each side
    const auto y = static_cast<std::int32_t>((state >> 16) % 6);     // one row off the bottom
    const std::uint8_t values[] = {kDefaultCost, 7, kBlockedCost, 254};
    m.set_cost(x, y, values[(state >> 24) % 4]);
    REQUIRE(m.walkable_count() == count(m));
  }
  GridMap copy = m;  // the count travels with the costs
  CHECK(copy.walkable_count() == count(m));
}

TEST_CASE("grid map: the change log lists the cells changed since a revision, and says when it no longer reaches") {
  GridMap m(8, 8);
  std::span<const CellCoord> cells;
  REQUIRE(m.changes_since(0, cells));
  CHECK(cells.empty());
  m.set_cost(1, 2, 7);
  m.set_cost(1, 2, 7);  // no change: not logged
  m.set_cost(9, 9, 7);  // off the map: not logged
  m.set_cost(3, 4, kBlockedCost);
  m.set_cost(1, 2, kDefaultCost);
  REQUIRE(m.revision() == 3);
  REQUIRE(m.changes_since(0, cells));
  REQUIRE(cells.size() == 3);
  CHECK(cells[0] == CellCoord{1, 2});
  CHECK(cells[1] == CellCoord{3, 4});
  CHECK(cells[2] == CellCoord{1, 2});
  REQUIRE(m.changes_since(2, cells));
  REQUIRE(cells.size() == 1);
  CHECK(cells[0] == CellCoord{1, 2});
  REQUIRE(m.changes_since(3, cells));
  CHECK(cells.empty());
  CHECK_FALSE(m.changes_since(4, cells));  // a revision this map never had
  CHECK(cells.empty());
  // Past the limit the older half goes: old revisions are refused, recent ones still listed.
  for (std::size_t i = 0; i < GridMap::kChangeLogLimit; ++i) m.set_cost(5, 5, i % 2 == 0 ? 9 : 8);
  const std::uint32_t now = m.revision();
  CHECK_FALSE(m.changes_since(0, cells));
  REQUIRE(m.changes_since(now - 10, cells));
  CHECK(cells.size() == 10);
  for (const CellCoord c : cells) CHECK(c == CellCoord{5, 5});
  // A copy keeps the log; from_costs starts without one.
  const GridMap copy = m;
  CHECK(copy.changes_since(now - 1, cells));
  const GridMap fresh = GridMap::from_costs(2, 2, {1, 1, 1, 1});
  CHECK(fresh.changes_since(0, cells));
  CHECK(cells.empty());
}

TEST_CASE("grid map: from_costs keeps the given cells and pads missing ones as blocked") {
  const GridMap m = GridMap::from_costs(2, 2, {1, 2, 3});
  CHECK(m.cost(0, 0) == 1);
  CHECK(m.cost(1, 0) == 2);
  CHECK(m.cost(0, 1) == 3);
  CHECK(m.cost(1, 1) == kBlockedCost);
  CHECK(m.revision() == 0);
}

TEST_CASE("grid map: world_to_cell floors, negatives included; cell_center is the middle") {
  const GridMap m(10, 10, kDefaultCost, 2.0f);
  CHECK(m.world_to_cell({0.0f, 0.0f}) == CellCoord{0, 0});
  CHECK(m.world_to_cell({1.99f, 2.0f}) == CellCoord{0, 1});
  CHECK(m.world_to_cell({-0.01f, -2.0f}) == CellCoord{-1, -1});
  CHECK(m.world_to_cell({-2.01f, 0.0f}) == CellCoord{-2, 0});
  const Vec2 c = m.cell_center({3, 4});
  CHECK(c.x == doctest::Approx(7.0f));
  CHECK(c.y == doctest::Approx(9.0f));
  CHECK(m.world_to_cell(c) == CellCoord{3, 4});
  // Non-finite and huge positions land off the map, never UB.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(m.in_bounds(m.world_to_cell({nan, 1.0f}).x, m.world_to_cell({nan, 1.0f}).y));
  CHECK_FALSE(m.walkable_at({1e30f, 1.0f}));
  CHECK_FALSE(m.walkable_at({-std::numeric_limits<float>::infinity(), 1.0f}));
  const GridMap bad(2, 2, kDefaultCost, -1.0f);
  CHECK(bad.cell_size() == 1.0f);
}

TEST_CASE("grid map: with the change log off, revisions still move but nothing is logged") {
  GridMap m(8, 8);
  m.set_cost(1, 1, kBlockedCost);
  const std::uint32_t before_off = m.revision();
  m.set_change_log(false);
  m.set_cost(2, 2, kBlockedCost);
  m.set_cost(3, 3, 5);
  CHECK(m.revision() == before_off + 2);
  std::span<const CellCoord> out;
  CHECK_FALSE(m.changes_since(before_off, out));  // not followable: rebuild whole
  CHECK(out.empty());
  CHECK(m.changes_since(m.revision(), out));  // up to date
  CHECK(out.empty());
  m.set_change_log(true);
  const std::uint32_t on_again = m.revision();
  m.set_cost(4, 4, kBlockedCost);
  REQUIRE(m.changes_since(on_again, out));
  REQUIRE(out.size() == 1);
  CHECK(out[0] == CellCoord{4, 4});
}
