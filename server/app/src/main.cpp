// swarmfield-server: flags/TOML -> logging -> map -> Server; SIGINT/SIGTERM/SIGHUP stop it gracefully
// and an exit summary goes to stdout (and the log), from the first instruction on: a signal
// during the (possibly long) map load or world set-up is remembered and honoured as soon as
// that step returns, with the summary line, instead of killing the process.
#include <asio/post.hpp>
#include <asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "swarmfield/server/ops/agones_client.hpp"
#include "swarmfield/server/ops/logging.hpp"
#include "swarmfield/server/map_source.hpp"
#include "swarmfield/server/replay/replay_file.hpp"
#include "swarmfield/server/replay/replay_playback.hpp"
#include "swarmfield/server/net/web_gateway.hpp"
#include "swarmfield/server/server.hpp"
#include "swarmfield/cli/control_chars.hpp"
#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/server/config/config_toml.hpp"
#include "swarmfield/server/world_setup.hpp"
#include "swarmfield/sim/crowd/density_limit.hpp"
#include "swarmfield/sim/nav/field_mode.hpp"

namespace {

constexpr int kExitUsage = 2;    // bad flags, config or map
constexpr int kExitRuntime = 1;  // could not bind, unexpected failure

const char* signal_name(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "signal";
}

// The first SIGINT/SIGTERM/SIGHUP before the io_context's signal_set takes over (0 = none).
volatile std::sig_atomic_t g_early_signal = 0;

extern "C" void remember_signal(int sig) {
  if (g_early_signal == 0) g_early_signal = sig;
}

void install_early_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = remember_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a file read in progress carries on
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  // A closed terminal or a supervisor's hang-up drains like SIGTERM (Bye, summary), not a kill.
  sigaction(SIGHUP, &action, nullptr);
  // A log reader that went away (a pipe to a collector) makes writes fail with EPIPE instead of
  // ending the process; sockets already write with MSG_NOSIGNAL or fail the same way.
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
}

// Stopped before the server ran: the same summary line (nothing happened yet), exit 0.
int exit_early(const char* during) {
  const char* name = signal_name(g_early_signal);
  spdlog::info("{} during {}: stopping before the server starts", name, during);
  const std::string line = swarmfield::server::ServerSummary{}.line();
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
  spdlog::info("exit summary: {}", line);
  spdlog::shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace swarmfield::server;
  install_early_signal_handlers();
  const ConfigParseResult parsed = parse_server_config(argc, argv);
  if (parsed.action == ConfigParseResult::Action::kExit) {
    std::fputs(parsed.output.c_str(), parsed.exit_code == 0 ? stdout : stderr);
    if (!parsed.output.empty() && parsed.output.back() != '\n') std::fputc('\n', parsed.exit_code == 0 ? stdout : stderr);
    return parsed.exit_code;
  }
  ServerConfig config = parsed.config;
  try {
    auto logger = setup_logging(config.log_format, config.log_level);
    for (const std::string& warning : parsed.warnings) spdlog::warn("{}", warning);
    // A setting only the page's start would refuse, refused before the map loads (minutes on a
    // big map) and as the usage error it is (Server::open checks it again).
    if (config.web_port >= 0) {
      if (const std::string page = swarmfield::server::WebGateway::check_page_folder(Server::web_root_of(config));
          !page.empty()) {
        std::fprintf(stderr, "error: %s\n", page.c_str());
        return kExitUsage;
      }
    }
    // The token key too: a bad one is refused before the map loads.
    std::optional<swarmfield::protocol::TokenKey> token_key;
    if (config.auth == "tokens") {
      std::string key_text;
      if (std::string key_error = swarmfield::server::read_config_text(config.key_file, key_text, "key file");
          !key_error.empty()) {
        std::fprintf(stderr, "error: --key-file: %s\n", key_error.c_str());
        return kExitUsage;
      }
      std::string key_error;
      token_key = swarmfield::protocol::parse_token_key(key_text, &key_error);
      if (!token_key) {
        std::fprintf(stderr, "error: --key-file %s: %s\n", swarmfield::cli::printable_ascii(config.key_file).c_str(),
                     key_error.c_str());
        return kExitUsage;
      }
      spdlog::info("admitting clients with connect tokens only (--auth tokens, key from {})",
                   swarmfield::cli::printable_ascii(config.key_file));
      // Said at start: servers sharing a key (a fleet) on the same port take each other's tokens,
      // each once (every server keeps its own list of the tokens it took), so an invited player
      // can join matches it was not invited to. Under Agones two GameServers on different nodes
      // may be given the same host port.
      // Under Agones the GameServer's status.address pins the host once the sidecar answers.
      if (config.public_address.empty() && !config.agones) {
        spdlog::warn("--public-address is not set: a token naming any host with this server's port joins here, "
                     "also one issued for another server on that port with the same key; set --public-address "
                     "HOST:PORT (the address tokens name) to take only this server's tokens");
      }
    }

    // Under Agones: Health pings while the map loads and the world is built (a 4096 city takes
    // longer than the Fleet's health window); the server's own client takes over once it
    // listens (Ready, then Health from the tick loop).
    OperationsState loading_state;
    std::optional<AgonesClient> loading_pings;
    if (config.agones) {
      loading_pings.emplace(agones_port(config.agones_port),
                            std::chrono::duration_cast<AgonesClient::Clock::duration>(
                                std::chrono::duration<double>(config.agones_health_interval_s)),
                            loading_state, config.agones_port_name);
      loading_pings->loading();
      spdlog::info("agones: Health every {:g} s while the world loads", config.agones_health_interval_s);
    }

    swarmfield::sim::GridMap map;
    std::vector<swarmfield::sim::CellCoord> spawn_cells;  // the map file's, where players appear
    std::string map_name;
    std::string error;
    if (g_early_signal != 0) return exit_early("start-up");
    std::optional<Replay> replay;
    if (!config.replay_path.empty()) {
      // A recording: its map and simulation settings; network and operations from here.
      std::string truncation;
      replay = read_replay(config.replay_path, error, ReplayReadOptions{config.allow_truncated}, &truncation);
      if (!replay) {
        std::fprintf(stderr, "error: %s%s\n", error.c_str(),
                     relative_path_note("replay", config.replay_path, parsed.sources, config.config_path).c_str());
        return kExitUsage;
      }
      if (!truncation.empty()) spdlog::warn("{}", truncation);
      const ConfigParseResult stored =
          parse_stored_config(replay->header.config_toml, config.replay_path + " (stored settings)");
      if (stored.action != ConfigParseResult::Action::kRun) {
        std::fprintf(stderr, "%s\n", stored.output.c_str());
        return kExitUsage;
      }
      copy_simulation_settings(config, stored.config);
      map = swarmfield::sim::GridMap::from_costs(replay->header.width, replay->header.height, replay->header.costs,
                                                 replay->header.cell_size);
      map_name = replay->header.map_name;
    } else if (!load_map(config, map, map_name, error, &spawn_cells)) {
      std::fprintf(stderr, "error: %s%s\n", error.c_str(),
                   relative_path_note("map", config.map_path, parsed.sources, config.config_path).c_str());
      return kExitUsage;
    }
    // The rules script: read now, and loaded once to refuse a broken one before the world is built.
    if (std::string rules_error = load_rules_script(config); !rules_error.empty()) {
      std::fprintf(stderr, "error: %s%s\n", rules_error.c_str(),
                   relative_path_note("rules", config.rules_path, parsed.sources, config.config_path).c_str());
      return kExitUsage;
    }
    if (!replay && !config.rules_script.empty()) {
      std::string rules_error;
      (void)make_rules(config, rules_error);
      if (!rules_error.empty()) {
        std::fprintf(stderr, "error: %s\n", swarmfield::cli::printable_ascii(rules_error).c_str());
        return kExitUsage;
      }
    }
    // The density limit needs the map: more agents than its walkable area holds is refused
    // here, before the world is built (a tick of overlapping discs takes seconds).
    if (const std::string density = check_agent_density(config, map); !density.empty()) {
      const std::string where = replay ? " (in the recording " + config.replay_path + ")"
                                       : blame_setting(density, parsed.sources, config.config_path);
      std::fprintf(stderr, "error: %s%s\n", density.c_str(), where.c_str());
      return kExitUsage;
    }
    if (const std::string zones = check_zones(config, map); !zones.empty()) {
      const std::string where = replay ? " (in the recording " + config.replay_path + ")"
                                       : (config.config_path.empty() ? "" : " (config file " + config.config_path + ")");
      std::fprintf(stderr, "error: %s%s\n", zones.c_str(), where.c_str());
      return kExitUsage;
    }
    spdlog::info("density limit: {}; spawn waves stop there", swarmfield::sim::describe_density_limit(map, config.kinds));
    if (g_early_signal != 0) return exit_early("the map load");
    if (!config.config_path.empty()) spdlog::info("config file {}", config.config_path);
    config.field_budget = resolve_field_budget(config, map.cell_count());
    if (config.field_budget > 0) {
      spdlog::info("field rebuilds time-sliced: {} work units per tick (--field-budget)", config.field_budget);
    }
    const swarmfield::sim::FieldMode field_mode = swarmfield::sim::resolve_field_mode(
        swarmfield::sim::parse_field_mode(config.field_mode).value_or(swarmfield::sim::FieldMode::kAuto), map.width(),
        map.height());
    spdlog::info("navigation fields: {} (--field-mode {})", swarmfield::sim::field_mode_name(field_mode), config.field_mode);

    // The world set-up (a 4096 city: ~10 s of navigation set-up) runs on its own thread so that a
    // stop request during it is answered at once: nothing is held yet (no client, no recording
    // open), so the process ends with the summary line instead of waiting for the build.
    std::optional<Server> built;
    std::exception_ptr setup_failure;
    std::atomic<bool> setup_done{false};
    std::thread setup([&] {
      try {
        built.emplace(config, std::move(map), map_name, std::move(spawn_cells));
      } catch (...) {
        setup_failure = std::current_exception();
      }
      setup_done.store(true);
    });
    while (!setup_done.load()) {
      if (g_early_signal != 0) std::_Exit(exit_early("the world set-up (left unfinished)"));  // the thread is dropped
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    setup.join();
    if (setup_failure) std::rethrow_exception(setup_failure);
    Server& server = *built;
    if (token_key) server.set_token_key(*token_key);
    if (replay) server.play(std::move(*replay));
    if (g_early_signal != 0) return exit_early("the world set-up");
    // A limit the header alone reaches ended the recording at tick 1 (a file that replays one
    // tick): refused before any port opens or the file is created. The header's size needs the
    // settings and the map, so it is known only here.
    if (!config.record_path.empty() && config.record_max_mb > 0.0) {
      const std::uint64_t header = server.recording_header_bytes();
      if (config.record_max_mb * 1024.0 * 1024.0 <= static_cast<double>(header)) {
        const std::string why =
            fmt::format("--record-max-mb {:g} is {:.0f} bytes, no more than the recording's header alone ({} bytes: "
                        "the settings and the compressed map), which would end the recording at tick 1; give at "
                        "least {:g} (MiB), or 0 for no limit",
                        config.record_max_mb, config.record_max_mb * 1024.0 * 1024.0, header,
                        std::ceil(static_cast<double>(header + 1) / (1024.0 * 1024.0) * 100.0) / 100.0);
        std::fprintf(stderr, "error: %s%s\n", why.c_str(), blame_setting(why, parsed.sources, config.config_path).c_str());
        return kExitUsage;
      }
    }
    if (!server.open(error)) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      return kExitRuntime;
    }
    loading_pings.reset();  // the server's own client pings from here

    // From here asio's handler takes the signals; one that came before it was installed is
    // still in g_early_signal and stops the server as soon as it runs.
    asio::signal_set signals(server.io(), SIGINT, SIGTERM, SIGHUP);
    std::function<void()> wait_signal;
    wait_signal = [&] {
      signals.async_wait([&](std::error_code ec, int sig) {
        if (ec) return;
        server.stop(signal_name(sig));
        wait_signal();  // a second signal while flushing stops at once
      });
    };
    wait_signal();
    if (g_early_signal != 0) asio::post(server.io(), [&server] { server.stop(signal_name(g_early_signal)); });

    server.run();

    const std::string line = server.summary().line();
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    spdlog::info("exit summary: {}", line);
    spdlog::shutdown();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitRuntime;
  }
}
