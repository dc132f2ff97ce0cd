// Figure 3: cost of one Swarm::step per agent at 1k, 10k and 100k agents on a 1024 x 1024
// street map, with the agents spread over the map or packed around the goal, on 1 and 2
// threads (a WorkerPool, as World uses), plus the separation gather alone through the spatial
// hash vs by brute force (O(N^2)) at 10k. swarm/step_nav_kinds: the server's default kinds
// (runners, walkers, brutes by their spawn weights) at 100k, the mix issue 19's speed target
// is set for (the one-kind rows leave out the pair table, size class 2 and the kinds' rules);
// swarm/step_nav_kinds_every_tick: the same with far stepping off (SwarmParams::far_step_cells 0),
// its baseline in the same run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "baselines/brute_separation.hpp"
#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "hashed_separation.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/crowd/spatial_hash.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/worker_pool.hpp"

namespace swarmfield::bench {

namespace {

constexpr const char* kMap = "street/Boston_0_1024.map";
constexpr float kDt = 1.0f / 30.0f;          // SPEC default tick rate
constexpr int kWarmupTicks = 10;             // hash, caches and first-step repair settle
constexpr double kPackedAgentsPerCell = 1.5; // packed: this many agents per cell near the goal
constexpr std::uint64_t kSeed = 7;

enum class Layout { kSpread, kPacked };
const char* layout_name(Layout l) { return l == Layout::kSpread ? "spread" : "packed"; }

/// The map and its fields for the centre goal, built once: the single flow field of
/// Swarm::step(map, flow, integration), and the NavigationSet (size class 1, any-angle layer)
/// that World steps the swarm with.
struct FieldSetup {
  const sim::GridMap* map = nullptr;
  sim::NavigationFields fields;
  sim::NavigationSet nav;
  sim::NavigationSet nav_kinds;  // size classes 1 and 2: the default kinds' (a brute is class 2)
};

const FieldSetup& field_setup() {
  static FieldSetup s = [] {
    FieldSetup r;
    r.map = &load_map(kMap);  // throws with a readable message
    const std::vector<sim::CellCoord> goals = benchmark_goals(*r.map, 1);
    r.fields.update(*r.map, goals);
    const sim::Vec2 goal_positions[1] = {r.map->cell_center(goals[0])};
    r.nav.update(*r.map, goal_positions, sim::size_class_bit(1));
    r.nav_kinds.update(*r.map, goal_positions, sim::size_class_bit(1) | sim::size_class_bit(2));
    return r;
  }();
  return s;
}

/// How a benchmark steps the swarm: the single field, World's NavigationSet with one kind, or
/// with the server's default kinds.
enum class Steering { kFlowField, kNavigationSet, kNavigationSetKinds };

void step_swarm(sim::Swarm& swarm, const FieldSetup& f, Steering steering, sim::WorkerPool* pool) {
  if (steering == Steering::kNavigationSetKinds) {
    swarm.step(*f.map, f.nav_kinds, kDt, pool);
  } else if (steering == Steering::kNavigationSet) {
    swarm.step(*f.map, f.nav, kDt, pool);
  } else {
    swarm.step(*f.map, f.fields.flow(), f.fields.integration(), kDt, pool);
  }
}

/// A swarm of `n` agents, default parameters, warmed up by kWarmupTicks steps.
/// Spread: each agent in a seeded random reachable cell anywhere on the map.
/// Packed: agents fill the n / kPackedAgentsPerCell reachable cells closest to the goal (by path
/// cost), i.e. a crowd already pressing on the player.
/// Inside its cell an agent sits at a seeded random point at least 0.15 cell from the border.
/// kNavigationSetKinds: each agent's kind drawn by the default kinds' spawn weights (a brute
/// whose disc overlaps a wall there is moved clear by the first step, as the server's are).
sim::Swarm make_swarm(const FieldSetup& f, Layout layout, std::size_t n, sim::WorkerPool* pool = nullptr,
                      Steering steering = Steering::kFlowField,
                      float far_step_cells = sim::SwarmParams{}.far_step_cells) {
  const sim::GridMap& map = *f.map;
  const sim::IntegrationField& field = f.fields.integration();
  std::vector<sim::CellCoord> cells;
  if (layout == Layout::kSpread) {
    cells = random_reachable_cells(field, n, kSeed);
  } else {
    const auto k = static_cast<std::size_t>(std::ceil(static_cast<double>(n) / kPackedAgentsPerCell));
    cells = nearest_reachable_cells(field, std::max<std::size_t>(k, 1));
  }
  sim::SwarmParams params;
  params.far_step_cells = far_step_cells;
  sim::Swarm swarm(params, n);
  swarm.set_environment(map, {});
  const std::vector<sim::AgentKind> kinds = sim::default_agent_kinds();
  const bool mixed = steering == Steering::kNavigationSetKinds;
  if (mixed) swarm.set_kinds(kinds);
  std::mt19937_64 rng(kSeed + 1);
  std::uniform_real_distribution<float> offset(-0.35f, 0.35f), heading(-3.14159265f, 3.14159265f);
  const float cs = map.cell_size();
  for (std::size_t i = 0; i < n && !cells.empty(); ++i) {
    const sim::Vec2 c = map.cell_center(cells[i % cells.size()]);
    const float dx = offset(rng) * cs, dy = offset(rng) * cs;
    const float h = heading(rng);
    const std::uint8_t kind = mixed ? sim::pick_agent_kind(kinds, rng()) : std::uint8_t{0};
    swarm.add({c.x + dx, c.y + dy}, h, kind);
  }
  for (int t = 0; t < kWarmupTicks; ++t) step_swarm(swarm, f, steering, pool);
  return swarm;
}

/// Mean number of other agents within the separation radius (how crowded the layout is).
double mean_neighbours(const sim::GridMap& map, const sim::Swarm& swarm) {
  const float r = swarm.params().separation_radius;
  sim::SpatialHash hash;
  hash.configure(static_cast<float>(map.width()) * map.cell_size(), static_cast<float>(map.height()) * map.cell_size(), r);
  hash.rebuild(swarm.xs(), swarm.ys());
  const auto sx = hash.sorted_xs(), sy = hash.sorted_ys();
  std::size_t pairs = 0;
  for (std::size_t k = 0; k < sx.size(); ++k) {
    hash.for_each_slot_near({sx[k], sy[k]}, [&](std::uint32_t m) {
      const float dx = sx[k] - sx[m], dy = sy[k] - sy[m];
      pairs += (m != k && dx * dx + dy * dy < r * r) ? 1 : 0;
    });
  }
  return swarm.size() == 0 ? 0.0 : static_cast<double>(pairs) / static_cast<double>(swarm.size());
}

void report_memory(benchmark::State& state) {
  state.counters["rss_mib"] = current_rss_mib();
  state.counters["peak_rss_mib"] = peak_rss_mib();  // whole process so far (VmHWM)
}

void swarm_step(benchmark::State& state, Layout layout, Steering steering,
                float far_step_cells = sim::SwarmParams{}.far_step_cells) {
  const FieldSetup* f = nullptr;
  try {
    f = &field_setup();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto threads = static_cast<std::size_t>(state.range(1));
  // Created per run (thread start-up is not timed); threads 1 runs every loop inline.
  sim::WorkerPool pool(threads);
  sim::Swarm swarm = make_swarm(*f, layout, n, &pool, steering, far_step_cells);
  if (swarm.size() != n) {
    state.SkipWithError("could not place every agent");
    return;
  }
  const double neighbours = mean_neighbours(*f->map, swarm);
  // How far the crowd reaches from the goal (cost units along the streets): packed vs spread.
  double max_goal_distance = 0.0;
  for (std::size_t i = 0; i < swarm.size(); ++i) {
    const sim::CellCoord c = f->map->world_to_cell({swarm.xs()[i], swarm.ys()[i]});
    const double d = f->fields.integration().cost_to_goal(c.x, c.y);
    if (std::isfinite(d)) max_goal_distance = std::max(max_goal_distance, d);
  }
  for (auto _ : state) {
    step_swarm(swarm, *f, steering, &pool);
    benchmark::ClobberMemory();
  }
  const double agent_ticks = static_cast<double>(n) * static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(agent_ticks));
  state.counters["agents"] = static_cast<double>(n);
  state.counters["threads"] = static_cast<double>(pool.threads());
  // Wall time (the step runs UseRealTime): the main thread's CPU time would leave out what the
  // other workers did.
  state.counters["s_per_agent_tick"] =
      benchmark::Counter(agent_ticks, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["neighbours"] = neighbours;  // mean agents within R, at the start of timing
  state.counters["max_goal_dist"] = max_goal_distance;
  report_memory(state);
}

/// Positions of a warmed 10k swarm per layout, and whether the hashed and brute-force gathers
/// agree on them (checked once, untimed).
struct SeparationSetup {
  std::vector<float> xs, ys;
  SeparationKernel kernel;
  sim::SpatialHash hash;
  std::string error;
};

SeparationSetup& separation_setup(Layout layout, std::size_t n) {
  static std::map<std::pair<int, std::size_t>, SeparationSetup> cache;
  const auto key = std::make_pair(static_cast<int>(layout), n);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  SeparationSetup& s = cache[key];
  try {
    const FieldSetup& f = field_setup();
    const sim::Swarm swarm = make_swarm(f, layout, n);
    s.xs.assign(swarm.xs().begin(), swarm.xs().end());
    s.ys.assign(swarm.ys().begin(), swarm.ys().end());
    s.kernel = SeparationKernel::from(swarm.params());
    const float cs = f.map->cell_size();
    s.hash.configure(static_cast<float>(f.map->width()) * cs, static_cast<float>(f.map->height()) * cs,
                     swarm.params().separation_radius);
    s.hash.reserve(n);
  } catch (const std::exception& e) {
    s.error = e.what();
    return s;
  }
  std::vector<float> hx, hy, bx, by;
  hashed_separation(s.kernel, s.hash, s.xs, s.ys, hx, hy);
  brute_force_separation(s.kernel, s.xs, s.ys, bx, by);
  for (std::size_t i = 0; i < s.xs.size(); ++i) {
    const float tol = 1e-5f + 1e-4f * std::max(std::abs(bx[i]), std::abs(by[i]));
    if (std::abs(hx[i] - bx[i]) > tol || std::abs(hy[i] - by[i]) > tol) {
      s.error = "hashed and brute-force separation differ for agent " + std::to_string(i);
      break;
    }
  }
  return s;
}

void separation(benchmark::State& state, Layout layout, bool brute) {
  const auto n = static_cast<std::size_t>(state.range(0));
  SeparationSetup& s = separation_setup(layout, n);
  if (!s.error.empty()) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  std::vector<float> out_x, out_y;
  for (auto _ : state) {
    if (brute) {
      brute_force_separation(s.kernel, s.xs, s.ys, out_x, out_y);
    } else {
      hashed_separation(s.kernel, s.hash, s.xs, s.ys, out_x, out_y);
    }
    benchmark::DoNotOptimize(out_x.data());
    benchmark::ClobberMemory();
  }
  const double agent_ticks = static_cast<double>(n) * static_cast<double>(state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(agent_ticks));
  state.counters["agents"] = static_cast<double>(n);
  state.counters["s_per_agent_tick"] =
      benchmark::Counter(agent_ticks, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

void register_swarm_benchmarks(const BenchOptions& options) {
  // Timed ticks per run are fixed (not chosen by the library) so the crowd's state, which drifts
  // towards the goal every tick, is the same in every repetition: ~10 s of game time at 1k.
  struct Size {
    int agents;
    int ticks;
  };
  const std::vector<Size> sizes = options.quick ? std::vector<Size>{{1000, 30}, {10000, 10}, {100000, 3}}
                                                : std::vector<Size>{{1000, 300}, {10000, 100}, {100000, 30}};
  // Threads of the WorkerPool passed to Swarm::step (the server runs 2; 1 = the calling thread
  // alone). Timed in wall-clock time: the target is per agent-tick on the whole machine.
  const std::vector<int> thread_counts = {1, 2};
  for (const Layout layout : {Layout::kSpread, Layout::kPacked}) {
    for (const Size& s : sizes) {
      for (const int threads : thread_counts) {
        // swarm/step: the single flow field; swarm/step_nav: World's NavigationSet (any-angle
        // directions, rest round a goal in sight), the path the server runs.
        for (const Steering steering : {Steering::kFlowField, Steering::kNavigationSet}) {
          const std::string name = steering == Steering::kFlowField ? "swarm/step/" : "swarm/step_nav/";
          benchmark::RegisterBenchmark((name + layout_name(layout)).c_str(),
                                       [layout, steering](benchmark::State& st) { swarm_step(st, layout, steering); })
              ->ArgNames({"agents", "threads"})
              ->Args({s.agents, threads})
              ->Iterations(s.ticks)
              ->UseRealTime()
              ->Unit(benchmark::kMicrosecond);
        }
        if (s.agents == 100000) {
          // The same with every agent stepped every tick (SwarmParams::far_step_cells 0): the
          // baseline of far stepping, in the same run.
          for (const float far : {sim::SwarmParams{}.far_step_cells, 0.0f}) {
            const std::string row = far > 0.0f ? "swarm/step_nav_kinds/" : "swarm/step_nav_kinds_every_tick/";
            benchmark::RegisterBenchmark((row + layout_name(layout)).c_str(),
                                         [layout, far](benchmark::State& st) {
                                           swarm_step(st, layout, Steering::kNavigationSetKinds, far);
                                         })
                ->ArgNames({"agents", "threads"})
                ->Args({s.agents, threads})
                ->Iterations(s.ticks)
                ->UseRealTime()
                ->Unit(benchmark::kMicrosecond);
          }
        }
      }
    }
  }
  const std::vector<Layout> layouts =
      options.quick ? std::vector<Layout>{Layout::kSpread} : std::vector<Layout>{Layout::kSpread, Layout::kPacked};
  for (const Layout layout : layouts) {
    benchmark::RegisterBenchmark((std::string("swarm/separation/hash/") + layout_name(layout)).c_str(),
                                 [layout](benchmark::State& st) { separation(st, layout, false); })
        ->ArgName("agents")
        ->Arg(10000)
        ->Unit(benchmark::kMicrosecond);
    auto* b = benchmark::RegisterBenchmark((std::string("swarm/separation/brute/") + layout_name(layout)).c_str(),
                                           [layout](benchmark::State& st) { separation(st, layout, true); });
    b->ArgName("agents")->Arg(10000)->Unit(benchmark::kMillisecond);
    if (options.quick) b->Iterations(1);
  }
}

}  // namespace swarmfield::bench
