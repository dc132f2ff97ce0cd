// Routes over the portal graph against the whole-map integration field: exact where every path
// must cross sector borders at portals (walled sectors with doors), never below the true cost
// and close to it on street maps; a build carried across a graph update queues each node again
// once.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "benchmark_maps.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"
#include "sector_test_maps.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::walkable_goals;
using swarmfield::sim::test::walled_rooms;

TEST_CASE("portal routes: walled rooms with doors give exactly the whole-map costs, nodes and cells") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    constexpr std::int32_t kSide = 16;
    const GridMap m = walled_rooms(seed, 4 + static_cast<std::int32_t>(seed % 3), 3 + static_cast<std::int32_t>(seed % 2), kSide);
    const std::vector<CellCoord> goals = walkable_goals(m, seed * 31, 1 + static_cast<int>(seed % 3));
    SectorGraph g;
    g.build(m, kSide);
    REQUIRE(g.node_count() > 0);
    PortalRoutes routes;
    routes.build(g, m, goals);
    IntegrationField whole;
    whole.build(m, goals);
    for (std::uint32_t n = 0; n < g.node_count(); ++n) {
      const CellCoord c = g.node_cell(n);
      CAPTURE(c.x);
      CAPTURE(c.y);
      REQUIRE(routes.node_cost(n) == whole.raw(c.x, c.y));
    }
    for (std::int32_t y = 0; y < m.height(); ++y)
      for (std::int32_t x = 0; x < m.width(); ++x) {
        CAPTURE(x);
        CAPTURE(y);
        REQUIRE(routes.cost_at(g, m, {x, y}) == whole.raw(x, y));
      }
  }
}

TEST_CASE("portal routes: on street maps routes are real paths, never below the true cost, within 3% on average") {
  for (const char* name : {"street/Boston_0_256.map", "street/Paris_1_512.map", "street/Berlin_0_256.map"}) {
    CAPTURE(name);
    const GridMap m = test::read_benchmark_map(name);
    for (const int goal_count : {1, 4}) {
      CAPTURE(goal_count);
      const std::vector<CellCoord> goals = walkable_goals(m, 77, goal_count);
      SectorGraph g;
      g.build(m, 32, 8);  // small sectors: many border crossings on these small maps
      PortalRoutes routes;
      routes.build(g, m, goals);
      IntegrationField whole;
      whole.build(m, goals);
      double sum = 0.0;
      std::size_t count = 0;
      for (std::uint32_t n = 0; n < g.node_count(); ++n) {
        const CellCoord c = g.node_cell(n);
        const std::uint32_t truth = whole.raw(c.x, c.y);
        CHECK((routes.node_cost(n) == kUnreachable) == (truth == kUnreachable));
        if (truth == kUnreachable || truth == 0) continue;
        REQUIRE(routes.node_cost(n) >= truth);
        sum += static_cast<double>(routes.node_cost(n)) / truth;
        ++count;
      }
      REQUIRE(count > 100);
      MESSAGE(std::string(name) << " goals " << goal_count << ": nodes " << sum / static_cast<double>(count));
      CHECK(sum / static_cast<double>(count) <= 1.03);
      // Cells: the cost through the cell's own sector (what a sector field would hold).
      test::TestRng rng{9};
      double cell_sum = 0.0;
      int cells = 0;
      while (cells < 300) {
        const CellCoord c{rng.below(m.width()), rng.below(m.height())};
        const std::uint32_t truth = whole.raw(c.x, c.y);
        if (truth == kUnreachable || truth == 0) continue;
        const std::uint32_t via = routes.cost_at(g, m, c);
        REQUIRE(via >= truth);
        cell_sum += static_cast<double>(via) / truth;
        ++cells;
      }
      MESSAGE(std::string(name) << " goals " << goal_count << ": cells " << cell_sum / cells);
      CHECK(cell_sum / cells <= 1.03);
    }
  }
}

TEST_CASE("portal routes: a build carried across an update of two neighbouring sectors queues each node again once") {
  // follow_update() queues the updated sectors' nodes and the nodes across their borders; a
  // node on the border between two updated sectors is both, and was queued (and charged) twice.
  // The work it returns is checked against the distinct nodes it must queue, and the carried
  // build against a fresh one (the change only opens cells, so they agree).
  constexpr std::int32_t kSide = 32;
  int cases = 0;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    GridMap m = test::boston_256();
    SectorGraph g;
    g.build(m, kSide);
    const CellCoord goal = walkable_goals(m, seed, 1)[0];
    const std::uint32_t s = g.sector_of(goal);
    const std::uint32_t t = static_cast<std::int32_t>(s) % g.sectors_x() + 1 < g.sectors_x() ? s + 1 : s - 1;
    // One blocked cell off the borders of each of the two sectors opens (a sector without one:
    // next seed).
    std::vector<CellCoord> changed;
    const auto find_one = [&](std::uint32_t sector) {
      const SectorGraph::Rect r = g.sector_rect(sector);
      for (std::int32_t y = r.y0 + 1; y < r.y0 + r.h - 1; ++y)
        for (std::int32_t x = r.x0 + 1; x < r.x0 + r.w - 1; ++x) {
          if (m.walkable({x, y})) continue;
          changed.push_back({x, y});
          return true;
        }
      return false;
    };
    if (!find_one(s) || !find_one(t)) continue;
    ++cases;
    PortalRoutes routes;
    const std::vector<CellCoord> goals{goal};
    routes.begin(g, m, goals);  // the goal's sector portals hold their costs, nothing settled
    REQUIRE(routes.in_progress());
    for (const CellCoord c : changed) m.set_cost(c.x, c.y, kDefaultCost);
    g.update(m, changed);
    const std::span<const std::uint32_t> updated = g.updated_sectors();
    REQUIRE(std::binary_search(updated.begin(), updated.end(), s));
    REQUIRE(std::binary_search(updated.begin(), updated.end(), t));
    const std::uint64_t work = routes.follow_update(g, m, g.node_remap(), updated);
    // The nodes it must queue: those of the updated sectors and those across their borders,
    // each once, if reached.
    std::set<std::uint32_t> queued;
    for (const std::uint32_t sector : updated)
      for (const std::uint32_t u : g.sector_nodes(sector)) {
        queued.insert(u);
        for (const SectorEdge& e : g.edges(u)) queued.insert(e.to);
      }
    std::uint64_t expected = 0;
    std::size_t on_shared_border = 0;
    for (const std::uint32_t u : queued) {
      if (routes.node_cost(u) == kUnreachable) continue;
      expected += 1 + PortalRoutes::kWorkUnitsPerEdge * g.edges(u).size();
      for (const SectorEdge& e : g.edges(u)) {
        const std::uint32_t a = g.node_sector(u), b = g.node_sector(e.to);
        on_shared_border += (a == s && b == t) || (a == t && b == s) ? 1 : 0;
      }
    }
    REQUIRE(on_shared_border > 0);  // the case in question occurs
    CHECK(work == expected);
    REQUIRE(routes.advance(0));
    PortalRoutes fresh;
    fresh.build(g, m, goals);
    for (std::uint32_t n = 0; n < g.node_count(); ++n) REQUIRE(routes.node_cost(n) == fresh.node_cost(n));
  }
  CHECK(cases >= 4);
}
