// The settings table and a value's conversions (config_settings.hpp).
#include "config_settings.hpp"
#include "swarmfield/server/config/server_config.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "swarmfield/cli/decimal_number.hpp"
#include "swarmfield/server/config/config_toml.hpp"

namespace swarmfield::server::config_detail {

std::string log_format_name(LogFormat f) { return f == LogFormat::kJson ? "json" : "text"; }

const std::vector<Setting>& settings() {
  using C = ServerConfig;
  static const std::vector<Setting> table = {
      {"map", &C::map_path, "PATH",
       "Map file to load instead of the procedural city: MovingAI .map, Tiled .tmj/.json or .png (README: Map formats)"},
      {"city-seed", &C::city_seed, "N", "Seed of the procedural city (used when no --map)"},
      {"city-size", &C::city_size, "CELLS", "Side of the procedural city, cells (32..8192)"},
      {"agents", &C::agents, "N",
       "Agents spawned on the first tick; at most the map's density limit, the agents its walkable cells hold "
       "(cells x 0.9069 / (pi r^2), hexagonal packing of the smallest kind spawned, r = 0.25 for the default "
       "runner: ~4.6 a cell; the limit is logged at start-up), else an error"},
      {"max-agents", &C::max_agents, "N", "Swarm capacity; waves stop there, and at the map's density limit (see --agents)"},
      {"tick-hz", &C::tick_hz, "HZ", "Simulation ticks per second (1..240)"},
      {"snapshot-hz", &C::snapshot_hz, "HZ", "Snapshots per second per client (1..tick-hz; the tick rate when that is below 20)"},
      {"port", &C::port, "PORT", "TCP and UDP port; 0 = pick a free port (logged as 'listening tcp=.. udp=..')"},
      {"bind", &C::bind, "ADDR", "Listen address (IPv4 or IPv6)"},
      {"max-clients", &C::max_clients, "N", "Most connected clients, viewers + players (1..1024)"},
      {"send-queue-kb", &C::send_queue_kb, "KIB",
       "Per-client TCP send queue, KiB; a client that falls further behind is evicted (raised to fit the map transfer)"},
      {"duration", &C::duration_s, "SECONDS", "Stop after this many seconds; 0 = run until SIGINT/SIGTERM",
       "a number of seconds"},
      {"seed", &C::seed, "N", "World seed (agent spawn positions)"},
      {"log-level", &C::log_level, "LEVEL", "Log level: trace, debug, info, warn, error, critical, off"},
      {"log-format", &C::log_format, "FORMAT", "Log line format (stderr): text or json"},
      {"spawn-wave", &C::spawn_wave, "N", "Agents added per wave; 0 = no waves"},
      {"wave-interval", &C::wave_interval_s, "SECONDS", "Seconds between waves", "a number of seconds"},
      {"status-interval", &C::status_interval_s, "SECONDS", "Seconds between status log lines", "a number of seconds"},
      {"field-budget", &C::field_budget, "UNITS",
       "Field rebuild work units per tick (~cells settled; a 1024x1024 rebuild is ~1.06 million): 0 = whole rebuild in "
       "one tick, -1 = auto (0 up to 512x512 maps, 200000 above or in hierarchical mode), else >= 10000; agents read the "
       "last complete field meanwhile"},
      {"field-mode", &C::field_mode, "MODE",
       "Navigation fields: whole (one whole-map field), hierarchical (sector graph, portal routes, per-sector fields "
       "of occupied sectors), auto (hierarchical from 4096 cells a side)"},
      {"threads", &C::threads, "N", "Threads stepping the swarm, the tick thread included (1..64); results are identical for any count"},
      {"far-step-cells", &C::far_step_cells, "CELLS",
       "Level of detail: agents whose path to their goal is longer than this many cells step every other tick with "
       "twice the time step (same speed, half the work); 0 = every agent every tick", "a number of cells"},
      {"far-step-levels", &C::far_step_levels, "N",
       "Far stepping's levels (1..2): 2 = agents whose path is longer than twice --far-step-cells also step every "
       "fourth tick with four times the time step (a quarter of the work for them)"},
      {"player-speed", &C::player_speed, "UNITS_PER_S",
       "Player speed at full input, world units (= cells) per second (0 < speed <= 100)", "a number of world units per second"},
      {"combat", &C::combat, "",
       "Horde rules: agents hurt the players they reach (kinds' damage per second), players shoot while they hold "
       "fire (Input), killed agents leave, killed players respawn; --no-combat: contacts are only counted"},
      {"player-health", &C::player_health, "HP", "A player's hit points at (re)spawn (0 < hp <= 1e6)", "a number of hit points"},
      {"respawn-time", &C::respawn_time_s, "SECONDS", "Seconds a killed player waits before it respawns at its spawn point (0..1e6)",
       "a number of seconds"},
      {"fire-range", &C::fire_range, "UNITS", "A shot's reach from the player's centre, world units (0 < range <= 256)",
       "a number of world units"},
      {"fire-cone", &C::fire_cone_deg, "DEGREES", "Half-angle of a shot's cone round the aim, degrees (0..90)", "a number of degrees"},
      {"fire-damage", &C::fire_damage, "HP", "Hit points a shot takes from each agent it hits (0..1e6)", "a number of hit points"},
      {"fire-interval", &C::fire_interval_s, "SECONDS", "Seconds between two shots of one player (0 < s <= 1e6)", "a number of seconds"},
      {"max-hits-per-shot", &C::max_hits_per_shot, "N", "Agents one shot hits at most, nearest first (1..64)"},
      {"rules", &C::rules_path, "FILE.lua",
       "Game rules in Lua 5.4 (e.g. server/rules/scripts/last_stand.lua): score, extra spawns, the match's end; "
       "empty = the default rules (a score per kill)"},
      {"rules-budget", &C::rules_budget, "INSTRUCTIONS",
       "Lua VM instructions the rules may run per tick (1000..1000000000); past it the script is stopped, the match goes on"},
      {"rules-memory-mib", &C::rules_memory_mib, "MIB", "Memory the Lua rules may hold, MiB (1..4096)"},
      {"barricade-health", &C::barricade_health, "HP", "A new barricade's hit points (0 < hp <= 1e6); the horde's path cost through it grows with them",
       "a number of hit points"},
      {"build-range", &C::build_range, "UNITS",
       "Farthest a player's centre may be from the centre of the cell it builds a barricade on, world units (0 < range <= 256)",
       "a number of world units"},
      {"barricades-per-player", &C::barricades_per_player, "N", "Barricades one player may have standing at once (0..1024; 0 = no building)"},
      {"barricade-attackers", &C::barricade_attackers, "N",
       "Agents the barricade path cost assumes attack one barricade at once (1..1024): the cost is the walk the horde "
       "makes in the time they need to break it", "a number of agents"},
      {"slow-tick-ms", &C::slow_tick_ms, "MS",
       "Testing aid: every tick also sleeps this long, ms (0..1000), to reproduce an overloaded server; 0 = off"},
      {"max-connections-per-address", &C::max_connections_per_address, "N", "TCP connections from one IP address at once (1..65535)"},
      {"hello-timeout", &C::hello_timeout_s, "SECONDS", "A new connection must send Hello within this many seconds (0.1..600); also the browser spectator's deadline for its HTTP request",
       "a number of seconds"},
      {"shutdown-when-empty", &C::shutdown_when_empty_s, "SECONDS",
       "Stop (drain, summary, Agones Shutdown) when the players that joined have all left and none came back for this "
       "many seconds (0..86400); 0 = never. Counted from the last player leaving, only once a player has joined",
       "a number of seconds"},
      {"idle-timeout", &C::idle_timeout_s, "SECONDS",
       "Close a client that sends nothing valid (TCP or UDP) this long, or fewer than one valid message per 2 s on "
       "average over it: a trickle of inputs does not hold a slot (1..3600)",
       "a number of seconds"},
      {"reconnect-grace", &C::reconnect_grace_s, "SECONDS",
       "A client whose connection drops may resume its session this long with the secret from its Welcome; its "
       "player stays in the world meanwhile (0..600; 0 = no reconnects: a dropped client's player leaves at once)",
       "a number of seconds"},
      {"max-clients-per-address", &C::max_clients_per_address, "N",
       "Slots (players + viewers) one IP address may hold: 0 = auto (--auth open: max-clients / 8, at least 1; "
       "--auth tokens: no share), else 1..1024"},
      {"frame-timeout", &C::frame_timeout_s, "SECONDS",
       "A TCP frame once begun must be complete within this many seconds (0.1..600)", "a number of seconds"},
      {"ack-timeout", &C::ack_timeout_s, "SECONDS",
       "Stop streaming UDP to a client whose acks stop this long; TCP takes over (0.1..600)", "a number of seconds"},
      {"udp-receive-buffer-kb", &C::udp_receive_buffer_kb, "KIB",
       "Kernel receive buffer asked for the UDP socket, KiB (64..1048576); the effective size is logged"},
      {"client-kbps", &C::client_kbps, "KBPS",
       "Snapshot budget per client, kbit/s (32..1000000): relevance, priority and the density grid keep each "
       "client's snapshots within it"},
      {"http-port", &C::http_port, "PORT",
       "Operations HTTP port (/healthz, /readyz, /metrics): -1 = off, 0 = a free port (logged as 'http listening port=..')"},
      {"http-bind", &C::http_bind, "ADDR", "Listen address of the operations HTTP port; empty = the same as --bind"},
      {"web-port", &C::web_port, "PORT",
       "Browser spectator: the page at http://HOST:PORT/ and its snapshot stream (WebSocket /ws): -1 = off, 0 = a free "
       "port (logged as 'web listening port=..'); with --auth tokens only with --web-spectators-open"},
      {"web-bind", &C::web_bind, "ADDR", "Listen address of the browser spectator; empty = the same as --bind"},
      {"web-root", &C::web_root, "DIR",
       "Folder of the built page (index.html, app.js); empty = 'web' beside the executable's folder"},
      {"web-spectators-open", &C::web_spectators_open, "",
       "With --auth tokens: browser spectators watch without a connect token (viewers only, their stream "
       "unsealed: the match's public view); needed for --web-port with --auth tokens"},
      {"spectator-join-interval", &C::spectator_join_s, "SECONDS",
       "Spectators (TCP and browser viewers) seeing the same area share one encoded snapshot stream; one joins "
       "it at most this often, as a full snapshot for its members (0..600; 0 = each its own stream)",
       "a number of seconds"},
      {"max-web-spectators", &C::max_web_spectators, "N",
       "Browser spectators at once (1..1024); 0 = auto: half of --max-clients, so spectators never take every "
       "player's slot"},
      {"public-udp-port", &C::public_udp_port, "PORT",
       "UDP port announced to clients: 0 = the bound one; behind a port mapping, the mapped one (with --agones: the GameServer's)"},
      {"agones", &C::agones, "", "Call the Agones SDK sidecar (REST on localhost): Ready, Health, Allocate on the first player, Shutdown on drain"},
      {"agones-port", &C::agones_port, "PORT", "Agones SDK REST port; 0 = $AGONES_SDK_HTTP_PORT, else 9358"},
      {"agones-health-interval", &C::agones_health_interval_s, "SECONDS",
       "Seconds between Agones Health pings, sent only while the tick loop is alive (0.05..60)", "a number of seconds"},
      {"agones-port-name", &C::agones_port_name, "NAME",
       "The Fleet's name of the game port: Welcome announces the GameServer's status.ports '<NAME>-udp' (a TCPUDP "
       "port), else '<NAME>' (at most 63 of a-z, 0-9, '-')"},
      {"agones-players-list", &C::agones_players_list, "NAME",
       "The Fleet's List of players (spec.lists, Agones Counters and Lists): a player joining is added to it, one "
       "leaving removed; none = no List calls (at most 63 of a-z, 0-9, '-')"},
      {"auth", &C::auth, "MODE",
       "Who may join: open (anyone who reaches the port; local play) or tokens (only clients with a connect token "
       "from the match's backend, sealed with --key-file; their streams are sealed)"},
      {"key-file", &C::key_file, "FILE",
       "The connect-token key shared with the backend, 64 hex digits (swarmfield-tool token --new-key FILE); "
       "needed by --auth tokens"},
      {"public-address", &C::public_address, "HOST:PORT",
       "The address connect tokens must name; empty = any host with this server's TCP port"},
      {"record", &C::record_path, "FILE",
       "Record the match (settings, map, every applied input, state hashes) for swarmfield-tool replay / --replay"},
      {"record-hash-every", &C::record_hash_every, "TICKS", "Ticks between state hashes in the recording (1..1000000)"},
      {"record-max-mb", &C::record_max_mb, "MIB",
       "Stop recording once the file reaches this many MiB (fractions allowed; 0 = no limit): it ends there as a "
       "whole recording of the ticks so far, logged once, and the match goes on unrecorded",
       "a number of MiB"},
      {"replay", &C::replay_path, "FILE",
       "Serve a recording to viewers like a live match (its map and simulation settings; players may not join)"},
      {"allow-truncated", &C::allow_truncated, "",
       "With --replay: a recording cut short (its server crashed) plays up to its last state hash instead of being "
       "refused"},
  };
  return table;
}

const Setting* find_setting(std::string_view key) {
  for (const Setting& s : settings())
    if (s.key == key) return &s;
  return nullptr;
}

std::string env_name(std::string_view key) {
  std::string name = "SWARMFIELD_";
  for (char ch : key) name += ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return name;
}

// SWARMFIELD_ variables of the build, test and demo scripts (and reserved for the other
// programs): not server settings, and not errors. (SWARMFIELD_REQUIRE_ALL: CI's "every test
// must run", tests/support/skip.hpp; the tests start servers with it in their environment.)
bool is_tooling_variable(std::string_view name) {
  static constexpr std::array<std::string_view, 15> kPrefixes = {
      "SWARMFIELD_TEST_", "SWARMFIELD_BENCH",  "SWARMFIELD_SANITIZE", "SWARMFIELD_FUZZ_", "SWARMFIELD_CALLER_PWD",
      "SWARMFIELD_DEMO_", "SWARMFIELD_LOAD_",  "SWARMFIELD_SCEN_",    "SWARMFIELD_XVFB_", "SWARMFIELD_BUILD_",
      "SWARMFIELD_BOT_",  "SWARMFIELD_VIEWER_", "SWARMFIELD_TOOL_",   "SWARMFIELD_CONTAINER_",
      "SWARMFIELD_REQUIRE_ALL"};
  return std::any_of(kPrefixes.begin(), kPrefixes.end(), [&](std::string_view p) { return name.substr(0, p.size()) == p; });
}

// ---- values: from text (environment), from TOML --------------------------------------------
std::string apply_text(const Setting& s, ServerConfig& c, const std::string& text) {
  const auto quoted = [&text] { return " (got '" + text + "')"; };
  if (text.empty()) return "value is empty";
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::remove_cvref_t<decltype(c.*member)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>) {
          if (std::is_unsigned_v<T> && text[0] == '-') return "must not be negative" + quoted();
          T v{};
          const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
          if (ec == std::errc::result_out_of_range) return "is out of range" + quoted();
          if (ec != std::errc{} || end != text.data() + text.size()) return "must be an integer" + quoted();
          c.*member = v;
        } else if constexpr (std::is_same_v<T, double>) {
          char* end = nullptr;
          const double v = std::strtod(text.c_str(), &end);
          if (end != text.c_str() + text.size()) return "must be " + std::string(s.unit) + quoted();
          if (!std::isfinite(v)) return "must be a finite number" + quoted();
          // strtod reads hexadecimal ("0x10" = 16) where an integer setting refuses it.
          if (!cli::is_decimal_number(text)) return "must be a decimal number" + quoted();
          c.*member = v;
        } else if constexpr (std::is_same_v<T, bool>) {
          std::string t;
          for (char ch : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          if (t == "1" || t == "true" || t == "yes" || t == "on") {
            c.*member = true;
          } else if (t == "0" || t == "false" || t == "no" || t == "off") {
            c.*member = false;
          } else {
            return "must be true or false (or 1/0, yes/no, on/off)" + quoted();
          }
        } else if constexpr (std::is_same_v<T, LogFormat>) {
          if (text == "text") {
            c.*member = LogFormat::kText;
          } else if (text == "json") {
            c.*member = LogFormat::kJson;
          } else {
            return "must be text or json" + quoted();
          }
        } else {
          c.*member = text;
        }
        return {};
      },
      s.field);
}

std::string apply_toml(const Setting& s, ServerConfig& c, const toml::node& n) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::remove_cvref_t<decltype(c.*member)>;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          auto v = n.value_exact<std::int64_t>();
          if (!v) return "must be an integer (got " + toml_type_name(n) + ")";
          c.*member = *v;
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          // TOML integers are signed 64-bit: values above 2^63-1 are written as a string of digits.
          if (auto text = n.value_exact<std::string>()) {
            std::uint64_t v = 0;
            const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
            if (ec != std::errc{} || end != text->data() + text->size() || text->empty())
              return "must be an integer (a string must hold only decimal digits, got '" + *text + "')";
            c.*member = v;
            return {};
          }
          auto v = n.value_exact<std::int64_t>();
          if (!v) return "must be an integer (got " + toml_type_name(n) + ")";
          if (*v < 0) return "must be >= 0 (got " + std::to_string(*v) + ")";
          c.*member = static_cast<std::uint64_t>(*v);
        } else if constexpr (std::is_same_v<T, double>) {
          if (auto i = n.value_exact<std::int64_t>()) {
            c.*member = static_cast<double>(*i);
          } else if (auto f = n.value_exact<double>()) {
            c.*member = *f;
          } else {
            return "must be " + std::string(s.unit) + " (got " + toml_type_name(n) + ")";
          }
        } else if constexpr (std::is_same_v<T, bool>) {
          auto v = n.value_exact<bool>();
          if (!v) return "must be true or false (got " + toml_type_name(n) + ")";
          c.*member = *v;
        } else if constexpr (std::is_same_v<T, LogFormat>) {
          auto v = n.value_exact<std::string>();
          if (!v) return "must be a string (got " + toml_type_name(n) + ")";
          if (*v != "text" && *v != "json") return "must be text or json (got '" + *v + "')";
          c.*member = *v == "json" ? LogFormat::kJson : LogFormat::kText;
        } else {
          auto v = n.value_exact<std::string>();
          if (!v) return "must be a string (got " + toml_type_name(n) + ")";
          c.*member = *v;
        }
        return {};
      },
      s.field);
}

void copy_setting(const Setting& s, ServerConfig& to, const ServerConfig& from) {
  std::visit([&](auto member) { to.*member = from.*member; }, s.field);
}

}  // namespace swarmfield::server::config_detail

namespace swarmfield::server {

// Kubernetes' service links (and Docker's links) for a Service named swarmfield or
// swarmfield-<x>: <S>_SERVICE_HOST, <S>_SERVICE_PORT[_<PORT NAME>], <S>_PORT=tcp://host:port and
// <S>_PORT_<n>_<TCP|UDP|SCTP>[_PROTO|_PORT|_ADDR] (kubernetes pkg/kubelet/envvars/envvars.go).
// <S>_PORT is told apart from a setting of that name (SWARMFIELD_PORT, SWARMFIELD_HTTP_PORT) by
// its value: a URL, where a setting takes a number.
bool is_service_link_variable(std::string_view name, std::string_view value) {
  if (!name.starts_with("SWARMFIELD_")) return false;
  if (name.ends_with("_PORT") && (value.starts_with("tcp://") || value.starts_with("udp://") || value.starts_with("sctp://")))
    return true;
  if (name.ends_with("_SERVICE_HOST") || name.ends_with("_SERVICE_PORT") || name.find("_SERVICE_PORT_") != std::string_view::npos)
    return true;
  // _PORT_<digits>_<PROTO> and its three details.
  for (std::size_t at = name.find("_PORT_"); at != std::string_view::npos; at = name.find("_PORT_", at + 1)) {
    std::string_view rest = name.substr(at + 6);
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0 || digits > 5) continue;
    rest = rest.substr(digits);
    for (const std::string_view proto : {"_TCP", "_UDP", "_SCTP"}) {
      if (!rest.starts_with(proto)) continue;
      const std::string_view detail = rest.substr(proto.size());
      if (detail.empty() || detail == "_PROTO" || detail == "_PORT" || detail == "_ADDR") return true;
    }
  }
  return false;
}

}  // namespace swarmfield::server
