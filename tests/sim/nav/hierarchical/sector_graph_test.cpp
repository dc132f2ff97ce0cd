// Sectors, portals and the portal graph: the same graph after an update of the touched sectors
// as after a whole build, and degenerate maps. (Routes over the graph: portal_routes_test.cpp.)
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include "benchmark_maps.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;

namespace {

/// The graph's nodes and edges as sets of cells and costs (node ids are not stable).
std::set<std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::uint32_t>> edge_set(const SectorGraph& g) {
  std::set<std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::uint32_t>> out;
  for (std::uint32_t n = 0; n < g.node_count(); ++n)
    for (const SectorEdge& e : g.edges(n))
      out.insert({g.node_cell(n).x, g.node_cell(n).y, g.node_cell(e.to).x, g.node_cell(e.to).y, e.cost});
  return out;
}

}  // namespace

TEST_CASE("sector graph: an update of the touched sectors gives the graph of a whole build") {
  GridMap m = test::boston_256();
  SectorGraph g;
  g.build(m, 32);
  test::TestRng rng{3};
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    // A few cells flipped: walls appear on streets and open up in blocks, sometimes on borders.
    std::vector<CellCoord> changed;
    for (int k = 0; k < 1 + round; ++k) {
      const CellCoord c{rng.below(m.width()), rng.below(m.height())};
      const bool border = round % 2 == 0;
      const CellCoord at = border ? CellCoord{(c.x / 32) * 32 + 31, c.y} : c;
      m.set_cost(at.x, at.y, m.walkable(at) ? kBlockedCost : kDefaultCost);
      changed.push_back(at);
    }
    const std::size_t recomputed = g.update(m, changed);
    CHECK(recomputed <= 5 * changed.size());
    SectorGraph fresh;
    fresh.build(m, 32);
    REQUIRE(g.portal_count() == fresh.portal_count());
    CHECK(edge_set(g) == edge_set(fresh));
  }
}

TEST_CASE("sector graph: degenerate maps") {
  SectorGraph g;
  g.build(GridMap(5, 3), 4);  // a sector narrower than the side at the east and south edges
  CHECK(g.sector_count() == 2);
  PortalRoutes routes;
  const std::vector<CellCoord> goals{{4, 2}};
  routes.build(g, GridMap(5, 3), goals);
  IntegrationField whole;
  whole.build(GridMap(5, 3), goals);
  for (std::int32_t y = 0; y < 3; ++y)
    for (std::int32_t x = 0; x < 5; ++x) CHECK(routes.cost_at(g, GridMap(5, 3), {x, y}) >= whole.raw(x, y));
  g.build(GridMap(0, 0), 4);
  CHECK(g.node_count() == 0);
  CHECK(g.sector_count() == 0);
}
