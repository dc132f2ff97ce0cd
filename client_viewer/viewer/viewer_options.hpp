#pragma once
// swarmfield-viewer's command line: the options, their checks, and the connection they ask for.
#include <cstdint>
#include <optional>
#include <string>

#include "swarmfield/client/connection.hpp"

namespace swarmfield::viewer {

namespace client = swarmfield::client;
namespace protocol = swarmfield::protocol;

/// What the command line asked for.
struct Args {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7777;
  std::string name = "viewer";
  std::string token_file;
  std::uint64_t max_map_cells = client::kDefaultMaxMapCells;
  std::optional<protocol::ConnectToken> token;  ///< the first of token_file
  bool headless = false;
  double seconds = 0.0;
  std::string screenshot;
  int width = 1024;
  int height = 768;
  bool follow = false;
  bool player = false;
  bool play = false;
  bool flow = false;
  bool heat = false;
  double interp_snapshots = 2.0;
  int connect_timeout_ms = 5000;
  int data_timeout_ms = 5000;
  int fps = 60;
  float zoom = 0.0f;  ///< pixels per world unit; 0 = fit the whole map
};

/// The command line into `args`; an exit code when the program should stop (help, bad options
/// (2), an unreadable token file (2), an unwritable screenshot path (4)).
[[nodiscard]] std::optional<int> parse_options(int argc, char** argv, Args& args);

/// The connection `args` ask for (role, timeouts, token, map size limit).
[[nodiscard]] client::ConnectionOptions connection_options(const Args& args);

}  // namespace swarmfield::viewer
