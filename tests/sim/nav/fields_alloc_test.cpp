// Integration, flow and navigation fields and portal routes allocate nothing once warm, time-sliced
// or not.
// Replaces the global operator new with a counting one, which is why this test is an
// executable of its own.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "benchmark_maps.hpp"
#include "allocation_counter.hpp"
#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::boston_256;

namespace {
/// The `k`-th goal of a deterministic tour over walkable cells (a new cell on every call).
CellCoord goal_at(const GridMap& m, int k) {
  CellCoord c{(37 + 53 * k) % m.width(), (101 + 29 * k) % m.height()};
  while (!m.walkable(c)) c.x = (c.x + 1) % m.width();
  return c;
}

}  // namespace

TEST_CASE("the allocation counter sees allocations") {
  const std::size_t before = g_allocations.load();
  auto* v = new std::vector<int>(100);
  const std::size_t after = g_allocations.load();
  delete v;
  CHECK(after - before >= 2);  // the vector object and its buffer
}

TEST_CASE("IntegrationField and FlowField builds allocate nothing once warm") {
  const GridMap m = boston_256();
  IntegrationField in;
  FlowField flow;
  FlowField rows;
  CellCoord goals[2] = {goal_at(m, 0), goal_at(m, 1)};
  in.build(m, goals);  // warm up (sweeps, and the wavefront build_until() uses)
  flow.build(m, in);
  rows.build_rows(in, 0, m.height());
  in.build_until(m, goals, goal_at(m, 99));

  const std::size_t before = g_allocations.load();
  for (int k = 0; k < 20; ++k) {
    goals[0] = goal_at(m, 2 * k);
    goals[1] = goal_at(m, 2 * k + 1);
    in.build(m, goals);
    flow.build(m, in);
    // Sliced: begin + advance, flow in row slices.
    in.begin(m, goals);
    while (!in.advance(3001)) {
    }
    for (std::int32_t y = 0; y < m.height(); y += 16) rows.build_rows(in, y, y + 16);
    in.build_until(m, goals, goal_at(m, 99));
  }
  CHECK(g_allocations.load() - before == 0);
  CHECK(in.reachable_count() > 0);
}

TEST_CASE("NavigationFields: no allocation after the first update, time-sliced or not") {
  const GridMap m = boston_256();
  for (const std::size_t budget : {std::size_t{0}, std::size_t{15000}, std::size_t{1}}) {
    CAPTURE(budget);
    NavigationFields nav;
    nav.set_rebuild_budget(budget);
    CellCoord goal[1] = {goal_at(m, 0)};
    nav.update(m, goal);  // the first build allocates the front and reserves the back pair
    const std::size_t before = g_allocations.load();
    const int updates = budget == 1 ? 3000 : 200;
    for (int t = 1; t <= updates; ++t) {
      goal[0] = goal_at(m, t);  // a new cell on every update
      nav.update(m, goal);
    }
    CHECK(g_allocations.load() - before == 0);
    CHECK(nav.rebuild_count() > (budget == 1 ? 0u : 1u));
  }
}

TEST_CASE("the queue pool grows only when a build needs more than ever before") {
  // A goal on every other cell of every other row: more queued cells at once than the pool's
  // initial size, so the first build grows it (counted), the second does not.
  const GridMap m(512, 512);
  std::vector<CellCoord> goals;
  for (std::int32_t y = 0; y < 512; y += 2)
    for (std::int32_t x = 0; x < 512; x += 2) goals.push_back({x, y});
  IntegrationField in;
  in.set_method(IntegrationField::Method::kWavefront);  // the queue is the wavefront's
  in.reserve(512, 512);
  const std::size_t before_first = g_allocations.load();
  in.build(m, goals);
  CHECK(g_allocations.load() - before_first > 0);
  const std::size_t before_second = g_allocations.load();
  in.build(m, goals);
  CHECK(g_allocations.load() - before_second == 0);
  CHECK(in.raw(1, 1) == kDiagonalStep);
}

TEST_CASE("NavigationSet (any-angle, two classes): no allocation once warm, sampling included") {
  const GridMap m = boston_256();
  for (const std::size_t budget : {std::size_t{0}, std::size_t{15000}}) {
    CAPTURE(budget);
    NavigationSet set;
    set.set_rebuild_budget(budget);
    const SizeClassMask classes = size_class_bit(1) | size_class_bit(2);
    std::vector<Vec2> goals{m.cell_center(goal_at(m, 0)), m.cell_center(goal_at(m, 1))};
    set.update(m, goals, classes);  // the first build allocates fronts, class grid, tables
    goals[0] = m.cell_center(goal_at(m, 2));
    set.update(m, goals, classes);  // and the first sliced build its back pair
    const std::size_t before = g_allocations.load();
    float sum = 0.0f;
    for (int t = 3; t < 203; ++t) {
      goals[t % 2] = m.cell_center(goal_at(m, t));  // a new cell on every update
      set.update(m, goals, classes);
      for (int k = 0; k < 50; ++k) {
        const NavSample s = set.sample(1 + k % 2, {static_cast<float>(k * 5 % 256) + 0.3f, static_cast<float>(k * 3 % 256) + 0.6f});
        sum += s.direction.x;
      }
    }
    CHECK(g_allocations.load() - before == 0);
    CHECK(set.rebuild_count() > 4);
    CHECK(std::isfinite(sum));
  }
}

TEST_CASE("PortalRoutes: a warm build allocates nothing, the goals' entries through their sectors included") {
  const GridMap m = boston_256();
  SectorGraph graph;
  graph.build(m, 32);
  PortalRoutes routes;
  const auto goals_for = [&](int k) { return std::vector<CellCoord>{goal_at(m, 3 * k), goal_at(m, 3 * k + 1), goal_at(m, 3 * k + 2)}; };
  std::vector<std::vector<CellCoord>> goal_sets;
  for (int k = 0; k < 8; ++k) goal_sets.push_back(goals_for(k));
  const auto sliced_builds = [&] {
    std::uint64_t sum = 0;
    for (const std::vector<CellCoord>& goals : goal_sets) {
      routes.begin(graph, m, goals);
      while (!routes.advance(2000)) {
      }
      sum += routes.settled();
    }
    return sum;
  };
  const std::uint64_t warm = sliced_builds();  // every queue at its high-water mark
  const std::size_t before = g_allocations.load();
  const std::uint64_t again = sliced_builds();
  CHECK(g_allocations.load() - before == 0);
  CHECK(again == warm);
  CHECK(again > graph.portal_count());
}
