// Map changes followed locally: after a random series of cost changes (walls added and removed,
// costs changed, on sector borders, sector corners, portal cells and map edges) the clearance,
// the class-2 planning grid, the sector graphs of classes 1 and 2 and the routes over them equal
// those built from scratch on the changed map; HierarchicalFields updates its graph (no whole
// build), rebuilds the routes time-sliced and its sector fields equal a fresh instance's.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "benchmark_maps.hpp"
#include "sector_test_maps.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"
#include "swarmfield/sim/nav/hierarchical/hierarchical_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::TestRng;

namespace {

constexpr std::int32_t kSide = 32;

/// Node ids differ once a sector's portals outgrew their id range, so graphs are compared by
/// cells: per sector the same portal cells in the same order, per node the same edges (target
/// cell and cost, as sorted lists), ids not in use empty.
void require_same_graph(const SectorGraph& a, const SectorGraph& b) {
  REQUIRE(a.sector_count() == b.sector_count());
  REQUIRE(a.portal_count() == b.portal_count());
  REQUIRE(a.edge_count() == b.edge_count());
  std::size_t in_use = 0;
  for (std::uint32_t n = 0; n < a.node_count(); ++n) {
    if (a.node_sector(n) != SectorGraph::kNoSector) {
      ++in_use;
      continue;
    }
    REQUIRE(a.edges(n).empty());
    REQUIRE(a.node_cell(n) == CellCoord{-1, -1});
  }
  REQUIRE(in_use == a.portal_count());
  using Edge = std::tuple<std::int32_t, std::int32_t, std::uint32_t>;
  const auto edges_of = [](const SectorGraph& g, std::uint32_t n) {
    std::vector<Edge> out;
    for (const SectorEdge& e : g.edges(n)) out.emplace_back(g.node_cell(e.to).x, g.node_cell(e.to).y, e.cost);
    std::sort(out.begin(), out.end());
    return out;
  };
  for (std::uint32_t s = 0; s < a.sector_count(); ++s) {
    const std::span<const std::uint32_t> na = a.sector_nodes(s), nb = b.sector_nodes(s);
    REQUIRE(na.size() == nb.size());
    for (std::size_t i = 0; i < na.size(); ++i) {
      REQUIRE(a.node_cell(na[i]) == b.node_cell(nb[i]));
      REQUIRE(a.node_sector(na[i]) == s);
      REQUIRE(edges_of(a, na[i]) == edges_of(b, nb[i]));
    }
  }
}

/// The id in `b` of the node `n` of `a` (same sector, same place in it).
std::uint32_t same_node(const SectorGraph& a, const SectorGraph& b, std::uint32_t n) {
  const std::uint32_t s = a.node_sector(n);
  return b.sector_nodes(s)[n - a.sector_nodes(s).front()];
}

/// Route costs of two graphs of one map agree node for node (ids in use).
void require_same_costs(const SectorGraph& a, const PortalRoutes& ra, const SectorGraph& b, const PortalRoutes& rb) {
  for (std::uint32_t n = 0; n < a.node_count(); ++n) {
    if (a.node_sector(n) == SectorGraph::kNoSector) {
      REQUIRE(ra.node_cost(n) == kUnreachable);
      continue;
    }
    REQUIRE(ra.node_cost(n) == rb.node_cost(same_node(a, b, n)));
  }
}

/// One round of changes of the kind `round` selects, on `m` (graph `g` supplies portal cells).
void change_cells(GridMap& m, const SectorGraph& g, TestRng& rng, int round) {
  const int count = 1 + rng.below(6);
  for (int k = 0; k < count; ++k) {
    CellCoord at{rng.below(m.width()), rng.below(m.height())};
    switch (round % 6) {
      case 0:  // on a vertical or horizontal sector border (either side)
        if (rng.below(2) == 0) {
          at.x = (at.x / kSide) * kSide + (rng.below(2) == 0 ? kSide - 1 : 0);
        } else {
          at.y = (at.y / kSide) * kSide + (rng.below(2) == 0 ? kSide - 1 : 0);
        }
        break;
      case 1:  // a sector corner
        at.x = (at.x / kSide) * kSide + (rng.below(2) == 0 ? kSide - 1 : 0);
        at.y = (at.y / kSide) * kSide + (rng.below(2) == 0 ? kSide - 1 : 0);
        break;
      case 2: {  // a portal cell
        const auto s = static_cast<std::uint32_t>(rng.below(static_cast<std::int32_t>(g.sector_count())));
        if (!g.sector_nodes(s).empty())
          at = g.node_cell(g.sector_nodes(s)[static_cast<std::size_t>(rng.below(static_cast<std::int32_t>(g.sector_nodes(s).size())))]);
        break;
      }
      case 3:  // the map's edge
        at.x = rng.below(2) * (m.width() - 1);
        break;
      default:  // anywhere, sometimes a short wall segment
        if (rng.below(2) == 0) {
          for (int i = 0; i < 6 && m.in_bounds(at.x + i, at.y); ++i) m.set_cost(at.x + i, at.y, kBlockedCost);
        }
        break;
    }
    // Walls added and removed, costs changed.
    const int what = rng.below(3);
    const std::uint8_t cost = what == 0   ? kBlockedCost
                              : what == 1 ? kDefaultCost
                                          : static_cast<std::uint8_t>(2 + rng.below(8));
    m.set_cost(at.x, at.y, cost);
  }
}

/// `rounds` rounds of changes on `m`, each checked against whole builds; with `until_packed`, the
/// rounds go on (checked only when the graph is packed again, see SectorGraph::update()) until
/// the class-1 graph's ids are packed, which must happen within `rounds`. Returns the rounds run.
int run_series(GridMap m, std::uint64_t seed, int rounds, bool until_packed = false) {
  ClearanceMap clearance;
  clearance.build(m);
  GridMap class2;
  update_class_map(m, clearance, 2, class2);
  SectorGraph g1, g2;
  g1.build(m, kSide);
  g2.build(class2, kSide);
  const std::vector<CellCoord> goals = test::walkable_goals(m, seed, 2);
  TestRng rng{seed};
  for (int round = 0; round < rounds; ++round) {
    CAPTURE(round);
    const std::uint32_t since = m.revision(), since2 = class2.revision();
    // Routes before the change, by cell, to check that they follow the renumbering.
    PortalRoutes before;
    before.build(g1, m, goals);
    std::vector<std::pair<CellCoord, std::uint32_t>> old_costs;
    for (std::uint32_t n = 0; n < g1.node_count(); ++n) {
      if (g1.node_sector(n) != SectorGraph::kNoSector) old_costs.push_back({g1.node_cell(n), before.node_cost(n)});
    }
    const auto by_cell = [](const std::pair<CellCoord, std::uint32_t>& a, const std::pair<CellCoord, std::uint32_t>& b) {
      return a.first.y != b.first.y ? a.first.y < b.first.y : a.first.x < b.first.x;
    };
    std::sort(old_costs.begin(), old_costs.end(), by_cell);

    change_cells(m, g1, rng, round);
    std::span<const CellCoord> changed;
    REQUIRE(m.changes_since(since, changed));
    REQUIRE(clearance.update(m, changed));
    REQUIRE(update_class_map_cells(m, clearance, 2, changed, class2));
    const std::size_t ids_before = g1.node_count();
    g1.update(m, changed);
    const bool packed = g1.node_count() < ids_before;  // ids only grow between packings
    std::span<const CellCoord> changed2;
    REQUIRE(class2.changes_since(since2, changed2));
    g2.update(class2, changed2);

    // Every touched sector is recomputed, and not much more (at most itself and 4 neighbours).
    std::vector<std::uint32_t> touched;
    for (const CellCoord c : changed) touched.push_back(g1.sector_of(c));
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (const std::uint32_t s : touched)
      CHECK(std::binary_search(g1.updated_sectors().begin(), g1.updated_sectors().end(), s));
    CHECK(g1.updated_sectors().size() <= 5 * touched.size());
    if (until_packed && !packed) continue;

    ClearanceMap fresh_clearance;
    fresh_clearance.build(m);
    REQUIRE(clearance.values() == fresh_clearance.values());
    GridMap fresh_class2;
    update_class_map(m, fresh_clearance, 2, fresh_class2);
    REQUIRE(class2.costs() == fresh_class2.costs());
    SectorGraph f1, f2;
    f1.build(m, kSide);
    f2.build(fresh_class2, kSide);
    require_same_graph(g1, f1);
    require_same_graph(g2, f2);

    PortalRoutes r1, fr1, r2, fr2;
    r1.build(g1, m, goals);
    fr1.build(f1, m, goals);
    r2.build(g2, class2, goals);
    fr2.build(f2, fresh_class2, goals);
    require_same_costs(g1, r1, f1, fr1);
    require_same_costs(g2, r2, f2, fr2);

    // The old routes follow the new node ids: a portal that stayed keeps its cost, a new one
    // reads kUnreachable.
    before.remap_nodes(g1.node_remap(), g1.node_count());
    REQUIRE(before.node_count() == g1.node_count());
    for (std::uint32_t n = 0; n < g1.node_count(); ++n) {
      if (g1.node_sector(n) == SectorGraph::kNoSector) {
        REQUIRE(before.node_cost(n) == kUnreachable);
        continue;
      }
      const CellCoord c = g1.node_cell(n);
      const auto it = std::lower_bound(old_costs.begin(), old_costs.end(), std::pair{c, 0u}, by_cell);
      const std::uint32_t expect = it != old_costs.end() && it->first == c ? it->second : kUnreachable;
      REQUIRE(before.node_cost(n) == expect);
    }
    if (until_packed) return round + 1;
  }
  REQUIRE_FALSE(until_packed);
  return rounds;
}

}  // namespace

TEST_CASE("map change: clearance, class-2 grid, class 1 and 2 sector graphs and routes equal whole builds (street map)") {
  run_series(test::boston_256(), 7, 36);
}

TEST_CASE("map change: the same on a city with cost lanes") {
  run_series(generate_city({192, 160, 3}), 21, 36);
}

TEST_CASE("map change: after many changes the unused ids are packed away and the graph still equals a whole build") {
  const int rounds = run_series(test::boston_256(), 29, 4000, true);
  MESSAGE("packed after " << rounds << " rounds of changes");
}

TEST_CASE("map change: pack() drops the unused ids, keeps every edge, and its remap follows the cells") {
  GridMap m = test::boston_256();
  SectorGraph g;
  g.build(m, kSide);
  TestRng rng{41};
  for (int round = 0; round < 60; ++round) {  // ids moved to the end, unused ranges left behind
    const std::uint32_t since = m.revision();
    change_cells(m, g, rng, round);
    std::span<const CellCoord> changed;
    REQUIRE(m.changes_since(since, changed));
    g.update(m, changed);
  }
  REQUIRE(g.node_count() > g.portal_count());  // there is something to pack
  const SectorGraph before = g;
  g.pack();
  CHECK(g.node_count() == g.portal_count());
  SectorGraph fresh;
  fresh.build(m, kSide);
  require_same_graph(g, fresh);
  require_same_graph(g, before);
  // Ids are packed sector by sector, like a whole build's.
  for (std::uint32_t n = 0; n < g.node_count(); ++n) REQUIRE(g.node_cell(n) == fresh.node_cell(n));
  REQUIRE(g.node_remap().size() == before.node_count());
  for (std::uint32_t n = 0; n < before.node_count(); ++n) {
    const std::uint32_t to = g.node_remap()[n];
    if (before.node_sector(n) == SectorGraph::kNoSector) {
      REQUIRE(to == SectorGraph::kNoNode);
      continue;
    }
    REQUIRE(to < g.node_count());
    REQUIRE(g.node_cell(to) == before.node_cell(n));
  }
  // Updates go on from the packed graph as before.
  for (int round = 0; round < 12; ++round) {
    const std::uint32_t since = m.revision();
    change_cells(m, g, rng, round);
    std::span<const CellCoord> changed;
    REQUIRE(m.changes_since(since, changed));
    g.update(m, changed);
  }
  fresh.build(m, kSide);
  require_same_graph(g, fresh);
}

TEST_CASE("map change: more changes than the change log holds are followed by the changed blocks, not a whole build") {
  GridMap m = test::boston_256();
  const GridMap original = m;
  HierarchicalFields h;
  h.set_sector_side(kSide);
  h.prepare(m);
  NavigationSet set;
  set.set_field_mode(FieldMode::kHierarchical);
  set.prepare(m, size_class_bit(1) | size_class_bit(2));
  const std::uint32_t since = m.revision();
  REQUIRE(h.graph_builds() == 1);
  REQUIRE(set.hierarchical_fields(2).graph_builds() == 1);
  // A bulk change: a 40 x 24 district toggled between walls and streets until the log has
  // dropped the start (a level script rebuilding a block, say), then left as walls with gaps.
  const std::int32_t x0 = 70, y0 = 100, w = 40, hgt = 24;
  std::size_t set_calls = 0;
  for (int pass = 0; set_calls < GridMap::kChangeLogLimit + 1000; ++pass) {
    for (std::int32_t y = y0; y < y0 + hgt; ++y)
      for (std::int32_t x = x0; x < x0 + w; ++x) {
        const bool wall = (pass % 2 == 0) != ((x + y) % 7 == 0);
        m.set_cost(x, y, wall ? kBlockedCost : kDefaultCost);
        ++set_calls;
      }
  }
  std::span<const CellCoord> logged;
  REQUIRE_FALSE(m.changes_since(since, logged));  // the log no longer reaches back
  std::vector<CellCoord> blocks;
  REQUIRE(m.changed_blocks_since(since, m.cell_count(), blocks));
  // Every changed cell is listed, and only cells of blocks that changed.
  std::set<std::pair<std::int32_t, std::int32_t>> listed;
  for (const CellCoord c : blocks) listed.insert({c.x, c.y});
  CHECK(listed.size() == blocks.size());
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x) {
      if (m.cost(x, y) != original.cost(x, y)) REQUIRE(listed.count({x, y}) == 1);
    }
  for (const CellCoord c : blocks) {
    const std::int32_t bx = c.x / GridMap::kChangeBlockSide * GridMap::kChangeBlockSide;
    const std::int32_t by = c.y / GridMap::kChangeBlockSide * GridMap::kChangeBlockSide;
    REQUIRE(bx + GridMap::kChangeBlockSide > x0);
    REQUIRE(bx < x0 + w);
    REQUIRE(by + GridMap::kChangeBlockSide > y0);
    REQUIRE(by < y0 + hgt);
  }
  std::vector<CellCoord> none;
  CHECK_FALSE(m.changed_blocks_since(since, blocks.size() - 1, none));  // over the limit
  CHECK_FALSE(m.changed_blocks_since(m.revision() + 1, m.cell_count(), none));  // never had it

  h.prepare(m);
  CHECK(h.graph_builds() == 1);  // followed locally
  CHECK(h.graph_updates() == 1);
  SectorGraph fresh;
  fresh.build(m, kSide);
  require_same_graph(h.graph(), fresh);

  set.prepare(m, size_class_bit(1) | size_class_bit(2));
  CHECK(set.hierarchical_fields(1).graph_builds() == 1);
  CHECK(set.hierarchical_fields(2).graph_builds() == 1);
  ClearanceMap fresh_clearance;
  fresh_clearance.build(m);
  REQUIRE(set.clearance().values() == fresh_clearance.values());
  GridMap fresh_class2;
  update_class_map(m, fresh_clearance, 2, fresh_class2);
  REQUIRE(set.class_grid(2).costs() == fresh_class2.costs());
  SectorGraph fresh2;
  fresh2.build(fresh_class2, SectorGraph::kDefaultSectorSide);
  require_same_graph(set.hierarchical_fields(2).graph(), fresh2);
}

TEST_CASE("map change: HierarchicalFields updates its graph, re-routes time-sliced, and its fields equal a fresh build") {
  GridMap m = test::boston_256();
  const std::vector<CellCoord> goals = test::walkable_goals(m, 5, 2);
  HierarchicalFields h;
  h.set_sector_side(kSide);
  h.set_budget(4000);
  const auto occupy_all = [&](HierarchicalFields& f) {
    f.begin_tick();
    for (std::int32_t y = 0; y < m.height(); y += kSide)
      for (std::int32_t x = 0; x < m.width(); x += kSide) f.note_agent({x, y});
  };
  const auto settle = [&](HierarchicalFields& f) {
    for (int t = 0; t < 2000; ++t) {
      occupy_all(f);
      f.update(m, goals);
      bool all_current = !f.route_build_in_progress();
      for (std::uint32_t s = 0; s < f.graph().sector_count() && all_current; ++s) all_current = f.fields().field_current(s);
      if (all_current) return true;
    }
    return false;
  };
  REQUIRE(settle(h));
  REQUIRE(h.graph_builds() == 1);
  TestRng rng{17};
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    const std::uint64_t routes_before = h.route_builds();
    change_cells(m, h.graph(), rng, round);
    // A wall right across a sector as well: routes must go around it.
    const std::int32_t wy = kSide * (1 + round % 6) + 5;
    for (std::int32_t x = 3; x < 60; ++x) m.set_cost(x, wy, kBlockedCost);
    h.prepare(m);
    CHECK(h.graph_builds() == 1);  // followed locally, never rebuilt whole
    CHECK(h.graph_updates() == static_cast<std::uint64_t>(round + 1));
    // The changed sectors' fields are gone at once (their directions could lead into the wall).
    REQUIRE_FALSE(h.graph().updated_sectors().empty());
    for (const std::uint32_t s : h.graph().updated_sectors()) CHECK_FALSE(h.fields().has_field(s));
    // The front routes stay readable, sized for the new graph, while the back build runs.
    CHECK(h.routes().node_count() == h.graph().node_count());
    occupy_all(h);
    h.update(m, goals);
    CHECK(h.route_build_in_progress());
    REQUIRE(settle(h));
    CHECK(h.route_builds() > routes_before);

    HierarchicalFields fresh;
    fresh.set_sector_side(kSide);
    REQUIRE(settle(fresh));
    require_same_graph(h.graph(), fresh.graph());
    require_same_costs(h.graph(), h.routes(), fresh.graph(), fresh.routes());
    for (std::int32_t y = 0; y < m.height(); ++y)
      for (std::int32_t x = 0; x < m.width(); ++x) {
        REQUIRE(h.fields().value({x, y}) == fresh.fields().value({x, y}));
        REQUIRE(h.fields().direction({x, y}) == fresh.fields().direction({x, y}));
      }
  }
}

TEST_CASE("map change: a map changing every tick cannot starve the routes, nor force a build all at once") {
  GridMap m = test::boston_256();
  const std::vector<CellCoord> goals = test::walkable_goals(m, 9, 1);
  HierarchicalFields h;
  h.set_sector_side(kSide);
  h.set_budget(500);  // a route build takes several updates
  h.update(m, goals);
  // Updates a build takes on an unchanged map (a goal change).
  std::uint64_t slices = 0;
  {
    HierarchicalFields plain;
    plain.set_sector_side(kSide);
    plain.set_budget(500);
    plain.update(m, goals);
    const std::vector<CellCoord> other = test::walkable_goals(m, 9, 2);
    const std::uint64_t before = plain.route_builds();
    while (plain.route_builds() == before && slices < 1000) {
      plain.update(m, other);
      ++slices;
    }
    MESSAGE("an unchanged map's route build takes " << slices << " updates");
    REQUIRE(slices >= 3);
  }
  const std::uint64_t builds = h.route_builds();
  TestRng rng{4};
  std::uint64_t most_stale = 0, stale = 0, most_work = 0;
  const int ticks = 12 * static_cast<int>(slices);
  for (int t = 0; t < ticks; ++t) {
    const CellCoord c{rng.below(m.width()), rng.below(m.height())};
    m.set_cost(c.x, c.y, m.walkable(c) ? kBlockedCost : kDefaultCost);
    const std::uint64_t before = h.route_builds();
    h.update(m, goals);
    stale = h.route_builds() == before ? stale + 1 : 0;
    most_stale = std::max(most_stale, stale);
    most_work = std::max(most_work, h.last_update_work());
  }
  CHECK(h.graph_builds() == 1);
  // A build carried across changes still completes: each update gives it at least
  // 1 / kMinRouteShare of the budget although the graph updates spend more than all of it.
  MESSAGE("builds completed over " << ticks << " changing updates: " << h.route_builds() - builds
          << "; most updates without a new build: " << most_stale << "; most work in one update: " << most_work);
  CHECK(h.route_builds() >= builds + 2);
  CHECK(most_stale <= (HierarchicalFields::kMinRouteShare + 1) * slices);
  // Once the map stops changing, the routes settle on exactly a fresh build's costs.
  // (The build under way finishes, then one begun after the last change.)
  for (std::uint64_t t = 0; t < 4 * slices + 4; ++t) h.update(m, goals);
  REQUIRE_FALSE(h.route_build_in_progress());
  HierarchicalFields fresh;
  fresh.set_sector_side(kSide);
  fresh.update(m, goals);
  require_same_graph(h.graph(), fresh.graph());
  require_same_costs(h.graph(), h.routes(), fresh.graph(), fresh.routes());
}

TEST_CASE("map change: a blocker remakes only the portal lists round it; the kept ones steer like lists made afresh") {
  // Two identical HierarchicalFields with every sector occupied and one field at most (the rest
  // steer by their portal lists). After each change `kept` follows it as the server does
  // (graph_updated: the lists of the updated sectors and their neighbours made again, the
  // others renumbered); `remade` then forgets every list. steer() must agree at every cell.
  GridMap m = test::boston_256();
  const std::vector<CellCoord> goals = test::walkable_goals(m, 5, 3);
  HierarchicalFields kept, remade;
  for (HierarchicalFields* f : {&kept, &remade}) {
    f->set_sector_side(kSide);
    f->set_budget(0);
    f->fields().set_max_fields(1);
  }
  const auto tick = [&](HierarchicalFields& f) {
    f.begin_tick();
    for (std::int32_t y = 0; y < m.height(); y += kSide)
      for (std::int32_t x = 0; x < m.width(); x += kSide) f.note_agent({x, y});
    f.update(m, goals);
  };
  for (int t = 0; t < 3; ++t) {
    tick(kept);
    tick(remade);
  }
  const std::size_t sectors = kept.graph().sector_count();
  TestRng rng{23};
  for (int round = 0; round < 8; ++round) {
    CAPTURE(round);
    // One street cell walled (or a wall opened), away from the map's edge.
    CellCoord c{};
    do {
      c = {8 + rng.below(m.width() - 16), 8 + rng.below(m.height() - 16)};
    } while (round % 4 != 3 && !m.walkable(c));
    m.set_cost(c.x, c.y, m.walkable(c) ? kBlockedCost : kDefaultCost);
    const std::uint64_t kept_before = kept.fields().fallback_lists_made();
    const std::uint64_t remade_before = remade.fields().fallback_lists_made();
    kept.prepare(m);
    remade.prepare(m);
    remade.fields().graph_changed();
    const std::size_t updated = kept.graph().updated_sectors().size();
    tick(kept);
    tick(remade);
    const std::uint64_t kept_made = kept.fields().fallback_lists_made() - kept_before;
    CHECK(kept_made <= 5 * updated);
    CHECK(remade.fields().fallback_lists_made() - remade_before >= sectors - 2);
    for (std::int32_t y = 0; y < m.height(); ++y)
      for (std::int32_t x = 0; x < m.width(); ++x) {
        const Vec2 p = m.cell_center({x, y});
        const SectorFields::Steer a = kept.fields().steer(m, p), b = remade.fields().steer(m, p);
        REQUIRE(a.direction.x == b.direction.x);
        REQUIRE(a.direction.y == b.direction.y);
        REQUIRE(a.from_field == b.from_field);
      }
  }
}

TEST_CASE("map change: a route build carried across changes that only open cells ends with a fresh build's costs") {
  // PortalRoutes::follow_update alone: part of a build, cells inside sectors opened (in-sector
  // paths only get cheaper; a cell opened on a sector border can move a portal to the middle of
  // a longer entrance and make graph paths dearer), the build carried over the updated graph and
  // finished; then every node's cost equals a build begun on the new graph. Fails when the
  // updated sectors' nodes are not queued again: the cheaper edges are never relaxed.
  TestRng rng{31};
  for (int round = 0; round < 12; ++round) {
    CAPTURE(round);
    GridMap m = test::boston_256();
    // Walls to open later: street cells off the sector borders.
    std::vector<CellCoord> walls;
    while (walls.size() < 24) {
      const CellCoord c{rng.below(m.width()), rng.below(m.height())};
      const auto inner = [](std::int32_t v) { return v % kSide != 0 && v % kSide != kSide - 1; };
      if (!inner(c.x) || !inner(c.y) || !m.walkable(c)) continue;
      m.set_cost(c.x, c.y, kBlockedCost);
      walls.push_back(c);
    }
    SectorGraph g;
    g.build(m, kSide);
    const std::vector<CellCoord> goals = test::walkable_goals(m, 40 + round, 1 + round % 3);
    PortalRoutes carried;
    carried.begin(g, m, goals);
    (void)carried.advance(200 + 400 * static_cast<std::uint64_t>(round));  // part of the build
    REQUIRE(carried.in_progress());
    for (std::size_t batch = 0; batch < 3; ++batch) {
      const std::uint32_t since = m.revision();
      for (std::size_t k = batch * 8; k < batch * 8 + 8; ++k) m.set_cost(walls[k].x, walls[k].y, kDefaultCost);
      std::span<const CellCoord> changed;
      REQUIRE(m.changes_since(since, changed));
      g.update(m, changed);
      (void)carried.follow_update(g, m, g.node_remap(), g.updated_sectors());
      (void)carried.advance(300);
    }
    (void)carried.advance(0);
    REQUIRE_FALSE(carried.in_progress());
    PortalRoutes fresh;
    fresh.build(g, m, goals);
    require_same_costs(g, carried, g, fresh);
  }
}
