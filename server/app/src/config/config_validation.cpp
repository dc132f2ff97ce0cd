// validate_config() (server_config.hpp): ranges and combinations of the merged settings.
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "swarmfield/cli/control_chars.hpp"
#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/server/replay/replay_file.hpp"
#include "swarmfield/sim/game/combat.hpp"
#include "swarmfield/sim/nav/field_mode.hpp"

namespace swarmfield::server {
namespace {

constexpr std::array<std::string_view, 7> kLogLevels = {"trace", "debug", "info", "warn",
                                                        "error", "critical", "off"};

bool is_ip_literal(const std::string& text) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, text.c_str(), buffer) == 1 || inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

// A Kubernetes port name's characters: lower-case letters, digits, '-'; at most 63.
}  // namespace

bool is_fleet_name(std::string_view text) noexcept {
  return !text.empty() && text.size() <= 63 && std::all_of(text.begin(), text.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
  });
}

std::string validate_config(const ServerConfig& c) {
  auto range = [](std::string_view key, auto v, auto lo, auto hi) -> std::string {
    if (v >= lo && v <= hi) return {};
    std::ostringstream ss;
    ss << key << " must be in " << lo << ".." << hi << " (got " << v << ")";
    return ss.str();
  };
  // Seconds: finite and within [lo, hi] (NaN fails every comparison, so it is refused too).
  auto seconds_range = [](std::string_view key, double v, double lo, double hi) -> std::string {
    if (std::isfinite(v) && v >= lo && v <= hi) return {};
    std::ostringstream ss;
    ss << key << " must be in " << lo << ".." << hi << " seconds (got " << v << ")";
    return ss.str();
  };
  std::string e;
  if (!(e = range("--city-size", c.city_size, 32, 8192)).empty()) return e;
  if (!(e = range("--max-agents", c.max_agents, 0, 2000000)).empty()) return e;
  if (!(e = range("--agents", c.agents, 0, c.max_agents)).empty()) return e + " (raise --max-agents)";
  if (!(e = range("--tick-hz", c.tick_hz, 1, 240)).empty()) return e;
  if (!(e = range("--snapshot-hz", c.snapshot_hz, 1, c.tick_hz)).empty())
    return e + " (snapshots are sent on ticks, so at most --tick-hz)";
  if (!(e = range("--port", c.port, 0, 65535)).empty()) return e;
  if (!(e = range("--max-clients", c.max_clients, 1, 1024)).empty()) return e;
  if (!(e = range("--send-queue-kb", c.send_queue_kb, 16, 1048576)).empty()) return e;
  // Upper bound: steady_clock time points overflow for ~1e10 s (the server then stopped at once).
  if (!(std::isfinite(c.duration_s) && c.duration_s >= 0.0 && c.duration_s <= kMaxDurationSeconds))
    return "--duration must be in 0..10000000 seconds (0 = run until signalled)";
  if (!(e = range("--spawn-wave", c.spawn_wave, 0, c.max_agents)).empty()) return e;
  if (!(std::isfinite(c.wave_interval_s) && c.wave_interval_s > 0.0 && c.wave_interval_s <= 86400.0))
    return "--wave-interval must be in (0, 86400] seconds";
  if (!(e = range("--field-budget", c.field_budget, kAutoFieldBudget, std::int64_t{1} << 40)).empty())
    return e + " (-1 = auto, 0 = whole rebuild in one tick)";
  // A tiny budget is accepted by the field code but a rebuild then spans so many ticks that the
  // swarm follows a stale field for seconds to hours (a 1024x1024 rebuild is ~1.06 million units: at
  // --field-budget 1 about a million ticks, ~9 hours at 30 Hz). Refused rather than warned about:
  // an operator reads the error at once, a warning scrolls away while the game looks broken.
  if (c.field_budget > 0 && c.field_budget < kMinFieldBudget) {
    std::ostringstream ss;
    ss << "--field-budget must be -1 (auto), 0 (whole rebuild in one tick) or >= " << kMinFieldBudget
       << " work units per tick (got " << c.field_budget << "); a rebuild costs about one unit per walkable cell ("
       << "~1.06 million on a 1024x1024 map), so " << c.field_budget << " would spread it over ~"
       << (1060000 + c.field_budget - 1) / c.field_budget << " ticks";
    return ss.str();
  }
  if (!(e = range("--threads", c.threads, 1, kMaxWorkerThreads)).empty()) return e;
  if (!(std::isfinite(c.far_step_cells) && c.far_step_cells >= 0.0 && c.far_step_cells <= 1.0e6)) {
    std::ostringstream ss;
    ss << "--far-step-cells must be in 0..1000000 cells (got " << c.far_step_cells << "; 0 = every agent every tick)";
    return ss.str();
  }
  if (!(e = range("--far-step-levels", c.far_step_levels, 1, 2)).empty()) return e;
  if (!(std::isfinite(c.player_speed) && c.player_speed > 0.0 && c.player_speed <= kMaxPlayerSpeed)) {
    std::ostringstream ss;
    ss << "--player-speed must be in (0, " << kMaxPlayerSpeed << "] world units per second (got " << c.player_speed << ")";
    return ss.str();
  }
  {
    const auto real_range = [](std::string_view key, double v, double lo, double hi, bool open_low, std::string_view unit) {
      // Checked as the simulation will hold it (a float): 1e-300 is > 0 but 0 as a float.
      const auto f = static_cast<double>(static_cast<float>(v));
      if (std::isfinite(v) && (open_low ? f > lo : f >= lo) && v <= hi) return std::string();
      std::ostringstream ss;
      ss << key << " must be in " << (open_low ? "(" : "") << lo << (open_low ? ", " : "..") << hi << (open_low ? "]" : "")
         << " " << unit << " (got " << v << ")";
      return ss.str();
    };
    if (!(e = real_range("--player-health", c.player_health, 0.0, 1e6, true, "hit points")).empty()) return e;
    if (!(e = real_range("--respawn-time", c.respawn_time_s, 0.0, 1e6, false, "seconds")).empty()) return e;
    if (!(e = real_range("--fire-range", c.fire_range, 0.0, sim::kMaxFireRange, true, "world units")).empty()) return e;
    if (!(e = real_range("--fire-cone", c.fire_cone_deg, 0.0, 90.0, false, "degrees")).empty()) return e;
    if (!(e = real_range("--fire-damage", c.fire_damage, 0.0, 1e6, false, "hit points")).empty()) return e;
    if (!(e = real_range("--fire-interval", c.fire_interval_s, 0.0, 1e6, true, "seconds")).empty()) return e;
    if (!(e = range("--max-hits-per-shot", c.max_hits_per_shot, 1, std::int64_t{sim::kMaxHitsPerShot})).empty()) return e;
    if (!(e = real_range("--barricade-health", c.barricade_health, 0.0, 1e6, true, "hit points")).empty()) return e;
    if (!(e = real_range("--build-range", c.build_range, 0.0, sim::kMaxFireRange, true, "world units")).empty()) return e;
    if (!(e = range("--barricades-per-player", c.barricades_per_player, 0, std::int64_t{sim::kMaxBarricadesPerPlayer})).empty())
      return e;
    if (!(e = real_range("--barricade-attackers", c.barricade_attackers, 1.0, 1024.0, false, "agents")).empty()) return e;
  }
  if (!(e = range("--slow-tick-ms", c.slow_tick_ms, 0, 1000)).empty()) return e + " (0 = off)";
  if (!(e = range("--rules-budget", c.rules_budget, 1000, 1000000000)).empty()) return e + " VM instructions per tick";
  if (!(e = range("--rules-memory-mib", c.rules_memory_mib, 1, 4096)).empty()) return e;
  {
    std::vector<sim::WaveSpec> waves;
    if (!(e = resolve_waves(c, waves)).empty()) return e;
  }
  if (!(e = seconds_range("--status-interval", c.status_interval_s, kMinStatusInterval, kMaxStatusInterval)).empty())
    return e;
  if (!is_ip_literal(c.bind)) return "--bind must be an IP address such as 0.0.0.0 or 127.0.0.1 (got '" + c.bind + "')";
  if (!(e = range("--max-connections-per-address", c.max_connections_per_address, 1, 65535)).empty()) return e;
  if (!(e = seconds_range("--hello-timeout", c.hello_timeout_s, 0.1, 600.0)).empty()) return e;
  if (!(e = seconds_range("--idle-timeout", c.idle_timeout_s, 1.0, 3600.0)).empty()) return e;
  if (!(e = range("--max-clients-per-address", c.max_clients_per_address, 0, 1024)).empty()) return e + " (0 = auto)";
  if (!(e = seconds_range("--reconnect-grace", c.reconnect_grace_s, 0.0, 600.0)).empty()) return e + " (0 = no reconnects)";
  if (!(e = seconds_range("--shutdown-when-empty", c.shutdown_when_empty_s, 0.0, 86400.0)).empty()) return e + " (0 = never)";
  if (!(e = seconds_range("--frame-timeout", c.frame_timeout_s, 0.1, 600.0)).empty()) return e;
  if (!(e = seconds_range("--ack-timeout", c.ack_timeout_s, 0.1, 600.0)).empty()) return e;
  if (!(e = range("--udp-receive-buffer-kb", c.udp_receive_buffer_kb, 64, 1048576)).empty()) return e;
  if (!(e = range("--client-kbps", c.client_kbps, 32, 1000000)).empty()) return e + " (kbit/s per client)";
  if (!(e = range("--http-port", c.http_port, -1, 65535)).empty()) return e + " (-1 = off, 0 = a free port)";
  if (!c.http_bind.empty() && !is_ip_literal(c.http_bind))
    return "--http-bind must be an IP address such as 0.0.0.0 or 127.0.0.1, or empty for --bind's (got '" + c.http_bind + "')";
  if (!(e = range("--web-port", c.web_port, -1, 65535)).empty()) return e + " (-1 = off, 0 = a free port)";
  if (!(e = range("--max-web-spectators", c.max_web_spectators, 0, 1024)).empty()) return e + " (0 = auto)";
  if (!c.web_bind.empty() && !is_ip_literal(c.web_bind))
    return "--web-bind must be an IP address such as 0.0.0.0 or 127.0.0.1, or empty for --bind's (got '" + c.web_bind + "')";
  if (c.auth != "open" && c.auth != "tokens")
    return "--auth must be open or tokens (got '" + cli::printable_ascii(c.auth) + "')";
  if (c.auth == "tokens" && c.web_port >= 0 && !c.web_spectators_open)
    return "--web-port with --auth tokens needs --web-spectators-open: the browser spectator's stream is not sealed "
           "and carries no connect token (spectators then watch the match's public view without one)";
  if (c.auth == "tokens" && c.key_file.empty())
    return "--auth tokens needs --key-file FILE, the key the backend seals tokens with (make one with "
           "swarmfield-tool token --new-key FILE)";
  if (!c.public_address.empty() &&
      (c.public_address.size() > 64 || c.public_address.find(':') == std::string::npos ||
       c.public_address.find_first_of(" \t") != std::string::npos))
    return "--public-address must be host:port as tokens name it (got '" + cli::printable_ascii(c.public_address) + "')";
  if (!(e = range("--record-hash-every", c.record_hash_every, 1, 1000000)).empty()) return e;
  if (!(std::isfinite(c.record_max_mb) && c.record_max_mb >= 0.0 && c.record_max_mb <= 1048576.0)) {
    std::ostringstream ss;
    ss.precision(15);  // 1048577 reads as itself, not 1.04858e+06
    ss << "--record-max-mb must be in 0..1048576 MiB (got " << c.record_max_mb << "; 0 = no limit)";
    return ss.str();
  }
  if (!c.record_path.empty() && !c.replay_path.empty())
    return "--record and --replay exclude each other (a replay is already recorded)";
  if (!c.record_path.empty()) {
    // Refused here, before the server listens, rather than when the recorder opens the file.
    std::error_code ec;
    const std::filesystem::path record(c.record_path);
    if (std::filesystem::is_directory(record, ec))
      return "--record must name a file to create, '" + c.record_path + "' is a folder";
    // A device was written to as if it were the recording (--record /dev/full failed only once
    // the match ran; a disk's device node, to a root server, would have been overwritten). A FIFO
    // stays allowed: a recording may be streamed to a reader.
    const std::filesystem::file_status kind = std::filesystem::status(record, ec);
    if (std::filesystem::is_block_file(kind) || std::filesystem::is_character_file(kind) ||
        std::filesystem::is_socket(kind))
      return "--record '" + cli::printable_ascii(c.record_path) +
             "' is a device or socket, not a file: name a new file (only an older recording is replaced)";
    const std::filesystem::path folder = record.parent_path();
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
      return "--record '" + c.record_path + "': the folder '" + folder.string() + "' does not exist (create it first)";
    // An older recording may be replaced; any other file is not overwritten (a map, a config or
    // a key named by mistake was replaced by the recording without a word).
    if (std::filesystem::is_regular_file(record, ec) && std::filesystem::file_size(record, ec) > 0) {
      std::ifstream in(record, std::ios::binary);
      char magic[8] = {};
      in.read(magic, sizeof magic);
      if (!in || std::string_view(magic, sizeof magic) != std::string_view(kReplayMagic, sizeof kReplayMagic))
        return "--record '" + cli::printable_ascii(c.record_path) +
               "' is an existing file that is not a recording: name a new file (only an older recording is replaced)";
    }
  }
  if (!(e = range("--public-udp-port", c.public_udp_port, 0, 65535)).empty()) return e + " (0 = the bound port)";
  if (!(e = range("--agones-port", c.agones_port, 0, 65535)).empty()) return e + " (0 = $AGONES_SDK_HTTP_PORT or 9358)";
  if (!(e = seconds_range("--spectator-join-interval", c.spectator_join_s, 0.0, 600.0)).empty()) return e + " (0 = off)";
  if (!(e = seconds_range("--agones-health-interval", c.agones_health_interval_s, 0.05, 60.0)).empty()) return e;
  if (!is_fleet_name(c.agones_port_name))
    return "--agones-port-name must be 1..63 characters of a-z, 0-9 and '-', the Fleet's port name (got '" +
           cli::printable_ascii(c.agones_port_name) + "')";
  if (!is_fleet_name(c.agones_players_list))
    return "--agones-players-list must be 'none' or 1..63 characters of a-z, 0-9 and '-', the Fleet's List name (got '" +
           cli::printable_ascii(c.agones_players_list) + "')";
  if (std::find(kLogLevels.begin(), kLogLevels.end(), c.log_level) == kLogLevels.end())
    return "--log-level must be one of trace, debug, info, warn, error, critical, off (got '" + c.log_level + "')";
  if (!sim::parse_field_mode(c.field_mode))
    return "--field-mode must be whole, hierarchical or auto (got '" + c.field_mode + "')";
  return {};
}

}  // namespace swarmfield::server
