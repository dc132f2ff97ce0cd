// `swarmfield-tool sim (MAP | --city-seed S [--size N]) --agents N --ticks T --seed S`: a
// headless run of the world with one scripted player, for profiling and replay checks.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/flow_field.hpp"
#include "swarmfield/sim/nav/integration_field.hpp"
#include "swarmfield/sim/nav/navigation_fields.hpp"
#include "swarmfield/sim/world.hpp"
#include "tool_commands.hpp"

namespace swarmfield::tool {

namespace {

struct SimOptions {
  std::string map_path;
  std::optional<std::uint64_t> city_seed;
  int size = 256;
  std::uint32_t agents = 1000;
  std::uint64_t ticks = 300;
  std::uint64_t seed = 1;
  double tick_hz = 30.0;
  bool no_progress = false;
};

/// The scripted player: walks a loop of waypoints (cells reachable from its start) following
/// its own flow field, so the world's goal cell keeps changing and the fields keep rebuilding.
class ScriptedPlayer {
 public:
  ScriptedPlayer(const sim::GridMap& map, sim::Vec2 start) : map_(map) {
    const sim::CellCoord start_cell = map.world_to_cell(start);
    sim::IntegrationField reach;
    const sim::CellCoord goals[1] = {start_cell};
    reach.build(map, goals);
    // Waypoints: the reachable cells nearest to the four quarter points of the map.
    const float w = static_cast<float>(map.width()), h = static_cast<float>(map.height());
    const std::array<sim::Vec2, 4> targets = {{{0.25f * w, 0.25f * h}, {0.75f * w, 0.25f * h},
                                               {0.75f * w, 0.75f * h}, {0.25f * w, 0.75f * h}}};
    for (const sim::Vec2 t : targets) {
      float best = std::numeric_limits<float>::infinity();
      sim::CellCoord best_cell{-1, -1};
      for (std::int32_t y = 0; y < map.height(); ++y) {
        for (std::int32_t x = 0; x < map.width(); ++x) {
          if (!reach.reachable(x, y)) continue;
          const float dx = static_cast<float>(x) + 0.5f - t.x, dy = static_cast<float>(y) + 0.5f - t.y;
          const float d2 = dx * dx + dy * dy;
          if (d2 < best) {
            best = d2;
            best_cell = {x, y};
          }
        }
      }
      if (best_cell.x >= 0 && !(best_cell == start_cell)) waypoints_.push_back(best_cell);
    }
  }

  /// Intent for this tick (|intent| <= 1) given the player's current position.
  sim::Vec2 intent(sim::Vec2 position) {
    if (waypoints_.empty()) return {};
    // Move on when the waypoint is reached, or when no progress was made for kStuckTicks.
    float dist = sim::length(map_.cell_center(waypoints_[next_]) - position);
    if (dist < best_dist_ - 0.1f) {
      best_dist_ = dist;
      ticks_without_progress_ = 0;
    } else {
      ++ticks_without_progress_;
    }
    if (dist < 0.5f || ticks_without_progress_ > kStuckTicks) {
      next_ = (next_ + 1) % waypoints_.size();
      dist = sim::length(map_.cell_center(waypoints_[next_]) - position);
      best_dist_ = dist;
      ticks_without_progress_ = 0;
    }
    const sim::CellCoord goals[1] = {waypoints_[next_]};
    nav_.update(map_, goals);
    sim::Vec2 dir = sim::sample_flow(map_, nav_.flow(), position);
    if (dir.x == 0.0f && dir.y == 0.0f) {  // in the waypoint cell: head for its centre
      dir = sim::normalized_or_zero(map_.cell_center(waypoints_[next_]) - position);
    }
    return dir;
  }

  [[nodiscard]] std::size_t waypoint_count() const noexcept { return waypoints_.size(); }

 private:
  static constexpr std::uint64_t kStuckTicks = 150;
  const sim::GridMap& map_;
  std::vector<sim::CellCoord> waypoints_;
  std::size_t next_ = 0;
  float best_dist_ = std::numeric_limits<float>::infinity();
  std::uint64_t ticks_without_progress_ = 0;
  sim::NavigationFields nav_;
};

double mean_distance_to(const sim::Swarm& swarm, sim::Vec2 p) {
  const auto xs = swarm.xs();
  const auto ys = swarm.ys();
  if (xs.empty()) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    sum += std::hypot(static_cast<double>(xs[i] - p.x), static_cast<double>(ys[i] - p.y));
  }
  return sum / static_cast<double>(xs.size());
}

int run_sim(const SimOptions& opt) {
  // Also checked on the command line (strict_values): NaN would make every dt NaN.
  if (!(std::isfinite(opt.tick_hz) && opt.tick_hz > 0.0)) {
    std::fprintf(stderr, "error: --tick-hz must be a finite number > 0 (got %g)\n", opt.tick_hz);
    return 2;
  }
  sim::GridMap map;
  std::string map_label;
  if (opt.city_seed.has_value()) {
    if (!opt.map_path.empty()) {
      std::fprintf(stderr, "error: give either MAP or --city-seed, not both\n");
      return 2;
    }
    map = sim::generate_city({opt.size, opt.size, *opt.city_seed});
    map_label = "city(seed=" + std::to_string(*opt.city_seed) + ")";
  } else {
    if (opt.map_path.empty()) {
      std::fprintf(stderr, "error: give a MAP file or --city-seed S (see --help)\n");
      return 2;
    }
    sim::MapError error;
    if (!io::read_map_file(opt.map_path, map, error)) {
      std::fprintf(stderr, "error: %s\n", error.to_string().c_str());
      return 2;
    }
    map_label = opt.map_path;
  }
  if (map.walkable_count() == 0) {
    std::fprintf(stderr, "error: %s has no walkable cell\n", map_label.c_str());
    return 2;
  }

  sim::WorldParams params;
  params.seed = opt.seed;
  params.max_agents = opt.agents;
  params.spawner.initial_agents = opt.agents;
  const sim::Vec2 centre{static_cast<float>(map.width()) * map.cell_size() * 0.5f,
                         static_cast<float>(map.height()) * map.cell_size() * 0.5f};
  sim::World world(map, params);
  const std::uint32_t player = world.add_player(centre);
  ScriptedPlayer script(world.map(), world.find_player(player)->position);
  const float dt = static_cast<float>(1.0 / opt.tick_hz);

  std::printf("map=%s size=%dx%d walkable=%zu agents=%u ticks=%" PRIu64 " seed=%" PRIu64 " tick_hz=%g waypoints=%zu\n",
              map_label.c_str(), map.width(), map.height(), map.walkable_count(), opt.agents, opt.ticks, opt.seed,
              opt.tick_hz, script.waypoint_count());
  std::fflush(stdout);

  const bool tty = isatty(STDERR_FILENO) != 0;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  Clock::time_point last_report = begin;
  std::uint64_t last_report_tick = 0;
  double step_seconds = 0.0;
  double step_seconds_at_report = 0.0;
  for (std::uint64_t t = 0; t < opt.ticks; ++t) {
    const sim::Player* p = world.find_player(player);
    (void)world.set_player_intent(player, script.intent(p->position));
    const Clock::time_point s0 = Clock::now();
    world.step(dt);
    const Clock::time_point s1 = Clock::now();
    step_seconds += std::chrono::duration<double>(s1 - s0).count();
    if (!opt.no_progress && s1 - last_report >= std::chrono::seconds(1)) {
      const std::uint64_t ticks = world.tick() - last_report_tick;
      const double ms = ticks > 0 ? 1000.0 * (step_seconds - step_seconds_at_report) / static_cast<double>(ticks) : 0.0;
      std::fprintf(stderr, "tick=%" PRIu64 " agents=%zu mean_dist=%.1f ms_per_tick=%.3f rebuilds=%" PRIu64 "%s",
                   world.tick(), world.swarm().size(), mean_distance_to(world.swarm(), world.find_player(player)->position),
                   ms, world.rebuild_count(), tty ? "\r" : "\n");
      std::fflush(stderr);
      last_report = s1;
      last_report_tick = world.tick();
      step_seconds_at_report = step_seconds;
    }
  }
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  if (tty && !opt.no_progress) std::fprintf(stderr, "\r\033[K");
  const double ms_per_tick = opt.ticks > 0 ? 1000.0 * step_seconds / static_cast<double>(opt.ticks) : 0.0;
  const double ns_per_agent_tick =
      world.swarm().size() > 0 ? 1e6 * ms_per_tick / static_cast<double>(world.swarm().size()) : 0.0;
  std::fprintf(stderr, "sim: %" PRIu64 " ticks in %.2f s, %.3f ms per tick (%.1f ns per agent-tick), mean_dist=%.1f\n",
               opt.ticks, wall, ms_per_tick, ns_per_agent_tick,
               mean_distance_to(world.swarm(), world.find_player(player)->position));
  std::printf("ticks=%" PRIu64 " agents=%zu rebuilds=%" PRIu64 " state_hash=0x%016" PRIx64 "\n", world.tick(),
              world.swarm().size(), world.rebuild_count(), world.state_hash());
  std::fflush(stdout);
  return 0;
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto opt = std::make_shared<SimOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sim",
      "Run the world headless with one scripted player walking between waypoints.\n"
      "The agents spawn on the first tick (seeded); progress goes to stderr about once a second;\n"
      "the last stdout line is\n"
      "  ticks=T agents=N rebuilds=R state_hash=0x<16 hex digits>\n"
      "which is identical for identical arguments on the same build.\n"
      "Exit status: 0 done, 2 unreadable map or bad arguments.");
  auto* map_opt = cmd->add_option("MAP", opt->map_path, "MovingAI .map file (or ASCII map)");
  auto* city_opt = cmd->add_option("--city-seed", opt->city_seed, "use a generated city with this seed instead of MAP");
  map_opt->excludes(city_opt);
  cmd->add_option("--size", opt->size, "generated city width and height in cells (default 256)")
      ->check(CLI::Range(32, 4096));
  cmd->add_option("--agents", opt->agents, "agents spawned on the first tick (default 1000)")
      ->check(CLI::Range(0u, 10000000u));
  cmd->add_option("--ticks", opt->ticks, "ticks to simulate (default 300)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1000000000}));
  cmd->add_option("--seed", opt->seed, "world seed (spawn positions) (default 1)");
  cmd->add_option("--tick-hz", opt->tick_hz, "ticks per simulated second; dt = 1 / tick-hz (default 30)")
      ->check(CLI::Range(1.0, 1000.0));
  cmd->add_flag("--no-progress", opt->no_progress, "do not print progress on stderr");
  cmd->callback([opt] { set_exit_code(run_sim(*opt)); });
}

}  // namespace swarmfield::tool
