#pragma once
// Command-line parsing shared by swarmfield-viewer and swarmfield-bot. Header-only so the
// client library itself does not depend on CLI11 (only the programs do).
#include <CLI/CLI.hpp>

#include <iostream>
#include <optional>
#include <string>

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
    std::cerr << "error: " << e.what() << " (see --help)\n";
    return kExitBadArguments;
  }
  return std::nullopt;
}

}  // namespace swarmfield::client
