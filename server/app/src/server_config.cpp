#include "swarmfield/server/server_config.hpp"

#include <arpa/inet.h>
#include <unistd.h>  // environ

#include <CLI/CLI.hpp>
#include <toml++/toml.h>

#include "swarmfield/cli/strict_values.hpp"
#include "swarmfield/server/config_toml.hpp"
#include "swarmfield/sim/nav/field_mode.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <type_traits>
#include <variant>
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

using swarmfield::cli::strict_values;

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

// ---- the settings table ---------------------------------------------------------------------
// Every setting once: its key (the flag without "--", the TOML key, and SWARMFIELD_<KEY> in the
// environment), the ServerConfig member it fills, and its --help text. Flags, environment,
// file, --print-config and the replay's stored config all go through this table.
using Field = std::variant<std::int64_t ServerConfig::*, std::uint64_t ServerConfig::*, double ServerConfig::*,
                           std::string ServerConfig::*, bool ServerConfig::*, LogFormat ServerConfig::*>;

struct Setting {
  std::string_view key;
  Field field;
  std::string_view type_name;  // --help placeholder ("HZ"); empty for a switch
  std::string_view help;
  std::string_view unit = "a number";  // what a floating-point value is, for error messages
};

const std::vector<Setting>& settings() {
  using C = ServerConfig;
  static const std::vector<Setting> table = {
      {"map", &C::map_path, "PATH", "MovingAI .map file to load (instead of the procedural city)"},
      {"city-seed", &C::city_seed, "N", "Seed of the procedural city (used when no --map)"},
      {"city-size", &C::city_size, "CELLS", "Side of the procedural city, cells (32..8192)"},
      {"agents", &C::agents, "N",
       "Agents spawned on the first tick; at most the map's density limit, the agents its walkable cells hold "
       "(cells x 0.9069 / (pi r^2), hexagonal packing of the smallest kind spawned, r = 0.25 for the default "
       "runner: ~4.6 a cell; the limit is logged at start-up), else an error"},
      {"max-agents", &C::max_agents, "N", "Swarm capacity; waves stop there, and at the map's density limit (see --agents)"},
      {"tick-hz", &C::tick_hz, "HZ", "Simulation ticks per second (1..240)"},
      {"snapshot-hz", &C::snapshot_hz, "HZ", "Snapshots per second per client (1..tick-hz)"},
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
       "one tick, -1 = auto (0 up to 512x512 maps, 200000 above), else >= 10000; agents read the last complete field "
       "meanwhile"},
      {"field-mode", &C::field_mode, "MODE",
       "Navigation fields: whole (one whole-map field), hierarchical (sector graph, portal routes, per-sector fields "
       "of occupied sectors), auto (hierarchical from 4096 cells a side)"},
      {"threads", &C::threads, "N", "Threads stepping the swarm, the tick thread included (1..64); results are identical for any count"},
      {"player-speed", &C::player_speed, "UNITS_PER_S",
       "Player speed at full input, world units (= cells) per second (0 < speed <= 100)", "a number of world units per second"},
      {"slow-tick-ms", &C::slow_tick_ms, "MS",
       "Testing aid: every tick also sleeps this long, ms (0..1000), to reproduce an overloaded server; 0 = off"},
      {"max-connections-per-address", &C::max_connections_per_address, "N", "TCP connections from one IP address at once (1..65535)"},
      {"hello-timeout", &C::hello_timeout_s, "SECONDS", "A new connection must send Hello within this many seconds (0.1..600)",
       "a number of seconds"},
      {"idle-timeout", &C::idle_timeout_s, "SECONDS", "Close a client that sends nothing valid (TCP or UDP) this long (1..3600)",
       "a number of seconds"},
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
      {"public-udp-port", &C::public_udp_port, "PORT",
       "UDP port announced to clients: 0 = the bound one; behind a port mapping, the mapped one (with --agones: the GameServer's)"},
      {"agones", &C::agones, "", "Call the Agones SDK sidecar (REST on localhost): Ready, Health, Allocate on the first player, Shutdown on drain"},
      {"agones-port", &C::agones_port, "PORT", "Agones SDK REST port; 0 = $AGONES_SDK_HTTP_PORT, else 9358"},
      {"agones-health-interval", &C::agones_health_interval_s, "SECONDS",
       "Seconds between Agones Health pings, sent only while the tick loop is alive (0.05..60)", "a number of seconds"},
      {"record", &C::record_path, "FILE",
       "Record the match (settings, map, every applied input, state hashes) for swarmfield-tool replay / --replay"},
      {"record-hash-every", &C::record_hash_every, "TICKS", "Ticks between state hashes in the recording (1..1000000)"},
      {"replay", &C::replay_path, "FILE",
       "Serve a recording to viewers like a live match (its map and simulation settings; players may not join)"},
  };
  return table;
}

const Setting* find_setting(std::string_view key) {
  for (const Setting& s : settings())
    if (s.key == key) return &s;
  return nullptr;
}

// The [[kinds]] tables: a file-only setting (sim::AgentKind per table).
constexpr std::string_view kKindsKey = "kinds";

bool is_map_choice(std::string_view key) { return key == "map"; }
bool is_city_choice(std::string_view key) { return key == "city-seed" || key == "city-size"; }

std::string env_name(std::string_view key) {
  std::string name = "SWARMFIELD_";
  for (char ch : key) name += ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return name;
}

// SWARMFIELD_ variables of the build, test and demo scripts (and reserved for the other
// programs): not server settings, and not errors.
bool is_tooling_variable(std::string_view name) {
  static constexpr std::array<std::string_view, 14> kPrefixes = {
      "SWARMFIELD_TEST_", "SWARMFIELD_BENCH",  "SWARMFIELD_SANITIZE", "SWARMFIELD_FUZZ_", "SWARMFIELD_CALLER_PWD",
      "SWARMFIELD_DEMO_", "SWARMFIELD_LOAD_",  "SWARMFIELD_SCEN_",    "SWARMFIELD_XVFB_", "SWARMFIELD_BUILD_",
      "SWARMFIELD_BOT_",  "SWARMFIELD_VIEWER_", "SWARMFIELD_TOOL_",   "SWARMFIELD_CONTAINER_"};
  return std::any_of(kPrefixes.begin(), kPrefixes.end(), [&](std::string_view p) { return name.substr(0, p.size()) == p; });
}

// ---- values: from text (environment), from TOML, to TOML ------------------------------------
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

std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20 || u == 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", u);
      out += buffer;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

// The value as TOML text that reads back to the same value (doubles: shortest round trip).
std::string toml_value(const Setting& s, const ServerConfig& c) {
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::remove_cvref_t<decltype(c.*member)>;
        const T& v = c.*member;
        if constexpr (std::is_same_v<T, std::int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, std::uint64_t>) {
          return v > static_cast<std::uint64_t>(INT64_MAX) ? toml_string(std::to_string(v)) : std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          char buffer[32];
          const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
          return ec == std::errc{} ? std::string(buffer, end) : std::string("nan");
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<T, LogFormat>) {
          return toml_string(log_format_name(v));
        } else {
          return toml_string(v);
        }
      },
      s.field);
}

void copy_setting(const Setting& s, ServerConfig& to, const ServerConfig& from) {
  std::visit([&](auto member) { to.*member = from.*member; }, s.field);
}

// ---- layers -----------------------------------------------------------------------------------
// One source of settings: the defaults plus the values it gives, and which keys it gives.
struct Layer {
  ConfigSource source = ConfigSource::kDefault;
  ServerConfig values;
  std::vector<std::string_view> keys;  // keys this layer sets
  [[nodiscard]] bool has(std::string_view key) const { return std::find(keys.begin(), keys.end(), key) != keys.end(); }
  [[nodiscard]] bool chooses_map_source() const {
    return std::any_of(keys.begin(), keys.end(), [](std::string_view k) { return is_map_choice(k) || is_city_choice(k); });
  }
};

// Merges `layers` (highest priority first) over the defaults. The map source (--map versus
// --city-*) is taken whole from the highest layer that names either, so a flag's --map
// replaces a file's city and the other way round. `sources` gets each setting's origin.
ServerConfig merge(const std::vector<const Layer*>& layers, std::vector<ConfigSource>* sources) {
  ServerConfig out;
  const Layer* map_layer = nullptr;
  for (const Layer* l : layers) {
    if (l->chooses_map_source()) {
      map_layer = l;
      break;
    }
  }
  if (sources != nullptr) sources->assign(settings().size(), ConfigSource::kDefault);
  for (std::size_t i = 0; i < settings().size(); ++i) {
    const Setting& s = settings()[i];
    const bool map_group = is_map_choice(s.key) || is_city_choice(s.key);
    for (const Layer* l : layers) {
      if (!l->has(s.key) || (map_group && l != map_layer)) continue;
      copy_setting(s, out, l->values);
      if (sources != nullptr) (*sources)[i] = l->source;
      break;
    }
  }
  // Kinds have no flag or variable: only a file's [[kinds]] tables set them.
  for (const Layer* l : layers) {
    if (l->has(kKindsKey)) {
      out.kinds = l->values.kinds;
      break;
    }
  }
  return out;
}

std::string source_text(ConfigSource source, std::string_view key, const std::string& config_path) {
  switch (source) {
    case ConfigSource::kFlag: return "flag --" + std::string(key);
    case ConfigSource::kEnvironment: return "environment " + env_name(key);
    case ConfigSource::kFile: return "file " + config_path;
    default: return "default";
  }
}

}  // namespace

std::string blame_setting(const std::string& message, const std::vector<ConfigSource>& sources,
                          const std::string& config_path) {
  const auto at = message.find("--");
  if (at == std::string::npos) return {};
  std::size_t end = at + 2;
  while (end < message.size() && (std::islower(static_cast<unsigned char>(message[end])) != 0 || message[end] == '-')) ++end;
  const std::string key = message.substr(at + 2, end - at - 2);
  for (std::size_t i = 0; i < settings().size(); ++i) {
    if (settings()[i].key == key && i < sources.size()) return " (set by " + source_text(sources[i], key, config_path) + ")";
  }
  return {};
}

namespace {

// Reads and applies a TOML text to `layer`; "" or an error line.
std::string read_toml_layer(const std::string& text, const std::string& name, Layer& layer) {
  toml::table table;
  if (std::string err = parse_toml_text(text, name, table); !err.empty()) return "error: " + err;
  for (const auto& [raw_key, node] : table) {
    std::string key(raw_key.str());
    std::replace(key.begin(), key.end(), '_', '-');
    if (key == kKindsKey) {  // no flag: the file's tables replace the default set
      if (layer.has(kKindsKey)) return "error: config " + name + ": 'kinds' given twice";
      if (std::string err = apply_kinds(node, layer.values.kinds); !err.empty())
        return "error: config " + name + ": " + err;
      layer.keys.push_back(kKindsKey);
      continue;
    }
    const Setting* s = find_setting(key);
    if (s == nullptr) {
      std::string known;
      for (const Setting& k : settings()) known += (known.empty() ? "" : ", ") + std::string(k.key);
      return "error: config " + name + ": unknown key '" + std::string(raw_key.str()) + "' (known keys: " + known +
             ", kinds)";
    }
    if (layer.has(s->key))
      return "error: config " + name + ": key '" + std::string(raw_key.str()) + "' sets '" + key +
             "' a second time ('_' and '-' spellings are the same key); keep one";
    if (std::string err = apply_toml(*s, layer.values, node); !err.empty())
      return "error: config " + name + ": key '" + std::string(raw_key.str()) + "' " + err;
    layer.keys.push_back(s->key);
  }
  if (layer.has("map") && (layer.has("city-seed") || layer.has("city-size")))
    return "error: config " + name + ": 'map' and 'city-seed'/'city-size' exclude each other";
  return {};
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
  if (!(e = range("--client-kbps", c.client_kbps, 32, 1000000)).empty()) return e + " (kbit/s per client)";
  if (!(e = range("--http-port", c.http_port, -1, 65535)).empty()) return e + " (-1 = off, 0 = a free port)";
  if (!c.http_bind.empty() && !is_ip_literal(c.http_bind))
    return "--http-bind must be an IP address such as 0.0.0.0 or 127.0.0.1, or empty for --bind's (got '" + c.http_bind + "')";
  if (!(e = range("--record-hash-every", c.record_hash_every, 1, 1000000)).empty()) return e;
  if (!c.record_path.empty() && !c.replay_path.empty())
    return "--record and --replay exclude each other (a replay is already recorded)";
  if (!c.record_path.empty()) {
    // Refused here, before the server listens, rather than when the recorder opens the file.
    std::error_code ec;
    const std::filesystem::path record(c.record_path);
    if (std::filesystem::is_directory(record, ec))
      return "--record must name a file to create, '" + c.record_path + "' is a folder";
    const std::filesystem::path folder = record.parent_path();
    if (!folder.empty() && !std::filesystem::is_directory(folder, ec))
      return "--record '" + c.record_path + "': the folder '" + folder.string() + "' does not exist (create it first)";
  }
  if (!(e = range("--public-udp-port", c.public_udp_port, 0, 65535)).empty()) return e + " (0 = the bound port)";
  if (!(e = range("--agones-port", c.agones_port, 0, 65535)).empty()) return e + " (0 = $AGONES_SDK_HTTP_PORT or 9358)";
  if (!(e = seconds_range("--agones-health-interval", c.agones_health_interval_s, 0.05, 60.0)).empty()) return e;
  if (std::find(kLogLevels.begin(), kLogLevels.end(), c.log_level) == kLogLevels.end())
    return "--log-level must be one of trace, debug, info, warn, error, critical, off (got '" + c.log_level + "')";
  if (!sim::parse_field_mode(c.field_mode))
    return "--field-mode must be whole, hierarchical or auto (got '" + c.field_mode + "')";
  return {};
}

Environment process_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.substr(0, 11) != "SWARMFIELD_") continue;
    const auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace_back(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

ConfigParseResult parse_server_config(int argc, const char* const* argv) {
  return parse_server_config(argc, argv, process_environment());
}

ConfigParseResult parse_server_config(int argc, const char* const* argv, const Environment& environment) {
  ConfigParseResult result;
  Layer flags{ConfigSource::kFlag, {}, {}};
  ServerConfig& c = flags.values;
  std::string log_format = log_format_name(c.log_format);
  bool print_config = false;

  CLI::App app{"swarmfield-server: authoritative horde-game server (flow fields + swarm), TCP + UDP",
               "swarmfield-server"};
  app.option_defaults()->always_capture_default();
  app.get_formatter()->column_width(40);
  app.footer(
      "Every flag can also be given as SWARMFIELD_<FLAG> in the environment (SWARMFIELD_TICK_HZ=60) or as a key of "
      "the --config TOML file (tick-hz = 60): flag > environment > file > default; --print-config shows where each "
      "value came from.\nThe exit summary (ticks=.. rebuilds=.. overruns=.. clients=.. bytes_sent=..) is printed to "
      "stdout; logs go to stderr.");

  // Every option is strict about its value (strict_values): empty, NaN/inf and negative seeds
  // are errors. Applied before ->type_name() hides the derived FLOAT / UINT type.
  std::vector<std::pair<const Setting*, CLI::Option*>> options;
  for (const Setting& s : settings()) {
    const std::string name = "--" + std::string(s.key);
    const std::string help(s.help);
    CLI::Option* opt = std::visit(
        [&](auto member) -> CLI::Option* {
          using T = std::remove_cvref_t<decltype(c.*member)>;
          if constexpr (std::is_same_v<T, bool>) {
            return app.add_flag(name, c.*member, help);
          } else if constexpr (std::is_same_v<T, LogFormat>) {
            return strict_values(app.add_option(name, log_format, help));
          } else {
            return strict_values(app.add_option(name, c.*member, help));
          }
        },
        s.field);
    if (!s.type_name.empty()) opt->type_name(std::string(s.type_name));
    options.emplace_back(&s, opt);
  }
  CLI::Option* map_opt = options[0].second;
  map_opt->excludes(options[1].second);
  map_opt->excludes(options[2].second);
  CLI::Option* config_opt =
      strict_values(app.add_option("--config", c.config_path,
                                   "TOML file with the same keys as the flags (e.g. tick-hz = 60); flags and "
                                   "SWARMFIELD_* variables win"))
          ->type_name("FILE");
  app.add_flag("--print-config", print_config,
               "Print the effective settings as TOML, each with where it came from (flag, environment, file, "
               "default), and exit");

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
  for (const auto& [s, opt] : options) {
    if (opt->count() > 0) flags.keys.push_back(s->key);
  }
  if (log_format == "text" || log_format == "json") {
    c.log_format = log_format == "json" ? LogFormat::kJson : LogFormat::kText;
  } else {
    return fail("error: --log-format must be text or json (got '" + log_format + "')");
  }

  // The environment: SWARMFIELD_<KEY> for every setting, and SWARMFIELD_CONFIG.
  Layer env{ConfigSource::kEnvironment, {}, {}};
  std::string env_config_path;
  for (const auto& [name, value] : environment) {
    if (name == "SWARMFIELD_CONFIG") {
      if (value.empty()) return fail("error: environment SWARMFIELD_CONFIG: value is empty");
      env_config_path = value;
      continue;
    }
    const Setting* setting = nullptr;
    for (const Setting& s : settings()) {
      if (env_name(s.key) == name) setting = &s;
    }
    if (setting == nullptr) {
      if (is_tooling_variable(name) || name.rfind("SWARMFIELD_", 0) != 0) continue;
      return fail("error: environment " + name + " is not a server setting (SWARMFIELD_<FLAG>, e.g. SWARMFIELD_TICK_HZ; "
                  "see --help for the flags)");
    }
    if (env.has(setting->key)) return fail("error: environment " + name + " is given twice");
    if (std::string err = apply_text(*setting, env.values, value); !err.empty())
      return fail("error: environment " + name + ": " + err);
    env.keys.push_back(setting->key);
  }
  if (env.has("map") && (env.has("city-seed") || env.has("city-size")))
    return fail("error: environment SWARMFIELD_MAP and SWARMFIELD_CITY_SEED/SWARMFIELD_CITY_SIZE exclude each other");

  // The file: --config, else SWARMFIELD_CONFIG.
  std::string config_path = c.config_path;
  ConfigSource config_source = ConfigSource::kFlag;
  if (config_opt->count() == 0 && !env_config_path.empty()) {
    config_path = env_config_path;
    config_source = ConfigSource::kEnvironment;
  }
  Layer file{ConfigSource::kFile, {}, {}};
  if (!config_path.empty()) {
    std::string text;
    std::error_code fs_error;
    if (std::filesystem::is_directory(config_path, fs_error))
      return fail(std::string("error: ") + (config_source == ConfigSource::kEnvironment ? "SWARMFIELD_CONFIG" : "--config") +
                  " '" + config_path + "' is a directory, not a TOML file");
    if (!read_config_text(config_path, text)) return fail("error: can not read config file '" + config_path + "'");
    if (std::string err = read_toml_layer(text, config_path, file); !err.empty()) return fail(err);
    // Validated on its own, as if no flag were given: a wrong value is an error even when a
    // flag overrides it (it would bite as soon as the flag is dropped).
    if (std::string err = validate_config(file.values); !err.empty())
      return fail("error: config " + config_path + ": " + err + " (in the file; flags do not excuse it)");
  }
  // The environment over the file, likewise valid without the flags.
  if (!env.keys.empty()) {
    std::vector<ConfigSource> env_sources;
    const ServerConfig env_and_file = merge({&env, &file}, &env_sources);
    if (std::string err = validate_config(env_and_file); !err.empty())
      return fail("error: " + err + blame_setting(err, env_sources, config_path) + " (flags do not excuse it)");
  }

  result.config = merge({&flags, &env, &file}, &result.sources);
  result.config.config_path = config_path;
  if (std::string err = validate_config(result.config); !err.empty())
    return fail("error: " + err + blame_setting(err, result.sources, config_path));
  if (print_config) {
    result.action = ConfigParseResult::Action::kExit;
    result.exit_code = 0;
    std::string head = "# swarmfield-server effective settings: value  # where it came from\n";
    if (!config_path.empty())
      head += "# config file: " + config_path + " (" + (config_source == ConfigSource::kFlag ? "flag --config" : "environment SWARMFIELD_CONFIG") + ")\n";
    result.output = head + config_to_toml(result.config, &result.sources);
  }
  return result;
}

std::string config_to_toml(const ServerConfig& config, const std::vector<ConfigSource>* sources) {
  std::string out;
  for (std::size_t i = 0; i < settings().size(); ++i) {
    const Setting& s = settings()[i];
    // One map source: the file's path, or the procedural city (the other keys left out; they
    // exclude each other, and an empty path is refused).
    if (is_map_choice(s.key) && config.map_path.empty()) continue;
    if (is_city_choice(s.key) && !config.map_path.empty()) continue;
    out += std::string(s.key) + " = " + toml_value(s, config);
    if (sources != nullptr && i < sources->size()) out += "  # " + source_text((*sources)[i], s.key, config.config_path);
    out += '\n';
  }
  // Kinds last (TOML tables follow the plain keys), always written out so that a stored config
  // (a replay) holds the exact table even when it was the default set. Floats read back bit for
  // bit: the shortest text of the float when it survives the reader's path (text -> double ->
  // float), else the shortest text of the double equal to the float (always exact).
  const auto number = [](float v) {
    char buffer[48];
    if (const auto r = std::to_chars(buffer, buffer + sizeof buffer, v); r.ec == std::errc{}) {
      const std::string text(buffer, r.ptr);
      if (static_cast<float>(std::strtod(text.c_str(), nullptr)) == v) return text;
    }
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, static_cast<double>(v));
    return r.ec == std::errc{} ? std::string(buffer, r.ptr) : std::string("nan");
  };
  if (sources != nullptr) {
    out += std::string("# kinds: ") + (config.kinds == sim::default_agent_kinds() ? "the default set" : "from the config file") + "\n";
  }
  for (const sim::AgentKind& k : config.kinds) {
    char colour[16];
    std::snprintf(colour, sizeof colour, "#%06X", static_cast<unsigned>(k.colour & 0xFFFFFFu));
    out += "\n[[kinds]]\nname = " + toml_string(k.name) + "\nradius = " + number(k.radius) +
           "\nspeed = " + number(k.max_speed) + "\nseparation-weight = " + number(k.separation_weight) +
           "\nturn-rate = " + number(k.max_turn_rate) + "\ncolour = \"" + colour + "\"\nweight = " +
           number(k.spawn_weight) + "\n";
  }
  return out;
}

ConfigParseResult parse_config_toml(const std::string& text, const std::string& name) {
  ConfigParseResult result;
  Layer file{ConfigSource::kFile, {}, {}};
  if (std::string err = read_toml_layer(text, name, file); !err.empty()) return fail(err);
  result.config = merge({&file}, &result.sources);
  if (std::string err = validate_config(result.config); !err.empty()) return fail("error: config " + name + ": " + err);
  return result;
}

std::int64_t resolve_field_budget(const ServerConfig& config, std::size_t map_cells) noexcept {
  if (config.field_budget != kAutoFieldBudget) return config.field_budget;
  return map_cells <= std::size_t{512} * 512 ? 0 : 200000;
}

}  // namespace swarmfield::server
