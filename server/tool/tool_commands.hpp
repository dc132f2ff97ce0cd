#pragma once
// Each subcommand registers itself on the app and records its exit status.
#include <CLI/CLI.hpp>

namespace swarmfield::tool {
void add_scen_command(CLI::App& app);   // scen_command.cpp
void add_field_command(CLI::App& app);  // field_command.cpp
void add_sim_command(CLI::App& app);    // sim_command.cpp
void add_probe_command(CLI::App& app);  // probe_command.cpp
void add_replay_command(CLI::App& app); // replay_command.cpp
void add_convert_command(CLI::App& app);  // convert_command.cpp
void add_token_command(CLI::App& app);    // token_command.cpp
/// Status set by the subcommand that ran (0 when none set one).
int exit_code();
void set_exit_code(int code);
}  // namespace swarmfield::tool
