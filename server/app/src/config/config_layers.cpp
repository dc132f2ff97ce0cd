// Layers of settings and their merge (config_layers.hpp); blame_setting() (server_config.hpp).
#include "config_layers.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "swarmfield/server/config/config_toml.hpp"

namespace swarmfield::server {
namespace config_detail {

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
  // Waves and zones likewise (only a file has them).
  for (const Layer* l : layers) {
    if (l->has(kWavesKey)) {
      out.waves = l->values.waves;
      break;
    }
  }
  for (const Layer* l : layers) {
    if (l->has(kZonesKey)) {
      out.zones = l->values.zones;
      break;
    }
  }
  for (const Layer* l : layers) {
    if (l->has(kRulesScriptKey)) {
      out.rules_script = l->values.rules_script;
      break;
    }
  }
  // The default snapshot rate follows a tick rate below it: --tick-hz 10 alone was refused with
  // "--snapshot-hz must be in 1..10 (got 20)". A rate given by anyone is kept (and checked).
  const bool snapshot_rate_given =
      std::any_of(layers.begin(), layers.end(), [](const Layer* l) { return l->has("snapshot-hz"); });
  if (!snapshot_rate_given && out.tick_hz >= 1 && out.snapshot_hz > out.tick_hz) out.snapshot_hz = out.tick_hz;
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
    if (key == kRulesScriptKey) {
      if (layer.has(kRulesScriptKey)) return "error: config " + name + ": 'rules-script' given twice";
      const auto script = node.value_exact<std::string>();
      if (!script) return "error: config " + name + ": key 'rules-script' must be a string (a Lua script's text)";
      layer.values.rules_script = *script;
      layer.keys.push_back(kRulesScriptKey);
      continue;
    }
    if (key == kWavesKey || key == kZonesKey) {
      const std::string_view k = key == kWavesKey ? kWavesKey : kZonesKey;
      if (layer.has(k)) return "error: config " + name + ": '" + std::string(k) + "' given twice";
      const std::string err = k == kWavesKey ? apply_waves(node, layer.values.waves) : apply_zones(node, layer.values.zones);
      if (!err.empty()) return "error: config " + name + ": " + err;
      layer.keys.push_back(k);
      continue;
    }
    const Setting* s = find_setting(key);
    if (s == nullptr) {
      std::string known;
      for (const Setting& k : settings()) known += (known.empty() ? "" : ", ") + std::string(k.key);
      return "error: config " + name + ": unknown key '" + std::string(raw_key.str()) + "' (known keys: " + known +
             ", kinds, waves, zones, rules-script)";
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

std::string read_environment_layer(const Environment& environment, Layer& layer, std::string& config_path,
                                   std::vector<std::string>* warnings) {
  for (const auto& [name, value] : environment) {
    if (is_service_link_variable(name, value)) {
      // Kubernetes (and Docker links) set these for a Service named swarmfield: not ours. The
      // pod must still start; the operator learns to set enableServiceLinks: false.
      if (warnings != nullptr) {
        warnings->push_back("environment " + name +
                            " looks like a Kubernetes service link (a Service named swarmfield), not a server "
                            "setting: ignored (set enableServiceLinks: false in the pod spec)");
      }
      continue;
    }
    if (name == "SWARMFIELD_CONFIG") {
      if (value.empty()) return "error: environment SWARMFIELD_CONFIG: value is empty";
      config_path = value;
      continue;
    }
    const Setting* setting = nullptr;
    for (const Setting& s : settings()) {
      if (env_name(s.key) == name) setting = &s;
    }
    if (setting == nullptr) {
      if (is_tooling_variable(name) || name.rfind("SWARMFIELD_", 0) != 0) continue;
      return "error: environment " + name + " is not a server setting (SWARMFIELD_<FLAG>, e.g. SWARMFIELD_TICK_HZ; "
             "see --help for the flags)";
    }
    if (layer.has(setting->key)) return "error: environment " + name + " is given twice";
    if (std::string err = apply_text(*setting, layer.values, value); !err.empty())
      return "error: environment " + name + ": " + err;
    layer.keys.push_back(setting->key);
  }
  if (layer.has("map") && (layer.has("city-seed") || layer.has("city-size")))
    return "error: environment SWARMFIELD_MAP and SWARMFIELD_CITY_SEED/SWARMFIELD_CITY_SIZE exclude each other";
  return {};
}

}  // namespace config_detail

using config_detail::settings;
using config_detail::source_text;

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

std::string relative_path_note(std::string_view key, const std::string& path, const std::vector<ConfigSource>& sources,
                               const std::string& config_path) {
  // A user who writes `map = "m.map"` beside the file expects it found there; it is looked up
  // from wherever the server was started (as flags are), and "m.map: cannot open file" alone
  // did not say so. Only a path that names nothing from here gets the note: the place it was
  // looked up is then the likely mistake.
  const std::filesystem::path p(path);
  if (path.empty() || p.is_absolute()) return {};
  std::error_code ec;
  if (std::filesystem::exists(p, ec) || ec) return {};
  const auto setting = std::find_if(settings().begin(), settings().end(), [&](const auto& s) { return s.key == key; });
  const auto i = static_cast<std::size_t>(setting - settings().begin());
  if (setting == settings().end() || i >= sources.size() || sources[i] != ConfigSource::kFile) return {};
  const std::filesystem::path here = std::filesystem::current_path(ec);
  return " (" + std::string(key) + " = \"" + path + "\" is from the config file " + config_path +
         "; relative paths in it are taken from the current folder" + (ec ? std::string() : ", " + here.string()) +
         ", not from the file's folder)";
}

}  // namespace swarmfield::server
