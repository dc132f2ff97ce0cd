#pragma once
// The World a server runs, from its settings: the one place sim::WorldParams are derived, so a
// replay (which stores the settings) builds the same World as the recording server did.
#include <memory>
#include <string>

#include "swarmfield/rules/game_rules.hpp"
#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::server {

/// WorldParams from the settings (seed, agents, capacity, waves, threads, player speed, field
/// budget: resolve_field_budget() must have run; auto (-1) left here means 0). The spawner stops
/// at the map's density limit (SpawnerParams::stop_at_density_limit): waves past it are cut.
[[nodiscard]] sim::WorldParams world_params(const ServerConfig& config);
/// "" when `config.agents` is within the density limit of `map` for `config.kinds`
/// (sim::density_limit: hexagonal packing of the smallest kind spawned), else a one-line error
/// naming --agents, the map's walkable cell count, the limit and the fixes (fewer agents, a
/// bigger map). Checked at start-up, once the map is loaded; --max-agents above the limit is no
/// error (it is only the capacity: spawn waves stop at the limit).
[[nodiscard]] std::string check_agent_density(const ServerConfig& config, const sim::GridMap& map);
/// Empty, or why a spawn zone of the config file (a [zones] entry, used or not, or a wave's own
/// zone, [x0, y0, x1, y1] cells, corners included) can not be used on `map`: a corner off the map
/// or the corners out of order (the spawner would clamp its spawns onto the map's edge). The
/// sentence names the key, the rectangle and the map's size. Checked at start-up, once the map is
/// loaded (exit 2).
[[nodiscard]] std::string check_zones(const ServerConfig& config, const sim::GridMap& map);
/// The fixed tick, seconds (1 / tick_hz as a float: the exact dt the World steps with).
[[nodiscard]] float tick_seconds(const ServerConfig& config) noexcept;
/// Copies every setting that shapes the simulation (tick_hz, map source, agents, max_agents,
/// seed, waves, field budget, player speed, kinds) from `from` into `to`: what --replay takes from the
/// recording, keeping the command line's network and operations settings.
void copy_simulation_settings(ServerConfig& to, const ServerConfig& from);

/// Largest Lua rules script read (--rules), bytes.
inline constexpr std::size_t kMaxRulesScriptBytes = std::size_t{256} << 10;
/// Reads --rules into config.rules_script unless a script is there already (a replay's stored
/// settings). "" or an error naming the file (unreadable, not a regular file, over
/// kMaxRulesScriptBytes).
[[nodiscard]] std::string load_rules_script(ServerConfig& config);
/// The match's rules: rules::LuaRules on config.rules_script (seeded with config.seed, within
/// --rules-budget and --rules-memory-mib) when there is one, else rules::DefaultRules. A script
/// that fails to load (syntax, a runtime error or the budget in its top level) is returned
/// stopped; `error` then says why.
[[nodiscard]] std::unique_ptr<rules::GameRules> make_rules(const ServerConfig& config, std::string& error);


}  // namespace swarmfield::server
