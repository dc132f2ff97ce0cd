// Per-sector fields (hierarchical navigation, layers 3 and 4) against the whole-map field: exact
// on walled rooms, between the true cost and the portal estimate on street maps, walkers that
// reach the goal through fields built on demand (paths within 3% of the octile optimum on 4096
// maps tiled from MovingAI street maps), the budget with its portal fallback, and the cache.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "benchmark_maps.hpp"
#include "sector_test_maps.hpp"
#include "swarmfield/sim/map/tiled_map.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/hierarchical/hierarchical_fields.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_fields.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::walkable_goals;

namespace {

struct Hier {
  SectorGraph graph;
  PortalRoutes routes;
  SectorFields fields;
  Hier(const GridMap& m, std::span<const CellCoord> goals, std::int32_t side) {
    graph.build(m, side);
    routes.build(graph, m, goals);
    fields.set_routes(graph, routes);
  }
};

/// One walkable cell per sector of `g` ({-1, -1} for a sector without any): where the tests
/// put a sector's agent.
std::vector<CellCoord> first_walkable_cells(const GridMap& m, const SectorGraph& g) {
  std::vector<CellCoord> cell_of(g.sector_count(), CellCoord{-1, -1});
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x)
      if (m.walkable(x, y) && cell_of[g.sector_of({x, y})].x < 0) cell_of[g.sector_of({x, y})] = {x, y};
  return cell_of;
}

/// Requires steer() of `a` and `b` to agree exactly at every walkable cell of the sectors where
/// `include(s)` holds and neither has a field (the portal fallback); returns the cells compared.
template <class Include>
std::size_t require_same_fallback(const GridMap& m, const SectorGraph& g, const SectorFields& a, const SectorFields& b,
                                  Include&& include) {
  std::size_t compared = 0;
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x) {
      const std::uint32_t s = g.sector_of({x, y});
      if (!include(s) || a.has_field(s) || b.has_field(s) || !m.walkable(x, y)) continue;
      const Vec2 p = m.cell_center({x, y});
      const SectorFields::Steer sa = a.steer(m, p), sb = b.steer(m, p);
      REQUIRE(sa.direction.x == sb.direction.x);
      REQUIRE(sa.direction.y == sb.direction.y);
      ++compared;
    }
  return compared;
}

std::uint32_t step_cost(const GridMap& m, CellCoord to, bool diagonal) {
  return (diagonal ? kDiagonalStep : kOrthogonalStep) * m.cost(to.x, to.y);
}

/// Walkers moving one cell per tick along the sector fields (begin_tick, note_agent per walker,
/// then `update()`: SectorFields::update with a budget, or HierarchicalFields::update). A walker in a sector without a field takes the step closest to
/// steer()'s direction that is legal. Stops when every walker is on a goal (value 0) or after
/// `max_ticks`. Walkers on a goal stay (and count as done) until their cell is no goal any more.
struct Walkers {
  std::vector<CellCoord> at;
  std::vector<std::uint64_t> cost;
  std::vector<bool> done;
  std::uint64_t fallback_steps = 0;
  std::size_t most_pending = 0;
  std::size_t most_fields = 0;
  int ticks = 0;

  bool run(const GridMap& m, SectorFields& f, std::uint64_t budget, int max_ticks) {
    return run_with(m, f, [&] { f.update(m, budget); }, max_ticks);
  }
  template <typename Update>
  bool run_with(const GridMap& m, SectorFields& f, Update&& update, int max_ticks) {
    cost.assign(at.size(), 0);
    done.assign(at.size(), false);
    for (ticks = 0; ticks < max_ticks; ++ticks) {
      f.begin_tick();
      for (const CellCoord c : at) f.note_agent(c);
      update();
      most_pending = std::max(most_pending, f.pending_count());
      most_fields = std::max(most_fields, f.field_count());
      bool all = true;
      for (std::size_t i = 0; i < at.size(); ++i) {
        // A walker on a goal waits there (and walks on if the goal moves away).
        const CellCoord c = at[i];
        const SectorFields::Steer s = f.steer(m, m.cell_center(c));
        std::size_t k = 8;
        if (s.from_field) {
          const FlowDirection d = f.direction(c);
          if (d == FlowDirection::kNone) {
            REQUIRE(f.value(c) == 0);  // only goals have no direction
            done[i] = true;
            continue;
          }
          k = static_cast<std::size_t>(d);
        } else {
          fallback_steps += 1;
          // The legal step nearest to the desired direction.
          float best = -2.0f;
          for (std::size_t j = 0; j < 8; ++j) {
            const CellCoord o = kDirectionOffsets[j];
            const CellCoord n{c.x + o.x, c.y + o.y};
            if (!m.walkable(n) || ((j & 1) != 0 && (!m.walkable({c.x + o.x, c.y}) || !m.walkable({c.x, c.y + o.y}))))
              continue;
            const Vec2 v = direction_vector(static_cast<FlowDirection>(j));
            const float dot = v.x * s.direction.x + v.y * s.direction.y;
            if (dot > best) {
              best = dot;
              k = j;
            }
          }
        }
        all = false;
        done[i] = false;
        if (k == 8) continue;
        const CellCoord o = kDirectionOffsets[k];
        at[i] = {c.x + o.x, c.y + o.y};
        REQUIRE(m.walkable(at[i]));
        cost[i] += step_cost(m, at[i], (k & 1) != 0);
      }
      if (all) return true;
    }
    return false;
  }
};

std::vector<CellCoord> reachable_starts(const GridMap& m, const IntegrationField& whole, std::uint64_t seed, int count) {
  std::vector<CellCoord> out;
  test::TestRng rng{seed};
  while (static_cast<int>(out.size()) < count) {
    const CellCoord c{rng.below(m.width()), rng.below(m.height())};
    const std::uint32_t v = whole.raw(c.x, c.y);
    if (v != kUnreachable && v > 0) out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("sector fields: walled rooms with doors give the whole-map values and directions exactly") {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    CAPTURE(seed);
    constexpr std::int32_t kSide = 16;
    const GridMap m = test::walled_rooms(seed, 4 + static_cast<std::int32_t>(seed % 3), 3, kSide);
    const std::vector<CellCoord> goals = walkable_goals(m, seed * 31, 1 + static_cast<int>(seed % 3));
    Hier h(m, goals, kSide);
    for (std::uint32_t s = 0; s < h.graph.sector_count(); ++s) h.fields.build_sector(m, s);
    IntegrationField whole;
    whole.build(m, goals);
    FlowField flow;
    flow.build(m, whole);
    for (std::int32_t y = 0; y < m.height(); ++y)
      for (std::int32_t x = 0; x < m.width(); ++x) {
        CAPTURE(x);
        CAPTURE(y);
        REQUIRE(h.fields.value({x, y}) == whole.raw(x, y));
        REQUIRE(h.fields.direction({x, y}) == flow.at(x, y));
      }
  }
}

TEST_CASE("sector fields: street maps, true cost <= field <= portal estimate; walkers reach a goal at the field's cost") {
  for (const char* name : {"street/Boston_0_256.map", "street/Berlin_0_256.map"}) {
    for (const int goal_count : {1, 4}) {
      const std::string label = name;
      CAPTURE(label);
      CAPTURE(goal_count);
      const GridMap m = test::read_benchmark_map(name);
      const std::vector<CellCoord> goals = walkable_goals(m, 91, goal_count);
      Hier h(m, goals, 32);
      for (std::uint32_t s = 0; s < h.graph.sector_count(); ++s) h.fields.build_sector(m, s);
      IntegrationField whole;
      whole.build(m, goals);
      std::size_t above = 0, reached = 0;
      for (std::int32_t y = 0; y < m.height(); ++y)
        for (std::int32_t x = 0; x < m.width(); ++x) {
          const std::uint32_t truth = whole.raw(x, y);
          const std::uint32_t v = h.fields.value({x, y});
          REQUIRE((truth == kUnreachable) == (v == kUnreachable));
          if (truth == kUnreachable) continue;
          ++reached;
          REQUIRE(v >= truth);
          if ((x * 7 + y * 13) % 29 == 0) REQUIRE(v <= h.routes.cost_at(h.graph, m, {x, y}));
          above += v > truth ? 1 : 0;
        }
      CHECK(reached > 0);
      CHECK(above > 0);  // 32-cell sectors on streets: not every best path crosses at a portal
      // Every field current: walkers descend to a goal. A flow field steps to the lowest
      // neighbour, which is not always the one its value came from (a diagonal a little lower
      // than an orthogonal costs more to reach), so a walk costs about its start value, not
      // exactly: never below the true cost, and on average close to it.
      Walkers w;
      w.at = reachable_starts(m, whole, 5, 200);
      const std::vector<CellCoord> starts = w.at;
      REQUIRE(w.run(m, h.fields, 0, 4 * m.width()));
      CHECK(w.fallback_steps == 0);
      double sum = 0.0;
      for (std::size_t i = 0; i < starts.size(); ++i) {
        const std::uint32_t truth = whole.raw(starts[i].x, starts[i].y);
        REQUIRE(w.cost[i] >= truth);
        sum += static_cast<double>(w.cost[i]) / truth;
      }
      MESSAGE("mean walk / true cost " << sum / static_cast<double>(starts.size()));
      CHECK(sum / static_cast<double>(starts.size()) <= 1.05);
    }
  }
}

TEST_CASE("sector fields: 4096 maps tiled from street maps, walkers reach the goal within 3% of the octile optimum") {
  for (const char* name : {"street/Boston_0_1024.map", "street/Milan_1_1024.map", "street/Paris_1_1024.map"}) {
    const std::string label = name;
    CAPTURE(label);
    const GridMap m = tiled_map(test::read_benchmark_map(name), 4);
    REQUIRE(m.width() == 4096);
    IntegrationField whole;
    const std::vector<CellCoord> goals = walkable_goals(m, 3, 1);
    whole.build(m, goals);
    Hier h(m, goals, SectorGraph::kDefaultSectorSide);
    Walkers w;
    w.at = reachable_starts(m, whole, 17, 48);
    const std::vector<CellCoord> starts = w.at;
    REQUIRE(w.run(m, h.fields, 0, 3 * m.width()));
    double sum = 0.0, worst = 0.0;
    for (std::size_t i = 0; i < starts.size(); ++i) {
      const double ratio = static_cast<double>(w.cost[i]) / whole.raw(starts[i].x, starts[i].y);
      REQUIRE(ratio >= 1.0);
      sum += ratio;
      worst = std::max(worst, ratio);
    }
    const double mean = sum / static_cast<double>(starts.size());
    MESSAGE(label << " x4: mean path / optimum " << mean << ", worst " << worst << ", sector fields built "
                 << h.fields.build_count() << ", at most " << w.most_fields << " kept, of " << h.graph.sector_count()
                 << " sectors");
    CHECK(mean <= 1.03);
    // On demand and dropped when unused: far fewer fields at a time than sectors.
    CHECK(w.most_fields < h.graph.sector_count() / 8);
  }
}

TEST_CASE("sector fields: under a budget, agents in sectors without a field steer to portals and still arrive") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_512.map");
  const std::vector<CellCoord> goals = walkable_goals(m, 8, 1);
  IntegrationField whole;
  whole.build(m, goals);
  Hier h(m, goals, 64);
  Walkers w;
  w.at = reachable_starts(m, whole, 23, 60);
  // One sector build per tick.
  const std::uint64_t one = SectorFields::kWorkUnitsPerCell * 66 * 66;
  REQUIRE(w.run(m, h.fields, one, 8 * m.width()));
  CHECK(w.most_pending > 0);
  CHECK(w.fallback_steps > 0);
  // Every occupied sector got its field eventually; none was built twice (routes unchanged).
  CHECK(h.fields.build_count() <= h.graph.sector_count());
  // Without a field: a unit direction, not from a field.
  SectorFields cold;
  cold.set_routes(h.graph, h.routes);
  const CellCoord c = reachable_starts(m, whole, 29, 1)[0];
  const SectorFields::Steer s = cold.steer(m, m.cell_center(c));
  CHECK_FALSE(s.from_field);
  CHECK(std::abs(std::hypot(s.direction.x, s.direction.y) - 1.0f) < 1e-4f);
}

TEST_CASE("sector fields: fields are dropped when unused, capped, out of date after new routes and rebuilt when occupied") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  std::vector<CellCoord> goals = walkable_goals(m, 4, 1);
  Hier h(m, goals, 32);
  SectorFields& f = h.fields;
  f.set_keep_ticks(3);
  f.set_max_fields(4);
  const auto occupy = [&](std::initializer_list<std::uint32_t> sectors) {
    f.begin_tick();
    for (const std::uint32_t s : sectors) {
      const SectorGraph::Rect r = h.graph.sector_rect(s);
      f.note_agent({r.x0 + 1, r.y0 + 1});
    }
    return f.update(m, 0);
  };
  CHECK(occupy({0, 1, 2}) == 3 * SectorFields::kWorkUnitsPerCell * 34 * 34);
  CHECK(f.field_count() == 3);
  CHECK(f.build_count() == 3);
  CHECK(occupy({0, 1, 2}) == 0);  // cached
  CHECK(f.build_count() == 3);
  // Cap of 4: sector 3 fits; sector 4 evicts the least recently occupied (1 and 2 were last
  // occupied before 0, and 1 comes first).
  occupy({0, 3});
  CHECK(f.field_count() == 4);
  occupy({0, 3, 4});
  CHECK(f.field_count() == 4);
  CHECK_FALSE(f.has_field(1));
  CHECK(f.has_field(2));
  CHECK(f.has_field(4));
  CHECK(f.drop_count() == 1);
  // Unused for more than 3 ticks: dropped.
  for (int i = 0; i < 4; ++i) occupy({0});
  CHECK(f.field_count() == 1);
  CHECK(f.has_field(0));
  // New routes (the goal moved): the field is kept and read until its sector is rebuilt.
  CellCoord probe{0, 0};
  while (f.value(probe) == kUnreachable) probe = {probe.x + 1 < 32 ? probe.x + 1 : 0, probe.x + 1 < 32 ? probe.y : probe.y + 1};
  const std::uint32_t before = f.value(probe);
  goals[0] = walkable_goals(m, 99, 1)[0];
  h.routes.build(h.graph, m, goals);
  f.set_routes(h.graph, h.routes);
  CHECK(f.has_field(0));
  CHECK_FALSE(f.field_current(0));
  CHECK(f.value(probe) == before);
  occupy({0});
  CHECK(f.field_current(0));
  CHECK(f.value(probe) != before);
  CHECK(f.build_count() == 6);
  // A budget stops after the build that reaches it; the rest are pending.
  occupy({5, 6, 7});
  CHECK(f.pending_count() == 0);
  f.begin_tick();
  for (const std::uint32_t s : {8u, 9u, 10u}) f.note_agent({h.graph.sector_rect(s).x0, h.graph.sector_rect(s).y0});
  CHECK(f.update(m, 1) == SectorFields::kWorkUnitsPerCell * 34 * 34);
  CHECK(f.pending_count() == 2);
}

TEST_CASE("portal routes: time-sliced builds give the costs of a whole build for any budget") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_512.map");
  const std::vector<CellCoord> goals = walkable_goals(m, 12, 3);
  SectorGraph g;
  g.build(m, 32);
  PortalRoutes whole;
  whole.build(g, m, goals);
  for (const std::uint64_t budget : {1u, 37u, 1000u, 50000u}) {
    CAPTURE(budget);
    PortalRoutes sliced;
    sliced.begin(g, m, goals);
    int calls = 0;
    while (!sliced.advance(budget)) {
      REQUIRE(sliced.in_progress());
      ++calls;
      REQUIRE(calls < 10000000);
    }
    CHECK_FALSE(sliced.in_progress());
    if (budget < 1000) CHECK(calls > 10);
    CHECK(sliced.work_units() == whole.work_units());
    for (std::uint32_t n = 0; n < g.node_count(); ++n) REQUIRE(sliced.node_cost(n) == whole.node_cost(n));
  }
}

TEST_CASE("hierarchical fields: a moving goal under a budget: routes sliced and swapped, work bounded, walkers arrive") {
  const GridMap m = tiled_map(test::read_benchmark_map("street/Boston_0_512.map"), 2);
  std::vector<CellCoord> goals = walkable_goals(m, 41, 1);
  IntegrationField whole;
  HierarchicalFields hf;
  hf.set_sector_side(64);
  // First update: graph and routes at once.
  hf.begin_tick();
  hf.update(m, goals);
  REQUIRE(hf.graph_builds() == 1);
  REQUIRE(hf.route_builds() == 1);
  std::size_t max_degree = 0;
  for (std::uint32_t n = 0; n < hf.graph().node_count(); ++n) max_degree = std::max(max_degree, hf.graph().edges(n).size());
  constexpr std::uint64_t kBudget = 20000;
  hf.set_budget(kBudget);
  const std::uint64_t slack = SectorFields::kWorkUnitsPerCell * 66 * 66 + 1 + PortalRoutes::kWorkUnitsPerEdge * max_degree;
  // The goal walks along a street: a new cell every 5 ticks for 400 ticks.
  whole.build(m, goals);
  Walkers w;
  w.at = reachable_starts(m, whole, 43, 40);
  std::uint64_t most = 0;
  int tick = 0;
  bool saw_in_progress = false;
  const std::vector<CellCoord> first_goals = goals;
  const bool arrived = w.run_with(
      m, hf.fields(),
      [&] {
        if (tick < 400 && tick % 5 == 0) {
          // A walkable neighbour of the goal (deterministic order).
          for (const CellCoord o : kDirectionOffsets) {
            const CellCoord n{goals[0].x + o.x, goals[0].y + o.y};
            if (m.walkable(n) && !(n == first_goals[0])) {
              goals[0] = n;
              break;
            }
          }
        }
        ++tick;
        most = std::max(most, hf.update(m, goals));
        saw_in_progress = saw_in_progress || hf.route_build_in_progress();
      },
      20 * m.width());
  // Walkers stop on the goal the front routes were built for (a goal cell of some recent tick).
  CHECK(arrived);
  CHECK(saw_in_progress);
  CHECK(hf.route_builds() > 10);
  CHECK(hf.graph_builds() == 1);
  CHECK(most <= kBudget + slack);
  // The goal stopped moving: the routes caught up with it and every walker stands on it.
  REQUIRE(hf.goals().size() == 1);
  CHECK(hf.goals()[0] == goals[0]);
  CHECK_FALSE(goals[0] == first_goals[0]);
  for (std::size_t i = 0; i < w.at.size(); ++i) CHECK(w.at[i] == goals[0]);
}

TEST_CASE("sector fields: without kept values the directions, goals and samples are the same") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  const std::vector<CellCoord> goals = walkable_goals(m, 6, 2);
  Hier a(m, goals, 32);
  SectorFields b;
  b.set_keep_values(false);
  b.set_routes(a.graph, a.routes);
  for (std::uint32_t s = 0; s < a.graph.sector_count(); ++s) {
    a.fields.build_sector(m, s);
    b.build_sector(m, s);
  }
  CHECK(b.memory_bytes() * 3 < a.fields.memory_bytes());
  const std::vector<Vec2> goal_points = {m.cell_center(goals[0]) + Vec2{0.2f, -0.1f}, m.cell_center(goals[1])};
  std::size_t goal_cells = 0;
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x) {
      REQUIRE(a.fields.direction({x, y}) == b.direction({x, y}));
      REQUIRE((a.fields.value({x, y}) == 0) == (b.value({x, y}) == 0));
      goal_cells += b.value({x, y}) == 0 ? 1 : 0;
      for (const Vec2 o : {Vec2{0.5f, 0.5f}, Vec2{0.1f, 0.8f}}) {
        const Vec2 p{static_cast<float>(x) + o.x, static_cast<float>(y) + o.y};
        const NavSample sa = a.fields.sample(m, goal_points, p), sb = b.sample(m, goal_points, p);
        REQUIRE(sa.status == sb.status);
        REQUIRE(sa.direction.x == sb.direction.x);
        REQUIRE(sa.direction.y == sb.direction.y);
      }
    }
  CHECK(goal_cells == 2);
  // On a goal cell: straight at the goal's position; a walkable cell elsewhere follows the flow.
  const NavSample at_goal = b.sample(m, goal_points, m.cell_center(goals[0]));
  CHECK(at_goal.status == NavStatus::kGoalInSight);
  CHECK(at_goal.goal == 0);
  CHECK(at_goal.direction.x > 0.8f);
  CHECK(b.sample(m, goal_points, goal_points[1]).status == NavStatus::kAtGoal);
}

namespace {

/// SectorFields::sample()'s documented blend, from the public per-cell answers (direction(),
/// value(), steer(), the map): what the sampler's fast paths must give bit for bit. Positions
/// on goal cells are left to the caller (nullopt-like: status kNoField).
NavSample documented_sample(const SectorFields& f, const SectorGraph& g, const GridMap& m, Vec2 p) {
  NavSample out;
  const CellCoord own = m.world_to_cell(p);
  const bool own_walkable = m.walkable(own);
  if (own_walkable && !f.has_field(g.sector_of(own))) {
    const SectorFields::Steer s = f.steer(m, p);
    out.direction = s.direction;
    out.status = s.direction.x != 0.0f || s.direction.y != 0.0f ? NavStatus::kFollowFlow : NavStatus::kNoRoute;
    return out;
  }
  if (own_walkable && f.value(own) == 0) {
    out.status = NavStatus::kNoField;  // a goal cell: not compared here
    return out;
  }
  const float u = p.x / m.cell_size() - 0.5f, v = p.y / m.cell_size() - 0.5f;
  const auto x0 = static_cast<std::int32_t>(std::floor(u)), y0 = static_cast<std::int32_t>(std::floor(v));
  const float tx = u - std::floor(u), ty = v - std::floor(v);
  Vec2 sum{};
  for (int k = 0; k < 4; ++k) {
    const std::int32_t cx = x0 + (k & 1), cy = y0 + (k >> 1);
    if (!m.walkable(cx, cy)) continue;
    const FlowDirection d = f.direction({cx, cy});
    if (d == FlowDirection::kNone) continue;
    if (own_walkable && cx != own.x && cy != own.y && (!m.walkable(cx, own.y) || !m.walkable(own.x, cy))) continue;
    sum += direction_vector(d) * (((k & 1) != 0 ? tx : 1.0f - tx) * ((k >> 1) != 0 ? ty : 1.0f - ty));
  }
  const float len = std::sqrt(sum.x * sum.x + sum.y * sum.y);
  out.direction = len >= 1.0e-3f ? sum * (1.0f / len) : direction_vector(f.direction(own));
  const bool routed = own_walkable && f.direction(own) != FlowDirection::kNone;
  out.status = routed && (out.direction.x != 0.0f || out.direction.y != 0.0f) ? NavStatus::kFollowFlow : NavStatus::kNoRoute;
  return out;
}

}  // namespace

TEST_CASE("sector fields: sample() is the documented blend of the cells' directions, at borders and map edges too") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  const std::vector<CellCoord> goals = walkable_goals(m, 5, 2);
  Hier h(m, goals, 32);
  h.fields.set_keep_values(false);  // as the World keeps them
  // Fields for every other sector: squares across a border mix a field and none.
  for (std::uint32_t s = 0; s < h.graph.sector_count(); s += 2) h.fields.build_sector(m, s);
  const std::vector<Vec2> goal_points = {m.cell_center(goals[0]), m.cell_center(goals[1])};
  std::size_t compared = 0, blended = 0, fallback = 0;
  for (std::int32_t y = -1; y <= m.height(); ++y) {
    for (std::int32_t x = -1; x <= m.width(); ++x) {
      for (const Vec2 o : {Vec2{0.5f, 0.5f}, Vec2{0.1f, 0.8f}, Vec2{0.9f, 0.05f}, Vec2{0.0f, 0.0f}}) {
        const Vec2 p{static_cast<float>(x) + o.x, static_cast<float>(y) + o.y};
        const NavSample want = documented_sample(h.fields, h.graph, m, p);
        if (want.status == NavStatus::kNoField) continue;
        const NavSample got = h.fields.sample(m, goal_points, p);
        REQUIRE(got.status == want.status);
        REQUIRE(got.direction.x == want.direction.x);
        REQUIRE(got.direction.y == want.direction.y);
        ++compared;
        const CellCoord own = m.world_to_cell(p);
        if (m.walkable(own)) (h.fields.has_field(h.graph.sector_of(own)) ? blended : fallback) += 1;
      }
    }
  }
  CHECK(compared > 200000);
  CHECK(blended > 50000);
  CHECK(fallback > 50000);
}

TEST_CASE("sector fields: sectors without a field are not starved by out-of-date ones when routes change every tick") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  const std::vector<CellCoord> goals = walkable_goals(m, 5, 2);
  Hier h(m, goals, 32);
  // The busy sector has a field; new routes (goals walking) leave it out of date every tick.
  const CellCoord busy_cell = walkable_goals(m, 7, 1)[0];
  const std::uint32_t busy = h.graph.sector_of(busy_cell);
  h.fields.build_sector(m, busy);
  // A quiet sector with one agent and no field.
  CellCoord quiet_cell{-1, -1};
  for (std::int32_t y = 0; y < m.height() && quiet_cell.x < 0; ++y)
    for (std::int32_t x = 0; x < m.width(); ++x)
      if (m.walkable(x, y) && h.graph.sector_of({x, y}) != busy) {
        quiet_cell = {x, y};
        break;
      }
  REQUIRE(quiet_cell.x >= 0);
  const std::uint32_t quiet = h.graph.sector_of(quiet_cell);
  const std::uint64_t one_build = SectorFields::kWorkUnitsPerCell * 34 * 34;
  for (int tick = 0; tick < 3; ++tick) {
    h.fields.set_routes(h.graph, h.routes);  // a new route generation
    h.fields.begin_tick();
    for (int i = 0; i < 50; ++i) h.fields.note_agent(busy_cell);
    h.fields.note_agent(quiet_cell);
    h.fields.update(m, one_build);
  }
  // Three ticks of one build each: the quiet sector got its field on the first, the busy one
  // was rebuilt on the other two (by population alone it took every build).
  CHECK(h.fields.has_field(quiet));
  CHECK(h.fields.field_current(busy));
  CHECK(h.fields.build_count() == 4);
}

TEST_CASE("sector fields: a sparse sector without a field is built while busier new sectors keep arriving") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  const std::vector<CellCoord> goals = walkable_goals(m, 5, 2);
  Hier h(m, goals, 32);
  // A walkable cell per sector; the quiet sector is the first, the others arrive one a tick
  // with 8 agents each, and the budget builds one field a tick.
  const std::vector<CellCoord> cell_of = first_walkable_cells(m, h.graph);
  std::vector<std::uint32_t> sectors;
  for (std::uint32_t s = 0; s < cell_of.size(); ++s)
    if (cell_of[s].x >= 0) sectors.push_back(s);
  REQUIRE(sectors.size() > 40);
  const std::uint32_t quiet = sectors.front();
  const std::uint64_t one_build = SectorFields::kWorkUnitsPerCell * 34 * 34;
  int built_at = -1;
  for (int tick = 0; tick + 1 < static_cast<int>(sectors.size()) && built_at < 0; ++tick) {
    h.fields.begin_tick();
    h.fields.note_agent(cell_of[quiet]);
    for (int k = 0; k <= tick; ++k)  // every busy sector so far stays occupied
      for (int i = 0; i < 8; ++i) h.fields.note_agent(cell_of[sectors[static_cast<std::size_t>(k) + 1]]);
    h.fields.update(m, one_build);
    if (h.fields.has_field(quiet)) built_at = tick;
  }
  MESSAGE("the one-agent sector got its field on tick " << built_at);
  CHECK(built_at >= 0);  // by agents alone it waited for every busier sector
  CHECK(built_at <= 8 * static_cast<int>(SectorFields::kAgingTicks) + 2);
}

TEST_CASE("sector fields: without a field, an agent on a portal heads across it; on a goal it stays") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  const std::vector<CellCoord> goals = walkable_goals(m, 5, 1);
  Hier h(m, goals, 32);
  std::size_t portals = 0, moving = 0;
  for (std::uint32_t n = 0; n < h.graph.node_count(); ++n) {
    if (h.graph.node_sector(n) == SectorGraph::kNoSector || h.routes.node_cost(n) == kUnreachable) continue;
    const CellCoord c = h.graph.node_cell(n);
    if (c == goals[0]) continue;
    ++portals;
    const SectorFields::Steer st = h.fields.steer(m, m.cell_center(c));
    moving += st.direction.x != 0.0f || st.direction.y != 0.0f ? 1 : 0;
  }
  CHECK(portals > 20);
  CHECK(moving == portals);  // before: the portal's own cell was its best target: no direction
  const SectorFields::Steer at_goal = h.fields.steer(m, m.cell_center(goals[0]));
  CHECK(at_goal.direction.x == 0.0f);
  CHECK(at_goal.direction.y == 0.0f);
}


TEST_CASE("sector fields: under a budget the busiest sectors are built first, small edge sectors included") {
  // Open maps in 32-cell sectors: 96 x 96 (3 x 3 full sectors: the budget pays for exactly
  // `full_builds`, so update() sorts only that many of each list) and 100 x 100 (4 x 4, the
  // last column and row 4 cells wide: cheap builds, more of them for the same budget).
  for (const std::int32_t side : {96, 100}) {
    const GridMap m(side, side);
    const std::vector<CellCoord> goals{{side / 2, side / 2}};
    for (const std::uint64_t full_builds : {1u, 2u, 3u, 5u}) {
      Hier h(m, goals, 32);
      const auto sectors = static_cast<std::uint32_t>(h.graph.sector_count());
      REQUIRE(sectors == (side == 96 ? 9u : 16u));
      // Sector s holds a distinct number of agents (a permutation of 1..sectors).
      std::vector<int> agents(sectors);
      for (std::uint32_t s = 0; s < sectors; ++s) agents[s] = static_cast<int>((s * 7) % sectors) + 1;
      h.fields.begin_tick();
      for (std::uint32_t s = 0; s < sectors; ++s) {
        const SectorGraph::Rect r = h.graph.sector_rect(s);
        for (int i = 0; i < agents[s]; ++i) h.fields.note_agent({r.x0 + 1, r.y0 + 1});
      }
      const std::uint64_t budget = full_builds * SectorFields::kWorkUnitsPerCell * 34 * 34 - 1;
      h.fields.update(m, budget);
      const std::uint64_t built = h.fields.build_count();
      CAPTURE(side);
      CAPTURE(full_builds);
      if (side == 96) CHECK(built == full_builds);
      REQUIRE(built >= full_builds);
      REQUIRE(built < sectors);
      // Exactly the `built` busiest sectors have a field.
      for (std::uint32_t s = 0; s < sectors; ++s) {
        int busier = 0;
        for (std::uint32_t o = 0; o < sectors; ++o) busier += agents[o] > agents[s] ? 1 : 0;
        CAPTURE(s);
        CHECK(h.fields.has_field(s) == (static_cast<std::uint64_t>(busier) < built));
      }
    }
  }
}

TEST_CASE("sector fields: new routes refresh the fallback lists a few a tick, old costs meanwhile, then exactly the fresh ones") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  const auto nearest_walkable = [&](CellCoord to) {
    CellCoord best{-1, -1};
    std::int64_t best_d = -1;
    for (std::int32_t y = 0; y < m.height(); ++y)
      for (std::int32_t x = 0; x < m.width(); ++x) {
        const std::int64_t d = std::int64_t{x - to.x} * (x - to.x) + std::int64_t{y - to.y} * (y - to.y);
        if (m.walkable(x, y) && (best_d < 0 || d < best_d)) {
          best_d = d;
          best = {x, y};
        }
      }
    return best;
  };
  // Goals in opposite corners: most sectors steer elsewhere for the second.
  const std::vector<CellCoord> goals_a = {nearest_walkable({8, 8})};
  const std::vector<CellCoord> goals_b = {nearest_walkable({247, 247})};
  Hier h(m, goals_a, 32);
  Hier fresh(m, goals_b, 32);  // the reference: lists made for goals_b
  h.fields.set_fallback_refresh_entries(40);
  // One walkable cell per sector; every sector occupied, a budget of one build a tick.
  const std::vector<CellCoord> cell_of = first_walkable_cells(m, h.graph);
  const auto tick = [&](Hier& k) {
    k.fields.begin_tick();
    for (const CellCoord c : cell_of)
      if (c.x >= 0) k.fields.note_agent(c);
    k.fields.update(m, 1);
  };
  tick(h);
  tick(fresh);
  PortalRoutes routes_b;
  routes_b.build(h.graph, m, goals_b);
  h.fields.set_routes(h.graph, routes_b);
  // Sectors without a field in either, whose direction differs between the two goals.
  const auto differing = [&](std::size_t& old_like) {
    std::size_t differ = 0;
    old_like = 0;
    for (std::uint32_t s = 0; s < cell_of.size(); ++s) {
      if (cell_of[s].x < 0 || h.fields.has_field(s) || fresh.fields.has_field(s)) continue;
      const Vec2 p = m.cell_center(cell_of[s]);
      const Vec2 got = h.fields.steer(m, p).direction, want = fresh.fields.steer(m, p).direction;
      if (got.x != want.x || got.y != want.y) ++differ;
    }
    return differ;
  };
  std::size_t unused = 0;
  tick(h);
  const std::size_t after_one = differing(unused);
  MESSAGE("sectors still on the old costs after one tick: " << after_one);
  CHECK(after_one > 0);  // 40 entries a tick: not every list is refreshed at once
  int ticks = 1;
  while (differing(unused) > 0 && ticks < 200) {
    tick(h);
    ++ticks;
  }
  MESSAGE("every list refreshed after " << ticks << " ticks");
  CHECK(differing(unused) == 0);  // then exactly the directions of lists made for the new routes
  CHECK(ticks > 1);
}

TEST_CASE("sector fields: the fallback's early stop still finds the cheapest target (route cost + octile distance)") {
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  // 3 goals, and 40 (several in some sectors: steer() looks them up by sector).
  for (const int goal_count : {3, 40}) {
    CAPTURE(goal_count);
    const std::vector<CellCoord> goals = walkable_goals(m, 11, goal_count);
    Hier h(m, goals, 32);
    h.fields.begin_tick();
    for (std::int32_t y = 0; y < m.height(); y += 5)
      for (std::int32_t x = 0; x < m.width(); x += 5)
        if (m.walkable(x, y)) h.fields.note_agent({x, y});
    h.fields.update(m, 1);  // one sector field; every other occupied sector gets its portal list
    const auto octile_raw = [](CellCoord a, CellCoord b) {
      const auto dx = static_cast<std::uint64_t>(std::abs(a.x - b.x)), dy = static_cast<std::uint64_t>(std::abs(a.y - b.y));
      return std::min(dx, dy) * kDiagonalStep + (std::max(dx, dy) - std::min(dx, dy)) * kOrthogonalStep;
    };
    std::size_t checked = 0;
    for (std::int32_t y = 0; y < m.height(); y += 5) {
      for (std::int32_t x = 0; x < m.width(); x += 5) {
        const CellCoord c{x, y};
        if (!m.walkable(c)) continue;
        const std::uint32_t s = h.graph.sector_of(c);
        if (h.fields.has_field(s)) continue;
        // Every candidate: goals in the sector (cost 0), the sector's portals and the neighbour
        // portals they cross to (route costs).
        std::vector<std::pair<CellCoord, std::uint64_t>> cands;
        for (const CellCoord g : goals)
          if (h.graph.sector_of(g) == s) cands.push_back({g, 0});
        for (const std::uint32_t n : h.graph.sector_nodes(s)) {
          cands.push_back({h.graph.node_cell(n), h.routes.node_cost(n)});
          for (const SectorEdge& e : h.graph.edges(n))
            if (h.graph.node_sector(e.to) != s) cands.push_back({h.graph.node_cell(e.to), h.routes.node_cost(e.to)});
        }
        std::uint64_t best = ~std::uint64_t{0};
        bool on_goal = false;
        for (const auto& [t, cost] : cands) {
          if (t == c) on_goal = on_goal || cost == 0;
          if (cost == kUnreachable || t == c) continue;
          best = std::min(best, cost + octile_raw(c, t));
        }
        const Vec2 p = m.cell_center(c);
        const SectorFields::Steer got = h.fields.steer(m, p);
        if (on_goal || best == ~std::uint64_t{0}) {
          CHECK((got.direction.x == 0.0f && got.direction.y == 0.0f));
          continue;
        }
        // The direction points at one of the cheapest candidates.
        bool matches = false;
        for (const auto& [t, cost] : cands) {
          if (cost == kUnreachable || t == c || cost + octile_raw(c, t) != best) continue;
          const Vec2 d = m.cell_center(t) - p;
          const float len = std::sqrt(d.x * d.x + d.y * d.y);
          matches = matches || (std::fabs(d.x / len - got.direction.x) < 1e-5f && std::fabs(d.y / len - got.direction.y) < 1e-5f);
        }
        CAPTURE(c.x);
        CAPTURE(c.y);
        CHECK(matches);
        ++checked;
      }
    }
    MESSAGE(checked << " cells checked with " << goal_count << " goals");
    CHECK(checked > 400);
  }
}

TEST_CASE("sector fields: after the graph is packed (every node id renumbered) the kept lists steer like lists made afresh") {
  GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  const std::vector<CellCoord> goals = {m.world_to_cell({128.5f, 128.5f})};
  REQUIRE(m.walkable(goals[0]));
  Hier h(m, goals, 32);
  h.fields.set_max_fields(1);  // nearly every sector steers by its list
  const std::vector<CellCoord> cell_of = first_walkable_cells(m, h.graph);
  const auto tick = [&] {
    h.fields.begin_tick();
    for (const CellCoord c : cell_of)
      if (c.x >= 0) h.fields.note_agent(c);
    h.fields.update(m, 0);
  };
  tick();
  // A wall along a sector border moves that sector's portals: its ids move to the end of the
  // node array, leaving a gap that pack() closes by renumbering every later id.
  const std::uint32_t since = m.revision();
  for (std::int32_t y = 32; y < 64; ++y) m.set_cost(31, y, kBlockedCost);
  std::span<const CellCoord> changed;
  REQUIRE(m.changes_since(since, changed));
  h.graph.update(m, changed);
  h.routes.remap_nodes(h.graph.node_remap(), h.graph.node_count());
  h.fields.graph_updated(h.graph.node_remap(), h.graph.updated_sectors());
  tick();
  std::vector<SectorFields::Steer> before;
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x) before.push_back(h.fields.steer(m, m.cell_center({x, y})));
  const std::uint64_t made = h.fields.fallback_lists_made();
  h.graph.pack();
  REQUIRE_FALSE(h.graph.node_remap().empty());
  std::size_t moved = 0;
  for (std::uint32_t n = 0; n < h.graph.node_remap().size(); ++n) moved += h.graph.node_remap()[n] != n ? 1 : 0;
  MESSAGE("node ids renumbered by the pack: " << moved);
  REQUIRE(moved > 100);
  h.routes.remap_nodes(h.graph.node_remap(), h.graph.node_count());
  h.fields.graph_updated(h.graph.node_remap(), {});
  tick();
  CHECK(h.fields.fallback_lists_made() == made);  // nothing made again: every list kept
  std::size_t i = 0;
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x, ++i) {
      const SectorFields::Steer now = h.fields.steer(m, m.cell_center({x, y}));
      REQUIRE(now.direction.x == before[i].direction.x);
      REQUIRE(now.direction.y == before[i].direction.y);
    }
  // New routes (another goal): the kept lists refresh their costs through their node ids, and
  // then steer like lists made afresh for the packed graph.
  const std::vector<CellCoord> goals_b = {m.world_to_cell({20.5f, 230.5f})};
  REQUIRE(m.walkable(goals_b[0]));
  PortalRoutes routes_b;
  routes_b.build(h.graph, m, goals_b);
  h.fields.set_routes(h.graph, routes_b);
  tick();
  SectorFields fresh;
  fresh.set_max_fields(1);
  fresh.set_routes(h.graph, routes_b);
  fresh.begin_tick();
  for (const CellCoord c : cell_of)
    if (c.x >= 0) fresh.note_agent(c);
  fresh.update(m, 0);
  CHECK(require_same_fallback(m, h.graph, h.fields, fresh, [](std::uint32_t) { return true; }) > 20000);
}

TEST_CASE("sector fields: portal lists of sectors the agents left are reclaimed; the lists kept still steer like fresh ones") {
  // Agents sweep the map a band of sector rows at a time (a horde following players across a
  // big map): lists are made for every sector once occupied. Without reclaiming, the flat list
  // array grew with every sector ever occupied (a 10-minute run's memory creep).
  const GridMap m = test::read_benchmark_map("street/Boston_0_256.map");
  const std::vector<CellCoord> goals = {m.world_to_cell({128.5f, 128.5f})};
  REQUIRE(m.walkable(goals[0]));
  Hier h(m, goals, 16);
  h.fields.set_max_fields(1);
  h.fields.set_fallback_slack(64);
  const std::vector<CellCoord> cell_of = first_walkable_cells(m, h.graph);
  const auto sectors_x = static_cast<std::uint32_t>(h.graph.sectors_x());
  const auto tick = [&](SectorFields& f, std::uint32_t band) {
    f.begin_tick();
    for (std::uint32_t s = 0; s < cell_of.size(); ++s)
      if (cell_of[s].x >= 0 && (s / sectors_x) / 2 == band) f.note_agent(cell_of[s]);
    f.update(m, 0);
  };
  std::size_t most = 0, all_lists = 0;
  for (std::uint32_t band = 0; band < 8; ++band) {
    tick(h.fields, band);
    most = std::max(most, h.fields.fallback_entries());
    all_lists = h.fields.fallback_lists_made();
  }
  MESSAGE("lists made " << all_lists << ", most entries held " << most);
  CHECK(all_lists > 200);  // nearly every sector had a list once
  std::size_t band_entries = 0;
  for (std::uint32_t band = 0; band < 8; ++band) {
    SectorFields probe;  // one band's lists alone
    probe.set_max_fields(1);
    probe.set_routes(h.graph, h.routes);
    tick(probe, band);
    band_entries = std::max(band_entries, probe.fallback_entries());
  }
  MESSAGE("one band's lists: " << band_entries << " entries at most");
  // Compaction keeps twice the occupied band's lists and the slack, plus the band added after.
  CHECK(most <= 3 * band_entries + 64);
  // The kept lists, moved, steer like lists made afresh for the same occupancy.
  SectorFields fresh;
  fresh.set_max_fields(1);
  fresh.set_routes(h.graph, h.routes);
  tick(fresh, 7);
  const auto last_band = [&](std::uint32_t s) { return (s / sectors_x) / 2 == 7; };
  CHECK(require_same_fallback(m, h.graph, h.fields, fresh, last_band) > 1000);
}
