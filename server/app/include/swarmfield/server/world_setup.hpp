#pragma once
// The World a server runs, from its settings: the one place sim::WorldParams are derived, so a
// replay (which stores the settings) builds the same World as the recording server did.
#include "swarmfield/server/server_config.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::server {

/// WorldParams from the settings (seed, agents, capacity, waves, threads, player speed, field
/// budget: resolve_field_budget() must have run; auto (-1) left here means 0).
[[nodiscard]] sim::WorldParams world_params(const ServerConfig& config);
/// The fixed tick, seconds (1 / tick_hz as a float: the exact dt the World steps with).
[[nodiscard]] float tick_seconds(const ServerConfig& config) noexcept;
/// Copies every setting that shapes the simulation (tick_hz, map source, agents, max_agents,
/// seed, waves, field budget, player speed, kinds) from `from` into `to`: what --replay takes from the
/// recording, keeping the command line's network and operations settings.
void copy_simulation_settings(ServerConfig& to, const ServerConfig& from);

}  // namespace swarmfield::server
