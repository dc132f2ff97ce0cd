// Match settings set at allocation (server_config.hpp: apply_match_settings).
#include <algorithm>
#include <cctype>

#include "config_settings.hpp"
#include "swarmfield/cli/control_chars.hpp"
#include "swarmfield/server/config/server_config.hpp"

namespace swarmfield::server {

namespace {
// One word for logs and the summary line: a Kubernetes label value's characters.
bool valid_match_id(const std::string& v) {
  return !v.empty() && v.size() <= 63 && std::all_of(v.begin(), v.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
  });
}
}  // namespace

MatchSettings apply_match_settings(const ServerConfig& config, const std::map<std::string, std::string>& settings) {
  MatchSettings out{config, {}, {}, {}};
  for (const auto& [key, value] : settings) {
    if (key == "match-id") {
      if (valid_match_id(value)) {
        out.match_id = value;
      } else {
        out.errors.push_back("'match-id': 1..63 of A-Z, a-z, 0-9, '-', '_', '.'");
      }
      continue;
    }
    const std::string shown = cli::printable_ascii(key);
    if (std::find(kMatchSettingKeys.begin(), kMatchSettingKeys.end(), key) == kMatchSettingKeys.end()) {
      std::string allowed;
      for (const std::string_view k : kMatchSettingKeys) allowed += std::string(k) + ", ";
      out.errors.push_back("'" + shown + "' is not a match setting (" + allowed +
                           "match-id; the others are fixed once the world is built)");
      continue;
    }
    const config_detail::Setting* setting = config_detail::find_setting(key);
    ServerConfig trial = out.config;
    std::string error = setting == nullptr ? "no such setting" : config_detail::apply_text(*setting, trial, value);
    if (error.empty()) error = validate_config(trial);
    if (error.empty() && key == "duration" && !(trial.duration_s > 0.0)) {
      error = "an allocation sets a match length (more than 0 s); it can not remove one";
    }
    if (!error.empty()) {
      out.errors.push_back("'" + shown + "': " + error);
      continue;
    }
    out.config = trial;
    out.applied.push_back(key + "=" + cli::printable_ascii(value));
  }
  return out;
}

}  // namespace swarmfield::server
