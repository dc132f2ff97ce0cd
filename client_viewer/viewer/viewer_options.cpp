// swarmfield-viewer's command line (viewer_options.hpp).
#include "viewer_options.hpp"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "swarmfield/cli/version.hpp"
#include "swarmfield/client/camera.hpp"
#include "swarmfield/client/command_line.hpp"
#include "swarmfield/client/token_file.hpp"

namespace swarmfield::viewer {

namespace {

// Opens `path` for writing without truncating it (append mode) and removes it again if it did
// not exist before: a write check that leaves no trace. `why` gets strerror on failure.
bool screenshot_path_writable(const std::string& path, std::string& why) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  FILE* f = std::fopen(path.c_str(), "ab");
  if (!f) {
    why = std::strerror(errno);
    return false;
  }
  std::fclose(f);
  if (!existed) std::filesystem::remove(path, ec);
  return true;
}

}  // namespace

std::optional<int> parse_options(int argc, char** argv, Args& args) {
  CLI::App app{"swarmfield-viewer: watch a swarmfield server (SDL2 window or headless PNG)"};
  swarmfield::cli::add_version_flag(app, "swarmfield-viewer");
  app.add_option("--host", args.host, "server address")->capture_default_str();
  // Range-checked as text, before conversion: a port past 65535 is named as out of range, not as
  // "Could not convert" (the option is 16 bits).
  app.add_option("--port", args.port, "server TCP port")->check(CLI::Range(1, 65535))->capture_default_str();
  app.add_option("--name", args.name, "client name shown by the server")->capture_default_str();
  swarmfield::client::add_max_map_cells_option(app, args.max_map_cells);
  app.add_option("--token-file", args.token_file,
                 "a connect token from the match's backend (its first line; a server with --auth tokens admits no one "
                 "without; the token sets the role and name)");
  app.add_flag("--headless", args.headless, "no window: render offscreen (needs no display)");
  app.add_option("--seconds", args.seconds, "quit after this many seconds (0 = run until closed; headless default 5)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--screenshot", args.screenshot, "write the last frame to this PNG file");
  app.add_option("--width", args.width, "frame width, pixels")->check(CLI::Range(64, 8192))->capture_default_str();
  app.add_option("--height", args.height, "frame height, pixels")->check(CLI::Range(64, 8192))->capture_default_str();
  app.add_flag("--follow", args.follow, "keep the (own or first) player centred");
  app.add_flag("--player", args.player, "join as a player, move with WASD");
  app.add_flag("--play", args.play,
               "play: join as a player and follow it; WASD move, the mouse aims, hold the left button to fire, "
               "B builds a barricade under the mouse, right-drag pans");
  app.add_flag("--flow", args.flow, "start with flow arrows on (toggle F)");
  app.add_flag("--heat", args.heat, "start with the integration heat map on (toggle H)");
  app.add_option("--interp-snapshots", args.interp_snapshots, "render this many snapshot intervals behind")
      ->check(CLI::Range(0.0, 20.0))
      ->capture_default_str();
  app.add_option("--connect-timeout-ms", args.connect_timeout_ms,
                 "time allowed to connect and get the server's answer to Hello, ms")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  app.add_option("--data-timeout-ms", args.data_timeout_ms,
                 "fail (exit 1) when the server sends nothing for this long, ms (0 = never)")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  app.add_option("--zoom", args.zoom, "pixels per world unit (0 = fit the whole map)")
      ->check(CLI::Range(0.0f, client::Camera::kMaxZoom));
  app.add_option("--fps", args.fps, "frame rate cap")->check(CLI::Range(1, 500))->capture_default_str();
  if (const auto code = swarmfield::client::parse_command_line(app, argc, argv)) return *code;
  if (!args.token_file.empty()) {
    std::vector<protocol::ConnectToken> tokens;
    std::string token_error;
    if (!client::read_token_file(args.token_file, 1, tokens, token_error)) {
      std::cerr << "error: " << token_error << "\n";
      return client::kExitBadArguments;
    }
    args.token = tokens.front();
  }
  if (args.headless && args.seconds <= 0.0) args.seconds = 5.0;
  if (args.play) {
    args.player = true;
    args.follow = true;
  }
  if (!args.screenshot.empty()) {
    // Fail now, not after --seconds of watching, when the screenshot can never be written.
    std::string why;
    if (!screenshot_path_writable(args.screenshot, why)) {
      std::cerr << "error: can not write the screenshot '" << args.screenshot << "': " << why << "\n";
      return 4;
    }
  }
  return std::nullopt;
}

client::ConnectionOptions connection_options(const Args& args) {
  client::ConnectionOptions options;
  options.host = args.host;
  options.port = args.port;
  options.name = args.name;
  options.role = args.player ? protocol::Role::kPlayer : protocol::Role::kViewer;
  options.connect_timeout = std::chrono::milliseconds(args.connect_timeout_ms);
  options.handshake_timeout = std::chrono::milliseconds(args.connect_timeout_ms) + std::chrono::seconds(10);
  options.data_timeout = std::chrono::milliseconds(args.data_timeout_ms);
  options.token = args.token;
  options.max_map_cells = args.max_map_cells;
  return options;
}

}  // namespace swarmfield::viewer
