#include "swarmfield/server/config/config_toml.hpp"

#include "swarmfield/cli/file_kind.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>

namespace swarmfield::server {

std::string toml_type_name(const toml::node& n) {
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

namespace {

// A key of a [[kinds]] or [[waves]] table: '_' spelled '-', one of `known`, not seen before in
// this table. "" and `key` set, or the error naming the key.
std::string check_table_key(std::string_view raw_key, std::span<const std::string_view> known,
                            std::vector<std::string>& seen, std::string& key) {
  key.assign(raw_key);
  std::replace(key.begin(), key.end(), '_', '-');
  if (std::find(known.begin(), known.end(), key) == known.end()) {
    std::string list;
    for (const auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    return "unknown key '" + std::string(raw_key) + "' (known keys: " + list + ")";
  }
  if (std::find(seen.begin(), seen.end(), key) != seen.end())
    return "key '" + std::string(raw_key) + "' sets '" + key + "' a second time";
  seen.push_back(key);
  return {};
}

// A TOML integer or float as a double; false for any other type.
bool toml_number(const toml::node& node, double& value) {
  if (auto i = node.value_exact<std::int64_t>()) {
    value = static_cast<double>(*i);
    return true;
  }
  if (auto f = node.value_exact<double>()) {
    value = *f;
    return true;
  }
  return false;
}

// One [[kinds]] table -> AgentKind; "" or an error naming the key.
std::string apply_kind_table(const toml::table& table, sim::AgentKind& kind) {
  static const std::array<std::string_view, 10> kKindKeys = {"name",   "radius", "speed",  "separation-weight",
                                                              "turn-rate", "colour", "weight", "health",
                                                              "damage", "attack-range"};
  std::vector<std::string> seen;
  bool has_name = false;
  for (const auto& [raw_key, node] : table) {
    std::string key;
    if (std::string err = check_table_key(raw_key.str(), kKindKeys, seen, key); !err.empty()) return err;
    const std::string where = "key '" + std::string(raw_key.str()) + "' ";
    if (key == "name") {
      auto v = node.value_exact<std::string>();
      if (!v) return where + "must be a string (got " + toml_type_name(node) + ")";
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
    if (!toml_number(node, value)) return where + "must be a number (got " + toml_type_name(node) + ")";
    // Past a float's range the value would become inf, and the range check below would name
    // "inf", not what the file says.
    if (std::isfinite(value) && std::fabs(value) > static_cast<double>(std::numeric_limits<float>::max())) {
      std::ostringstream ss;
      ss << where << "is too large (got " << value << ")";
      return ss.str();
    }
    const auto f = static_cast<float>(value);
    if (key == "radius") kind.radius = f;
    if (key == "speed") kind.max_speed = f;
    if (key == "separation-weight") kind.separation_weight = f;
    if (key == "turn-rate") kind.max_turn_rate = f;
    if (key == "health") kind.health = f;
    if (key == "damage") kind.damage = f;
    if (key == "attack-range") kind.attack_range = f;
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

}  // namespace

namespace {

// A whole number of cells, "" or the reason.
std::string rectangle(const toml::node& node, std::array<std::int64_t, 4>& out) {
  const toml::array* a = node.as_array();
  if (a == nullptr || a->size() != 4) return "must be [x0, y0, x1, y1] (4 whole numbers of cells)";
  for (std::size_t i = 0; i < 4; ++i) {
    const auto v = a->get(i)->value_exact<std::int64_t>();
    if (!v) return "must be [x0, y0, x1, y1] (4 whole numbers of cells; got a " + toml_type_name(*a->get(i)) + ")";
    out[i] = *v;
  }
  return {};
}

std::string apply_wave_table(const toml::table& table, WaveConfig& wave) {
  static const std::array<std::string_view, 9> kWaveKeys = {"name",   "trigger", "start", "kinds", "zone",
                                                            "duration", "repeat",  "every", "growth"};
  std::vector<std::string> seen;
  for (const auto& [raw_key, node] : table) {
    std::string key;
    if (std::string err = check_table_key(raw_key.str(), kWaveKeys, seen, key); !err.empty()) return err;
    const std::string where = "key '" + std::string(raw_key.str()) + "' ";
    if (key == "name") {
      auto v = node.value_exact<std::string>();
      if (!v) return where + "must be a string (got " + toml_type_name(node) + ")";
      wave.name = *v;
    } else if (key == "trigger") {
      auto v = node.value_exact<std::string>();
      if (!v || (*v != "time" && *v != "cleared")) return where + "must be \"time\" or \"cleared\"";
      wave.when_cleared = *v == "cleared";
    } else if (key == "kinds") {
      const toml::table* kinds = node.as_table();
      if (kinds == nullptr || kinds->empty())
        return where + "must be a table of kind name = count, e.g. { walker = 100, brute = 5 }";
      for (const auto& [kind, count] : *kinds) {
        auto n = count.value_exact<std::int64_t>();
        if (!n) return where + "'" + std::string(kind.str()) + "' must be a whole number of agents (got " + toml_type_name(count) + ")";
        wave.kinds.emplace_back(std::string(kind.str()), *n);
      }
    } else if (key == "zone") {
      if (auto v = node.value_exact<std::string>()) {
        wave.zone_name = *v;
      } else {
        std::array<std::int64_t, 4> r{};
        if (std::string err = rectangle(node, r); !err.empty()) return where + err + " or a name of the [zones] table";
        wave.zone = r;
      }
    } else if (key == "repeat") {
      auto v = node.value_exact<std::int64_t>();
      if (!v) return where + "must be a whole number (got " + toml_type_name(node) + ")";
      wave.repeat = *v;
    } else {
      double value = 0.0;
      if (!toml_number(node, value)) return where + "must be a number (got " + toml_type_name(node) + ")";
      if (key == "start") wave.start_s = value;
      if (key == "duration") wave.duration_s = value;
      if (key == "every") wave.every_s = value;
      if (key == "growth") wave.growth = value;
    }
  }
  if (wave.kinds.empty()) return "has no 'kinds' (e.g. kinds = { walker = 100 })";
  return {};
}

}  // namespace

std::string apply_waves(const toml::node& node, std::vector<WaveConfig>& out) {
  const toml::array* array = node.as_array();
  if (array == nullptr || !array->is_array_of_tables())
    return "key 'waves' must be an array of tables ([[waves]] sections; got " + toml_type_name(node) + ")";
  std::vector<WaveConfig> waves;
  for (std::size_t i = 0; i < array->size(); ++i) {
    WaveConfig wave;
    if (std::string err = apply_wave_table(*array->get(i)->as_table(), wave); !err.empty())
      return "waves[" + std::to_string(i) + "]: " + err;
    waves.push_back(std::move(wave));
  }
  out = std::move(waves);
  return {};
}

std::string apply_zones(const toml::node& node, std::map<std::string, std::array<std::int64_t, 4>>& out) {
  const toml::table* table = node.as_table();
  if (table == nullptr) return "key 'zones' must be a table ([zones] with name = [x0, y0, x1, y1]; got " + toml_type_name(node) + ")";
  std::map<std::string, std::array<std::int64_t, 4>> zones;
  for (const auto& [name, value] : *table) {
    std::array<std::int64_t, 4> r{};
    if (std::string err = rectangle(value, r); !err.empty()) return "zones." + std::string(name.str()) + " " + err;
    zones[std::string(name.str())] = r;
  }
  out = std::move(zones);
  return {};
}

std::string apply_kinds(const toml::node& node, std::vector<sim::AgentKind>& out) {
  const toml::array* array = node.as_array();
  if (array != nullptr && array->empty())
    return "key 'kinds' needs at least one [[kinds]] section (got an empty array; leave the key out for the default kinds)";
  if (array == nullptr || !array->is_array_of_tables())
    return "key 'kinds' must be an array of tables ([[kinds]] sections; got " + toml_type_name(node) + ")";
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

std::string read_config_text(const std::string& path, std::string& out, std::string_view what) {
  const std::string named = std::string(what) + " '" + path + "'";
  const std::string unreadable = "can not read " + named;
  // Only a regular file: a FIFO's open would wait for a writer (the server hangs at start-up),
  // a device is no config. Checked before opening.
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    return named + " is " + cli::file_kind(st) + ", not a regular file";
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return unreadable + (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string());
  // One byte past the limit tells a file too large; nothing beyond it is read (/dev/zero ends).
  std::string text;
  std::array<char, 16 * 1024> chunk{};
  while (in && text.size() <= kMaxConfigFileBytes) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return unreadable;
  if (text.size() > kMaxConfigFileBytes) {
    return named + " is larger than 1 MiB (" + std::to_string(kMaxConfigFileBytes) + " bytes), the limit of a " +
           std::string(what);
  }
  out = std::move(text);
  return {};
}

// Past the multi-line string (""" or ''') that starts at t[i], counting its newlines into `line`:
// the pre-scans below skip strings as TOML reads them.
static void skip_multiline_string(std::string_view t, std::size_t& i, int& line) {
  const std::string_view close = t.substr(i, 3);
  const bool escapes = close == R"(""")";
  i += 3;
  while (i < t.size() && t.substr(i, 3) != close) {
    if (t[i] == '\n') ++line;
    i += (escapes && t[i] == '\\') ? 2 : 1;
  }
  i += 3;
}

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
      skip_multiline_string(t, i, line);
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

int deep_key_path(std::string_view t, std::size_t max_parts) {
  int line = 1;
  std::size_t i = 0;
  bool line_start = true;  // only whitespace so far on this line (outside strings)
  bool in_path = false;    // in a table header or a key at the start of a line
  bool header = false;     // the path is a table header ([...] or [[...]])
  std::size_t dots = 0;
  const auto starts = [&](std::string_view what) { return t.substr(i, what.size()) == what; };
  while (i < t.size()) {
    const char c = t[i];
    if (c == '\n') {
      ++line;
      ++i;
      line_start = true;
      in_path = false;
      continue;
    }
    if (c == '#') {
      while (i < t.size() && t[i] != '\n') ++i;
      continue;
    }
    if (starts(R"(""")") || starts("'''")) {
      skip_multiline_string(t, i, line);
      line_start = false;
      in_path = false;
      continue;
    }
    if (line_start && c != ' ' && c != '\t' && c != '\r') {
      line_start = false;
      in_path = true;
      header = c == '[';
      dots = 0;
    }
    if (c == '"' || c == '\'') {  // a quoted key part (or a string value: the path has ended)
      ++i;
      while (i < t.size() && t[i] != c && t[i] != '\n') i += (c == '"' && t[i] == '\\') ? 2 : 1;
      ++i;
      continue;
    }
    if (in_path) {
      if (c == '.') {
        if (++dots >= max_parts) return line;
      } else if (header ? c == ']' : !(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
                                        c == ' ' || c == '\t')) {
        in_path = false;
      }
    }
    ++i;
  }
  return 0;
}

std::string parse_toml_text(const std::string& file_text, const std::string& name, toml::table& out) {
  // A UTF-8 byte order mark (Windows Notepad saves one) is no part of the document: it was "a
  // non-ASCII character outside a string or comment" on line 1.
  const bool bom = file_text.compare(0, 3, "\xEF\xBB\xBF") == 0;
  const std::string text = bom ? file_text.substr(3) : file_text;
  if (const int line = non_ascii_outside_strings(text); line != 0) {
    return "config " + name + ":" + std::to_string(line) +
           ": a non-ASCII character outside a string or comment (TOML keys are ASCII)";
  }
  // toml++ parses a table header's parts recursively: a header of ~150,000 parts overflows the
  // stack (a crash, found by a fresh-user trial). No config needs more than a few.
  if (const int line = deep_key_path(text, kMaxKeyPathParts); line != 0) {
    return "config " + name + ":" + std::to_string(line) + ": a key or table name of more than " +
           std::to_string(kMaxKeyPathParts) + " dotted parts";
  }
  try {
    out = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    std::ostringstream ss;
    ss << "config " << name << ":" << e.source().begin.line << ": " << e.description();
    return ss.str();
  }
  return {};
}

std::string read_kinds_file(const std::string& path, std::vector<sim::AgentKind>& out) {
  std::error_code fs_error;
  if (std::filesystem::is_directory(path, fs_error)) return "'" + path + "' is a directory, not a TOML file";
  std::string text;
  if (std::string err = read_config_text(path, text); !err.empty()) return err;
  toml::table table;
  if (std::string err = parse_toml_text(text, path, table); !err.empty()) return err;
  const toml::node* kinds = nullptr;
  for (const auto& [raw_key, node] : table) {
    std::string key(raw_key.str());
    std::replace(key.begin(), key.end(), '_', '-');
    if (key != "kinds") continue;
    if (kinds != nullptr) return "config " + path + ": 'kinds' given twice";
    kinds = &node;
  }
  if (kinds == nullptr) return "config " + path + ": no [[kinds]] section (see README: Enemy kinds)";
  if (std::string err = apply_kinds(*kinds, out); !err.empty()) return "config " + path + ": " + err;
  return {};
}

}  // namespace swarmfield::server
