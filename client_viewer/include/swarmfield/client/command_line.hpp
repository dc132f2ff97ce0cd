#pragma once
// Command-line parsing shared by swarmfield-viewer and swarmfield-bot. Header-only so the
// client library itself does not depend on CLI11 (only the programs do).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <iostream>
#include <optional>
#include <string>

#include "swarmfield/cli/parse_error.hpp"
#include "swarmfield/cli/strict_values.hpp"

namespace swarmfield::client {

/// Exit code for a bad command line (documented in client_viewer/README.md; same as the server).
inline constexpr int kExitBadArguments = 2;

using swarmfield::cli::strict_values;

/// Parses argv into `app`. Returns nothing when the program should go on; otherwise the exit
/// code to return: 0 after --help (printed to stdout), kExitBadArguments after a parse error,
/// printed to stderr as "error: <message> (see --help)". CLI11's own exit codes (104-114) are
/// never used: scripts check for 2. Every option is made strict first (strict_values()).
[[nodiscard]] inline std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv) {
  strict_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help / --help-all: prints, exits 0
    std::cerr << "error: " << swarmfield::cli::describe_parse_error(app, e) << " (see --help)\n";
    return kExitBadArguments;
  }
  return std::nullopt;
}

/// --max-map-cells for a program that joins servers (ConnectionOptions::max_map_cells).
inline CLI::Option* add_max_map_cells_option(CLI::App& app, std::uint64_t& cells) {
  return app
      .add_option("--max-map-cells", cells,
                  "largest map (cells) to take from a server; a bigger one is refused before it is allocated")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{8192} * 8192))
      ->capture_default_str();
}

}  // namespace swarmfield::client
