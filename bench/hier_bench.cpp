// Figure 6: hierarchical fields vs map size. What a goal change costs on the portal graph
// (PortalRoutes::build: the goal enters through its sector, Dijkstra over the portals) against a
// whole-map rebuild (integration + flow) on the same map, for the procedural city at 1024 to
// 8192 cells a side and MovingAI street maps tiled 4 x 4 (4096); with the path quality of the
// graph (cost through a cell's sector portals / exact whole-map cost, sampled cells).
#include <benchmark/benchmark.h>

#include <chrono>
#include <exception>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/map/tiled_map.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/hierarchical/near_fields.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_fields.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"
#include "setup_or_skip.hpp"

namespace swarmfield::bench {

namespace {

constexpr int kQualitySamples = 1000;

struct HierCase {
  std::string label;     // city:N or tiled:<map>x4
  std::int32_t city = 0;  // city side, or 0
  std::string map;        // MovingAI map to tile 4 x 4, when city == 0
};

struct HierSetup {
  sim::GridMap map;
  std::vector<sim::CellCoord> goal_a, goal_b;  // one goal, and the same moved by one cell
  sim::SectorGraph graph;
  double graph_build_ms = 0.0;
  double ratio_mean = 0.0;
  double ratio_max = 0.0;
};

const HierSetup& setup_for(const HierCase& c) {
  static std::map<std::string, std::unique_ptr<HierSetup>> cache;
  if (auto it = cache.find(c.label); it != cache.end()) return *it->second;
  auto s = std::make_unique<HierSetup>();
  s->map = c.city > 0 ? sim::generate_city({c.city, c.city, 1}) : sim::tiled_map(load_map(c.map), 4);
  const sim::CellCoord g = nearest_walkable(s->map, {s->map.width() / 2, s->map.height() / 2});
  sim::CellCoord g2 = nearest_walkable(s->map, {g.x + 1, g.y});
  if (g2 == g) g2 = nearest_walkable(s->map, {g.x, g.y + 1});
  s->goal_a = {g};
  s->goal_b = {g2};
  const auto t0 = std::chrono::steady_clock::now();
  s->graph.build(s->map);
  s->graph_build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Path quality: the cost through a sampled cell's sector portals against the exact cost.
  sim::PortalRoutes routes;
  routes.build(s->graph, s->map, s->goal_a);
  sim::IntegrationField whole;
  whole.build(s->map, s->goal_a);
  std::mt19937_64 rng(11);
  double sum = 0.0;
  int n = 0;
  for (int tries = 0; n < kQualitySamples && tries < 100 * kQualitySamples; ++tries) {
    const sim::CellCoord p{static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(s->map.width())),
                           static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(s->map.height()))};
    const std::uint32_t truth = whole.raw(p.x, p.y);
    if (truth == sim::kUnreachable || truth == 0) continue;
    const double r = static_cast<double>(routes.cost_at(s->graph, s->map, p)) / truth;
    sum += r;
    s->ratio_max = std::max(s->ratio_max, r);
    ++n;
  }
  s->ratio_mean = n > 0 ? sum / n : 0.0;
  return *cache.emplace(c.label, std::move(s)).first->second;
}

template <class Body>
void run_hier(benchmark::State& state, const HierCase& c, Body&& body) {
  const HierSetup* s = setup_or_skip(state, [&]() -> const HierSetup& { return setup_for(c); });
  if (s == nullptr) return;
  body(state, *s);
  state.counters["side"] = static_cast<double>(s->map.width());
}

/// hier/route: a goal change on the portal graph (PortalRoutes::build), goals alternating one
/// cell apart; counters: the graph's size and build time, the path quality of setup_for().
void bench_route(benchmark::State& st, const HierSetup& s) {
  sim::PortalRoutes routes;
  bool flip = false;
  for (auto _ : st) {
    routes.build(s.graph, s.map, flip ? s.goal_b : s.goal_a);
    flip = !flip;
    benchmark::DoNotOptimize(routes.settled());
  }
  st.counters["nodes"] = static_cast<double>(s.graph.node_count());
  st.counters["edges"] = static_cast<double>(s.graph.edge_count());
  st.counters["sectors"] = static_cast<double>(s.graph.sector_count());
  st.counters["graph_build_ms"] = s.graph_build_ms;
  st.counters["path_ratio_mean"] = s.ratio_mean;
  st.counters["path_ratio_max"] = s.ratio_max;
}

/// hier/whole_rebuild: the same goal change as a whole-map integration + flow rebuild.
void bench_whole_rebuild(benchmark::State& st, const HierSetup& s) {
  sim::IntegrationField integration;
  sim::FlowField flow;
  bool flip = false;
  for (auto _ : st) {
    integration.build(s.map, flip ? s.goal_b : s.goal_a);
    flow.build_rows(integration, 0, integration.height());
    flip = !flip;
    benchmark::DoNotOptimize(flow.directions().data());
  }
}

/// hier/goal_change: a goal change in hierarchical mode as the server would pay it: the routes,
/// then the fields of the occupied sectors (the 9 x 9 sectors round the goal: a crowd of ~330k
/// cells, the same on every map size). Memory: graph + routes + those fields, against a
/// whole-map pair.
void bench_goal_change(benchmark::State& st, const HierSetup& s) {
  sim::PortalRoutes routes;
  sim::SectorFields fields;
  const sim::CellCoord g = s.goal_a[0];
  const std::int32_t side = s.graph.sector_side();
  const auto note_crowd = [&] {
    fields.begin_tick();
    for (std::int32_t dy = -4; dy <= 4; ++dy)
      for (std::int32_t dx = -4; dx <= 4; ++dx) fields.note_agent({g.x + dx * side, g.y + dy * side});
  };
  bool flip = false;
  for (auto _ : st) {
    routes.build(s.graph, s.map, flip ? s.goal_b : s.goal_a);
    fields.set_routes(s.graph, routes);
    note_crowd();
    fields.update(s.map, 0);
    flip = !flip;
    benchmark::DoNotOptimize(fields.build_count());
  }
  st.counters["sector_fields"] = static_cast<double>(fields.field_count());
  const double mib = 1024.0 * 1024.0;
  st.counters["hier_mib"] = static_cast<double>(s.graph.memory_bytes() + fields.memory_bytes() +
                                                routes.node_count() * sizeof(std::uint32_t)) / mib;
  // A whole-map pair: padded integration words (4 bytes) + flow directions (1 byte) a cell.
  st.counters["whole_pair_mib"] =
      static_cast<double>((static_cast<std::size_t>(s.map.width()) + 2) * (static_cast<std::size_t>(s.map.height()) + 2) * 4 +
                          s.map.cell_count()) / mib;
}

/// hier/sector_build: one sector field build (SectorFields::build_sector: the seeded search over
/// the sector and its ring, then the flow pass), the 9 x 9 sectors round the goal with the routes
/// fixed: the cost a sector build is charged for against the field budget (kWorkUnitsPerCell).
/// Counters: ns per sector, ns per local cell ((side + 2)^2 cells a build).
void bench_sector_build(benchmark::State& st, const HierSetup& s) {
  sim::PortalRoutes routes;
  routes.build(s.graph, s.map, s.goal_a);
  sim::SectorFields fields;
  fields.set_keep_values(false);  // as the server runs it
  fields.set_routes(s.graph, routes);
  std::vector<std::uint32_t> sectors;
  const sim::CellCoord g = s.goal_a[0];
  const std::int32_t side = s.graph.sector_side();
  std::uint64_t cells = 0;
  for (std::int32_t dy = -4; dy <= 4; ++dy) {
    for (std::int32_t dx = -4; dx <= 4; ++dx) {
      const sim::CellCoord c2{g.x + dx * side, g.y + dy * side};
      if (c2.x < 0 || c2.y < 0 || c2.x >= s.map.width() || c2.y >= s.map.height()) continue;
      const std::uint32_t id = s.graph.sector_of(c2);
      sectors.push_back(id);
      const sim::SectorGraph::Rect r = s.graph.sector_rect(id);
      cells += static_cast<std::uint64_t>(r.w + 2) * static_cast<std::uint64_t>(r.h + 2);
    }
  }
  for (auto _ : st) {
    for (const std::uint32_t id : sectors) fields.build_sector(s.map, id);
    benchmark::DoNotOptimize(fields.build_count());
  }
  const double iters = static_cast<double>(st.iterations());
  st.counters["ns_per_sector"] = benchmark::Counter(iters * static_cast<double>(sectors.size()) * 1e-9,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  st.counters["ns_per_cell"] = benchmark::Counter(iters * static_cast<double>(cells) * 1e-9,
                                                  benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

/// hier/near_change: what the near field adds to a goal change (NearFields: the exact
/// integration, flow and any-angle fields in the goal's window), all at once; against hier/route
/// in the same run.
void bench_near_change(benchmark::State& st, const HierSetup& s) {
  sim::NearFields near;
  near.update(s.map, s.goal_a, 0);
  bool flip = true;
  for (auto _ : st) {
    near.update(s.map, flip ? s.goal_b : s.goal_a, 0);
    flip = !flip;
    benchmark::DoNotOptimize(near.build_count());
  }
  st.counters["window_side"] = static_cast<double>(near.window_fields(0).integration().width());
  st.counters["near_mib"] = static_cast<double>(near.memory_bytes()) / (1024.0 * 1024.0);
}

/// Registers the five hier/ benchmarks of one map, in milliseconds; on big maps with fixed
/// iteration counts for the slow ones.
void register_hier_case(const HierCase& c, bool big) {
  using Body = void (*)(benchmark::State&, const HierSetup&);
  const auto add = [&c](const std::string& family, Body body) {
    auto* b = benchmark::RegisterBenchmark(("hier/" + family + "/" + c.label).c_str(),
                                           [c, body](benchmark::State& state) { run_hier(state, c, body); });
    b->Unit(benchmark::kMillisecond);
    return b;
  };
  auto* route = add("route", bench_route);
  auto* whole = add("whole_rebuild", bench_whole_rebuild);
  auto* change = add("goal_change", bench_goal_change);
  add("sector_build", bench_sector_build);
  add("near_change", bench_near_change);
  if (big) {
    route->Iterations(5);
    whole->Iterations(2);
    change->Iterations(5);
  }
}

/// The swarm's step in hierarchical mode with and without the near fields (NavigationSet::
/// set_near_fields()), Boston_0_1024 forced hierarchical, one goal at the centre, `agents` on
/// seeded random walkable cells within 200 cells of it (about a fifth of them within the
/// any-angle range): what sampling the near fields and their priorities adds per tick. One
/// thread; the fields' update is not timed.
void swarm_step_hier(benchmark::State& state, bool near_on) {
  const sim::GridMap& map = load_map("street/Boston_0_1024.map");
  const auto n = static_cast<std::size_t>(state.range(0));
  const sim::CellCoord g = nearest_walkable(map, {map.width() / 2, map.height() / 2});
  const sim::Vec2 goal[1] = {map.cell_center(g)};
  sim::NavigationSet nav;
  nav.set_field_mode(sim::FieldMode::kHierarchical);
  nav.set_near_fields(near_on);
  sim::Swarm swarm(sim::SwarmParams{}, n);
  swarm.set_environment(map, {});
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<std::int32_t> d(-200, 200);
  std::uniform_real_distribution<float> off(-0.35f, 0.35f);
  while (swarm.size() < n) {
    const sim::CellCoord c{g.x + d(rng), g.y + d(rng)};
    if (!map.walkable(c)) continue;
    const sim::Vec2 p = map.cell_center(c);
    swarm.add({p.x + off(rng), p.y + off(rng)});
  }
  const auto tick = [&] {
    nav.note_agents(map, swarm.xs(), swarm.ys());
    nav.update(map, goal, sim::size_class_bit(1));
  };
  for (int t = 0; t < 5; ++t) {
    tick();
    swarm.step(map, nav, 1.0f / 30.0f);
  }
  for (auto _ : state) {
    state.PauseTiming();
    tick();
    state.ResumeTiming();
    swarm.step(map, nav, 1.0f / 30.0f);
  }
  std::size_t in_range = 0;
  for (std::size_t i = 0; i < swarm.size(); ++i) {
    std::uint32_t raw = 0;
    in_range += nav.hierarchical_fields().near().find(map.world_to_cell({swarm.xs()[i], swarm.ys()[i]}), raw) >= 0 ? 1 : 0;
  }
  state.counters["agents_in_near_field"] = static_cast<double>(in_range);
}

}  // namespace

void register_hier_benchmarks(const BenchOptions& options) {
  // Near fields on and off in the same run (their ratio is the step's added cost).
  for (const bool near_on : {false, true}) {
    benchmark::RegisterBenchmark(near_on ? "hier/swarm_step/near" : "hier/swarm_step/sectors_only",
                                 [near_on](benchmark::State& st) { swarm_step_hier(st, near_on); })
        ->ArgNames({"agents"})
        ->Args({options.quick ? 10000 : 100000})
        ->Iterations(options.quick ? 10 : 20)
        ->Unit(benchmark::kMillisecond);
  }
  if (options.quick) {
    for (const std::int32_t side : {512, 1024}) register_hier_case({"city:" + std::to_string(side), side, ""}, false);
    return;
  }
  for (const std::int32_t side : {1024, 2048, 4096, 8192})
    register_hier_case({"city:" + std::to_string(side), side, ""}, side >= 4096);
  for (const char* map : {"street/Boston_0_1024.map", "street/Paris_1_1024.map", "street/Milan_1_1024.map"}) {
    register_hier_case({"tiled:" + map_label(map) + "x4", 0, map}, true);
  }
}

}  // namespace swarmfield::bench
