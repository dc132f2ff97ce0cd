#pragma once
// Server settings from four sources, one key each: command-line flags (CLI11), SWARMFIELD_<KEY>
// environment variables, an optional TOML file (toml++, --config or SWARMFIELD_CONFIG) and the
// defaults; flag > environment > file > default. One validation pass for all.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/game/waves.hpp"

namespace swarmfield::server {

enum class LogFormat : std::uint8_t { kText, kJson };

/// Every setting, already validated when it comes out of parse_server_config().
/// One [[waves]] table of the TOML config, as written (kind and zone names are resolved against
/// the final kinds and zones by resolve_waves(), below). Seconds and cells.
struct WaveConfig {
  std::string name;
  bool when_cleared = false;  ///< trigger = "cleared" (else "time")
  double start_s = 0.0;       ///< `start`: seconds from the match start, or after the horde is cleared
  /// `kinds = { walker = 100, brute = 5 }`: kind name -> agents, in the table's (name) order.
  std::vector<std::pair<std::string, std::int64_t>> kinds;
  std::optional<std::array<std::int64_t, 4>> zone;  ///< `zone = [x0, y0, x1, y1]` cells, corners included
  std::string zone_name;                            ///< `zone = "north"`: a key of the [zones] table
  double duration_s = 0.0;  ///< `duration`: agents spread evenly over it (0 = at once)
  std::int64_t repeat = 0;  ///< `repeat`: comes back this many more times
  double every_s = 0.0;     ///< `every`: seconds between a coming's start and the next
  double growth = 1.0;      ///< `growth`: counts multiplied by it at each repeat
  bool operator==(const WaveConfig&) const = default;
};

struct ServerConfig {
  std::string map_path;              ///< MovingAI .map file; empty = procedural city
  std::uint64_t city_seed = 1;       ///< procedural city seed (when map_path is empty)
  std::int64_t city_size = 256;      ///< procedural city side, cells (32..8192)
  std::int64_t agents = 2000;        ///< agents spawned on the first tick
  std::int64_t max_agents = 100000;  ///< swarm capacity (waves stop there)
  std::int64_t tick_hz = 30;         ///< simulation ticks per second (1..240)
  std::int64_t snapshot_hz = 20;     ///< snapshots per second per client (1..tick_hz)
  std::int64_t port = 7777;          ///< TCP and UDP port; 0 = pick a free one (logged)
  std::string bind = "0.0.0.0";      ///< listen address (IPv4 or IPv6 literal)
  std::int64_t max_clients = 64;     ///< connected clients (viewers + players), 1..1024
  std::int64_t send_queue_kb = 4096; ///< per-client TCP bytes waiting to be written (KiB) above
                                     ///< which the client is evicted; 16..1048576
  double duration_s = 0.0;           ///< stop after this many seconds; 0 = run until signalled
  /// Stop (and tell Agones Shutdown) once every player that joined has left and none came back
  /// for this many seconds; 0 = never. Only after a first player joined: a server waiting for
  /// its match is not empty.
  double shutdown_when_empty_s = 0.0;
  std::uint64_t seed = 1;            ///< world seed (spawn positions)
  std::string log_level = "info";    ///< trace, debug, info, warn, error, critical, off
  LogFormat log_format = LogFormat::kText;
  std::string config_path;           ///< the TOML file read, if any
  std::int64_t spawn_wave = 0;       ///< agents per wave; 0 = no waves
  double wave_interval_s = 10.0;     ///< seconds between waves (> 0)
  double status_interval_s = 5.0;    ///< seconds between status log lines (> 0)
  /// Field rebuild work units per tick (about one unit per cell settled): 0 = a whole rebuild
  /// in the tick that needs it; kAutoFieldBudget = chosen from the map size by
  /// resolve_field_budget(); otherwise at least kMinFieldBudget.
  std::int64_t field_budget = -1;
  /// Size class 1's navigation fields: "whole", "hierarchical" or "auto" (hierarchical from
  /// 4096 cells a side; sim::FieldMode).
  std::string field_mode = "auto";
  /// Threads that step the swarm, the tick thread included (1..kMaxWorkerThreads). The
  /// simulation is bit-identical for any count (sim::WorldParams::worker_threads).
  std::int64_t threads = 2;
  /// Far stepping (sim::SwarmParams::far_step_cells): agents whose path to their goal is longer
  /// than this many cells step every other tick with twice the time step; 0 = every agent
  /// every tick (0..1e6).
  double far_step_cells = 96.0;
  /// Far stepping's levels (sim::SwarmParams::far_step_levels, 1..2): 2 = agents whose path is
  /// longer than twice far_step_cells also step every fourth tick with four times the time step.
  std::int64_t far_step_levels = 1;
  /// Player speed at full intent, world units per second (0 < speed <= kMaxPlayerSpeed); cells
  /// are 1 unit, so at 30 Hz a player changes cell about every 30 / speed ticks.
  double player_speed = 5.0;
  /// The default horde rules (sim::CombatParams): agents hurt the players they reach (kinds'
  /// damage), players shoot along their aim while they hold the trigger (Input fire), killed
  /// agents leave, killed players respawn. false: contacts are only counted.
  bool combat = true;
  double player_health = 100.0;    ///< hit points at (re)spawn, (0, 1e6]
  double respawn_time_s = 3.0;     ///< seconds a dead player waits, 0..1e6
  double fire_range = 10.0;        ///< world units, (0, 256]
  double fire_cone_deg = 15.0;     ///< half-angle of a shot's cone, degrees, 0..90
  double fire_damage = 20.0;       ///< hit points per agent hit, 0..1e6
  double fire_interval_s = 0.25;   ///< seconds between shots, (0, 1e6]
  std::int64_t max_hits_per_shot = 3;  ///< agents one shot hits at most, 1..64
  /// Game rules in Lua (server/rules/include/swarmfield/rules/lua_rules.hpp): the script's path
  /// ("" = the default rules: a score per kill), its VM instructions per tick and memory.
  std::string rules_path;
  std::int64_t rules_budget = 1000000;
  std::int64_t rules_memory_mib = 64;
  /// The script's text (read from rules_path at start-up; a replay's stored settings carry it as
  /// `rules-script`, so a recording re-runs the very script it was made with).
  std::string rules_script;
  /// Barricades (sim::BarricadeParams; players build them with Input's build request).
  double barricade_health = 300.0;          ///< a new barricade's hit points, (0, 1e6]
  double build_range = 4.0;                 ///< world units from the player's centre to the cell's, (0, 256]
  std::int64_t barricades_per_player = 8;   ///< standing at once, 0..1024 (0 = no building)
  double barricade_attackers = 4.0;         ///< agents the path cost assumes attack at once, 1..1024
  /// Testing aid: every tick also sleeps this many milliseconds (0..1000), so an overloaded
  /// server (ticks longer than 1 / tick_hz) can be reproduced cheaply, without burning CPU on a
  /// huge swarm. 0 = off. Counted in the tick and step times.
  std::int64_t slow_tick_ms = 0;

  // ---- connection security (protocol/README.md) -------------------------------------------
  /// TCP connections from one IP address at once, handshaken or not (1..65535). Above it a new
  /// connection gets Error kServerFull and is closed. Many players behind one NAT share an
  /// address, hence not 1; one host can still not take every slot.
  std::int64_t max_connections_per_address = 16;
  /// A connection must send Hello within this many seconds (0.1..600).
  double hello_timeout_s = 3.0;
  /// A joined client that sends nothing valid (no TCP message, no authenticated UDP packet) for
  /// this many seconds is closed (1..3600). Clients send inputs or keep-alives several times a
  /// second, so only idle or hostile connections hit it; it frees the slots of clients that
  /// said Hello and went quiet.
  double idle_timeout_s = 15.0;
  /// Player and viewer slots one IP address may hold at once: 0 = auto (with --auth open an
  /// eighth of max_clients, at least 1, so a few addresses can not squat every slot; with
  /// --auth tokens no share, the tokens decide), else 1..1024.
  std::int64_t max_clients_per_address = 0;
  /// Seconds a client that lost its connection may resume its session (its player stays in
  /// the world meanwhile) with the secret from its Welcome (0..600; 0 = no reconnects).
  double reconnect_grace_s = 10.0;
  /// A TCP frame that has begun must be complete within this many seconds (0.1..600): a peer
  /// trickling a frame byte by byte is cut off.
  double frame_timeout_s = 5.0;
  /// A UDP client whose acks stop for this many seconds (0.1..600) is no longer streamed to: its
  /// address is dropped and snapshots fall back to TCP until it confirms an address again.
  double ack_timeout_s = 3.0;
  /// Kernel receive buffer asked for the UDP socket, KiB (64..1048576); the effective size is
  /// logged (the kernel caps it at net.core.rmem_max unless the server may force it).
  std::int64_t udp_receive_buffer_kb = 8192;
  /// Snapshot budget per client, kbit/s (32..1000000; 1000 = 1 Mbit/s): the snapshot
  /// payloads of a client stay near client_kbps * 125 / snapshot_hz bytes each (a token bucket
  /// of two snapshots), the agents nearest its view centre and longest unsent first, the rest
  /// as a density grid (protocol/SNAPSHOTS.md).
  std::int64_t client_kbps = 1000;
  /// Enemy kinds, from the TOML file's [[kinds]] tables (no flag); the default set otherwise
  /// (runner, walker, brute). Each table has the keys `name` (required), `radius` (cells,
  /// 0.2..2), `speed` (world units per second), `separation-weight`, `turn-rate` (radians per
  /// second), `colour` ("#RRGGBB") and `weight` (> 0, relative share of spawns); a missing key
  /// takes the walker's value; "_" and "-" spellings are the same key. The tables replace the
  /// default set. Errors name the kind and the key: not an array of tables, unknown key, wrong
  /// type, key given twice, bad colour, weight <= 0, and whatever sim::check_agent_kinds()
  /// refuses (radius out of range, duplicate name, more than 16 kinds, ...).
  std::vector<sim::AgentKind> kinds = sim::default_agent_kinds();
  /// Waves as data, from the TOML file's [[waves]] tables (no flag; see WaveConfig and the
  /// README's "Waves"), run by the World's wave director beside --spawn-wave. Named spawn zones
  /// from the file's [zones] table (name = [x0, y0, x1, y1] cells).
  std::vector<WaveConfig> waves;
  std::map<std::string, std::array<std::int64_t, 4>> zones;

  // ---- operations (server/app/README.md) ----------------------------------------------------
  /// Port of the operations HTTP endpoints (/healthz, /readyz, /metrics): -1 = off, 0 = a free
  /// port (logged as "http listening port=P"), else 1..65535.
  std::int64_t http_port = -1;
  /// Listen address of the operations endpoints; empty = the same as `bind`.
  std::string http_bind;
  /// Port of the browser spectator (net/web_gateway.hpp: the page over HTTP, snapshots over a
  /// WebSocket): -1 = off, 0 = a free port (logged as "web listening port=P"), else 1..65535.
  std::int64_t web_port = -1;
  /// Listen address of the browser spectator; empty = the same as `bind`.
  std::string web_bind;
  /// Folder holding the built page (index.html, app.js); empty = `web` beside the executable's
  /// folder (build/bin/../web in a build tree, /opt/swarmfield/web in the image).
  std::string web_root;
  /// Browser spectators at once (WebSockets relayed to the game port); 0 = auto: half of
  /// max_clients (at least 1), so spectators can never take every player's slot.
  std::int64_t max_web_spectators = 0;
  /// With --auth tokens: browser spectators (the web gateway's viewers) are admitted without a
  /// connect token, their streams unsealed (the public view of the match); off = no --web-port
  /// with tokens.
  bool web_spectators_open = false;
  /// Spectators (viewers on TCP: browser pages, TCP viewers) whose snapshots cover the same area
  /// share one encoded stream (encode once, send to each); one joins a shared stream at most
  /// this often (seconds: the join restarts the stream with a full snapshot for its members),
  /// served by its own stream meanwhile. 0 = every spectator its own stream.
  double spectator_join_s = 10.0;
  /// UDP port announced to clients in Welcome: 0 = the bound one. Behind a port mapping
  /// (docker run -p 17777:7777) the mapped one; with --agones the GameServer's port wins.
  std::int64_t public_udp_port = 0;
  /// Agones: call the SDK sidecar's REST API (Ready, Health, Allocate on the first player,
  /// Shutdown on drain; agones_client.hpp).
  bool agones = false;
  /// The sidecar's REST port; 0 = $AGONES_SDK_HTTP_PORT, else 9358.
  std::int64_t agones_port = 0;
  /// Seconds between Health pings (0.05..60).
  double agones_health_interval_s = 2.0;
  /// The Fleet's name of the game port (spec.ports[].name): Welcome announces the GameServer's
  /// status.ports entry '<name>-udp' (Agones splits a TCPUDP port in two), else '<name>'.
  /// Non-empty, at most 63 characters of [a-z0-9-].
  std::string agones_port_name = "game";
  /// The Fleet's List of players (spec.lists): each player joining is added (AddListValue),
  /// each leaving removed; "none" = no List calls. At most 63 characters of [a-z0-9-].
  std::string agones_players_list = "players";
  /// Who may join (connect_token.hpp): "open" (anyone who reaches the port; local play, the
  /// demo) or "tokens" (only clients with a valid, unexpired, unused connect token sealed with
  /// the key in key_file; their TCP streams are sealed after the Hello).
  std::string auth = "open";
  /// The token key (64 hex digits; swarmfield-tool token --new-key FILE): required by
  /// auth = "tokens". A regular file of at most 1 MiB.
  std::string key_file;
  /// The "host:port" a token must name among its servers; empty = any host with this server's
  /// TCP port (behind a port mapping or on Agones set the public address).
  std::string public_address;
  /// Record the match to this file (replay_file.hpp); empty = off.
  std::string record_path;
  /// Ticks between state hashes in the recording (1..1000000).
  std::int64_t record_hash_every = 10;
  /// MiB after which the server stops recording (0..1048576; 0 = no limit): the tick that takes
  /// the file to it ends the recording (an end record: a whole recording of the ticks so far) and
  /// the match goes on unrecorded. A client joining and leaving in a loop (--auth open) grew a
  /// recording by ~750 MB an hour from one address.
  double record_max_mb = 1024.0;
  /// Serve this recording to viewers instead of a live match (players may not join); empty = off.
  std::string replay_path;
  /// --replay of a recording cut short (the recording server crashed): play it up to its last
  /// state hash instead of refusing it.
  bool allow_truncated = false;
};

inline constexpr std::int64_t kAutoFieldBudget = -1;
/// Smallest positive --field-budget accepted (work units per tick). Below it a rebuild of a
/// large map (~1.06 million units at 1024 x 1024) would take over 100 ticks, i.e. the swarm
/// would follow a field seconds to hours old; 1..kMinFieldBudget-1 are rejected.
inline constexpr std::int64_t kMinFieldBudget = 10000;
/// Largest --duration accepted (about 116 days); larger values overflowed the clock.
inline constexpr double kMaxDurationSeconds = 1e7;
/// Largest --threads accepted (sim::WorkerPool::kMaxThreads; checked where both are visible).
inline constexpr std::int64_t kMaxWorkerThreads = 64;
/// Largest --player-speed accepted, world units per second (20 cells a tick at 5 Hz; walls
/// are still swept cell by cell, so nothing tunnels).
inline constexpr double kMaxPlayerSpeed = 100.0;
/// --status-interval range, seconds: below, the log would be a flood; above ~1e10 s the time
/// arithmetic overflowed into a busy loop that ignored SIGTERM.
inline constexpr double kMinStatusInterval = 0.1;
inline constexpr double kMaxStatusInterval = 86400.0;
/// The field budget to run with: `config.field_budget` unless it is kAutoFieldBudget, then 0
/// for maps up to 512 x 512 cells (a whole rebuild takes a few ms) and 200000 above (about
/// 3 ms a tick; a 1024 x 1024 rebuild then spreads over ~6 ticks); 200000 at any size with
/// `field_mode` "hierarchical" (sector fields are built a few a tick, not all on each goal change).
[[nodiscard]] std::int64_t resolve_field_budget(const ServerConfig& config, std::size_t map_cells) noexcept;

/// Where a setting's effective value came from.
enum class ConfigSource : std::uint8_t { kDefault, kFile, kEnvironment, kFlag };

/// SWARMFIELD_* environment variables as (name, value) pairs.
using Environment = std::vector<std::pair<std::string, std::string>>;
/// The process's SWARMFIELD_* variables.
[[nodiscard]] Environment process_environment();

/// What the caller should do after parsing.
struct ConfigParseResult {
  enum class Action : std::uint8_t { kRun, kExit };
  Action action = Action::kRun;
  int exit_code = 0;     ///< for kExit: 0 after --help, 2 on any error
  std::string output;    ///< for kExit: help text (print to stdout) or one error line (stderr)
  ServerConfig config;   ///< for kRun: the merged, validated settings
  /// For kRun: each setting's source, in the order config_to_toml() lists the settings.
  std::vector<ConfigSource> sources;
  /// For kRun: lines for the log's warning level (environment variables skipped as service links).
  std::vector<std::string> warnings;
};

/// Whether the environment variable `name` = `value` is one of Kubernetes' service-link
/// variables for a Service named swarmfield or swarmfield-<x> (SWARMFIELD_SERVICE_HOST,
/// SWARMFIELD_SERVICE_PORT[_<NAME>], SWARMFIELD_PORT=tcp://host:port,
/// SWARMFIELD_PORT_<n>_TCP[_PROTO|_PORT|_ADDR], and the same after SWARMFIELD_<X>_), which the
/// kubelet injects unless the pod sets enableServiceLinks: false. parse_server_config skips
/// them with a warning instead of refusing them (a pod would crash-loop). A setting's own
/// variable with a number (SWARMFIELD_PORT=7777) is not one.
[[nodiscard]] bool is_service_link_variable(std::string_view name, std::string_view value);

/// Parses argv (argv[0] is the program name) and `environment`, reads the TOML file named by
/// --config (or SWARMFIELD_CONFIG). Every flag `--some-key` is also the environment variable
/// SWARMFIELD_SOME_KEY and the TOML key `some-key` (or `some_key`); a value comes from the flag,
/// else the environment, else the file, else the default. The map source (--map versus
/// --city-seed/--city-size) is taken whole from the highest source that names either.
/// Environment values are checked like flags (an empty value, a non-number, a negative seed,
/// NaN are errors naming the variable); a SWARMFIELD_ variable that is no setting is an error,
/// except the build/test scripts' own (SWARMFIELD_TEST_*, _BENCH, _SANITIZE, _FUZZ_*,
/// _CALLER_PWD, _DEMO_*, _LOAD_*, _SCEN_*, _XVFB_*, _BUILD_*) and the names reserved for the
/// other programs (_BOT_*, _VIEWER_*, _TOOL_*, _CONTAINER_*), and Kubernetes' service links
/// (is_service_link_variable: skipped, each with a line in ConfigParseResult::warnings). The
/// file's values and then the environment's (over the file's) must each be valid without the
/// flags. A validation error of
/// the merged settings names the source of the setting it is about. --print-config gives kExit,
/// exit_code 0 and the effective settings as TOML with a "# source" comment per line. Errors
/// (unknown flag, bad number, unknown TOML key, wrong TOML type, unreadable file, out-of-range
/// value, --map together with --city-seed) give kExit with exit_code 2 and a one-line message
/// naming the flag/key and what is accepted. --config naming a directory, a TOML key given twice
/// ("tick_hz" and "tick-hz") and a TOML value that is invalid even though a flag overrides it
/// (the file is validated on its own, as if no flag were given) are errors too. Never throws.
[[nodiscard]] ConfigParseResult parse_server_config(int argc, const char* const* argv, const Environment& environment);
/// The same with process_environment().
[[nodiscard]] ConfigParseResult parse_server_config(int argc, const char* const* argv);

/// Every setting as `key = value` TOML lines (values read back exactly: doubles in shortest
/// round-trip form, seeds above 2^63-1 as strings of digits; `map` or `city-seed`/`city-size`,
/// whichever is the map source; the kinds as [[kinds]] tables at the end).
/// With `sources` (as in ConfigParseResult) each line ends with "  # <source>".
[[nodiscard]] std::string config_to_toml(const ServerConfig& config, const std::vector<ConfigSource>* sources = nullptr);
/// Parses TOML text with the file's keys alone (no flags, no environment) over the defaults
/// and validates it: the settings stored in a replay. `name` labels error messages.
[[nodiscard]] ConfigParseResult parse_config_toml(const std::string& text, const std::string& name);

/// Where the setting named by the first "--flag" of `message` came from, as validation errors
/// end: " (set by flag --agents)", " (set by environment SWARMFIELD_AGENTS)", " (set by file
/// server.toml)" or " (set by default)"; "" when the message names no setting. `sources` as in
/// ConfigParseResult. For checks made after parsing (the density limit needs the map).
[[nodiscard]] std::string blame_setting(const std::string& message, const std::vector<ConfigSource>& sources,
                                        const std::string& config_path);

/// For an error about the file a path setting names (`key`: "map", "rules", "replay"; `path` its
/// value): when the path came from the config file, is relative and names nothing from here,
/// " (map = \"m.map\" is from the config file sub/c.toml; relative paths in it are taken from the
/// current folder, /home/u, not from the file's folder)"; else "". `sources` and `config_path`
/// as in blame_setting.
[[nodiscard]] std::string relative_path_note(std::string_view key, const std::string& path,
                                             const std::vector<ConfigSource>& sources, const std::string& config_path);

/// A name as a Fleet gives it (a port, a List) and a match setting's key: 1..63 characters of
/// a-z, 0-9 and '-'.
[[nodiscard]] bool is_fleet_name(std::string_view text) noexcept;

/// Checks ranges and combinations; returns "" when valid, else a one-line message.
[[nodiscard]] std::string validate_config(const ServerConfig& config);

/// Match settings set at allocation (an Agones GameServerAllocation's labels and annotations
/// "swarmfield.dev/<key>", AgonesClient::take_match_settings): the keys of kMatchSettingKeys,
/// each checked as its flag is (same words, same ranges), applied over a copy of `config`.
/// Keys are the settings' names ("duration", "shutdown-when-empty"), and "match-id": no setting,
/// a name for logs and the summary line (1..63 of A-Z, a-z, 0-9, '-', '_', '.': a Kubernetes
/// label value's characters, one word). A duration must be more than 0: it replaces
/// --duration, so 0 ("no limit") would lift an operator's cap.
struct MatchSettings {
  ServerConfig config;                ///< `config` with the valid settings applied
  std::string match_id;               ///< the valid match-id given, else ""
  std::vector<std::string> applied;   ///< "key=value" of each applied setting, in key order
  std::vector<std::string> errors;    ///< one sentence per refused key (unknown, fixed at start-up, bad value)
};
/// The settings a match may change after start-up: the world is built by then, so only the
/// match's end conditions.
inline constexpr std::array<std::string_view, 2> kMatchSettingKeys = {"duration", "shutdown-when-empty"};
[[nodiscard]] MatchSettings apply_match_settings(const ServerConfig& config,
                                                 const std::map<std::string, std::string>& settings);

/// The config's [[waves]] as the World's wave table: kind names looked up in config.kinds, zone
/// names in config.zones, numbers range-checked (sim::check_waves). "" and `out` set, or one
/// sentence naming the wave ("waves[1] ('siege'): kind 'zombie' is not one of the kinds:
/// runner, walker, brute").
[[nodiscard]] std::string resolve_waves(const ServerConfig& config, std::vector<sim::WaveSpec>& out);

}  // namespace swarmfield::server
