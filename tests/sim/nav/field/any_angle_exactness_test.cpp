// AnyAngleField against a frozen copy of the pass as it was before its speed-up (reference/):
// every waypoint, goal index and in-sight bit equal, cell by cell, on street maps with 1 and 4
// goals, for size classes 1 and 2 (class 2 plans on the map shrunk by its clearance), at the
// default range and unbounded.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "benchmark_maps.hpp"
#include "reference_any_angle_field.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"

using namespace swarmfield::sim;

namespace {

/// `count` walkable cells of `g` near fixed fractions of its size (deterministic, spread out).
std::vector<CellCoord> goals_on(const GridMap& g, int count) {
  static constexpr float kAt[4][2] = {{0.5f, 0.5f}, {0.2f, 0.3f}, {0.75f, 0.2f}, {0.3f, 0.8f}};
  std::vector<CellCoord> out;
  for (int i = 0; i < count; ++i) {
    const auto x0 = static_cast<std::int32_t>(kAt[i][0] * static_cast<float>(g.width()));
    const auto y0 = static_cast<std::int32_t>(kAt[i][1] * static_cast<float>(g.height()));
    for (std::int32_t r = 0; r < g.width(); ++r) {  // first walkable cell on growing rings
      bool found = false;
      for (std::int32_t y = y0 - r; y <= y0 + r && !found; ++y)
        for (std::int32_t x = x0 - r; x <= x0 + r && !found; ++x)
          if (g.walkable(x, y)) {
            out.push_back({x, y});
            found = true;
          }
      if (found) break;
    }
  }
  return out;
}

/// Builds `nav`'s fields on `grid` and compares its any-angle field with the reference pass
/// run on the same integration and flow fields; returns the region's cell count.
std::size_t compare(const GridMap& grid, const std::vector<CellCoord>& goals, float range) {
  NavigationFields nav;
  nav.set_any_angle(true);
  nav.set_any_angle_range(range);
  nav.update(grid, goals);
  BlockedCountTable table;
  table.begin(nav.integration());
  (void)table.advance(nav.integration(), UINT64_MAX);
  reference::AnyAngleField ref;
  (void)ref.begin(nav.integration(), goals, range);
  while (!ref.done()) (void)ref.advance(nav.flow(), table, UINT64_MAX);
  const AnyAngleField& a = nav.any_angle();
  REQUIRE(a.done());
  REQUIRE(a.region_cells() == ref.region_cells());
  std::size_t mismatches = 0;
  for (std::int32_t y = 0; y < grid.height(); ++y) {
    for (std::int32_t x = 0; x < grid.width(); ++x) {
      const bool same = a.has_waypoint(x, y) == ref.has_waypoint(x, y) && a.packed(x, y) == ref.packed(x, y) &&
                        a.goal_index(x, y) == ref.goal_index(x, y) &&
                        a.goal_in_sight(x, y) == ref.goal_in_sight(x, y);
      if (!same && mismatches++ < 5) {
        CAPTURE(x);
        CAPTURE(y);
        CHECK(a.packed(x, y) == ref.packed(x, y));
        CHECK(a.goal_in_sight(x, y) == ref.goal_in_sight(x, y));
      }
    }
  }
  CHECK(mismatches == 0);
  return a.region_cells();
}

}  // namespace

TEST_CASE("any-angle exactness: waypoints and sight flags equal the reference pass on street maps") {
  for (const char* name : {"street/Boston_0_1024.map", "street/Paris_1_1024.map", "street/Berlin_0_256.map"}) {
    CAPTURE(std::string(name));
    const GridMap map = test::read_benchmark_map(name);
    // Class 2's planning grid, as NavigationSet makes it.
    NavigationSet set;
    const std::vector<Vec2> one = {map.cell_center(goals_on(map, 1)[0])};
    set.update(map, one, static_cast<SizeClassMask>(size_class_bit(1) | size_class_bit(2)));
    REQUIRE(set.has_class(2));
    const GridMap& grid2 = set.class_grid(2);
    for (const int goal_count : {1, 4}) {
      CAPTURE(goal_count);
      const std::size_t cells1 = compare(map, goals_on(map, goal_count), NavigationFields::kDefaultAnyAngleRange);
      const std::size_t cells2 = compare(grid2, goals_on(grid2, goal_count), NavigationFields::kDefaultAnyAngleRange);
      CHECK(cells1 > 1000);
      CHECK(cells2 > 1000);
    }
    (void)compare(map, goals_on(map, 4), AnyAngleField::kUnboundedRange);
  }
}
