// Figure 1: rebuilding the integration + flow fields on a 1024 x 1024 street map, against a
// textbook binary-heap Dijkstra (with the same flow extraction) and a unit-step BFS.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "baselines/grid_bfs.hpp"
#include "baselines/heap_dijkstra.hpp"
#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/worker_pool.hpp"
#include "setup_or_skip.hpp"

namespace swarmfield::bench {

namespace {

constexpr double kMaxRelativeError = 1e-4;  // SPEC: field values exact within 1e-4 relative

/// Result of checking, once per (map, goals), that the baselines compute the same thing as
/// ours, so comparing their times is fair.
struct Agreement {
  bool ok = false;
  std::string why;            ///< reason when !ok
  double max_rel_error = 0.0; ///< heap Dijkstra vs ours over the sampled cells
  std::size_t reached = 0;    ///< cells reached (same for all three)
  double flow_mismatch = 0.0; ///< fraction of cells whose flow direction differs (float ties)
};

Agreement check_agreement(const sim::GridMap& map, const std::vector<sim::CellCoord>& goals) {
  Agreement a;
  sim::IntegrationField ours;
  sim::FlowField ours_flow;
  HeapDijkstra heap;
  GridBfs bfs;
  ours.build(map, goals);
  ours_flow.build(map, ours);
  const std::size_t heap_settled = heap.build(map, goals);
  const std::size_t bfs_reached = bfs.build(map, goals);
  a.reached = ours.reachable_count();
  if (heap_settled != a.reached || bfs_reached != a.reached) {
    a.why = "reached cells differ: ours " + std::to_string(a.reached) + ", heap Dijkstra " +
            std::to_string(heap_settled) + ", BFS " + std::to_string(bfs_reached);
    return a;
  }
  // Same reachable set, cell by cell.
  for (std::int32_t y = 0; y < map.height(); ++y) {
    for (std::int32_t x = 0; x < map.width(); ++x) {
      const bool r = ours.reachable(x, y);
      if (r != std::isfinite(heap.distance(x, y)) || r != (bfs.hops(x, y) >= 0)) {
        a.why = "reachability differs at cell (" + std::to_string(x) + "," + std::to_string(y) + ")";
        return a;
      }
    }
  }
  // Distances on sampled cells (and the farthest one, where float error accumulates most).
  std::vector<sim::CellCoord> sample = random_reachable_cells(ours, 2000, 7);
  const std::vector<std::uint32_t> values = ours.values();
  const auto far = std::max_element(values.begin(), values.end(), [](std::uint32_t p, std::uint32_t q) {
    return (p == sim::kUnreachable ? 0u : p) < (q == sim::kUnreachable ? 0u : q);
  });
  const auto fi = static_cast<std::int32_t>(far - values.begin());
  sample.push_back({fi % map.width(), fi / map.width()});
  for (const sim::CellCoord c : sample) {
    const double mine = ours.cost_to_goal(c.x, c.y);
    const double theirs = heap.distance(c.x, c.y);
    const double rel = std::abs(mine - theirs) / std::max(1.0, mine);
    a.max_rel_error = std::max(a.max_rel_error, rel);
    if (rel > kMaxRelativeError) {
      a.why = "heap Dijkstra distance " + std::to_string(theirs) + " vs ours " + std::to_string(mine) + " at (" +
              std::to_string(c.x) + "," + std::to_string(c.y) + ")";
      return a;
    }
  }
  std::vector<std::uint8_t> heap_flow;
  extract_flow(map, heap.distances(), heap_flow);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < heap_flow.size(); ++i) differ += heap_flow[i] != ours_flow.directions()[i];
  a.flow_mismatch = static_cast<double>(differ) / static_cast<double>(heap_flow.size());
  a.ok = true;
  return a;
}

struct FieldCase {
  std::string map;  // relative to maps_dir()
  int goal_count = 1;
};

/// Map, goals and agreement of a case, computed once and shared by its benchmarks.
struct FieldSetup {
  const sim::GridMap* map = nullptr;
  std::vector<sim::CellCoord> goals;
  Agreement agreement;
};

const FieldSetup& setup_for(const FieldCase& c) {
  static std::map<std::string, FieldSetup> cache;
  const std::string key = c.map + "#" + std::to_string(c.goal_count);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  FieldSetup s;
  s.map = &load_map(c.map);  // throws with a readable message
  s.goals = benchmark_goals(*s.map, c.goal_count);
  s.agreement = check_agreement(*s.map, s.goals);
  return cache.emplace(key, std::move(s)).first->second;
}

/// Runs `body` for every iteration after the shared set-up, reporting set-up failures.
template <class Body>
void run_case(benchmark::State& state, const FieldCase& c, Body&& body) {
  const FieldSetup* s = setup_or_skip(state, [&]() -> const FieldSetup& { return setup_for(c); });
  if (s == nullptr) return;
  if (!s->agreement.ok) {
    state.SkipWithError(("baselines disagree with ours: " + s->agreement.why).c_str());
    return;
  }
  body(state, *s);
  state.counters["cells_reached"] = static_cast<double>(s->agreement.reached);
  state.counters["goals"] = static_cast<double>(s->goals.size());
}

void register_case(const FieldCase& c) {
  // Built with append(): GCC 12 gives a false -Wrestrict on `"literal" + std::string` (PR 105329).
  std::string suffix = "/";
  suffix.append(map_label(c.map)).append("/goals:").append(std::to_string(c.goal_count));
  benchmark::RegisterBenchmark(("field/rebuild/ours" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      sim::IntegrationField integration;
      sim::FlowField flow;
      integration.build(*s.map, s.goals);  // warm the buffers: steady-state rebuilds are timed
      for (auto _ : st) {
        integration.build(*s.map, s.goals);
        // The path the server takes (NavigationFields): flow rows from the search snapshot.
        flow.build_rows(integration, 0, integration.height());
        benchmark::DoNotOptimize(flow.directions().data());
        benchmark::ClobberMemory();
      }
      st.counters["swept"] = integration.last_build_swept() ? 1.0 : 0.0;
      st.counters["sweeps"] = static_cast<double>(integration.sweep_count());
    });
  })->Unit(benchmark::kMillisecond);

  // The same with the integration searched by the Dijkstra wavefront alone (the method before
  // the sweeps; IntegrationField::Method::kWavefront): the same-run comparison for the sweeps.
  benchmark::RegisterBenchmark(("field/rebuild/wavefront" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      sim::IntegrationField integration;
      integration.set_method(sim::IntegrationField::Method::kWavefront);
      sim::FlowField flow;
      integration.build(*s.map, s.goals);
      for (auto _ : st) {
        integration.build(*s.map, s.goals);
        flow.build_rows(integration, 0, integration.height());
        benchmark::DoNotOptimize(flow.directions().data());
        benchmark::ClobberMemory();
      }
    });
  })->Unit(benchmark::kMillisecond);

  // The server's all-at-once rebuild (NavigationFields, as World drives it) with its 2-thread
  // pool: the search is sequential, the value and flow passes are split by rows. Wall time.
  benchmark::RegisterBenchmark(("field/rebuild/ours_2threads" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      sim::WorkerPool pool(2);
      sim::NavigationFields fields;
      fields.set_worker_pool(&pool);
      fields.update(*s.map, s.goals);  // warm the buffers
      for (auto _ : st) {
        fields.invalidate();  // next update() rebuilds all at once, same goals
        fields.update(*s.map, s.goals);
        benchmark::DoNotOptimize(fields.flow().directions().data());
        benchmark::ClobberMemory();
      }
    });
  })->Unit(benchmark::kMillisecond)->UseRealTime();

  benchmark::RegisterBenchmark(("field/integration/ours" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      sim::IntegrationField integration;
      integration.build(*s.map, s.goals);
      for (auto _ : st) {
        integration.build(*s.map, s.goals);
        benchmark::DoNotOptimize(integration.search_words().data());
        benchmark::ClobberMemory();
      }
    });
  })->Unit(benchmark::kMillisecond);

  benchmark::RegisterBenchmark(("field/rebuild/heap_dijkstra" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      HeapDijkstra heap;
      std::vector<std::uint8_t> flow;
      heap.build(*s.map, s.goals);
      for (auto _ : st) {
        heap.build(*s.map, s.goals);
        extract_flow(*s.map, heap.distances(), flow);
        benchmark::DoNotOptimize(flow.data());
        benchmark::ClobberMemory();
      }
      st.counters["max_rel_err"] = s.agreement.max_rel_error;
      st.counters["flow_mismatch"] = s.agreement.flow_mismatch;
    });
  })->Unit(benchmark::kMillisecond);

  benchmark::RegisterBenchmark(("field/integration/heap_dijkstra" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      HeapDijkstra heap;
      heap.build(*s.map, s.goals);
      for (auto _ : st) {
        heap.build(*s.map, s.goals);
        benchmark::DoNotOptimize(heap.distances().data());
        benchmark::ClobberMemory();
      }
    });
  })->Unit(benchmark::kMillisecond);

  benchmark::RegisterBenchmark(("field/integration/bfs" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      GridBfs bfs;
      bfs.build(*s.map, s.goals);
      for (auto _ : st) {
        benchmark::DoNotOptimize(bfs.build(*s.map, s.goals));
        benchmark::ClobberMemory();
      }
    });
  })->Unit(benchmark::kMillisecond);
}

/// The goals moved by one cell (each to the walkable cell nearest its right-hand neighbour), so
/// that alternating between the two sets makes every update a full rebuild of the same size.
std::vector<sim::CellCoord> shifted_goals(const sim::GridMap& map, const std::vector<sim::CellCoord>& goals) {
  std::vector<sim::CellCoord> out;
  for (const sim::CellCoord g : goals) {
    sim::CellCoord n = nearest_walkable(map, {g.x + 1, g.y});
    if (n == g) n = nearest_walkable(map, {g.x, g.y + 1});
    out.push_back(n);
  }
  return out;
}

/// Rebuilds through NavigationFields (1 thread, all at once) alternating between two goal sets
/// one cell apart: what a player stepping into the next cell costs. `any_angle` adds the
/// any-angle layer within `range` cells of the goals (its sight table is built once per map
/// revision, so steady-state rebuilds reuse it, as in the server).
void bench_nav_rebuild(benchmark::State& st, const FieldSetup& s, bool any_angle, float range) {
  const std::vector<sim::CellCoord> other = shifted_goals(*s.map, s.goals);
  sim::NavigationFields fields;
  fields.set_any_angle(any_angle);
  fields.set_any_angle_range(range);
  fields.update(*s.map, s.goals);  // warm: buffers and (with any_angle) the sight table
  fields.update(*s.map, other);
  bool flip = false;
  std::uint64_t work = 0;
  for (auto _ : st) {
    fields.update(*s.map, flip ? other : s.goals);
    work += fields.last_update_work();
    flip = !flip;
    benchmark::DoNotOptimize(fields.flow().directions().data());
    benchmark::ClobberMemory();
  }
  st.counters["work_units"] = static_cast<double>(work) / static_cast<double>(std::max<std::int64_t>(st.iterations(), 1));
  if (any_angle) st.counters["waypoint_cells"] = static_cast<double>(fields.any_angle().region_cells());
}

/// NavigationSet with size classes 1..`classes` present (unit-cost map: every class grid is the
/// map shrunk by its clearance), goals at cell centres alternating one cell apart: every update
/// rebuilds every class (integration + flow + any-angle).
void bench_set_rebuild(benchmark::State& st, const FieldSetup& s, int classes) {
  const std::vector<sim::CellCoord> other = shifted_goals(*s.map, s.goals);
  std::vector<sim::Vec2> a, b;
  for (const sim::CellCoord g : s.goals) a.push_back(s.map->cell_center(g));
  for (const sim::CellCoord g : other) b.push_back(s.map->cell_center(g));
  sim::SizeClassMask mask = 0;
  for (int n = 1; n <= classes; ++n) mask = static_cast<sim::SizeClassMask>(mask | sim::size_class_bit(n));
  sim::NavigationSet set;
  set.update(*s.map, a, mask);  // warm: clearance, class grids, sight tables, buffers
  set.update(*s.map, b, mask);
  bool flip = false;
  for (auto _ : st) {
    set.update(*s.map, flip ? b : a, mask);
    flip = !flip;
    benchmark::DoNotOptimize(set.fields(1).any_angle().waypoints().data());
    benchmark::ClobberMemory();
  }
  st.counters["classes"] = classes;
}

void register_any_angle_case(const FieldCase& c) {
  std::string suffix = "/";
  suffix.append(map_label(c.map)).append("/goals:").append(std::to_string(c.goal_count));
  constexpr float kDefaultRange = sim::NavigationFields::kDefaultAnyAngleRange;
  benchmark::RegisterBenchmark(("field/nav_rebuild/plain" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) { bench_nav_rebuild(st, s, false, kDefaultRange); });
  })->Unit(benchmark::kMillisecond);
  // The default range (what NavigationSet builds), and the pass over every reachable cell.
  benchmark::RegisterBenchmark(("field/nav_rebuild/any_angle" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) { bench_nav_rebuild(st, s, true, kDefaultRange); });
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("field/nav_rebuild/any_angle_unbounded" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      bench_nav_rebuild(st, s, true, sim::AnyAngleField::kUnboundedRange);
    });
  })->Unit(benchmark::kMillisecond);
  for (const int classes : {1, 2, 4}) {
    benchmark::RegisterBenchmark(("field/set_rebuild/classes:" + std::to_string(classes) + suffix).c_str(),
                                 [c, classes](benchmark::State& state) {
                                   run_case(state, c, [classes](benchmark::State& st, const FieldSetup& s) {
                                     bench_set_rebuild(st, s, classes);
                                   });
                                 })
        ->Unit(benchmark::kMillisecond);
  }
  // Per map revision (not per goal change): the clearance map and the sight table.
  benchmark::RegisterBenchmark(("field/map_revision/clearance" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      sim::ClearanceMap clearance;
      clearance.build(*s.map);
      for (auto _ : st) {
        clearance.build(*s.map);
        benchmark::DoNotOptimize(clearance.values().data());
        benchmark::ClobberMemory();
      }
    });
  })->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("field/map_revision/sight_table" + suffix).c_str(), [c](benchmark::State& state) {
    run_case(state, c, [](benchmark::State& st, const FieldSetup& s) {
      sim::IntegrationField integration;
      integration.build(*s.map, s.goals);
      sim::BlockedCountTable table;
      for (auto _ : st) {
        table.begin(integration);
        benchmark::DoNotOptimize(table.advance(integration, UINT64_MAX));
        benchmark::ClobberMemory();
      }
    });
  })->Unit(benchmark::kMillisecond);
}

}  // namespace

void register_field_benchmarks(const BenchOptions& options) {
  for (const char* map : {"street/Boston_0_1024.map", "street/Paris_1_1024.map"}) {
    register_case({map, 1});
    register_any_angle_case({map, 1});
    if (!options.quick) {
      register_case({map, 4});
      register_any_angle_case({map, 4});
    }
  }
}

}  // namespace swarmfield::bench
