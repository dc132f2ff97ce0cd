// Near fields (hierarchical mode): at every block a window trusts, the value, flow direction,
// any-angle waypoint, sight bit and goal index equal those of the whole-grid field with the
// any-angle layer (NavigationFields over the whole grid, every goal); a lone goal's window
// trusts its whole any-angle region; several goals, a size-class-2 grid, time-sliced builds
// and moving goals; HierarchicalFields and NavigationSet read them.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "benchmark_maps.hpp"
#include "sector_test_maps.hpp"
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"
#include "swarmfield/sim/nav/hierarchical/hierarchical_fields.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/hierarchical/near_fields.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

using namespace swarmfield::sim;

namespace {

struct Agreement {
  std::size_t trusted = 0;        // blocks some window trusts
  std::size_t region = 0;         // blocks of the whole field's any-angle region
  std::size_t mismatches = 0;     // trusted blocks differing from the whole field in anything
};

/// Compares `near` (brought up to date for `goals` on `grid`) with the whole-grid field.
Agreement compare_with_whole(const GridMap& grid, const NearFields& near, const std::vector<CellCoord>& goals) {
  NavigationFields whole;
  whole.set_any_angle(true);
  whole.set_any_angle_range(near.range());
  whole.update(grid, goals);
  const IntegrationField& wi = whole.integration();
  const FlowField& wf = whole.flow();
  const AnyAngleField& wa = whole.any_angle();
  Agreement a;
  for (std::int32_t y = 0; y < grid.height(); ++y) {
    for (std::int32_t x = 0; x < grid.width(); ++x) {
      if (wa.has_waypoint(x, y)) ++a.region;
      std::uint32_t raw = 0;
      const std::int32_t i = near.find({x, y}, raw);
      if (i < 0) continue;
      ++a.trusted;
      const NavigationFields& f = near.window_fields(static_cast<std::size_t>(i));
      const CellCoord o = near.window_origin(static_cast<std::size_t>(i));
      const std::int32_t lx = x - o.x, ly = y - o.y;
      const CellCoord wp = f.any_angle().waypoint(lx, ly);
      const bool same = raw == wi.raw(x, y) && raw == f.integration().raw(lx, ly) && f.flow().at(lx, ly) == wf.at(x, y) &&
                        wa.has_waypoint(x, y) && CellCoord{wp.x + o.x, wp.y + o.y} == wa.waypoint(x, y) &&
                        f.any_angle().goal_in_sight(lx, ly) == wa.goal_in_sight(x, y) &&
                        f.any_angle().goal_index(lx, ly) == wa.goal_index(x, y);
      if (!same) {
        if (a.mismatches < 5) {
          MESSAGE("mismatch at " << x << "," << y << ": value " << raw << " vs " << wi.raw(x, y) << ", flow "
                                 << static_cast<int>(f.flow().at(lx, ly)) << " vs " << static_cast<int>(wf.at(x, y)));
        }
        ++a.mismatches;
      }
    }
  }
  return a;
}

}  // namespace

TEST_CASE("near fields: a lone goal's window is the whole-grid field over its any-angle region") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_512.map");
  const std::vector<CellCoord> goals = test::walkable_goals(m, 3, 1);
  NearFields near;
  near.update(m, goals, 0);
  REQUIRE(near.window_count() == 1);
  CHECK(near.window_fields(0).integration().width() == 2 * (96 + NearFields::kWindowMarginCells) + NearFields::kSnapCells + 1);
  const Agreement a = compare_with_whole(m, near, goals);
  MESSAGE("one goal: " << a.trusted << " trusted blocks of a region of " << a.region);
  CHECK(a.region > 5000);
  CHECK(a.trusted == a.region);
  CHECK(a.mismatches == 0);
  // Priorities: trusted values, far ones after them.
  CHECK(near.priority(goals[0]) == 0);
  CHECK(near.priority({goals[0].x + 200 < m.width() ? goals[0].x + 200 : goals[0].x - 200, goals[0].y}) ==
        NearFields::kFarPriority);
}

TEST_CASE("near fields: several goals, far apart and close together") {
  const GridMap m = test::read_benchmark_map("street/Paris_1_512.map");
  for (const int count : {2, 4, 8}) {
    CAPTURE(count);
    const std::vector<CellCoord> goals = test::walkable_goals(m, 11 + static_cast<std::uint64_t>(count), count);
    NearFields near;
    near.update(m, goals, 0);
    const Agreement a = compare_with_whole(m, near, goals);
    MESSAGE(count << " goals: " << a.trusted << " trusted blocks of a region of " << a.region);
    CHECK(a.mismatches == 0);
    // Goals in each other's windows shrink what is trusted, but most of the region stays.
    CHECK(a.trusted >= a.region * 9 / 10);
    for (const CellCoord g : goals) CHECK(near.priority(g) == 0);
  }
  // Two goals 20 cells apart: both windows see both; everything round them is trusted.
  std::vector<CellCoord> pair = test::walkable_goals(m, 40, 1);
  for (std::int32_t d = 20; d < 60; ++d) {
    const CellCoord c{pair[0].x + d < m.width() ? pair[0].x + d : pair[0].x - d, pair[0].y};
    if (m.walkable(c)) {
      pair.push_back(c);
      break;
    }
  }
  REQUIRE(pair.size() == 2);
  NearFields near;
  near.update(m, pair, 0);
  const Agreement a = compare_with_whole(m, near, pair);
  CHECK(a.mismatches == 0);
  CHECK(a.trusted >= a.region * 9 / 10);
}

TEST_CASE("near fields: a size class 2 grid (brutes)") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_512.map");
  ClearanceMap clearance;
  clearance.build(m);
  GridMap grid;
  update_class_map(m, clearance, 2, grid);
  std::vector<CellCoord> goals;
  for (const CellCoord g : test::walkable_goals(grid, 21, 12)) {
    if (goals.size() < 3) goals.push_back(g);
  }
  NearFields near;
  near.update(grid, goals, 0);
  const Agreement a = compare_with_whole(grid, near, goals);
  MESSAGE("class 2, 3 goals: " << a.trusted << " trusted blocks of a region of " << a.region);
  CHECK(a.mismatches == 0);
  CHECK(a.trusted >= a.region / 2);
  CHECK(a.trusted > 1000);
}

TEST_CASE("near fields: time-sliced builds of a walking goal end where all-at-once ones do") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_512.map");
  std::vector<CellCoord> goals = test::walkable_goals(m, 5, 2);
  NearFields sliced, at_once;
  sliced.update(m, goals, 20000);
  at_once.update(m, goals, 0);
  const std::uint64_t placed = sliced.placement_count();
  // Walk goal 0 one cell a tick along walkable cells for 60 ticks: its window moves (snap
  // squares) while builds are in progress; trusted blocks always agree with the whole field
  // of the goals the front was built for, so only check at the end, after the builds settle.
  std::uint64_t most = 0;
  for (int t = 0; t < 60; ++t) {
    for (const CellCoord d : {CellCoord{1, 0}, CellCoord{0, 1}, CellCoord{-1, 0}, CellCoord{0, -1}}) {
      const CellCoord c{goals[0].x + d.x, goals[0].y + d.y};
      if (m.walkable(c) && (t % 7 != 0 || d.y != 0)) {
        goals[0] = c;
        break;
      }
    }
    const std::uint64_t spent = sliced.update(m, goals, 20000);
    most = std::max(most, spent);
    at_once.update(m, goals, 0);
    // Every front is read at the origin it was built on: its reached cells are walkable grid
    // cells there, and its seeds are where goals were.
    for (std::size_t i = 0; i < sliced.window_count(); ++i) {
      const CellCoord o = sliced.window_origin(i);
      REQUIRE(o.x >= 0);
      const IntegrationField& f = sliced.window_fields(i).integration();
      std::size_t misplaced = 0;
      for (std::int32_t y = 0; y < f.height(); ++y)
        for (std::int32_t x = 0; x < f.width(); ++x) misplaced += f.reachable(x, y) && !m.walkable(o.x + x, o.y + y) ? 1 : 0;
      CHECK(misplaced == 0);
      std::size_t seeds = 0;
      for (const CellCoord s : sliced.window_fields(i).goals()) seeds += s.x >= 0 && m.walkable(s.x + o.x, s.y + o.y) ? 1 : 0;
      CHECK(seeds >= 1);
    }
  }
  for (int t = 0; t < 40; ++t) sliced.update(m, goals, 20000);
  CHECK(sliced.placement_count() > placed);  // the window moved
  MESSAGE("most work in one update: " << most);
  CHECK(most <= 20000 + 2 * 217 * 217 / kLinearCellsPerWorkUnit + 4 * 217);
  const Agreement s = compare_with_whole(m, sliced, goals);
  const Agreement o = compare_with_whole(m, at_once, goals);
  CHECK(s.mismatches == 0);
  CHECK(o.mismatches == 0);
  CHECK(s.trusted == o.trusted);
  CHECK(s.trusted > 5000);
  CHECK(sliced.build_count() > 2);
}

TEST_CASE("near fields: HierarchicalFields and NavigationSet read them") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_512.map");
  const std::vector<CellCoord> goals = test::walkable_goals(m, 9, 1);
  HierarchicalFields h;
  h.update(m, goals);
  CHECK(h.near().window_count() == 1);
  CHECK(h.near().priority(goals[0]) == 0);

  NavigationSet nav;
  nav.set_field_mode(FieldMode::kHierarchical);
  const Vec2 goal = m.cell_center(goals[0]);
  const std::vector<Vec2> positions = {goal};
  nav.note_agents(m, {}, {});
  nav.update(m, positions, size_class_bit(1));
  REQUIRE(nav.hierarchical());
  // A block in sight of the goal 10 cells away on open ground: straight at the goal.
  NavigationFields whole;
  whole.set_any_angle(true);
  whole.update(m, goals);
  int in_sight = 0, checked = 0;
  for (std::int32_t dy = -30; dy <= 30; dy += 3) {
    for (std::int32_t dx = -30; dx <= 30; dx += 3) {
      const CellCoord c{goals[0].x + dx, goals[0].y + dy};
      if (!whole.any_angle().goal_in_sight(c.x, c.y) || (dx == 0 && dy == 0)) continue;
      const Vec2 p = m.cell_center(c);
      const NavSample s = nav.sample(1, p);
      ++checked;
      if (s.status == NavStatus::kGoalInSight && length(s.direction - normalized_or_zero(goal - p)) < 1e-4f) ++in_sight;
      CHECK(nav.priority(1, c) == whole.integration().raw(c.x, c.y));
    }
  }
  REQUIRE(checked > 20);
  CHECK(in_sight == checked);
  CHECK(nav.priority(1, {goals[0].x + 250 < m.width() ? goals[0].x + 250 : goals[0].x - 250, goals[0].y}) ==
        NearFields::kFarPriority);
}

TEST_CASE("near fields: one trust check gives the sample and the priority (NavigationSet::sample with block)") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_512.map");
  const std::vector<CellCoord> goals = test::walkable_goals(m, 21, 3);
  for (const int size_class : {1, 2}) {
    CAPTURE(size_class);
    NavigationSet nav;
    nav.set_field_mode(FieldMode::kHierarchical);
    std::vector<Vec2> positions;
    for (const CellCoord g : goals) positions.push_back(m.cell_center(g));
    nav.note_agents(m, {}, {});
    nav.update(m, positions, size_class_bit(1) | size_class_bit(size_class));
    REQUIRE(nav.hierarchical());
    test::TestRng rng{77};
    int trusted = 0, far = 0;
    for (int i = 0; i < 20000; ++i) {
      // Positions round the goals (most in a window) and anywhere on the map.
      const CellCoord g = goals[static_cast<std::size_t>(i) % goals.size()];
      const Vec2 p = i % 4 == 0 ? Vec2{static_cast<float>(rng.below(m.width() * 64)) / 64.0f,
                                        static_cast<float>(rng.below(m.height() * 64)) / 64.0f}
                                 : Vec2{static_cast<float>(g.x) + static_cast<float>(rng.below(200 * 64)) / 64.0f - 100.0f,
                                        static_cast<float>(g.y) + static_cast<float>(rng.below(200 * 64)) / 64.0f - 100.0f};
      CellCoord block;
      std::uint32_t priority = 0;
      const NavSample both = nav.sample(size_class, p, block, priority);
      const NavSample alone = nav.sample(size_class, p);
      REQUIRE(block == reference_block(p, size_class, m.cell_size()));
      REQUIRE(priority == nav.priority(size_class, block));
      REQUIRE(both.status == alone.status);
      REQUIRE(both.goal == alone.goal);
      REQUIRE(both.direction.x == alone.direction.x);
      REQUIRE(both.direction.y == alone.direction.y);
      REQUIRE(both.target.x == alone.target.x);
      REQUIRE(both.target.y == alone.target.y);
      (priority == NearFields::kFarPriority ? far : trusted) += 1;
    }
    CHECK(trusted > 2000);
    CHECK(far > 2000);
  }
  // Whole-map mode: no block (the caller reads priority()).
  NavigationSet whole;
  whole.set_field_mode(FieldMode::kWhole);
  const std::vector<Vec2> positions = {m.cell_center(goals[0])};
  whole.note_agents(m, {}, {});
  whole.update(m, positions, size_class_bit(1));
  CellCoord block;
  std::uint32_t priority = 0;
  (void)whole.sample(1, m.cell_center(goals[1]), block, priority);
  CHECK(block.x == NavigationSet::kNoBlock);
}
