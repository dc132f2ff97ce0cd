// NavigationFields: rebuild only when goal cells or the map revision change; time-sliced
// rebuilds behind a complete front pair.
#include <doctest/doctest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "benchmark_maps.hpp"
#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/worker_pool.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::boston_256;
using swarmfield::sim::test::ascii;

TEST_CASE("navigation: rebuilds on goal cell change, never for a move inside the cell") {
  const GridMap m(20, 20);
  NavigationFields nav;
  CHECK(nav.rebuild_count() == 0);
  const std::vector<CellCoord> g1{m.world_to_cell({5.1f, 5.1f})};
  CHECK(nav.update(m, g1));
  CHECK(nav.rebuild_count() == 1);
  CHECK(nav.integration().raw(5, 5) == 0);
  CHECK(nav.flow().at(6, 5) == FlowDirection::kW);
  // Same cell, different position inside it.
  const std::vector<CellCoord> g1b{m.world_to_cell({5.9f, 5.4f})};
  CHECK_FALSE(nav.update(m, g1b));
  CHECK(nav.rebuild_count() == 1);
  // Another cell.
  const std::vector<CellCoord> g2{m.world_to_cell({6.0f, 5.4f})};
  CHECK(nav.update(m, g2));
  CHECK(nav.rebuild_count() == 2);
  CHECK(nav.integration().raw(6, 5) == 0);
  CHECK(nav.goals().size() == 1);
  CHECK(nav.goals()[0] == CellCoord{6, 5});
}

TEST_CASE("navigation: goals compare as a sequence") {
  const GridMap m(10, 10);
  NavigationFields nav;
  CHECK(nav.update(m, std::vector<CellCoord>{{1, 1}, {8, 8}}));
  CHECK_FALSE(nav.update(m, std::vector<CellCoord>{{1, 1}, {8, 8}}));
  CHECK(nav.update(m, std::vector<CellCoord>{{8, 8}, {1, 1}}));  // order changed
  CHECK(nav.update(m, std::vector<CellCoord>{{8, 8}}));          // one player left
  CHECK(nav.update(m, std::vector<CellCoord>{}));                // nobody
  CHECK_FALSE(nav.update(m, std::vector<CellCoord>{}));
  CHECK(nav.rebuild_count() == 4);
}

TEST_CASE("navigation: rebuilds on a map revision change, not on a no-op set_cost") {
  GridMap m(10, 10);
  NavigationFields nav;
  const std::vector<CellCoord> g{{0, 0}};
  nav.update(m, g);
  m.set_cost(3, 3, kDefaultCost);  // unchanged value: same revision
  CHECK_FALSE(nav.update(m, g));
  m.set_cost(3, 3, kBlockedCost);
  CHECK(nav.update(m, g));
  CHECK_FALSE(nav.integration().reachable(3, 3));
  CHECK(nav.rebuild_count() == 2);
  nav.invalidate();
  CHECK(nav.update(m, g));
  CHECK(nav.rebuild_count() == 3);
  const GridMap bigger(12, 10);
  CHECK(nav.update(bigger, g));  // another size
  CHECK(nav.integration().width() == 12);
}

TEST_CASE("navigation: C5 player alternating between two cells rebuilds once per change") {
  const GridMap m = ascii(R"(
##########
#........#
#.######.#
#A######P#
#.######.#
#........#
##########
)");
  NavigationFields nav;
  // 30 Hz for 6 s; the player switches between (8,2) and (8,4) every 0.5 s (15 ticks) and
  // jitters inside the cell between switches.
  std::uint64_t changes = 0;
  CellCoord last{-1, -1};
  for (int tick = 0; tick < 180; ++tick) {
    const bool upper = (tick / 15) % 2 == 0;
    const float jitter = 0.1f + 0.05f * static_cast<float>(tick % 7);
    const Vec2 player{8.0f + jitter, (upper ? 2.0f : 4.0f) + jitter};
    const CellCoord cell = m.world_to_cell(player);
    if (!(cell == last)) ++changes;
    last = cell;
    const std::vector<CellCoord> goals{cell};
    nav.update(m, goals);
  }
  CHECK(changes == 12);
  CHECK(nav.rebuild_count() == changes);
}

// ---- time-sliced rebuilds ----------------------------------------------------------------------

namespace {
/// The fields a budget-0 NavigationFields holds for these inputs.
struct Expected {
  IntegrationField integration;
  FlowField flow;
};
Expected expected(const GridMap& m, std::span<const CellCoord> goals) {
  Expected e;
  e.integration.build(m, goals);
  e.flow.build(m, e.integration);
  return e;
}

bool same_fields(const NavigationFields& nav, const Expected& e) {
  return nav.integration().values() == e.integration.values() && nav.flow().directions() == e.flow.directions() &&
         nav.integration().reachable_count() == e.integration.reachable_count();
}

/// Work units of one full rebuild (integration work + flow rows), for budget arithmetic.
std::uint64_t rebuild_cost(const GridMap& m, std::span<const CellCoord> goals) {
  IntegrationField f;
  f.build(m, goals);
  const std::uint64_t row = linear_work_units(static_cast<std::uint64_t>(m.width()));
  return f.work_units() + row * static_cast<std::uint64_t>(m.height());
}

/// A walk of `n` distinct walkable cells on `m` starting near `start`, one cell per step
/// (each differs from all earlier ones, so a goal there never equals an earlier front's).
std::vector<CellCoord> walk(const GridMap& m, CellCoord start, std::size_t n) {
  std::vector<CellCoord> cells;
  std::vector<bool> seen(m.cell_count(), false);
  CellCoord c = start;
  while (!m.walkable(c)) ++c.x;
  while (cells.size() < n) {
    cells.push_back(c);
    seen[m.index(c.x, c.y)] = true;
    bool moved = false;
    for (const CellCoord o : kDirectionOffsets) {
      const CellCoord next{c.x + o.x, c.y + o.y};
      if (m.walkable(next) && !seen[m.index(next.x, next.y)]) {
        c = next;
        moved = true;
        break;
      }
    }
    REQUIRE(moved);
  }
  return cells;
}

}  // namespace

TEST_CASE("navigation sliced: the first build runs at once; later ones keep the old front until the swap") {
  const GridMap m = boston_256();
  NavigationFields nav;
  nav.set_rebuild_budget(20000);
  CHECK(nav.rebuild_budget() == 20000);
  const std::vector<CellCoord> a{{128, 128}};
  REQUIRE(m.walkable(a[0]));
  CHECK(nav.update(m, a));  // no front yet: all at once, budget or not
  CHECK(nav.rebuild_count() == 1);
  CHECK(nav.builds_started() == 1);
  CHECK_FALSE(nav.rebuild_in_progress());
  CHECK_FALSE(nav.front_stale());
  const Expected ea = expected(m, a);
  CHECK(same_fields(nav, ea));

  const IntegrationField* integration_address = &nav.integration();
  const FlowField* flow_address = &nav.flow();
  const std::vector<CellCoord> b{{129, 128}};
  REQUIRE(m.walkable(b[0]));
  const Expected eb = expected(m, b);
  int updates = 0;
  bool swapped = false;
  while (!swapped) {
    swapped = nav.update(m, b);
    ++updates;
    REQUIRE(updates < 1000);
    CHECK(nav.last_update_work() < 20000 + linear_work_units(256 * 256) + linear_work_units(256));
    if (!swapped) {
      // Agents read the previous complete field until the new one is complete.
      CHECK(same_fields(nav, ea));
      CHECK(nav.front_stale());
      CHECK(nav.rebuild_in_progress());
      CHECK(nav.goals()[0] == a[0]);
      CHECK(nav.rebuild_count() == 1);
    }
  }
  // The build's cost spread over budgets (the last update of a phase may overshoot a little).
  const std::uint64_t cost = rebuild_cost(m, b);
  CAPTURE(cost);
  CHECK(updates >= static_cast<int>((cost + 19999) / 20000) - 1);
  CHECK(updates <= static_cast<int>((cost + 19999) / 20000));
  CHECK(updates >= 3);  // really spread over several updates
  CHECK(same_fields(nav, eb));
  CHECK(nav.rebuild_count() == 2);
  CHECK(nav.builds_started() == 2);
  CHECK_FALSE(nav.front_stale());
  CHECK_FALSE(nav.rebuild_in_progress());
  CHECK(nav.goals()[0] == b[0]);
  // The swap is by contents: the same objects, new values.
  CHECK(&nav.integration() == integration_address);
  CHECK(&nav.flow() == flow_address);
  // Same inputs again: nothing to do.
  CHECK_FALSE(nav.update(m, b));
  CHECK(nav.last_update_work() == 0);
}

TEST_CASE("navigation sliced: any budget gives exactly the all-at-once fields") {
  const GridMap m = boston_256();
  const std::vector<CellCoord> first{{30, 30}};
  const std::vector<CellCoord> second{{200, 180}, {40, 220}};
  const Expected e2 = expected(m, second);
  for (const std::size_t budget : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{100000000}}) {
    CAPTURE(budget);
    NavigationFields nav;
    nav.set_rebuild_budget(budget);
    nav.update(m, first);
    std::size_t updates = 0;
    while (!nav.update(m, second)) REQUIRE(++updates < 1000000);
    CHECK(same_fields(nav, e2));
    CHECK(nav.rebuild_count() == 2);
  }
}

TEST_CASE("navigation sliced: the player changing cell on every update still gets rebuilds (progress)") {
  const GridMap m = boston_256();
  const std::vector<CellCoord> path = walk(m, {60, 60}, 120);
  // With 20000 units per update a build here needs several updates.
  constexpr std::size_t kBudget = 20000;
  std::uint64_t max_cost = 0;
  for (const CellCoord c : path) {
    const CellCoord g[1] = {c};
    max_cost = std::max(max_cost, rebuild_cost(m, g));
  }
  const std::uint64_t build_updates = (max_cost + kBudget - 1) / kBudget + 1;  // T of the header
  CAPTURE(max_cost);
  REQUIRE(build_updates >= 4);
  NavigationFields nav;
  nav.set_rebuild_budget(kBudget);
  NavigationFields twin;  // same inputs and budget: same results (determinism)
  twin.set_rebuild_budget(kBudget);
  std::uint64_t last_completion = 0;
  std::uint64_t max_gap = 0;
  std::uint64_t max_lag = 0;
  for (std::size_t t = 0; t < path.size(); ++t) {
    CAPTURE(t);
    const CellCoord goal[1] = {path[t]};
    const bool swapped = nav.update(m, goal);
    CHECK(twin.update(m, goal) == swapped);
    if (swapped) {
      max_gap = std::max<std::uint64_t>(max_gap, t - last_completion);
      last_completion = t;
      // The new front is the field of an earlier goal of the walk: how many updates ago?
      const auto it = std::find(path.begin(), path.end(), nav.goals()[0]);
      REQUIRE(it != path.end());
      max_lag = std::max<std::uint64_t>(max_lag, t - static_cast<std::size_t>(it - path.begin()));
    }
    // The goal moves on every update, so no build is ever abandoned.
    CHECK(nav.builds_started() == nav.rebuild_count() + (nav.rebuild_in_progress() ? 1 : 0));
    CHECK(nav.front_stale() == (t > 0));
  }
  CHECK(nav.integration().values() == twin.integration().values());
  CHECK(nav.flow().directions() == twin.flow().directions());
  CHECK(nav.rebuild_count() == twin.rebuild_count());
  CHECK(nav.builds_started() == twin.builds_started());
  // Documented: a build completes within T = ceil(cost / budget) + 1 updates of its start and
  // the next starts at once, so completions are at most T apart; the front is never older
  // than 2T updates.
  CHECK(max_gap <= build_updates);
  CHECK(max_lag <= 2 * build_updates);
  CHECK(nav.rebuild_count() >= 1 + (path.size() - 1) / build_updates);
  // Once the player stops, the front catches up within two build durations.
  const CellCoord stop[1] = {path.back()};
  for (std::uint64_t k = 0; k < 2 * build_updates && nav.front_stale(); ++k) nav.update(m, stop);
  CHECK_FALSE(nav.front_stale());
  CHECK(same_fields(nav, expected(m, stop)));
}

TEST_CASE("navigation sliced: stepping back to the front's cell abandons the build") {
  const GridMap m(60, 60);
  NavigationFields nav;
  nav.set_rebuild_budget(500);
  const std::vector<CellCoord> a{{10, 10}};
  const std::vector<CellCoord> b{{11, 10}};
  nav.update(m, a);
  CHECK_FALSE(nav.update(m, b));
  CHECK(nav.rebuild_in_progress());
  CHECK(nav.front_stale());
  CHECK_FALSE(nav.update(m, a));  // back where the front was built: nothing to build
  CHECK_FALSE(nav.rebuild_in_progress());
  CHECK_FALSE(nav.front_stale());
  CHECK(nav.last_update_work() == 0);
  CHECK(nav.rebuild_count() == 1);
  CHECK(nav.builds_started() == 2);  // one abandoned
  CHECK(same_fields(nav, expected(m, a)));
}

TEST_CASE("navigation sliced: a map change during a build is picked up by the next build") {
  GridMap m(80, 60);
  NavigationFields nav;
  nav.set_rebuild_budget(1500);
  const std::vector<CellCoord> g{{5, 5}};
  nav.update(m, g);
  m.set_cost(40, 30, kBlockedCost);  // revision change: a build starts
  const GridMap snapshot1 = m;
  CHECK_FALSE(nav.update(m, g));
  CHECK(nav.rebuild_in_progress());
  for (std::int32_t y = 0; y < 59; ++y) m.set_cost(50, y, kBlockedCost);  // another change mid-build
  bool swapped = false;
  for (int k = 0; k < 100 && !swapped; ++k) swapped = nav.update(m, g);
  REQUIRE(swapped);
  // The first completed build is the map as it was when the build started...
  CHECK(same_fields(nav, expected(snapshot1, g)));
  CHECK(nav.front_stale());
  CHECK(nav.rebuild_in_progress());  // ...and the next one (current map) started right away.
  swapped = false;
  for (int k = 0; k < 100 && !swapped; ++k) swapped = nav.update(m, g);
  REQUIRE(swapped);
  CHECK(same_fields(nav, expected(m, g)));
  CHECK_FALSE(nav.front_stale());
  CHECK(nav.rebuild_count() == 3);
}

TEST_CASE("navigation sliced: map size change and invalidate() rebuild at once, abandoning a build") {
  const GridMap m(50, 50);
  NavigationFields nav;
  nav.set_rebuild_budget(100);
  const std::vector<CellCoord> a{{1, 1}};
  const std::vector<CellCoord> b{{2, 1}};
  nav.update(m, a);
  nav.update(m, b);
  REQUIRE(nav.rebuild_in_progress());
  nav.invalidate();
  CHECK(nav.update(m, b));
  CHECK_FALSE(nav.rebuild_in_progress());
  CHECK(same_fields(nav, expected(m, b)));
  nav.update(m, a);
  REQUIRE(nav.rebuild_in_progress());
  const GridMap bigger(70, 40);
  CHECK(nav.update(bigger, a));
  CHECK(nav.integration().width() == 70);
  CHECK(same_fields(nav, expected(bigger, a)));
  CHECK(nav.rebuild_count() == 3);
  CHECK(nav.builds_started() == 5);
  // Budget back to 0: the all-at-once behaviour, abandoning a build in progress.
  nav.update(bigger, b);
  REQUIRE(nav.rebuild_in_progress());
  nav.set_rebuild_budget(0);
  const std::vector<CellCoord> c{{3, 3}};
  CHECK(nav.update(bigger, c));
  CHECK_FALSE(nav.rebuild_in_progress());
  CHECK(same_fields(nav, expected(bigger, c)));
}

TEST_CASE("navigation sliced: empty goals and an empty map") {
  const GridMap m(30, 30);
  NavigationFields nav;
  nav.set_rebuild_budget(50);
  nav.update(m, std::vector<CellCoord>{{4, 4}});
  const std::vector<CellCoord> none;
  int k = 0;
  while (!nav.update(m, none)) REQUIRE(++k < 1000);
  CHECK(nav.integration().reachable_count() == 0);
  CHECK(nav.flow().at(5, 5) == FlowDirection::kNone);
  NavigationFields empty;
  empty.set_rebuild_budget(50);
  CHECK(empty.update(GridMap{}, none));
  CHECK(empty.integration().values().empty());
  CHECK(empty.update(GridMap{}, std::vector<CellCoord>{{0, 0}}));  // 0 x 0: nothing to slice
}

TEST_CASE("navigation: a worker pool splits the linear passes without changing any value") {
  const GridMap city = generate_city({200, 150, 3});  // costs other than 1: the chunked search
  const GridMap boston = boston_256();                 // unit costs: the ring search
  for (const GridMap* m : {&city, &boston}) {
    std::vector<CellCoord> goals;
    for (std::int32_t x = m->width() / 2; goals.size() < 2 && x < m->width(); ++x) {
      if (m->walkable({x, m->height() / 2})) goals.push_back({x, m->height() / 2});
      if (m->walkable({x, m->height() / 3})) goals.push_back({x, m->height() / 3});
    }
    REQUIRE(!goals.empty());
    NavigationFields alone;
    alone.update(*m, goals);
    for (std::size_t threads : {2u, 3u}) {
      CAPTURE(threads);
      WorkerPool pool(threads);
      NavigationFields shared;
      shared.set_worker_pool(&pool);
      shared.update(*m, goals);
      CHECK(shared.integration().values() == alone.integration().values());
      CHECK(shared.integration().reachable_count() == alone.integration().reachable_count());
      CHECK(shared.integration().work_units() == alone.integration().work_units());
      CHECK(shared.flow().directions() == alone.flow().directions());
      // A second goal set through the same pool: rebuilt, again identical to one thread.
      const std::vector<CellCoord> other(goals.begin(), goals.begin() + 1);
      alone.update(*m, other);
      shared.update(*m, other);
      CHECK(shared.flow().directions() == alone.flow().directions());
      alone.update(*m, goals);
    }
  }
}
