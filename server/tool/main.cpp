// swarmfield-tool: offline utilities around the simulation library.
#include <CLI/CLI.hpp>

#include "tool_commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"swarmfield-tool: check fields against MovingAI scenarios, render fields, run headless simulations"};
  app.require_subcommand(1);
  swarmfield::tool::add_scen_command(app);
  swarmfield::tool::add_field_command(app);
  swarmfield::tool::add_sim_command(app);
  CLI11_PARSE(app, argc, argv);
  return swarmfield::tool::exit_code();
}
