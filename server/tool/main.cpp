// swarmfield-tool: offline utilities around the simulation library.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "swarmfield/cli/parse_error.hpp"
#include "swarmfield/cli/strict_values.hpp"
#include "swarmfield/cli/version.hpp"
#include "tool_commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"swarmfield-tool: check fields against MovingAI scenarios, render fields, run headless simulations, check replays, probe a server's operations endpoints, convert maps between .map, .tmj and .png, issue connect tokens"};
  swarmfield::cli::add_version_flag(app, "swarmfield-tool");
  app.require_subcommand(1);
  swarmfield::tool::add_scen_command(app);
  swarmfield::tool::add_field_command(app);
  swarmfield::tool::add_sim_command(app);
  swarmfield::tool::add_probe_command(app);
  swarmfield::tool::add_replay_command(app);
  swarmfield::tool::add_convert_command(app);
  swarmfield::tool::add_token_command(app);
  // Empty values, NaN/inf and negative unsigned numbers are errors for every option.
  swarmfield::cli::strict_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line and status 2 (as the --help texts promise), not CLI11's internal codes. A first
    // word that is no subcommand gets named (CLI11 only says one is required).
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      std::string names;
      for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
      std::fprintf(stderr, "error: unknown subcommand '%s' (expected one of %s; see swarmfield-tool --help)\n",
                   swarmfield::cli::printable_argument(argv[1]).c_str(), names.c_str());
      return 2;
    }
    std::fprintf(stderr, "error: %s (see swarmfield-tool --help)\n", swarmfield::cli::describe_parse_error(app, e).c_str());
    return 2;
  }
  return swarmfield::tool::exit_code();
}
