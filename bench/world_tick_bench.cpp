// Figure 7: one World tick vs map size, the server's load test in a benchmark: 100k agents of
// the server's default kinds spawned over the whole map, 8 players walking at 10 cells per
// second from the map centre (a seeded new direction every 45 ticks), 30 Hz, the server's field
// budget (200000 work units per tick), 1 thread. Boston_0_1024 whole-map and hierarchical (the
// same code path as the big maps), tiled 4 x 4 (4096) and 8 x 8 (8192, not with --quick), both
// hierarchical (the default there). Counters per tick (CPU time): fields_ms (World::begin_tick: players,
// occupied sectors, routes and sector fields) and swarm_ms (finish_tick: the swarm step,
// contacts, state hash); the summary divides the big maps' figures by Boston_0_1024
// hierarchical's of the same run: the same agents should cost the same on a bigger map.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <exception>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/map/tiled_map.hpp"
#include "swarmfield/rules/lua_rules.hpp"
#include "swarmfield/sim/world.hpp"

// Only the timed ticks run instrumented under callgrind (--instr-atstart=no), e.g. with --quick.
#include "callgrind_markers.hpp"
#include "setup_or_skip.hpp"

namespace swarmfield::bench {

namespace {

constexpr const char* kMap = "street/Boston_0_1024.map";
constexpr float kDt = 1.0f / 30.0f;
constexpr std::size_t kAgents = 100000;
constexpr int kPlayers = 8;
constexpr float kPlayerSpeed = 10.0f;
constexpr std::size_t kBudget = 200000;  // the server's auto budget above 512 x 512
constexpr int kTurnTicks = 45;           // a player picks a new direction this often
constexpr int kWarmupTicks = 90;         // spawn, first sector fields, a few direction changes

struct WorldCase {
  std::string label;  // <map>x<tiles>/<mode>[/combat]
  int tiles = 1;
  sim::FieldMode mode = sim::FieldMode::kAuto;
  /// The horde rules on, every player firing every tick (fire_interval = one tick) along an aim
  /// that turns a little each tick, and unkillable (so all 8 fight the whole run): the worst
  /// case of the rules phase (contacts with damage, 8 shots, deaths, respawn checks).
  bool combat = false;
  /// Also (with combat) each player keeps up to 8 barricades round it (a ring two cells out,
  /// rebuilt every 30 ticks where they fell), and the rules run after each step: the shipped
  /// Lua last_stand.lua (its on_tick, a call per kill, a wave every 20 s) -- figure 8d.
  bool build = false;
};

/// A World as the server runs it, and its players' walk (a xorshift per player: reproducible).
struct WorldSetup {
  std::unique_ptr<sim::World> world;
  std::vector<std::uint32_t> players;
  std::vector<std::uint64_t> rng;
  int ticks = 0;
  bool combat = false;
  bool build = false;
  std::unique_ptr<rules::GameRules> rules;
  std::unique_ptr<rules::RulesContext> rules_context;
  rules::RulesTracker rules_tracker;

  void steer_players() {
    if (combat) {
      for (std::size_t i = 0; i < players.size(); ++i) {
        const float a = 0.05f * static_cast<float>(ticks) + 0.785f * static_cast<float>(i);
        (void)world->set_player_fire(players[i], true, {std::cos(a), std::sin(a)});
      }
    }
    if (build && ticks % 30 == 0) {
      for (const std::uint32_t id : players) {
        const sim::Player* pl = world->find_player(id);
        if (pl == nullptr) continue;
        const sim::CellCoord c = world->map().world_to_cell(pl->position);
        for (int d = -2; d <= 2; d += 4) {
          for (int e = -1; e <= 1; ++e) {
            (void)world->build_barricade(id, {c.x + d, c.y + e});
            (void)world->build_barricade(id, {c.x + e, c.y + d});
          }
        }
      }
    }
    if (ticks % kTurnTicks != 0) return;
    for (std::size_t i = 0; i < players.size(); ++i) {
      std::uint64_t& s = rng[i];
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      const float a = static_cast<float>(s >> 40) * (6.2831853f / 16777216.0f);
      (void)world->set_player_intent(players[i], {std::cos(a), std::sin(a)});
    }
  }
  /// One tick; adds the two phases' CPU times (ms, this thread: the World runs on it alone) to
  /// the sums. CPU time, not wall time: the machine is shared, and a phase's CPU time does not
  /// count the time other processes held the core.
  void tick(double& fields_ms, double& swarm_ms) {
    steer_players();
    const double t0 = thread_cpu_ms();
    world->begin_tick(kDt);
    const double t1 = thread_cpu_ms();
    world->finish_tick(kDt);
    if (rules) {
      rules::run_rules_after_step(*rules, *rules_context, rules_tracker, world->barricade_changes());
      world->clear_barricade_changes();
    }
    const double t2 = thread_cpu_ms();
    fields_ms += t1 - t0;
    swarm_ms += t2 - t1;
    ++ticks;
  }
  static double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
  }
};

WorldSetup& setup_for(const WorldCase& c) {
  static std::map<std::string, std::unique_ptr<WorldSetup>> cache;
  if (auto it = cache.find(c.label); it != cache.end()) return *it->second;
  auto s = std::make_unique<WorldSetup>();
  sim::GridMap map = c.tiles > 1 ? sim::tiled_map(load_map(kMap), c.tiles) : load_map(kMap);
  sim::WorldParams p;
  p.kinds = sim::default_agent_kinds();
  p.max_agents = kAgents;
  p.spawner.initial_agents = kAgents;
  p.player_speed = kPlayerSpeed;
  p.field_rebuild_budget = kBudget;
  p.field_mode = c.mode;
  p.worker_threads = 1;
  s->combat = c.combat;
  s->build = c.build;
  if (c.combat) {
    p.combat.enabled = true;
    p.combat.player_health = sim::kMaxCombatValue;  // nobody dies: 8 fighters all the run
    p.combat.fire_interval = kDt;
  }
  const sim::CellCoord centre = nearest_walkable(map, {map.width() / 2, map.height() / 2});
  s->world = std::make_unique<sim::World>(std::move(map), p);
  if (c.build) {
    std::ifstream in(std::string(SWARMFIELD_SOURCE_DIR) + "/server/rules/scripts/last_stand.lua");
    const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    s->rules = std::make_unique<rules::LuaRules>(script, "last_stand.lua", 1);
    s->rules_context = std::make_unique<rules::RulesContext>(*s->world, kDt);
  }
  for (int i = 0; i < kPlayers; ++i) {
    s->players.push_back(s->world->add_player(s->world->map().cell_center(centre)));
    s->rng.push_back(0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i + 1));
  }
  double f = 0.0, w = 0.0;
  for (int t = 0; t < kWarmupTicks; ++t) s->tick(f, w);
  return *cache.emplace(c.label, std::move(s)).first->second;
}

void register_world_case(const WorldCase& c, int ticks) {
  auto* b = benchmark::RegisterBenchmark(("world/tick/" + c.label).c_str(), [c](benchmark::State& state) {
    WorldSetup* s = setup_or_skip(state, [&]() -> WorldSetup& { return setup_for(c); });
    if (s == nullptr) return;
    double fields_ms = 0.0, swarm_ms = 0.0;
    std::int64_t n = 0;
    const auto sector_builds = [&] {
      const sim::NavigationSet& nav = s->world->navigation();
      std::uint64_t builds = 0;
      for (int cls = 1; cls <= sim::kMaxSizeClass; ++cls) {
        if (nav.hierarchical() && nav.has_class(cls)) builds += nav.hierarchical_fields(cls).fields().build_count();
      }
      return builds;
    };
    const std::uint64_t builds_before = sector_builds();
    SWARMFIELD_CALLGRIND_ON();
    for (auto _ : state) {
      s->tick(fields_ms, swarm_ms);
      ++n;
    }
    SWARMFIELD_CALLGRIND_OFF();
    state.counters["fields_ms"] = n > 0 ? fields_ms / static_cast<double>(n) : 0.0;
    state.counters["swarm_ms"] = n > 0 ? swarm_ms / static_cast<double>(n) : 0.0;
    state.counters["side"] = static_cast<double>(s->world->map().width());
    state.counters["agents"] = static_cast<double>(s->world->swarm().size());
    if (c.combat) {
      state.counters["shots"] = static_cast<double>(s->world->shots());
      state.counters["kills"] = static_cast<double>(s->world->kills());
    }
    if (c.build) {
      state.counters["barricades_built"] = static_cast<double>(s->world->barricades_built());
      state.counters["barricades_fallen"] = static_cast<double>(s->world->barricades_fallen());
      state.counters["rules_ok"] = s->rules->stopped().empty() ? 1.0 : 0.0;
    }
    // Hierarchical mode: occupied sectors and those left without a current field by the last
    // tick's budget (their agents steer by the portal fallback or an out-of-date field), all
    // size classes; sector fields built per tick over the timed ticks.
    const sim::NavigationSet& nav = s->world->navigation();
    if (nav.hierarchical()) {
      double occupied = 0.0, pending = 0.0;
      for (int cls = 1; cls <= sim::kMaxSizeClass; ++cls) {
        if (!nav.has_class(cls)) continue;
        occupied += static_cast<double>(nav.hierarchical_fields(cls).fields().occupied_count());
        pending += static_cast<double>(nav.hierarchical_fields(cls).fields().pending_count());
      }
      state.counters["sectors_occupied"] = occupied;
      state.counters["sectors_pending"] = pending;
      state.counters["sector_builds_per_tick"] =
          n > 0 ? static_cast<double>(sector_builds() - builds_before) / static_cast<double>(n) : 0.0;
    }
  });
  b->Unit(benchmark::kMillisecond)->Iterations(ticks);
}

/// The same World ticking with a run-time blocker: one street cell near the map centre (where
/// the players start) walled, and opened again, every kEditTicks ticks (a player building and
/// breaking a barricade twice a second). Counters: edit_tick_ms and plain_tick_ms, the mean CPU
/// time (fields + swarm) of the ticks after an edit and of the others in the same run, and
/// max_tick_ms. Runs after world/tick/ on the same cached World; leaves the map as it found it.
constexpr int kEditTicks = 15;

void register_world_edit_case(const WorldCase& c, int ticks) {
  const std::string name = "world/tick_with_edits/" + c.label;
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& state) {
    WorldSetup* s = setup_or_skip(state, [&]() -> WorldSetup& { return setup_for(c); });
    if (s == nullptr) return;
    const sim::GridMap& map = s->world->map();
    sim::CellCoord cell = nearest_walkable(map, {map.width() / 2 + 20, map.height() / 2 + 20});
    const std::uint8_t original = map.cost(cell.x, cell.y);
    double edit_ms = 0.0, plain_ms = 0.0, max_ms = 0.0;
    std::int64_t edits = 0, plain = 0, n = 0;
    for (auto _ : state) {
      const bool edit = n % kEditTicks == 0;
      if (edit) {
        s->world->set_cell_cost(cell, map.walkable(cell) ? sim::kBlockedCost : original);
      }
      double fields_ms = 0.0, swarm_ms = 0.0;
      s->tick(fields_ms, swarm_ms);
      const double ms = fields_ms + swarm_ms;
      (edit ? edit_ms : plain_ms) += ms;
      ++(edit ? edits : plain);
      max_ms = std::max(max_ms, ms);
      ++n;
    }
    s->world->set_cell_cost(cell, original);
    state.counters["edit_tick_ms"] = edits > 0 ? edit_ms / static_cast<double>(edits) : 0.0;
    state.counters["plain_tick_ms"] = plain > 0 ? plain_ms / static_cast<double>(plain) : 0.0;
    state.counters["max_tick_ms"] = max_ms;
    state.counters["edits"] = static_cast<double>(edits);
    state.counters["side"] = static_cast<double>(map.width());
  });
  b->Unit(benchmark::kMillisecond)->Iterations(ticks);
}

}  // namespace

/// A settled pile (figure 8e, sleep): 10k agents of the default kinds spawned over an open 256 x
/// 256 map round one standing player, stepped 60 s (1800 ticks, untimed) until the pile has
/// formed and rests; then `ticks` timed World ticks, 1 thread. `sleep_after_ticks` 0 is the
/// baseline (every agent gathers every tick); the server's default (30) lets the settled agents
/// sleep (SwarmParams::sleep_after_ticks). Counters: swarm_ms (CPU per tick) and asleep (agents
/// asleep on the last tick).
void settled_pile(benchmark::State& state, std::uint32_t sleep_after_ticks, int ticks) {
  constexpr std::int32_t kSide = 256;
  constexpr int kSettleTicks = 1800;
  sim::GridMap map(kSide, kSide);
  for (std::int32_t i = 0; i < kSide; ++i) {
    map.set_cost(i, 0, sim::kBlockedCost);
    map.set_cost(i, kSide - 1, sim::kBlockedCost);
    map.set_cost(0, i, sim::kBlockedCost);
    map.set_cost(kSide - 1, i, sim::kBlockedCost);
  }
  sim::WorldParams params;
  params.max_agents = 10000;
  params.kinds = sim::default_agent_kinds();
  params.swarm.sleep_after_ticks = sleep_after_ticks;
  params.spawner.initial_agents = 10000;
  params.seed = 5;
  sim::World world(std::move(map), params);
  world.add_player({128.5f, 128.5f});
  for (int i = 0; i < kSettleTicks; ++i) world.step(kDt);
  const auto thread_cpu_ms = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
  };
  double swarm_ms = 0.0;
  SWARMFIELD_CALLGRIND_ON();
  for (auto _ : state) {
    for (int i = 0; i < ticks; ++i) {
      const double t0 = thread_cpu_ms();
      world.step(kDt);
      swarm_ms += thread_cpu_ms() - t0;
    }
  }
  SWARMFIELD_CALLGRIND_OFF();
  const double total = static_cast<double>(state.iterations()) * static_cast<double>(ticks);
  state.counters["swarm_ms"] = total > 0.0 ? swarm_ms / total : 0.0;
  state.counters["asleep"] = static_cast<double>(world.swarm().sleeping_count());
  state.counters["agents"] = static_cast<double>(world.swarm().size());
}

void register_world_tick_benchmarks(const BenchOptions& options) {
  // Figure 8e: a settled pile without and with sleep (the ratio is the gain).
  for (const std::uint32_t sleep : {0u, 30u}) {
    const int pile_ticks = options.quick ? 3 : 60;
    benchmark::RegisterBenchmark(("world/settled_pile/open256/sleep:" + std::to_string(sleep)).c_str(),
                                 [sleep, pile_ticks](benchmark::State& st) { settled_pile(st, sleep, pile_ticks); })
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  const int ticks = options.quick ? 3 : 60;
  register_world_case({"Boston_0_1024/whole", 1, sim::FieldMode::kWhole}, ticks);
  // The same World with the horde rules and 8 players firing every tick (figure 8c).
  register_world_case({"Boston_0_1024/whole/combat", 1, sim::FieldMode::kWhole, true}, ticks);
  // ... and building barricades, with the Lua last_stand rules after each step (figure 8d).
  register_world_case({"Boston_0_1024/whole/fight", 1, sim::FieldMode::kWhole, true, true}, ticks);
  register_world_case({"Boston_0_1024/hierarchical", 1, sim::FieldMode::kHierarchical}, ticks);
  register_world_case({"Boston_0_1024x4/hierarchical", 4, sim::FieldMode::kHierarchical}, ticks);
  if (!options.quick) register_world_case({"Boston_0_1024x8/hierarchical", 8, sim::FieldMode::kHierarchical}, ticks);
  // A run-time blocker every kEditTicks ticks (after the plain ticks of the same World).
  const int edit_ticks = options.quick ? kEditTicks + 1 : 6 * kEditTicks;
  register_world_edit_case({"Boston_0_1024x4/hierarchical", 4, sim::FieldMode::kHierarchical}, edit_ticks);
  if (!options.quick) register_world_edit_case({"Boston_0_1024x8/hierarchical", 8, sim::FieldMode::kHierarchical}, edit_ticks);
}

}  // namespace swarmfield::bench
