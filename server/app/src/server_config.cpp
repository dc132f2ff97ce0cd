#include "swarmfield/server/server_config.hpp"

#include <arpa/inet.h>

#include <CLI/CLI.hpp>
#include <toml++/toml.h>

#include "swarmfield/cli/strict_values.hpp"

#include <algorithm>
#include <cstdlib>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>
#include <vector>

namespace swarmfield::server {
namespace {

constexpr std::array<std::string_view, 7> kLogLevels = {"trace", "debug", "info", "warn",
                                                        "error", "critical", "off"};

std::string log_format_name(LogFormat f) { return f == LogFormat::kJson ? "json" : "text"; }

// One TOML key: applies a node to the config, returns "" or an error. Keys use the flag
// spelling ("tick-hz"); "tick_hz" is accepted too.
struct TomlKey {
  std::string name;
  CLI::Option* flag = nullptr;  // set when the same setting was given on the command line
  std::function<std::string(const toml::node&)> apply;
};

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    default: return "date/time";
  }
}

std::function<std::string(const toml::node&)> int_setter(std::int64_t& target) {
  return [&target](const toml::node& n) -> std::string {
    if (auto v = n.value_exact<std::int64_t>()) {
      target = *v;
      return {};
    }
    return "must be an integer (got " + type_name(n) + ")";
  };
}
std::function<std::string(const toml::node&)> seed_setter(std::uint64_t& target) {
  return [&target](const toml::node& n) -> std::string {
    auto v = n.value_exact<std::int64_t>();
    if (!v) return "must be an integer (got " + type_name(n) + ")";
    if (*v < 0) return "must be >= 0 (got " + std::to_string(*v) + ")";
    target = static_cast<std::uint64_t>(*v);
    return {};
  };
}
// An integer or a float; `what` names the unit in the error ("a number of seconds").
std::function<std::string(const toml::node&)> number_setter(double& target, std::string what) {
  return [&target, what = std::move(what)](const toml::node& n) -> std::string {
    if (auto i = n.value_exact<std::int64_t>()) {
      target = static_cast<double>(*i);
      return {};
    }
    if (auto f = n.value_exact<double>()) {
      target = *f;
      return {};
    }
    return "must be " + what + " (got " + type_name(n) + ")";
  };
}
std::function<std::string(const toml::node&)> seconds_setter(double& target) {
  return number_setter(target, "a number of seconds");
}
std::function<std::string(const toml::node&)> string_setter(std::string& target) {
  return [&target](const toml::node& n) -> std::string {
    if (auto s = n.value_exact<std::string>()) {
      target = *s;
      return {};
    }
    return "must be a string (got " + type_name(n) + ")";
  };
}

// One [[kinds]] table -> AgentKind; "" or an error naming the key.
std::string apply_kind_table(const toml::table& table, sim::AgentKind& kind) {
  static const std::array<std::string_view, 7> kKindKeys = {"name", "radius", "speed", "separation-weight",
                                                             "turn-rate", "colour", "weight"};
  std::vector<std::string> seen;
  bool has_name = false;
  for (const auto& [raw_key, node] : table) {
    std::string key(raw_key.str());
    std::replace(key.begin(), key.end(), '_', '-');
    if (std::find(kKindKeys.begin(), kKindKeys.end(), key) == kKindKeys.end()) {
      std::string known;
      for (const auto k : kKindKeys) known += (known.empty() ? "" : ", ") + std::string(k);
      return "unknown key '" + std::string(raw_key.str()) + "' (known keys: " + known + ")";
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      return "key '" + std::string(raw_key.str()) + "' sets '" + key + "' a second time";
    seen.push_back(key);
    const std::string where = "key '" + std::string(raw_key.str()) + "' ";
    if (key == "name") {
      auto v = node.value_exact<std::string>();
      if (!v) return where + "must be a string (got " + type_name(node) + ")";
      kind.name = *v;
      has_name = true;
      continue;
    }
    if (key == "colour") {
      auto v = node.value_exact<std::string>();
      const bool hex = v && v->size() == 7 && (*v)[0] == '#' &&
                       std::all_of(v->begin() + 1, v->end(), [](char ch) { return std::isxdigit(static_cast<unsigned char>(ch)) != 0; });
      if (!hex) return where + "must be a colour string \"#RRGGBB\"";
      kind.colour = static_cast<std::uint32_t>(std::strtoul(v->c_str() + 1, nullptr, 16));
      continue;
    }
    double value = 0.0;
    if (auto i = node.value_exact<std::int64_t>()) {
      value = static_cast<double>(*i);
    } else if (auto f = node.value_exact<double>()) {
      value = *f;
    } else {
      return where + "must be a number (got " + type_name(node) + ")";
    }
    const auto f = static_cast<float>(value);
    if (key == "radius") kind.radius = f;
    if (key == "speed") kind.max_speed = f;
    if (key == "separation-weight") kind.separation_weight = f;
    if (key == "turn-rate") kind.max_turn_rate = f;
    if (key == "weight") {
      if (!(std::isfinite(value) && value > 0.0)) {
        std::ostringstream ss;
        ss << where << "must be > 0 (got " << value << ")";
        return ss.str();
      }
      kind.spawn_weight = f;
    }
  }
  if (!has_name) return "has no 'name'";
  return {};
}

// The `kinds` value: an array of tables (TOML [[kinds]]). "" and `out` filled, or an error.
std::string apply_kinds(const toml::node& node, std::vector<sim::AgentKind>& out) {
  const toml::array* array = node.as_array();
  if (array == nullptr || !array->is_array_of_tables())
    return "key 'kinds' must be an array of tables ([[kinds]] sections; got " + type_name(node) + ")";
  std::vector<sim::AgentKind> kinds;
  for (std::size_t i = 0; i < array->size(); ++i) {
    sim::AgentKind kind;  // the walker's values where a key is missing
    if (std::string err = apply_kind_table(*array->get(i)->as_table(), kind); !err.empty())
      return "kinds[" + std::to_string(i) + "]: " + err;
    kinds.push_back(std::move(kind));
  }
  if (std::string err = sim::check_agent_kinds(kinds); !err.empty()) return err;
  out = std::move(kinds);
  return {};
}

bool read_text_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return false;
  out = ss.str();
  return true;
}

using swarmfield::cli::strict_values;

// The 1-based line of the first byte >= 0x80 outside a string or comment, 0 if none.
// toml++ 3.3 (Debian 12) decides whether such a character is whitespace with a table that
// reaches __builtin_unreachable() for most of U+00A1..U+0499 (found by fuzzing: a 'ŵ' in a key
// is undefined behaviour). TOML 1.0 allows non-ASCII only in strings and comments anyway, so
// such text is refused before toml++ sees it.
int non_ascii_outside_strings(std::string_view t) {
  int line = 1;
  std::size_t i = 0;
  const auto starts = [&](std::string_view what) { return t.substr(i, what.size()) == what; };
  while (i < t.size()) {
    const char c = t[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '#') {
      while (i < t.size() && t[i] != '\n') ++i;
    } else if (starts(R"(""")") || starts("'''")) {
      const std::string_view close = t.substr(i, 3);
      const bool escapes = c == '"';
      i += 3;
      while (i < t.size() && !starts(close)) {
        if (t[i] == '\n') ++line;
        i += (escapes && t[i] == '\\') ? 2 : 1;
      }
      i += 3;
    } else if (c == '"' || c == '\'') {
      ++i;
      while (i < t.size() && t[i] != c && t[i] != '\n') i += (c == '"' && t[i] == '\\') ? 2 : 1;
      ++i;
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      return line;
    } else {
      ++i;
    }
  }
  return 0;
}

bool is_ip_literal(const std::string& text) {
  unsigned char buffer[sizeof(in6_addr)];
  return inet_pton(AF_INET, text.c_str(), buffer) == 1 || inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

ConfigParseResult fail(std::string message) {
  ConfigParseResult r;
  r.action = ConfigParseResult::Action::kExit;
  r.exit_code = 2;
  r.output = std::move(message);
  return r;
}

}  // namespace

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
  if (!(std::isfinite(c.player_speed) && c.player_speed > 0.0 && c.player_speed <= kMaxPlayerSpeed)) {
    std::ostringstream ss;
    ss << "--player-speed must be in (0, " << kMaxPlayerSpeed << "] world units per second (got " << c.player_speed << ")";
    return ss.str();
  }
  if (!(e = range("--slow-tick-ms", c.slow_tick_ms, 0, 1000)).empty()) return e + " (0 = off)";
  if (!(e = seconds_range("--status-interval", c.status_interval_s, kMinStatusInterval, kMaxStatusInterval)).empty())
    return e;
  if (!is_ip_literal(c.bind)) return "--bind must be an IP address such as 0.0.0.0 or 127.0.0.1 (got '" + c.bind + "')";
  if (!(e = range("--max-connections-per-address", c.max_connections_per_address, 1, 65535)).empty()) return e;
  if (!(e = seconds_range("--hello-timeout", c.hello_timeout_s, 0.1, 600.0)).empty()) return e;
  if (!(e = seconds_range("--idle-timeout", c.idle_timeout_s, 1.0, 3600.0)).empty()) return e;
  if (!(e = seconds_range("--frame-timeout", c.frame_timeout_s, 0.1, 600.0)).empty()) return e;
  if (!(e = seconds_range("--ack-timeout", c.ack_timeout_s, 0.1, 600.0)).empty()) return e;
  if (!(e = range("--udp-receive-buffer-kb", c.udp_receive_buffer_kb, 64, 1048576)).empty()) return e;
  if (std::find(kLogLevels.begin(), kLogLevels.end(), c.log_level) == kLogLevels.end())
    return "--log-level must be one of trace, debug, info, warn, error, critical, off (got '" + c.log_level + "')";
  return {};
}

ConfigParseResult parse_server_config(int argc, const char* const* argv) {
  ConfigParseResult result;
  ServerConfig& c = result.config;
  std::string log_format = log_format_name(c.log_format);

  CLI::App app{"swarmfield-server: authoritative horde-game server (flow fields + swarm), TCP + UDP",
               "swarmfield-server"};
  app.option_defaults()->always_capture_default();
  app.get_formatter()->column_width(40);
  app.footer("The exit summary (ticks=.. rebuilds=.. overruns=.. clients=.. bytes_sent=..) is printed to stdout; logs go to stderr.");

  // Every option is strict about its value (strict_values): empty, NaN/inf and negative seeds
  // are errors. Applied here, before ->type_name() hides the derived FLOAT / UINT type.
  const auto add = [&app](const std::string& name, auto& target, const std::string& help) {
    return strict_values(app.add_option(name, target, help));
  };
  auto* map_opt = add("--map", c.map_path, "MovingAI .map file to load (instead of the procedural city)")->type_name("PATH");
  auto* city_seed_opt = add("--city-seed", c.city_seed, "Seed of the procedural city (used when no --map)")->type_name("N");
  auto* city_size_opt = add("--city-size", c.city_size, "Side of the procedural city, cells (32..8192)")->type_name("CELLS");
  map_opt->excludes(city_seed_opt);
  map_opt->excludes(city_size_opt);
  auto* agents_opt = add("--agents", c.agents, "Agents spawned on the first tick")->type_name("N");
  auto* max_agents_opt = add("--max-agents", c.max_agents, "Swarm capacity; waves stop there")->type_name("N");
  auto* tick_opt = add("--tick-hz", c.tick_hz, "Simulation ticks per second (1..240)")->type_name("HZ");
  auto* snap_opt = add("--snapshot-hz", c.snapshot_hz, "Snapshots per second per client (1..tick-hz)")->type_name("HZ");
  auto* port_opt = add("--port", c.port, "TCP and UDP port; 0 = pick a free port (logged as 'listening tcp=.. udp=..')")->type_name("PORT");
  auto* bind_opt = add("--bind", c.bind, "Listen address (IPv4 or IPv6)")->type_name("ADDR");
  auto* max_clients_opt = add("--max-clients", c.max_clients, "Most connected clients, viewers + players (1..1024)")->type_name("N");
  auto* queue_opt = add("--send-queue-kb", c.send_queue_kb,
                                   "Per-client TCP send queue, KiB; a client that falls further behind is evicted (raised to fit the map transfer)")
                        ->type_name("KIB");
  auto* duration_opt = add("--duration", c.duration_s, "Stop after this many seconds; 0 = run until SIGINT/SIGTERM")->type_name("SECONDS");
  auto* seed_opt = add("--seed", c.seed, "World seed (agent spawn positions)")->type_name("N");
  auto* level_opt = add("--log-level", c.log_level, "Log level: trace, debug, info, warn, error, critical, off")->type_name("LEVEL");
  auto* format_opt = add("--log-format", log_format, "Log line format (stderr): text or json")->type_name("FORMAT");
  auto* wave_opt = add("--spawn-wave", c.spawn_wave, "Agents added per wave; 0 = no waves")->type_name("N");
  auto* wave_interval_opt = add("--wave-interval", c.wave_interval_s, "Seconds between waves")->type_name("SECONDS");
  auto* status_opt = add("--status-interval", c.status_interval_s, "Seconds between status log lines")->type_name("SECONDS");
  auto* budget_opt = add("--field-budget", c.field_budget,
                                    "Field rebuild work units per tick (~cells settled; a 1024x1024 rebuild is ~1.06 million): "
                                    "0 = whole rebuild in one tick, -1 = auto (0 up to 512x512 maps, 200000 above), "
                                    "else >= 10000; agents read the last complete field meanwhile")
                         ->type_name("UNITS");
  auto* threads_opt = add("--threads", c.threads,
                                     "Threads stepping the swarm, the tick thread included (1..64); results are identical for any count")
                         ->type_name("N");
  auto* speed_opt = add("--player-speed", c.player_speed,
                                   "Player speed at full input, world units (= cells) per second (0 < speed <= 100)")
                        ->type_name("UNITS_PER_S");
  auto* slow_tick_opt = add("--slow-tick-ms", c.slow_tick_ms,
                                       "Testing aid: every tick also sleeps this long, ms (0..1000), to reproduce an overloaded server; 0 = off")
                           ->type_name("MS");
  auto* per_address_opt = add("--max-connections-per-address", c.max_connections_per_address,
                              "TCP connections from one IP address at once (1..65535)")->type_name("N");
  auto* hello_timeout_opt = add("--hello-timeout", c.hello_timeout_s,
                                "A new connection must send Hello within this many seconds (0.1..600)")->type_name("SECONDS");
  auto* idle_timeout_opt = add("--idle-timeout", c.idle_timeout_s,
                               "Close a client that sends nothing valid (TCP or UDP) this long (1..3600)")->type_name("SECONDS");
  auto* frame_timeout_opt = add("--frame-timeout", c.frame_timeout_s,
                                "A TCP frame once begun must be complete within this many seconds (0.1..600)")->type_name("SECONDS");
  auto* ack_timeout_opt = add("--ack-timeout", c.ack_timeout_s,
                              "Stop streaming UDP to a client whose acks stop this long; TCP takes over (0.1..600)")->type_name("SECONDS");
  auto* rcvbuf_opt = add("--udp-receive-buffer-kb", c.udp_receive_buffer_kb,
                         "Kernel receive buffer asked for the UDP socket, KiB (64..1048576); the effective size is logged")->type_name("KIB");
  add("--config", c.config_path, "TOML file with the same keys as the flags (e.g. tick-hz = 60); flags win")->type_name("FILE");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    result.action = ConfigParseResult::Action::kExit;
    result.exit_code = 0;
    result.output = app.help();
    return result;
  } catch (const CLI::ParseError& e) {
    return fail(std::string("error: ") + e.what() + " (see --help)");
  }

  if (!c.config_path.empty()) {
    std::string text;
    std::error_code fs_error;
    if (std::filesystem::is_directory(c.config_path, fs_error))
      return fail("error: --config '" + c.config_path + "' is a directory, not a TOML file");
    if (!read_text_file(c.config_path, text))
      return fail("error: can not read config file '" + c.config_path + "'");
    if (const int line = non_ascii_outside_strings(text); line != 0) {
      return fail("error: config " + c.config_path + ":" + std::to_string(line) +
                  ": a non-ASCII character outside a string or comment (TOML keys are ASCII)");
    }
    toml::table table;
    try {
      table = toml::parse(text, c.config_path);
    } catch (const toml::parse_error& e) {
      std::ostringstream ss;
      ss << "error: config " << c.config_path << ":" << e.source().begin.line << ": "
         << e.description();
      return fail(ss.str());
    }
    std::string toml_format;
    bool toml_has_map = false;
    bool toml_has_city = false;
    // The same keys bound to any config: the file is applied to `c` (where no flag overrides it)
    // and, whole, to `file_only`, which must be valid by itself (so a bad value is reported even
    // when a flag overrides it).
    auto make_keys = [&](ServerConfig& t, std::string& format) -> std::vector<TomlKey> {
      return {
        {"map", map_opt, string_setter(t.map_path)},
        {"city-seed", city_seed_opt, seed_setter(t.city_seed)},
        {"city-size", city_size_opt, int_setter(t.city_size)},
        {"agents", agents_opt, int_setter(t.agents)},
        {"max-agents", max_agents_opt, int_setter(t.max_agents)},
        {"tick-hz", tick_opt, int_setter(t.tick_hz)},
        {"snapshot-hz", snap_opt, int_setter(t.snapshot_hz)},
        {"port", port_opt, int_setter(t.port)},
        {"bind", bind_opt, string_setter(t.bind)},
        {"max-clients", max_clients_opt, int_setter(t.max_clients)},
        {"send-queue-kb", queue_opt, int_setter(t.send_queue_kb)},
        {"duration", duration_opt, seconds_setter(t.duration_s)},
        {"seed", seed_opt, seed_setter(t.seed)},
        {"log-level", level_opt, string_setter(t.log_level)},
        {"log-format", format_opt, string_setter(format)},
        {"spawn-wave", wave_opt, int_setter(t.spawn_wave)},
        {"wave-interval", wave_interval_opt, seconds_setter(t.wave_interval_s)},
        {"status-interval", status_opt, seconds_setter(t.status_interval_s)},
        {"field-budget", budget_opt, int_setter(t.field_budget)},
        {"threads", threads_opt, int_setter(t.threads)},
        {"player-speed", speed_opt, number_setter(t.player_speed, "a number of world units per second")},
        {"slow-tick-ms", slow_tick_opt, int_setter(t.slow_tick_ms)},
        {"max-connections-per-address", per_address_opt, int_setter(t.max_connections_per_address)},
        {"hello-timeout", hello_timeout_opt, seconds_setter(t.hello_timeout_s)},
        {"idle-timeout", idle_timeout_opt, seconds_setter(t.idle_timeout_s)},
        {"frame-timeout", frame_timeout_opt, seconds_setter(t.frame_timeout_s)},
        {"ack-timeout", ack_timeout_opt, seconds_setter(t.ack_timeout_s)},
        {"udp-receive-buffer-kb", rcvbuf_opt, int_setter(t.udp_receive_buffer_kb)},
      };
    };
    ServerConfig file_only;
    std::string file_format;
    std::vector<TomlKey> keys = make_keys(c, toml_format);
    std::vector<TomlKey> file_keys = make_keys(file_only, file_format);
    std::vector<std::string> seen_keys;
    // A source chosen on the command line (--map or --city-*) replaces the file's choice.
    const bool cli_map = map_opt->count() > 0;
    const bool cli_city = city_seed_opt->count() > 0 || city_size_opt->count() > 0;
    for (const auto& [raw_key, node] : table) {
      std::string key(raw_key.str());
      std::replace(key.begin(), key.end(), '_', '-');
      if (key == "kinds") {  // no flag: the file's tables replace the default set
        if (std::string err = apply_kinds(node, c.kinds); !err.empty())
          return fail("error: config " + c.config_path + ": " + err);
        continue;
      }
      auto it = std::find_if(keys.begin(), keys.end(), [&](const TomlKey& k) { return k.name == key; });
      if (it == keys.end()) {
        std::string known;
        for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k.name;
        return fail("error: config " + c.config_path + ": unknown key '" + std::string(raw_key.str()) +
                    "' (known keys: " + known + ", kinds)");
      }
      if (std::find(seen_keys.begin(), seen_keys.end(), key) != seen_keys.end())
        return fail("error: config " + c.config_path + ": key '" + std::string(raw_key.str()) +
                    "' sets '" + key + "' a second time ('_' and '-' spellings are the same key); keep one");
      seen_keys.push_back(key);
      const auto file_it = file_keys.begin() + (it - keys.begin());
      if (std::string err = file_it->apply(node); !err.empty())
        return fail("error: config " + c.config_path + ": key '" + std::string(raw_key.str()) + "' " + err);
      if (key == "map") toml_has_map = true;
      if (key == "city-seed" || key == "city-size") toml_has_city = true;
      if (it->flag->count() > 0) continue;  // the flag wins
      if ((key == "map" && cli_city) || ((key == "city-seed" || key == "city-size") && cli_map)) continue;
      if (std::string err = it->apply(node); !err.empty())
        return fail("error: config " + c.config_path + ": key '" + std::string(raw_key.str()) + "' " + err);
    }
    if (toml_has_map && toml_has_city && !cli_map && !cli_city)
      return fail("error: config " + c.config_path + ": 'map' and 'city-seed'/'city-size' exclude each other");
    if (!file_format.empty() && file_format != "text" && file_format != "json")
      return fail("error: config " + c.config_path + ": key 'log-format' must be text or json (got '" + file_format + "')");
    // Validated on its own, as if no flag were given: a wrong value is an error even when a
    // flag overrides it (it would bite as soon as the flag is dropped).
    if (std::string err = validate_config(file_only); !err.empty())
      return fail("error: config " + c.config_path + ": " + err + " (in the file; flags do not excuse it)");
    if (!toml_format.empty() && format_opt->count() == 0) log_format = toml_format;
  }

  if (log_format == "text") {
    c.log_format = LogFormat::kText;
  } else if (log_format == "json") {
    c.log_format = LogFormat::kJson;
  } else {
    return fail("error: --log-format must be text or json (got '" + log_format + "')");
  }
  if (std::string err = validate_config(c); !err.empty()) return fail("error: " + err);
  return result;
}

std::int64_t resolve_field_budget(const ServerConfig& config, std::size_t map_cells) noexcept {
  if (config.field_budget != kAutoFieldBudget) return config.field_budget;
  return map_cells <= std::size_t{512} * 512 ? 0 : 200000;
}

}  // namespace swarmfield::server
