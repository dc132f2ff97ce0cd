// `swarmfield-tool sim (MAP | --city-seed S [--size N]) --agents N --ticks T --seed S` and scene
// options (--player, --spawn-rect, --kind, --threads, --csv): a headless run of the world, for
// tuning kinds, plotting crowds, profiling and replay checks.
// The scripted player is in scripted_player.cpp, the --spawn-rect placement in spawn_rect.cpp.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <exception>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scripted_player.hpp"
#include "spawn_rect.hpp"
#include "swarmfield/cli/decimal_number.hpp"
#include "swarmfield/cli/parse_error.hpp"
#include "swarmfield/io/map_file.hpp"
#include "swarmfield/server/config/config_toml.hpp"
#include "swarmfield/sim/crowd/density_limit.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"
#include "swarmfield/sim/nav/field_mode.hpp"
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
  std::vector<std::string> players;   // "X,Y" each: a player standing still there
  std::string spawn_rect;             // "X0,Y0,X1,Y1": spawn there instead of by the spawner
  std::vector<std::string> kinds;     // "NAME" or "NAME:WEIGHT", from the default kinds or --kinds-from
  std::string kinds_path;             // a TOML file whose [[kinds]] replace the default kinds
  std::uint32_t threads = 1;
  std::uint32_t sleep_ticks = sim::SwarmParams{}.sleep_after_ticks;  // 0: no agent sleeps
  float far_step_cells = sim::SwarmParams{}.far_step_cells;          // 0: every agent steps every tick
  std::uint32_t far_step_levels = sim::SwarmParams{}.far_step_levels;  // 2: also every 4th tick beyond twice
  std::string field_mode = "auto";    // whole, hierarchical or auto (hierarchical from 4096 a side)
  std::string csv_path;
  std::string players_csv_path;  // the players' track: tick,player,x,y,vx,vy
  std::optional<std::uint64_t> csv_every;
};

/// The run's CSV outputs (null when not asked for).
struct CsvFiles {
  std::FILE* agents = nullptr;
  std::FILE* players = nullptr;
};

/// Parses exactly `n` comma-separated finite decimal numbers; false on anything else (strtof
/// alone read "0x10" as 16, where the integer options refuse hexadecimal).
bool parse_numbers(const std::string& text, std::size_t n, float* out) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t comma = i + 1 < n ? text.find(',', at) : text.size();
    if (comma == std::string::npos) return false;
    const std::string part = text.substr(at, comma - at);
    if (!cli::is_decimal_number(part)) return false;
    char* end = nullptr;
    const float v = std::strtof(part.c_str(), &end);
    if (end != part.c_str() + part.size() || !std::isfinite(v)) return false;
    out[i] = v;
    at = comma + 1;
  }
  return true;
}

/// The kind table of --kind NAME[:WEIGHT] options: `table` (the default kinds or a file's),
/// each named kind spawned with the weight given (1 without one) and the others with weight 0.
/// "" or an error sentence.
std::string kinds_from_options(const std::vector<std::string>& specs, std::vector<sim::AgentKind> table,
                               std::vector<sim::AgentKind>& out) {
  out = std::move(table);
  for (sim::AgentKind& k : out) k.spawn_weight = 0.0f;
  std::vector<bool> named(out.size(), false);
  for (const std::string& spec : specs) {
    const std::size_t colon = spec.find(':');
    const std::string name = spec.substr(0, colon);
    const int index = sim::find_agent_kind(out, name);
    // The option and name as the error sentences echo them (see printable_argument).
    const std::string option = "--kind '" + cli::printable_argument(spec) + "'";
    if (index < 0) {
      std::string known;
      for (const sim::AgentKind& k : out) known += (known.empty() ? "" : ", ") + k.name;
      return option + ": unknown kind '" + cli::printable_argument(name) + "' (known: " + known + ")";
    }
    if (named[static_cast<std::size_t>(index)]) {
      return option + ": kind '" + cli::printable_argument(name) + "' given twice";
    }
    named[static_cast<std::size_t>(index)] = true;
    float weight = 1.0f;
    if (colon != std::string::npos && (!parse_numbers(spec.substr(colon + 1), 1, &weight) || !(weight > 0.0f))) {
      return option + ": the weight after ':' must be a decimal number > 0 and at most 3.4e38";
    }
    out[static_cast<std::size_t>(index)].spawn_weight = weight;
  }
  return {};
}

/// One CSV row per agent (by id): tick,id,kind,x,y,vx,vy (world units, units per second).
void write_csv_rows(std::FILE* f, const sim::World& world, std::vector<std::size_t>& order) {
  const sim::Swarm& s = world.swarm();
  order.resize(s.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return s.ids()[a] < s.ids()[b]; });
  const std::span<const sim::AgentKind> kinds = s.kind_table();
  for (const std::size_t i : order) {
    std::fprintf(f, "%" PRIu64 ",%u,%s,%.5f,%.5f,%.5f,%.5f\n", world.tick(), s.ids()[i], kinds[s.kinds()[i]].name.c_str(),
                 static_cast<double>(s.xs()[i]), static_cast<double>(s.ys()[i]), static_cast<double>(s.vxs()[i]),
                 static_cast<double>(s.vys()[i]));
  }
}

/// One CSV row per player: tick,player,x,y,vx,vy (world units, units per second). A chase's
/// figures need where the player really was (on a street map the scripted player's path is
/// known only to the tool).
void write_player_rows(std::FILE* f, const sim::World& world) {
  for (const sim::Player& pl : world.players()) {
    std::fprintf(f, "%" PRIu64 ",%u,%.5f,%.5f,%.5f,%.5f\n", world.tick(), pl.id, static_cast<double>(pl.position.x),
                 static_cast<double>(pl.position.y), static_cast<double>(pl.velocity.x),
                 static_cast<double>(pl.velocity.y));
  }
}

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

// ---- Options: the map and the scene, checked before anything runs (each prints its error) -------

bool load_map(const SimOptions& opt, sim::GridMap& map, std::string& map_label) {
  if (opt.city_seed.has_value()) {
    if (!opt.map_path.empty()) {
      std::fprintf(stderr, "error: give either MAP or --city-seed, not both\n");
      return false;
    }
    map = sim::generate_city({opt.size, opt.size, *opt.city_seed});
    map_label = "city(seed=" + std::to_string(*opt.city_seed) + ")";
  } else {
    if (opt.map_path.empty()) {
      std::fprintf(stderr, "error: give a MAP file or --city-seed S (see --help)\n");
      return false;
    }
    sim::MapError error;
    if (!io::read_map_file(opt.map_path, map, error)) {
      std::fprintf(stderr, "error: %s\n", error.to_string().c_str());
      return false;
    }
    map_label = opt.map_path;
  }
  if (map.walkable_count() == 0) {
    std::fprintf(stderr, "error: %s has no walkable cell\n", map_label.c_str());
    return false;
  }
  return true;
}

/// What the command line asks the world for besides the map.
struct Scene {
  std::vector<sim::Vec2> standing;  // --player positions
  float rect[4] = {0, 0, 0, 0};     // --spawn-rect
  sim::FieldMode mode{};
  std::vector<sim::AgentKind> kinds;  // empty: the swarm's one default agent
};

bool read_players(const SimOptions& opt, const sim::GridMap& map, std::vector<sim::Vec2>& standing) {
  for (const std::string& spec : opt.players) {
    float xy[2];
    if (!parse_numbers(spec, 2, xy)) {
      std::fprintf(stderr, "error: --player '%s': expected X,Y (two decimal numbers, world units)\n",
                   cli::printable_argument(spec).c_str());
      return false;
    }
    const float w = static_cast<float>(map.width()) * map.cell_size();
    const float h = static_cast<float>(map.height()) * map.cell_size();
    if (xy[0] < 0.0f || xy[1] < 0.0f || xy[0] >= w || xy[1] >= h) {
      std::fprintf(stderr, "error: --player '%s' is off the map (0..%g x 0..%g world units)\n",
                   cli::printable_argument(spec).c_str(), static_cast<double>(w), static_cast<double>(h));
      return false;
    }
    // The world would move such a player to the nearest open cell: a scene should say so.
    if (const sim::CellCoord c = map.world_to_cell({xy[0], xy[1]}); !map.walkable(c.x, c.y)) {
      std::fprintf(stderr, "error: --player '%s' stands in a wall (cell %d,%d is blocked); give a walkable position\n",
                   cli::printable_argument(spec).c_str(), c.x, c.y);
      return false;
    }
    standing.push_back({xy[0], xy[1]});
  }
  return true;
}

bool read_spawn_rect(const SimOptions& opt, const sim::GridMap& map, float (&rect)[4]) {
  if (opt.spawn_rect.empty()) return true;
  const float w = static_cast<float>(map.width()) * map.cell_size();
  const float h = static_cast<float>(map.height()) * map.cell_size();
  if (!parse_numbers(opt.spawn_rect, 4, rect)) {
    std::fprintf(stderr, "error: --spawn-rect '%s': expected X0,Y0,X1,Y1 (four decimal numbers, world units)\n",
                 opt.spawn_rect.c_str());
    return false;
  }
  if (!(rect[0] < rect[2] && rect[1] < rect[3]) || rect[0] < 0.0f || rect[1] < 0.0f || rect[2] > w || rect[3] > h) {
    std::fprintf(stderr, "error: --spawn-rect '%s': need 0 <= X0 < X1 <= %g and 0 <= Y0 < Y1 <= %g\n",
                 opt.spawn_rect.c_str(), static_cast<double>(w), static_cast<double>(h));
    return false;
  }
  if (rect_walkable_cells(map, rect) == 0) {
    std::fprintf(stderr, "error: --spawn-rect '%s' holds no walkable cell\n", opt.spawn_rect.c_str());
    return false;
  }
  return true;
}

bool read_kinds(const SimOptions& opt, std::vector<sim::AgentKind>& kinds) {
  if (!opt.kinds_path.empty()) {
    if (std::string err = server::read_kinds_file(opt.kinds_path, kinds); !err.empty()) {
      std::fprintf(stderr, "error: --kinds-from: %s\n", err.c_str());
      return false;
    }
  }
  if (!opt.kinds.empty()) {
    std::vector<sim::AgentKind> table = kinds.empty() ? sim::default_agent_kinds() : kinds;
    if (std::string err = kinds_from_options(opt.kinds, std::move(table), kinds); !err.empty()) {
      std::fprintf(stderr, "error: %s\n", err.c_str());
      return false;
    }
  }
  return true;
}

/// The density limit (the most agents the walkable cells hold; sim/crowd/density_limit.hpp):
/// of the kinds spawned, or without --kind of the swarm's one default agent; with --spawn-rect
/// also the rectangle's own, of the walkable cells it covers.
bool check_density_limit(const SimOptions& opt, const sim::GridMap& map, const std::vector<sim::AgentKind>& kinds,
                         const float (&rect)[4]) {
  std::vector<sim::AgentKind> spawned = kinds;
  if (spawned.empty()) {
    spawned.emplace_back();
    spawned.back().name = "default";
    spawned.back().radius = sim::SwarmParams{}.radius;
  }
  const std::uint64_t limit = sim::density_limit(map, spawned);
  if (opt.agents > limit) {
    std::fprintf(stderr,
                 "error: --agents %u is above the density limit: %s; ask for at most %llu agents (--agents) or use a "
                 "bigger map (--size N with --city-seed, or a bigger MAP)\n",
                 opt.agents, sim::describe_density_limit(map, spawned).c_str(), static_cast<unsigned long long>(limit));
    return false;
  }
  // The rectangle is where every agent starts: the map's limit let 300 agents into a 2 x 22
  // corridor (room for 203), and they started overlapping by up to 1.3 cells.
  if (opt.spawn_rect.empty()) return true;
  const std::size_t cells = rect_walkable_cells(map, rect);
  const std::uint64_t rect_limit = sim::density_limit(cells, map.cell_size(), sim::smallest_spawned_radius(spawned));
  if (opt.agents > rect_limit) {
    std::fprintf(stderr,
                 "error: --agents %u is above the density limit of --spawn-rect '%s': %s; ask for at most %llu agents "
                 "(--agents) or give a bigger rectangle (--spawn-rect)\n",
                 opt.agents, cli::printable_argument(opt.spawn_rect).c_str(),
                 sim::describe_density_limit(cells, map.cell_size(), spawned, "its").c_str(),
                 static_cast<unsigned long long>(rect_limit));
    return false;
  }
  return true;
}

bool read_scene(const SimOptions& opt, const sim::GridMap& map, Scene& scene) {
  if (!read_players(opt, map, scene.standing) || !read_spawn_rect(opt, map, scene.rect)) return false;
  const std::optional<sim::FieldMode> mode = sim::parse_field_mode(opt.field_mode);
  if (!mode) {
    std::fprintf(stderr, "error: --field-mode '%s': expected whole, hierarchical or auto\n",
                 cli::printable_argument(opt.field_mode).c_str());
    return false;
  }
  scene.mode = *mode;
  return read_kinds(opt, scene.kinds) && check_density_limit(opt, map, scene.kinds, scene.rect);
}

/// Opens `path` for writing with its header row (flag names the option in the error).
std::FILE* open_csv_file(const std::string& path, const char* flag, const char* header) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "error: %s '%s': cannot write: %s\n", flag, cli::printable_argument(path).c_str(),
                 std::strerror(errno));
    return nullptr;
  }
  std::fputs(header, f);
  return f;
}

/// Closes the CSV files; false (with an error) when a write failed.
bool close_csv(const SimOptions& opt, CsvFiles& csv) {
  bool ok = true;
  const auto close_one = [&](std::FILE*& f, const char* flag, const std::string& path) {
    if (f == nullptr) return;
    const bool written = std::ferror(f) == 0;
    if (std::fclose(f) != 0 || !written) {
      std::fprintf(stderr, "error: %s '%s': write failed\n", flag, cli::printable_argument(path).c_str());
      ok = false;
    }
    f = nullptr;
  };
  close_one(csv.agents, "--csv", opt.csv_path);
  close_one(csv.players, "--players-csv", opt.players_csv_path);
  return ok;
}

/// The --csv and --players-csv files with their header rows (null when not asked for); false
/// when one cannot be written (nothing left open then).
bool open_csv(const SimOptions& opt, CsvFiles& csv) {
  csv = {};
  if (opt.csv_every.has_value() && opt.csv_path.empty() && opt.players_csv_path.empty()) {
    std::fprintf(stderr, "error: --csv-every needs --csv FILE or --players-csv FILE\n");
    return false;
  }
  if (!opt.csv_path.empty()) {
    csv.agents = open_csv_file(opt.csv_path, "--csv", "tick,id,kind,x,y,vx,vy\n");
    if (csv.agents == nullptr) return false;
  }
  if (!opt.players_csv_path.empty()) {
    csv.players = open_csv_file(opt.players_csv_path, "--players-csv", "tick,player,x,y,vx,vy\n");
    if (csv.players == nullptr) {
      (void)close_csv(opt, csv);
      return false;
    }
  }
  // One file (a second name, a link, /dev/stdout twice) would get both tables' rows interleaved.
  struct stat a {}, b {};
  if (csv.agents != nullptr && csv.players != nullptr && fstat(fileno(csv.agents), &a) == 0 &&
      fstat(fileno(csv.players), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
    std::fprintf(stderr, "error: --csv '%s' and --players-csv '%s' are the same file; give each its own\n",
                 cli::printable_argument(opt.csv_path).c_str(), cli::printable_argument(opt.players_csv_path).c_str());
    (void)close_csv(opt, csv);
    return false;
  }
  return true;
}

// ---- The world: its players and, with --spawn-rect, its agents ----------------------------------

sim::WorldParams world_params(const SimOptions& opt, const Scene& scene) {
  sim::WorldParams params;
  params.seed = opt.seed;
  params.max_agents = opt.agents;
  params.spawner.initial_agents = opt.spawn_rect.empty() ? opt.agents : 0;
  params.spawner.stop_at_density_limit = true;  // --agents was checked against it (check_density_limit)
  params.kinds = scene.kinds;
  params.worker_threads = opt.threads;
  params.swarm.sleep_after_ticks = opt.sleep_ticks;
  params.swarm.far_step_cells = opt.far_step_cells;
  params.swarm.far_step_levels = opt.far_step_levels;
  params.field_mode = scene.mode;
  return params;
}

/// Players: the ones standing where --player says, or one scripted player walking a loop.
/// Returns the first player's id.
std::uint32_t add_players(sim::World& world, const Scene& scene, std::optional<ScriptedPlayer>& script) {
  const sim::GridMap& map = world.map();
  const sim::Vec2 centre{static_cast<float>(map.width()) * map.cell_size() * 0.5f,
                         static_cast<float>(map.height()) * map.cell_size() * 0.5f};
  std::uint32_t player = 0;
  for (const sim::Vec2 p : scene.standing) {
    const std::uint32_t id = world.add_player(p);
    if (player == 0) player = id;
  }
  if (scene.standing.empty()) {
    player = world.add_player(centre);
    script.emplace(world.map(), world.find_player(player)->position);
  }
  return player;
}

/// The --agents placed in --spawn-rect where each kind's disc fits; false (printed) when the
/// rectangle has no place for a kind.
bool spawn_agents_in_rect(const SimOptions& opt, const Scene& scene, sim::World& world) {
  sim::ClearanceMap clearance;
  clearance.build(world.map());
  // (A rectangle without a walkable cell was refused with the scene: read_spawn_rect.)
  const std::string err = check_kinds_fit(world, clearance, scene.rect, opt.spawn_rect);
  if (!err.empty()) {
    std::fprintf(stderr, "error: %s\n", err.c_str());
    return false;
  }
  spawn_in_rect(world, clearance, opt.agents, scene.rect, opt.seed);
  return true;
}

// ---- The run: --ticks steps, CSV rows, progress about once a second -----------------------------

using Clock = std::chrono::steady_clock;

/// Seconds spent in World::step over the run.
double run_ticks(const SimOptions& opt, sim::World& world, std::uint32_t player, std::optional<ScriptedPlayer>& script,
                 CsvFiles& csv) {
  const float dt = static_cast<float>(1.0 / opt.tick_hz);
  const std::uint64_t csv_every = opt.csv_every.value_or(1);
  std::vector<std::size_t> csv_order;
  const bool tty = isatty(STDERR_FILENO) != 0;
  Clock::time_point last_report = Clock::now();
  std::uint64_t last_report_tick = 0;
  double step_seconds = 0.0;
  double step_seconds_at_report = 0.0;
  for (std::uint64_t t = 0; t < opt.ticks; ++t) {
    if (script) (void)world.set_player_intent(player, script->intent(world.find_player(player)->position));
    const Clock::time_point s0 = Clock::now();
    world.step(dt);
    const Clock::time_point s1 = Clock::now();
    if (world.tick() % csv_every == 0) {
      if (csv.agents != nullptr) write_csv_rows(csv.agents, world, csv_order);
      if (csv.players != nullptr) write_player_rows(csv.players, world);
    }
    step_seconds += std::chrono::duration<double>(s1 - s0).count();
    if (!opt.no_progress && s1 - last_report >= std::chrono::seconds(1)) {
      const std::uint64_t ticks = world.tick() - last_report_tick;
      const double ms = ticks > 0 ? 1000.0 * (step_seconds - step_seconds_at_report) / static_cast<double>(ticks) : 0.0;
      std::fprintf(stderr,
                   "tick=%" PRIu64 " agents=%zu asleep=%zu mean_dist=%.1f ms_per_tick=%.3f rebuilds=%" PRIu64 "%s",
                   world.tick(), world.swarm().size(), world.swarm().sleeping_count(),
                   mean_distance_to(world.swarm(), world.find_player(player)->position), ms, world.rebuild_count(),
                   tty ? "\r" : "\n");
      std::fflush(stderr);
      last_report = s1;
      last_report_tick = world.tick();
      step_seconds_at_report = step_seconds;
    }
  }
  return step_seconds;
}

// ---- Summary: timing on stderr, the state hash as the last stdout line --------------------------

void print_summary(const SimOptions& opt, const sim::World& world, std::uint32_t player, double wall,
                   double step_seconds) {
  if (isatty(STDERR_FILENO) != 0 && !opt.no_progress) std::fprintf(stderr, "\r\033[K");  // the progress line
  const double ms_per_tick = opt.ticks > 0 ? 1000.0 * step_seconds / static_cast<double>(opt.ticks) : 0.0;
  const double ns_per_agent_tick =
      world.swarm().size() > 0 ? 1e6 * ms_per_tick / static_cast<double>(world.swarm().size()) : 0.0;
  std::fprintf(stderr,
               "sim: %" PRIu64 " ticks in %.2f s, %.3f ms per tick (%.1f ns per agent-tick), mean_dist=%.1f asleep=%zu\n",
               opt.ticks, wall, ms_per_tick, ns_per_agent_tick,
               mean_distance_to(world.swarm(), world.find_player(player)->position), world.swarm().sleeping_count());
  std::printf("ticks=%" PRIu64 " agents=%zu rebuilds=%" PRIu64 " state_hash=0x%016" PRIx64 "\n", world.tick(),
              world.swarm().size(), world.rebuild_count(), world.state_hash());
  std::fflush(stdout);
}

int run_sim(const SimOptions& opt) {
  // Also checked on the command line (strict_values): NaN would make every dt NaN.
  if (!(std::isfinite(opt.tick_hz) && opt.tick_hz > 0.0)) {
    std::fprintf(stderr, "error: --tick-hz must be a finite number > 0 (got %g)\n", opt.tick_hz);
    return 2;
  }
  sim::GridMap map;
  std::string map_label;
  Scene scene;
  CsvFiles csv;
  if (!load_map(opt, map, map_label) || !read_scene(opt, map, scene) || !open_csv(opt, csv)) return 2;

  sim::World world(map, world_params(opt, scene));
  std::optional<ScriptedPlayer> script;
  const std::uint32_t player = add_players(world, scene, script);
  if (!opt.spawn_rect.empty() && !spawn_agents_in_rect(opt, scene, world)) {
    (void)close_csv(opt, csv);
    return 2;
  }
  std::printf("map=%s size=%dx%d walkable=%zu agents=%u ticks=%" PRIu64 " seed=%" PRIu64 " tick_hz=%g players=%zu%s\n",
              map_label.c_str(), map.width(), map.height(), map.walkable_count(), opt.agents, opt.ticks, opt.seed,
              opt.tick_hz, world.players().size(),
              script ? (" waypoints=" + std::to_string(script->waypoint_count())).c_str() : " (standing)");
  std::fflush(stdout);

  const Clock::time_point begin = Clock::now();
  const double step_seconds = run_ticks(opt, world, player, script, csv);
  const double wall = std::chrono::duration<double>(Clock::now() - begin).count();
  if (!close_csv(opt, csv)) return 2;
  print_summary(opt, world, player, wall, step_seconds);
  return 0;
}

}  // namespace

void add_sim_command(CLI::App& app) {
  auto opt = std::make_shared<SimOptions>();
  CLI::App* cmd = app.add_subcommand(
      "sim",
      "Run the world headless: a scene from the command line, or by default one scripted player\n"
      "walking between waypoints with agents spawned by the world's spawner on the first tick.\n"
      "Scenes: --player X,Y (repeatable) puts players standing still at those world positions\n"
      "(no scripted player then); --spawn-rect X0,Y0,X1,Y1 spawns the --agents uniformly in that\n"
      "world rectangle before the first tick, each where its kind's disc fits (a brute, radius\n"
      "0.8, needs a 2 x 2 block of walkable cells; error if no place in the rectangle fits a kind\n"
      "spawned); --kinds-from FILE reads the [[kinds]] sections of a server config file (TOML) and\n"
      "spawns them by their weights; --kind NAME[:WEIGHT] (repeatable) spawns only the named kinds\n"
      "of that file's set or else of the default set (runner, walker, brute), in proportion to the\n"
      "weights (1 when left out), drawn from --seed; with neither, every agent is the swarm's\n"
      "default agent (the walker's size and speed). --csv FILE writes one row per\n"
      "agent, by id, after every --csv-every K-th tick: tick,id,kind,x,y,vx,vy (world units and\n"
      "world units per second; kind by name); --players-csv FILE one row per player at the same\n"
      "ticks: tick,player,x,y,vx,vy (where the scripted player really walked, for a chase's\n"
      "figures). World units are cells.\n"
      "Progress goes to stderr about once a second; the last stdout line is\n"
      "  ticks=T agents=N rebuilds=R state_hash=0x<16 hex digits>\n"
      "which is identical for identical arguments on the same build, for any --threads.\n"
      "Exit status: 0 done, 2 unreadable map, bad arguments (also a --player in a wall, a\n"
      "--spawn-rect without a place for a kind, a --kinds-from file without valid [[kinds]], or\n"
      "more --agents than the map's density limit or the --spawn-rect's) or an unwritable --csv or\n"
      "--players-csv file.");
  auto* map_opt =
      cmd->add_option("MAP", opt->map_path, "map file: MovingAI .map (or ASCII map), Tiled .tmj or .png (see the README)");
  auto* city_opt = cmd->add_option("--city-seed", opt->city_seed, "use a generated city with this seed instead of MAP");
  map_opt->excludes(city_opt);
  // A map file has its own size: --size with one is refused, not ignored.
  auto* size_opt = cmd->add_option("--size", opt->size, "generated city width and height in cells (default 256)")
                       ->check(CLI::Range(32, 4096));
  map_opt->excludes(size_opt);
  cmd->add_option("--agents", opt->agents,
                  "agents spawned (default 1000); at most the map's density limit, the agents its walkable cells "
                  "hold (cells x 0.9069 / (pi r^2), r the smallest kind's radius), and with --spawn-rect the "
                  "rectangle's (the walkable cells it covers), else exit 2")
      ->check(CLI::Range(0u, 10000000u));
  cmd->add_option("--ticks", opt->ticks, "ticks to simulate (default 300)")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{1000000000}));
  cmd->add_option("--seed", opt->seed, "world seed (spawn positions and kinds) (default 1)");
  cmd->add_option("--tick-hz", opt->tick_hz, "ticks per simulated second; dt = 1 / tick-hz (default 30)")
      ->check(CLI::Range(1.0, 1000.0));
  cmd->add_option("--threads", opt->threads, "threads stepping the swarm, 1..64; same results for any (default 1)")
      ->check(CLI::Range(1u, 64u));
  cmd->add_option("--field-mode", opt->field_mode,
                  "navigation: whole (one whole-map field per size class), hierarchical (sectors and portal routes) "
                  "or auto: hierarchical from 4096 cells a side (default auto)")
      ->type_name("MODE");
  cmd->add_option("--player", opt->players, "a player standing still at world position X,Y (repeatable)")
      ->type_name("X,Y")
      ->allow_extra_args(false);
  cmd->add_option("--spawn-rect", opt->spawn_rect, "spawn the agents uniformly in this world rectangle, where each kind's disc fits")
      ->type_name("X0,Y0,X1,Y1");
  cmd->add_option("--kinds-from", opt->kinds_path, "the kinds: the [[kinds]] sections of this TOML file (a server config)")
      ->type_name("FILE");
  cmd->add_option("--kind", opt->kinds, "spawn this kind (runner, walker, brute or one of --kinds-from), with a weight (repeatable)")
      ->type_name("NAME[:WEIGHT]")
      ->allow_extra_args(false);
  cmd->add_option("--csv", opt->csv_path, "write agent rows tick,id,kind,x,y,vx,vy to FILE")->type_name("FILE");
  cmd->add_option("--players-csv", opt->players_csv_path, "write player rows tick,player,x,y,vx,vy to FILE")
      ->type_name("FILE");
  cmd->add_option("--csv-every", opt->csv_every, "a CSV row set every K ticks (default 1)")
      ->type_name("K")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000000}));
  cmd->add_flag("--no-progress", opt->no_progress, "do not print progress on stderr");
  cmd->add_option("--sleep-ticks", opt->sleep_ticks,
                  "ticks an agent stays at rest and still before it sleeps (skips its gather until something near "
                  "it changes); 0 = never, to compare (default 30)")
      ->type_name("TICKS")
      ->check(CLI::Range(0u, 255u));
  cmd->add_option("--far-step-cells", opt->far_step_cells,
                  "agents whose path to the goal is longer than this (cells) step every other tick with twice the "
                  "time step (a level of detail: half the work for far agents); 0 = every agent every tick, to "
                  "compare (default 96)")
      ->type_name("CELLS")
      ->check(CLI::Range(0.0f, 1.0e6f))
      ->check(CLI::Validator(
          [](std::string& s) {
            try {
              return std::isfinite(std::stof(s)) ? std::string() : std::string("must be a finite number");
            } catch (const std::exception&) {
              return std::string("must be a number of cells");
            }
          },
          "CELLS"));
  cmd->add_option("--far-step-levels", opt->far_step_levels,
                  "far stepping's levels: 1, or 2 (agents whose path is longer than twice --far-step-cells also step "
                  "every fourth tick with four times the time step; discs overlap more often with it) (default 1)")
      ->type_name("N")
      ->check(CLI::Range(1u, 2u));
  cmd->callback([opt] { set_exit_code(run_sim(*opt)); });
}

}  // namespace swarmfield::tool
