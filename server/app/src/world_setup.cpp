#include "swarmfield/server/world_setup.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "swarmfield/rules/lua_rules.hpp"
#include "swarmfield/server/config/config_toml.hpp"
#include "swarmfield/sim/crowd/density_limit.hpp"

namespace swarmfield::server {

static_assert(static_cast<std::size_t>(kMaxWorkerThreads) <= sim::WorkerPool::kMaxThreads,
              "--threads would be clamped silently by the worker pool");

sim::WorldParams world_params(const ServerConfig& c) {
  sim::WorldParams p;
  p.seed = c.seed;
  p.max_agents = static_cast<std::uint32_t>(c.max_agents);
  p.spawner.initial_agents = static_cast<std::uint32_t>(c.agents);
  // check_agent_density() refused an initial spawn above the limit; waves stop there.
  p.spawner.stop_at_density_limit = true;
  p.kinds = c.kinds;  // checked by the config parser; the spawner picks by weight
  // The swarm step splits over --threads threads; the state is bit-identical to one thread.
  p.worker_threads = static_cast<std::uint32_t>(c.threads);
  p.swarm.far_step_cells = static_cast<float>(c.far_step_cells);
  p.swarm.far_step_levels = static_cast<std::uint32_t>(c.far_step_levels);
  p.player_speed = static_cast<float>(c.player_speed);
  p.combat.enabled = c.combat;
  p.combat.player_health = static_cast<float>(c.player_health);
  p.combat.respawn_seconds = static_cast<float>(c.respawn_time_s);
  p.combat.fire_range = static_cast<float>(c.fire_range);
  p.combat.fire_cone = static_cast<float>(c.fire_cone_deg * 3.14159265358979323846 / 180.0);
  p.combat.fire_damage = static_cast<float>(c.fire_damage);
  p.combat.fire_interval = static_cast<float>(c.fire_interval_s);
  p.combat.max_hits_per_shot = static_cast<std::uint32_t>(c.max_hits_per_shot);
  p.combat.barricade.health = static_cast<float>(c.barricade_health);
  p.combat.barricade.build_range = static_cast<float>(c.build_range);
  p.combat.barricade.per_player = static_cast<std::uint32_t>(c.barricades_per_player);
  p.combat.barricade.attackers = static_cast<float>(c.barricade_attackers);
  // resolve_field_budget() ran before the Server was made; auto (-1) left here means "off".
  p.field_rebuild_budget = c.field_budget > 0 ? static_cast<std::size_t>(c.field_budget) : 0;
  p.field_mode = sim::parse_field_mode(c.field_mode).value_or(sim::FieldMode::kAuto);
  (void)resolve_waves(c, p.waves);  // validate_config() refused a table that does not resolve
  p.spawner.wave_size = static_cast<std::uint32_t>(c.spawn_wave);
  p.spawner.wave_interval_ticks =
      static_cast<std::uint32_t>(std::max(1.0, std::round(c.wave_interval_s * static_cast<double>(c.tick_hz))));
  return p;
}

std::string check_agent_density(const ServerConfig& c, const sim::GridMap& map) {
  const std::uint64_t limit = sim::density_limit(map, c.kinds);
  if (c.agents < 0 || static_cast<std::uint64_t>(c.agents) <= limit) return {};
  return "--agents " + std::to_string(c.agents) + " is above the density limit: " +
         sim::describe_density_limit(map, c.kinds) + "; ask for at most " + std::to_string(limit) +
         " agents (--agents) or use a bigger map (--city-size or --map)";
}

std::string check_zones(const ServerConfig& c, const sim::GridMap& map) {
  // Every corner on the map and the corners in order. A zone that only started on the map was
  // taken: [60, 60, 1000000, 1000000] on a 64 x 64 map loaded with exit 0 (its spawns clamped
  // into the map's corner cells), and an inverted one in [zones] no wave names was never looked at.
  const std::int64_t w = map.width(), h = map.height();
  const auto on_map = [&](const std::array<std::int64_t, 4>& r) {
    return r[0] >= 0 && r[1] >= 0 && r[0] <= r[2] && r[1] <= r[3] && r[2] < w && r[3] < h;
  };
  const auto describe = [&](const std::string& key, const std::array<std::int64_t, 4>& r) {
    return key + " = [" + std::to_string(r[0]) + ", " + std::to_string(r[1]) + ", " + std::to_string(r[2]) + ", " +
           std::to_string(r[3]) + "] is not a rectangle on the map (" + std::to_string(w) + " x " + std::to_string(h) +
           " cells): a zone is [x0, y0, x1, y1], corners included, with 0 <= x0 <= x1 <= " + std::to_string(w - 1) +
           " and 0 <= y0 <= y1 <= " + std::to_string(h - 1) + "; move it onto the map";
  };
  for (const auto& [name, r] : c.zones) {
    if (!on_map(r)) return describe("zones." + name, r);
  }
  for (std::size_t i = 0; i < c.waves.size(); ++i) {
    if (c.waves[i].zone && !on_map(*c.waves[i].zone)) {
      const std::string wave = "waves[" + std::to_string(i) + "]" + (c.waves[i].name.empty() ? "" : " ('" + c.waves[i].name + "')");
      return describe(wave + ": zone", *c.waves[i].zone);
    }
  }
  return {};
}

float tick_seconds(const ServerConfig& c) noexcept { return 1.0f / static_cast<float>(c.tick_hz); }

void copy_simulation_settings(ServerConfig& to, const ServerConfig& from) {
  to.map_path = from.map_path;
  to.city_seed = from.city_seed;
  to.city_size = from.city_size;
  to.agents = from.agents;
  to.max_agents = from.max_agents;
  to.tick_hz = from.tick_hz;
  to.snapshot_hz = std::min(to.snapshot_hz, from.tick_hz);
  to.seed = from.seed;
  to.spawn_wave = from.spawn_wave;
  to.wave_interval_s = from.wave_interval_s;
  to.field_budget = from.field_budget;
  to.field_mode = from.field_mode;
  to.far_step_cells = from.far_step_cells;
  to.far_step_levels = from.far_step_levels;
  to.player_speed = from.player_speed;
  to.combat = from.combat;
  to.player_health = from.player_health;
  to.respawn_time_s = from.respawn_time_s;
  to.fire_range = from.fire_range;
  to.fire_cone_deg = from.fire_cone_deg;
  to.fire_damage = from.fire_damage;
  to.fire_interval_s = from.fire_interval_s;
  to.max_hits_per_shot = from.max_hits_per_shot;
  to.barricade_health = from.barricade_health;
  to.build_range = from.build_range;
  to.barricades_per_player = from.barricades_per_player;
  to.barricade_attackers = from.barricade_attackers;
  to.kinds = from.kinds;
  to.waves = from.waves;
  to.rules_path = from.rules_path;
  to.rules_budget = from.rules_budget;
  to.rules_memory_mib = from.rules_memory_mib;
  to.rules_script = from.rules_script;
  to.zones = from.zones;
}

std::string load_rules_script(ServerConfig& config) {
  if (config.rules_path.empty() || !config.rules_script.empty()) return {};
  std::string text;
  if (std::string err = read_config_text(config.rules_path, text, "rules script"); !err.empty()) return "--rules: " + err;
  if (text.size() > kMaxRulesScriptBytes) {
    return "--rules '" + config.rules_path + "' is larger than " + std::to_string(kMaxRulesScriptBytes) + " bytes";
  }
  if (text.empty()) return "--rules '" + config.rules_path + "' is empty (a Lua script defining on_* functions)";
  config.rules_script = std::move(text);
  return {};
}

std::unique_ptr<rules::GameRules> make_rules(const ServerConfig& config, std::string& error) {
  error.clear();
  if (config.rules_script.empty()) return std::make_unique<rules::DefaultRules>();
  rules::LuaBudget budget;
  budget.instructions_per_tick = static_cast<std::uint64_t>(config.rules_budget);
  budget.memory_bytes = static_cast<std::size_t>(config.rules_memory_mib) << 20;
  const std::string name = config.rules_path.empty() ? std::string("stored-rules.lua")
                                                     : std::filesystem::path(config.rules_path).filename().string();
  auto lua = std::make_unique<rules::LuaRules>(config.rules_script, name, config.seed, budget);
  error = lua->stopped();
  return lua;
}

}  // namespace swarmfield::server
