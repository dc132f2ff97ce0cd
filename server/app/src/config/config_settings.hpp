#pragma once
// Internal to swarmfield_server_base: the table of server settings (one row per setting: its
// key, the ServerConfig member it fills, its --help text) and a value's conversions from
// environment text and from a TOML node. Flags, environment, file, --print-config and the
// replay's stored config all go through this table (server_config.cpp, config_layers.cpp,
// config_to_toml.cpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <toml++/toml.h>

#include "swarmfield/server/config/server_config.hpp"

namespace swarmfield::server::config_detail {

/// The ServerConfig member a setting fills.
using Field = std::variant<std::int64_t ServerConfig::*, std::uint64_t ServerConfig::*, double ServerConfig::*,
                           std::string ServerConfig::*, bool ServerConfig::*, LogFormat ServerConfig::*>;

/// One setting: its key (the flag without "--", the TOML key, and SWARMFIELD_<KEY> in the
/// environment), the member it fills, and its --help text.
struct Setting {
  std::string_view key;
  Field field;
  std::string_view type_name;  ///< --help placeholder ("HZ"); empty for a switch
  std::string_view help;
  std::string_view unit = "a number";  ///< what a floating-point value is, for error messages
};

/// Every setting, in --help and config_to_toml() order ("map", "city-seed", "city-size" first).
[[nodiscard]] const std::vector<Setting>& settings();
/// The setting named `key` ("tick-hz"), or nullptr.
[[nodiscard]] const Setting* find_setting(std::string_view key);

/// The [[kinds]] tables: a file-only setting (sim::AgentKind per table), no row of the table.
inline constexpr std::string_view kKindsKey = "kinds";
inline constexpr std::string_view kWavesKey = "waves";  ///< [[waves]] tables (no flag)
inline constexpr std::string_view kZonesKey = "zones";  ///< the [zones] table (no flag)
inline constexpr std::string_view kRulesScriptKey = "rules-script";  ///< a stored script's text (no flag)

/// The map source: "map" versus "city-seed"/"city-size" (they exclude each other).
[[nodiscard]] inline bool is_map_choice(std::string_view key) { return key == "map"; }
[[nodiscard]] inline bool is_city_choice(std::string_view key) { return key == "city-seed" || key == "city-size"; }

/// "text" or "json".
[[nodiscard]] std::string log_format_name(LogFormat format);

/// The environment variable of a key: "tick-hz" -> "SWARMFIELD_TICK_HZ".
[[nodiscard]] std::string env_name(std::string_view key);

/// SWARMFIELD_ variables of the build, test and demo scripts (and reserved for the other
/// programs): not server settings, and not errors.
[[nodiscard]] bool is_tooling_variable(std::string_view name);

/// Sets `s`'s member of `c` from environment text, checked like a flag's value. "" or what is
/// wrong ("must be an integer (got 'x')").
[[nodiscard]] std::string apply_text(const Setting& s, ServerConfig& c, const std::string& text);

/// Sets `s`'s member of `c` from a TOML value (integers where a number of seconds is asked;
/// seeds above 2^63-1 as strings of digits). "" or what is wrong ("must be an integer (got string)").
[[nodiscard]] std::string apply_toml(const Setting& s, ServerConfig& c, const toml::node& n);

/// Copies `s`'s member from `from` to `to`.
void copy_setting(const Setting& s, ServerConfig& to, const ServerConfig& from);

}  // namespace swarmfield::server::config_detail
