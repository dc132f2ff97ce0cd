// parse_server_config() and parse_config_toml() (server_config.hpp): the flags (CLI11), the
// environment and the TOML file read into layers (config_layers.hpp), merged and validated.
#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/cli/version.hpp"

#include <unistd.h>  // environ

#include <CLI/CLI.hpp>

#include "config_layers.hpp"
#include "config_settings.hpp"
#include "swarmfield/cli/parse_error.hpp"
#include "swarmfield/cli/strict_values.hpp"
#include "swarmfield/server/config/config_toml.hpp"

#include <filesystem>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

namespace swarmfield::server {
namespace {

// "Could not convert: --reconnect-grace = abc" -> "--reconnect-grace: must be a number of
// seconds (got 'abc')" from the setting's own check; CLI11's text when it is not of that form.
std::string conversion_message(const std::string& what) {
  constexpr std::string_view kPrefix = "Could not convert: --";
  const std::size_t eq = what.find(" = ");
  if (what.rfind(kPrefix, 0) != 0 || eq == std::string::npos) return what;
  const std::string key = what.substr(kPrefix.size(), eq - kPrefix.size());
  const std::string value = what.substr(eq + 3);
  const config_detail::Setting* setting = config_detail::find_setting(key);
  if (setting == nullptr) return what;
  ServerConfig scratch;
  const std::string why = config_detail::apply_text(*setting, scratch, value);
  return why.empty() ? what : "--" + key + ": " + why;
}

using config_detail::Layer;
using config_detail::Setting;
using config_detail::log_format_name;
using config_detail::merge;
using config_detail::read_toml_layer;
using config_detail::settings;
using swarmfield::cli::strict_values;

ConfigParseResult fail(std::string message) {
  ConfigParseResult r;
  r.action = ConfigParseResult::Action::kExit;
  r.exit_code = 2;
  r.output = std::move(message);
  return r;
}

}  // namespace

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
  cli::add_version_flag(app, "swarmfield-server");
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
            // A switch that is on by default also takes --no-KEY.
            const bool on = ServerConfig{}.*member;
            // (CLI11 shows such a pair as "--KEY,--no-KEY{false}", the value --no-KEY sets, which
            // reads as "off": the help says which it is.)
            return app.add_flag(on ? name + ",!--no-" + std::string(s.key) : name, c.*member,
                                on ? help + " (on by default)" : help);
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
  } catch (const CLI::CallForVersion&) {
    result.action = ConfigParseResult::Action::kExit;
    result.exit_code = 0;
    result.output = cli::version_line("swarmfield-server");
    return result;
  } catch (const CLI::ConversionError& e) {
    // CLI11 says "Could not convert: --flag = value"; the settings table says what the value
    // must be, as for the same value in the environment ("must be a number of seconds").
    return fail("error: " + conversion_message(e.what()) + " (see --help)");
  } catch (const CLI::ParseError& e) {
    return fail("error: " + cli::describe_parse_error(app, e) + " (see --help)");
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
  if (std::string err = config_detail::read_environment_layer(environment, env, env_config_path, &result.warnings);
      !err.empty())
    return fail(err);

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
    if (std::string err = read_config_text(config_path, text); !err.empty()) return fail("error: " + err);
    if (std::string err = read_toml_layer(text, config_path, file); !err.empty()) return fail(err);
    // Validated on its own, as if no flag were given: a wrong value is an error even when a
    // flag overrides it (it would bite as soon as the flag is dropped).
    if (std::string err = validate_config(merge({&file}, nullptr)); !err.empty())
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
  // The highest layer that names a map source chooses it whole; a map file a lower layer names
  // is then not read: said, since nothing else would show it.
  {
    const std::pair<const config_detail::Layer*, const char*> layers[] = {
        {&flags, "the flags"}, {&env, "the environment (SWARMFIELD_MAP)"}, {&file, "the config file"}};
    const config_detail::Layer* chosen = nullptr;
    const char* chosen_by = "";
    for (const auto& [layer, name] : layers) {
      if (chosen == nullptr && layer->chooses_map_source()) {
        chosen = layer;
        chosen_by = name;
      } else if (chosen != nullptr && !chosen->has("map") && layer->has("map")) {
        result.warnings.push_back(std::string("the map file '") + layer->values.map_path + "' from " + name +
                                  " is not used: " + chosen_by + " choose the generated city (--city-size, " +
                                  "--city-seed); give --map to use the file");
      }
    }
  }
  if (std::string err = validate_config(result.config); !err.empty())
    return fail("error: " + err + blame_setting(err, result.sources, config_path));
  // --record-max-mb bounds a recording: without --record it does nothing, which was accepted
  // without a word. Said, not refused: a config file shared by servers that record and servers
  // that do not may set it.
  if (result.config.record_path.empty()) {
    const auto at = static_cast<std::size_t>(config_detail::find_setting("record-max-mb") - settings().data());
    if (at < result.sources.size() && result.sources[at] != ConfigSource::kDefault) {
      std::ostringstream what;
      what << "--record-max-mb " << result.config.record_max_mb;
      result.warnings.push_back(what.str() + blame_setting(what.str(), result.sources, config_path) +
                                " has no effect without --record: nothing is recorded");
    }
  }
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
  // Hierarchical fields (forced on a small map) with no budget rebuild every occupied sector on
  // every goal change, in the tick: 6-10x slower ticks than whole mode with fast players.
  if (config.field_mode == "hierarchical") return 200000;
  return map_cells <= std::size_t{512} * 512 ? 0 : 200000;
}

}  // namespace swarmfield::server
