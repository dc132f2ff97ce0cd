// swarmfield-tool: offline utilities around the simulation library.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "swarmfield/cli/strict_values.hpp"
#include "tool_commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"swarmfield-tool: check fields against MovingAI scenarios, render fields, run headless simulations, check replays, probe a server's operations endpoints"};
  app.require_subcommand(1);
  swarmfield::tool::add_scen_command(app);
  swarmfield::tool::add_field_command(app);
  swarmfield::tool::add_sim_command(app);
  swarmfield::tool::add_probe_command(app);
  swarmfield::tool::add_replay_command(app);
  // Empty values, NaN/inf and negative unsigned numbers are errors for every option.
  swarmfield::cli::strict_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line and status 2 (as the --help texts promise), not CLI11's internal codes.
    std::fprintf(stderr, "error: %s (see swarmfield-tool --help)\n", e.what());
    return 2;
  }
  return swarmfield::tool::exit_code();
}
