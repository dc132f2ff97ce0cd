// Reachability over the portal routes (a flood fill inside one sector) against the whole-map
// integration field: the same answer for every cell of maps with closed pockets, walled rooms
// and narrow last sectors.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/route_reachability.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"
#include "sector_test_maps.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::walkable_goals;
using swarmfield::sim::test::walled_rooms;

namespace {

/// Random walls (share `wall_share`) plus closed rectangular rings (pockets no path enters).
GridMap pocketed(std::uint64_t seed, std::int32_t w, std::int32_t h, double wall_share) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> costs(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), kDefaultCost);
  for (auto& c : costs) {
    const double u = static_cast<double>(rng() >> 11) / 9007199254740992.0;
    if (u < wall_share) c = kBlockedCost;
    else if (u < wall_share + 0.1) c = 3;  // costs do not matter for reachability
  }
  GridMap m = GridMap::from_costs(w, h, std::move(costs));
  for (int ring = 0; ring < 6; ++ring) {
    const auto x0 = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(w - 12));
    const auto y0 = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(h - 12));
    const std::int32_t rw = 4 + static_cast<std::int32_t>(rng() % 8), rh = 4 + static_cast<std::int32_t>(rng() % 8);
    for (std::int32_t x = x0; x <= x0 + rw; ++x) {
      m.set_cost(x, y0, kBlockedCost);
      m.set_cost(x, y0 + rh, kBlockedCost);
    }
    for (std::int32_t y = y0; y <= y0 + rh; ++y) {
      m.set_cost(x0, y, kBlockedCost);
      m.set_cost(x0 + rw, y, kBlockedCost);
    }
  }
  return m;
}

/// A sector graph of `m` (sectors of `side` cells, portals every 4) and its routes to `goals`.
struct Routed {
  SectorGraph graph;
  PortalRoutes routes;
  Routed(const GridMap& m, std::span<const CellCoord> goals, std::int32_t side) {
    graph.build(m, side, 4);
    routes.build(graph, m, goals);
  }
};

/// Cells where reaches_goal() and the whole-map field disagree.
std::size_t mismatches(const GridMap& m, std::int32_t side, std::span<const CellCoord> goals,
                       std::size_t* reachable_cells = nullptr) {
  SectorGraph graph;
  graph.build(m, side, 4);
  PortalRoutes routes;
  routes.build(graph, m, goals);
  IntegrationField truth;
  truth.build(m, goals);
  RouteReachability reach, kept;
  std::size_t bad = 0, yes = 0;
  for (std::int32_t y = 0; y < m.height(); ++y) {
    for (std::int32_t x = 0; x < m.width(); ++x) {
      const bool got = reach.reaches_goal(graph, routes, m, {x, y});
      if (got != truth.reachable(x, y)) ++bad;
      // Labels kept per sector (one version): the same answers.
      if (kept.reaches_goal(graph, routes, m, {x, y}, 1) != got) ++bad;
      yes += got ? 1 : 0;
    }
  }
  if (reachable_cells != nullptr) *reachable_cells = yes;
  return bad;
}

}  // namespace

TEST_CASE("route reachability: every cell as the whole-map field says, on pocketed random maps") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    // 70 x 53 with 16-cell sectors: the last column and row of sectors are narrower.
    const GridMap m = pocketed(seed, 70, 53, 0.25 + 0.02 * static_cast<double>(seed % 4));
    const std::vector<CellCoord> goals = walkable_goals(m, seed, 1 + static_cast<int>(seed % 3));
    std::size_t reachable = 0;
    CHECK(mismatches(m, 16, goals, &reachable) == 0);
    CHECK(reachable > 0);
    CHECK(reachable < m.walkable_count());  // the pockets (and walled-in cells) are there
  }
}

TEST_CASE("route reachability: walled rooms, a room whose doors are shut is unreachable") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    GridMap m = walled_rooms(seed, 4, 3, 16);
    // Wall in the room holding cell (8, 8): its four sides.
    for (std::int32_t i = 0; i < 16; ++i) {
      m.set_cost(i, 0, kBlockedCost);
      m.set_cost(i, 15, kBlockedCost);
      m.set_cost(0, i, kBlockedCost);
      m.set_cost(15, i, kBlockedCost);
    }
    const std::vector<CellCoord> goals = {{40, 40}};
    if (!m.walkable(goals[0])) m.set_cost(40, 40, kDefaultCost);
    CHECK(mismatches(m, 16, goals) == 0);
    SectorGraph graph;
    graph.build(m, 16, 4);
    PortalRoutes routes;
    routes.build(graph, m, goals);
    RouteReachability reach;
    if (m.walkable(8, 8)) CHECK_FALSE(reach.reaches_goal(graph, routes, m, {8, 8}));
    CHECK(reach.reaches_goal(graph, routes, m, goals[0]));
  }
}

TEST_CASE("route reachability: off the map, blocked, no goals and routes of another graph are false") {
  const GridMap m = pocketed(3, 40, 40, 0.2);
  const std::vector<CellCoord> goals = walkable_goals(m, 3, 1);
  const Routed r(m, goals, 16);
  const SectorGraph& graph = r.graph;
  const PortalRoutes& routes = r.routes;
  RouteReachability reach;
  CHECK_FALSE(reach.reaches_goal(graph, routes, m, {-1, 0}));
  CHECK_FALSE(reach.reaches_goal(graph, routes, m, {40, 3}));
  PortalRoutes none;
  CHECK_FALSE(reach.reaches_goal(graph, none, m, goals[0]));
  SectorGraph other;
  other.build(m, 8, 4);  // more nodes than the routes know
  CHECK_FALSE(reach.reaches_goal(other, routes, m, goals[0]));
}

TEST_CASE("route reachability: kept labels follow a new version (routes to another goal, a changed map)") {
  GridMap m = pocketed(3, 70, 53, 0.3);
  const std::vector<CellCoord> goals = walkable_goals(m, 3, 1);
  Routed r(m, goals, 16);
  SectorGraph& graph = r.graph;
  PortalRoutes& routes = r.routes;
  RouteReachability reach;
  std::size_t before = 0;
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x) before += reach.reaches_goal(graph, routes, m, {x, y}, 7) ? 1 : 0;
  // Wall the goal in: with a new version the labels are redone and only the goal's cell is left.
  const CellCoord g = goals[0];
  for (std::int32_t dy = -1; dy <= 1; ++dy)
    for (std::int32_t dx = -1; dx <= 1; ++dx)
      if (dx != 0 || dy != 0) m.set_cost(g.x + dx, g.y + dy, kBlockedCost);
  graph.build(m, 16, 4);
  routes.build(graph, m, goals);
  std::size_t now = 0;
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x) {
      now += reach.reaches_goal(graph, routes, m, {x, y}, 8) ? 1 : 0;
    }
  CHECK(before > 100);
  CHECK(now == 1);
  CHECK(reach.memory_bytes() > 0);
}

