// Figure 2: one flow field serves every agent; the alternative is one A* query per agent. This
// times N queries (N agents at seeded random walkable cells that can reach the goal) on the
// same map and goal as field/rebuild/ours/Boston_0_1024/goals:1, so the summary can compute the
// break-even agent count from the two.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "baselines/grid_astar.hpp"
#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::bench {

namespace {

constexpr const char* kMap = "street/Boston_0_1024.map";
constexpr std::size_t kMaxAgents = 1000;
constexpr std::uint64_t kStartSeed = 20240601;
constexpr std::size_t kVerifiedQueries = 50;

struct AStarSetup {
  const sim::GridMap* map = nullptr;
  sim::CellCoord goal;
  std::vector<sim::CellCoord> starts;  // kMaxAgents; N agents use the first N
  std::string error;                   // set-up or verification failure
};

/// Map, goal and starts, built once. Also checks (untimed) that A* finds the same path cost
/// as the integration field for the first starts, so both solve the same problem.
const AStarSetup& setup() {
  static const AStarSetup s = [] {
    AStarSetup r;
    try {
      r.map = &load_map(kMap);
    } catch (const std::exception& e) {
      r.error = e.what();
      return r;
    }
    r.goal = benchmark_goals(*r.map, 1).front();
    sim::IntegrationField field;
    const sim::CellCoord goals[] = {r.goal};
    field.build(*r.map, goals);
    r.starts = random_reachable_cells(field, kMaxAgents, kStartSeed);
    if (r.starts.size() != kMaxAgents) {
      r.error = "no cell of the map can reach the goal";
      return r;
    }
    GridAStar astar;
    for (std::size_t i = 0; i < kVerifiedQueries; ++i) {
      const sim::CellCoord c = r.starts[i];
      const GridAStar::Result found = astar.find_path(*r.map, c, r.goal);
      const double expected = field.cost_to_goal(c.x, c.y);
      if (!found.found || std::abs(found.cost - expected) > 1e-4 * std::max(1.0, expected)) {
        r.error = "A* cost " + std::to_string(found.found ? found.cost : -1.0f) + " vs field " +
                  std::to_string(expected) + " from (" + std::to_string(c.x) + "," + std::to_string(c.y) + ")";
        return r;
      }
    }
    return r;
  }();
  return s;
}

void astar_agents(benchmark::State& state) {
  const AStarSetup& s = setup();
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  const auto agents = static_cast<std::size_t>(state.range(0));
  GridAStar astar;
  astar.find_path(*s.map, s.starts.front(), s.goal);  // allocate the buffers before timing
  std::size_t expanded = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < agents; ++i) {
      const GridAStar::Result r = astar.find_path(*s.map, s.starts[i], s.goal);
      expanded += r.expanded;
      benchmark::DoNotOptimize(r);
    }
  }
  const double queries = static_cast<double>(agents) * static_cast<double>(state.iterations());
  state.counters["agents"] = static_cast<double>(agents);
  state.counters["s_per_query"] = benchmark::Counter(queries, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["expanded_per_query"] = static_cast<double>(expanded) / queries;
}

}  // namespace

void register_astar_benchmarks(const BenchOptions& options) {
  auto* b = benchmark::RegisterBenchmark(("astar/" + map_label(kMap)).c_str(), astar_agents);
  b->ArgName("agents")->Unit(benchmark::kMillisecond);
  if (options.quick) {
    for (const int n : {1, 10, 100}) b->Arg(n);
  } else {
    for (const int n : {1, 10, 15, 30, 100, 200, 1000}) b->Arg(n);
  }
}

}  // namespace swarmfield::bench
