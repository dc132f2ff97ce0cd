// config_to_toml() (server_config.hpp): the settings as TOML text that reads back to the same
// values (--print-config, the config stored in a replay).
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <variant>

#include "config_layers.hpp"
#include "swarmfield/cli/control_chars.hpp"
#include "config_settings.hpp"
#include "swarmfield/server/config/server_config.hpp"

namespace swarmfield::server {
namespace {

using config_detail::Setting;
using cli::append_unicode_escape;
using cli::is_control_char;

std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (is_control_char(u)) {
      append_unicode_escape(out, u);
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
          return toml_string(config_detail::log_format_name(v));
        } else {
          return toml_string(v);
        }
      },
      s.field);
}

}  // namespace

std::string config_to_toml(const ServerConfig& config, const std::vector<ConfigSource>* sources) {
  std::string out;
  const std::vector<Setting>& settings = config_detail::settings();
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const Setting& s = settings[i];
    // One map source: the file's path, or the procedural city (the other keys left out; they
    // exclude each other, and an empty path is refused).
    if (config_detail::is_map_choice(s.key) && config.map_path.empty()) continue;
    if (config_detail::is_city_choice(s.key) && !config.map_path.empty()) continue;
    out += std::string(s.key) + " = " + toml_value(s, config);
    if (sources != nullptr && i < sources->size()) out += "  # " + config_detail::source_text((*sources)[i], s.key, config.config_path);
    out += '\n';
  }
  // The rules script's text is a plain key too: before the first table, or it would be read as a
  // key of the table above it.
  if (!config.rules_script.empty()) out += "rules-script = " + toml_string(config.rules_script) + "\n";
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
           number(k.spawn_weight) + "\nhealth = " + number(k.health) + "\ndamage = " + number(k.damage) +
           "\nattack-range = " + number(k.attack_range) + "\n";
  }
  // Zones and waves after them (doubles: std::to_chars' shortest text reads back exactly).
  const auto real = [](double v) {
    char buffer[48];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, v);
    std::string text = r.ec == std::errc{} ? std::string(buffer, r.ptr) : std::string("nan");
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // a float, not an integer
    return text;
  };
  const auto rect = [](const std::array<std::int64_t, 4>& r) {
    std::string text = "[";  // by append: g++ 12 -O3 warns falsely (-Wrestrict) on "[" + std::to_string(..)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i > 0) text += ", ";
      text += std::to_string(r[i]);
    }
    return text + "]";
  };
  if (!config.zones.empty()) {
    out += "\n[zones]\n";
    for (const auto& [name, r] : config.zones) out += toml_string(name) + " = " + rect(r) + "\n";
  }
  for (const WaveConfig& w : config.waves) {
    out += "\n[[waves]]\nname = " + toml_string(w.name) + "\ntrigger = \"" + (w.when_cleared ? "cleared" : "time") +
           "\"\nstart = " + real(w.start_s) + "\nkinds = {";
    for (std::size_t i = 0; i < w.kinds.size(); ++i) {
      out += (i == 0 ? " " : ", ") + toml_string(w.kinds[i].first) + " = " + std::to_string(w.kinds[i].second);
    }
    out += " }\n";
    if (w.zone) out += "zone = " + rect(*w.zone) + "\n";
    if (!w.zone_name.empty()) out += "zone = " + toml_string(w.zone_name) + "\n";
    out += "duration = " + real(w.duration_s) + "\nrepeat = " + std::to_string(w.repeat) + "\nevery = " + real(w.every_s) +
           "\ngrowth = " + real(w.growth) + "\n";
  }
  return out;
}


}  // namespace swarmfield::server
