#pragma once
// Internal to swarmfield_server_base: the sources of server settings as layers (flags,
// environment, TOML file), each the defaults plus the values it gives, and their merge in
// priority order (flag > environment > file > default).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "config_settings.hpp"
#include "swarmfield/server/config/server_config.hpp"

namespace swarmfield::server::config_detail {

/// One source of settings: the defaults plus the values it gives, and which keys it gives.
struct Layer {
  ConfigSource source = ConfigSource::kDefault;
  ServerConfig values;
  std::vector<std::string_view> keys;  ///< keys this layer sets (table keys and kKindsKey)
  [[nodiscard]] bool has(std::string_view key) const { return std::find(keys.begin(), keys.end(), key) != keys.end(); }
  [[nodiscard]] bool chooses_map_source() const {
    return std::any_of(keys.begin(), keys.end(), [](std::string_view k) { return is_map_choice(k) || is_city_choice(k); });
  }
};

/// Merges `layers` (highest priority first) over the defaults. The map source (--map versus
/// --city-*) is taken whole from the highest layer that names either, so a flag's --map
/// replaces a file's city and the other way round; the kinds from the highest layer that has
/// them. `sources` (optional) gets each setting's origin, in settings() order.
[[nodiscard]] ServerConfig merge(const std::vector<const Layer*>& layers, std::vector<ConfigSource>* sources);

/// Where a value came from, for messages and --print-config: "flag --agents", "environment
/// SWARMFIELD_AGENTS", "file PATH" or "default".
[[nodiscard]] std::string source_text(ConfigSource source, std::string_view key, const std::string& config_path);

/// Reads TOML `text` (named `name` in messages) into `layer`: every key a setting (or "kinds"),
/// each at most once ('_' and '-' spellings are the same key), "map" not with "city-*".
/// "" or an error line starting "error: config NAME: ".
[[nodiscard]] std::string read_toml_layer(const std::string& text, const std::string& name, Layer& layer);

/// Reads the SWARMFIELD_<KEY> variables of `environment` into `layer`, checked like flags;
/// SWARMFIELD_CONFIG goes to `config_path` instead. The scripts' own variables
/// (is_tooling_variable) and names without the prefix are skipped; so are Kubernetes'
/// service-link variables (is_service_link_variable), each with a line in `warnings` (when not
/// null); another SWARMFIELD_ name is an error. "" or an error line starting "error:
/// environment ".
[[nodiscard]] std::string read_environment_layer(const Environment& environment, Layer& layer, std::string& config_path,
                                                 std::vector<std::string>* warnings = nullptr);

}  // namespace swarmfield::server::config_detail
