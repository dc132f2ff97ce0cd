// Blocked-cell counts of the summed-area table against brute force: small and large rectangles
// (the 16-bit sums are exact below 2^16 cells; larger rectangles are split into strips).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "swarmfield/sim/nav/field/blocked_count_table.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;

namespace {

BlockedCountTable table_of(const GridMap& m) {
  IntegrationField f;
  f.build(m, std::vector<CellCoord>{});  // the snapshot is what the table counts
  BlockedCountTable t;
  t.begin(f);
  while (!t.done()) (void)t.advance(f, 1000);
  return t;
}

/// Blocked cells of [x0, x1] x [y0, y1], cells outside the map counting as blocked.
std::uint32_t brute_count(const GridMap& m, std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1) {
  std::uint32_t n = 0;
  for (std::int32_t y = y0; y <= y1; ++y)
    for (std::int32_t x = x0; x <= x1; ++x) n += m.walkable(x, y) ? 0u : 1u;
  return n;
}

}  // namespace

TEST_CASE("blocked counts: random rectangles, up to the whole map with its border (> 2^16 cells)") {
  const GridMap m = test::random_map(11, 300, 260, 35, false);
  const BlockedCountTable t = table_of(m);
  REQUIRE(t.width() == 300);
  test::TestRng rng{5};
  for (int k = 0; k < 3000; ++k) {
    std::int32_t x0 = rng.below(302) - 1, x1 = rng.below(302) - 1;
    std::int32_t y0 = rng.below(262) - 1, y1 = rng.below(262) - 1;
    if (x0 > x1) std::swap(x0, x1);
    if (y0 > y1) std::swap(y0, y1);
    CAPTURE(x0);
    CAPTURE(y0);
    CAPTURE(x1);
    CAPTURE(y1);
    REQUIRE(t.blocked_in(x0, y0, x1, y1) == brute_count(m, x0, y0, x1, y1));
  }
}

TEST_CASE("blocked counts: more blocked cells in a rectangle than a 16-bit sum holds") {
  const GridMap m = test::random_map(12, 300, 260, 92, false);
  const BlockedCountTable t = table_of(m);
  const std::uint32_t all = brute_count(m, -1, -1, 300, 260);  // the whole padded map
  REQUIRE(all > 65536u);
  CHECK(t.blocked_in(-1, -1, 300, 260) == all);
  CHECK(t.blocked_in(0, 3, 299, 255) == brute_count(m, 0, 3, 299, 255));
}

TEST_CASE("blocked counts: a row longer than 2^16 cells") {
  GridMap m(70000, 2);
  for (std::int32_t x = 0; x < 70000; x += 3) m.set_cost(x, 0, kBlockedCost);
  const BlockedCountTable t = table_of(m);
  CHECK(t.blocked_in(0, 0, 69999, 0) == brute_count(m, 0, 0, 69999, 0));
  CHECK(t.blocked_in(-1, -1, 70000, 1) == brute_count(m, -1, -1, 70000, 1));
  CHECK(t.blocked_in(5, 1, 69990, 1) == 0u);
}
