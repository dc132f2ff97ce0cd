#include <doctest/doctest.h>

#include <array>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include "swarmfield/server/config/config_toml.hpp"
#include "swarmfield/server/map_source.hpp"
#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/server/world_setup.hpp"

using swarmfield::server::ConfigParseResult;
using swarmfield::server::LogFormat;
using swarmfield::server::parse_server_config;

namespace {

ConfigParseResult parse(std::vector<std::string> args) {
  args.insert(args.begin(), "swarmfield-server");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parse_server_config(static_cast<int>(argv.size()), argv.data());
}

// A TOML file in the temp dir, removed at scope exit.
struct TempToml {
  std::string path;
  explicit TempToml(const std::string& text) {
    char name[] = "/tmp/swarmfield-config-XXXXXX";
    const int fd = mkstemp(name);
    REQUIRE(fd >= 0);
    close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~TempToml() { std::remove(path.c_str()); }
};

bool is_run(const ConfigParseResult& r) { return r.action == ConfigParseResult::Action::kRun; }
bool is_error(const ConfigParseResult& r) {
  return r.action == ConfigParseResult::Action::kExit && r.exit_code == 2 && r.output.find('\n') == std::string::npos;
}

}  // namespace

TEST_CASE("server_config: defaults") {
  const auto r = parse({});
  REQUIRE(is_run(r));
  CHECK(r.config.map_path.empty());
  CHECK(r.config.city_seed == 1);
  CHECK(r.config.city_size == 256);
  CHECK(r.config.agents == 2000);
  CHECK(r.config.tick_hz == 30);
  CHECK(r.config.snapshot_hz == 20);
  CHECK(r.config.port == 7777);
  CHECK(r.config.bind == "0.0.0.0");
  CHECK(r.config.max_clients == 64);
  CHECK(r.config.duration_s == 0.0);
  CHECK(r.config.log_level == "info");
  CHECK(r.config.log_format == LogFormat::kText);
  CHECK(r.config.spawn_wave == 0);
  CHECK(r.config.field_mode == "auto");
}

TEST_CASE("server_config: flags") {
  const auto r = parse({"--city-seed", "9", "--city-size", "128", "--agents", "5000", "--tick-hz", "60",
                        "--snapshot-hz", "30", "--port", "0", "--bind", "127.0.0.1", "--max-clients", "8",
                        "--duration", "2.5", "--seed", "42", "--log-level", "debug", "--log-format", "json",
                        "--spawn-wave", "100", "--wave-interval", "3", "--field-mode", "hierarchical"});
  REQUIRE(is_run(r));
  CHECK(r.config.field_mode == "hierarchical");
  CHECK(r.config.city_seed == 9);
  CHECK(r.config.city_size == 128);
  CHECK(r.config.agents == 5000);
  CHECK(r.config.tick_hz == 60);
  CHECK(r.config.snapshot_hz == 30);
  CHECK(r.config.port == 0);
  CHECK(r.config.bind == "127.0.0.1");
  CHECK(r.config.max_clients == 8);
  CHECK(r.config.duration_s == 2.5);
  CHECK(r.config.seed == 42);
  CHECK(r.config.log_level == "debug");
  CHECK(r.config.log_format == LogFormat::kJson);
  CHECK(r.config.spawn_wave == 100);
  CHECK(r.config.wave_interval_s == 3.0);
}

TEST_CASE("server_config: --help exits 0 with the flags, their defaults and units") {
  const auto r = parse({"--help"});
  CHECK(r.action == ConfigParseResult::Action::kExit);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("--tick-hz") != std::string::npos);
  CHECK(r.output.find("--city-seed") != std::string::npos);
  CHECK(r.output.find("7777") != std::string::npos);
  CHECK(r.output.find("seconds") != std::string::npos);
  // A switch that is on by default says so (CLI11 writes it "--combat,--no-combat{false}").
  const std::size_t combat = r.output.find("--combat,--no-combat");
  REQUIRE(combat != std::string::npos);
  CHECK(r.output.substr(combat, r.output.find('\n', combat) - combat).find("(on by default)") != std::string::npos);
}

TEST_CASE("server_config: bad flags give one error line naming the problem, exit 2") {
  struct Case {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{"--bogus"}, "unknown option '--bogus' (see --help)"},
      // A typo names the option meant; its value is not taken for another mistake.
      {{"--agnets", "5"}, "error: unknown option '--agnets' (did you mean '--agents'?) (see --help)"},
      {{"--tickhz=60"}, "unknown option '--tickhz' (did you mean '--tick-hz'?)"},
      {{"--agents", "5", "stray"}, "unexpected argument 'stray'"},
      {{"--agents", "5", "--agents", "6"}, "error: --agents is given 2 times; give it once (see --help)"},
      {{"--", "--agents", "5"}, "'--agents' is not taken here (after '--' every word is a plain argument)"},
      // Echoed words are printable: an escape sequence in an option name reached the terminal.
      {{"--ag\x1b[2Jents", "5"}, "unknown option '--ag?[2Jents'"},
      {{"--tick-hz", "fast"}, "tick-hz"},
      {{"--tick-hz", "0"}, "--tick-hz"},
      {{"--snapshot-hz", "40"}, "--snapshot-hz"},  // above tick-hz 30
      {{"--port", "70000"}, "--port"},
      {{"--max-clients", "0"}, "--max-clients"},
      {{"--duration", "-1"}, "--duration"},
      {{"--log-level", "loud"}, "--log-level"},
      {{"--log-format", "xml"}, "--log-format"},
      {{"--field-mode", "fast"}, "--field-mode must be whole, hierarchical or auto"},
      {{"--map", "x.map", "--city-seed", "3"}, "--city-seed"},
      {{"--agents", "-5"}, "--agents"},
      {{"--wave-interval", "0"}, "--wave-interval"},
      {{"--config", "/nonexistent/swarmfield.toml"}, "/nonexistent/swarmfield.toml': No such file or directory"},
      // A value that is no number says what it must be (was CLI11's "Could not convert").
      {{"--reconnect-grace", "abc"}, "--reconnect-grace: must be a number of seconds (got 'abc')"},
      {{"--spectator-join-interval", "-1"}, "--spectator-join-interval must be in 0..600 seconds"},
      {{"--spectator-join-interval", "soon"}, "--spectator-join-interval: must be a number of seconds (got 'soon')"},
  };
  for (const auto& c : cases) {
    const auto r = parse(c.args);
    INFO("args[0]=" << c.args.front() << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(c.needle) != std::string::npos);
  }
}

TEST_CASE("server_config: TOML file with the flag keys; flags win") {
  TempToml file(R"(
# swarmfield server settings
tick-hz = 60
snapshot_hz = 15        # underscores work too
agents = 123
bind = "127.0.0.1"
duration = 1.5
log-format = "json"
city-seed = 5
)");
  // Saved with a UTF-8 byte order mark (Windows Notepad): the same file (it was "a non-ASCII
  // character outside a string or comment" on line 1).
  TempToml with_bom("\xEF\xBB\xBFtick-hz = 45\nagents = 9\n");
  const auto bom = parse({"--config", with_bom.path});
  INFO(bom.output);
  REQUIRE(is_run(bom));
  CHECK(bom.config.tick_hz == 45);
  CHECK(bom.config.agents == 9);
  const auto r = parse({"--config", file.path, "--agents", "77"});
  REQUIRE(is_run(r));
  CHECK(r.config.tick_hz == 60);
  CHECK(r.config.snapshot_hz == 15);
  CHECK(r.config.agents == 77);  // the flag wins
  CHECK(r.config.bind == "127.0.0.1");
  CHECK(r.config.duration_s == 1.5);
  CHECK(r.config.log_format == LogFormat::kJson);
  CHECK(r.config.city_seed == 5);
  CHECK(r.config.config_path == file.path);
}

TEST_CASE("server_config: --map on the command line replaces the file's city") {
  TempToml file("city-seed = 5\ncity-size = 64\n");
  const auto r = parse({"--config", file.path, "--map", "some.map"});
  REQUIRE(is_run(r));
  CHECK(r.config.map_path == "some.map");
}

TEST_CASE("server_config: TOML errors name the file, the key and the problem") {
  {
    TempToml file("tick-hz = \"fast\"\n");
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find("tick-hz") != std::string::npos);
    CHECK(r.output.find("integer") != std::string::npos);
  }
  {
    TempToml file("tickrate = 30\n");
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find("unknown key 'tickrate'") != std::string::npos);
    CHECK(r.output.find(file.path) != std::string::npos);
  }
  {
    TempToml file("tick-hz = \n");  // syntax error
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find(file.path + ":1") != std::string::npos);
  }
  {
    TempToml file("tick-hz = 500\n");  // same validation as the flag
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find("--tick-hz") != std::string::npos);
  }
  {
    TempToml file("map = \"a.map\"\ncity-seed = 2\n");
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find("exclude") != std::string::npos);
  }
}

TEST_CASE("server_config: --config naming a directory is an error naming the path") {
  const auto r = parse({"--config", "/tmp"});
  CHECK(is_error(r));
  CHECK(r.output.find("'/tmp'") != std::string::npos);
  CHECK(r.output.find("directory") != std::string::npos);
}

TEST_CASE("server_config: a config file over 1 MiB is refused naming the file and the limit, not read whole") {
  // Valid TOML of exactly the limit (a comment line), then one byte more.
  const std::size_t limit = swarmfield::server::kMaxConfigFileBytes;
  REQUIRE(limit == 1048576);
  const std::string at_limit = "tick-hz = 60\n#" + std::string(limit - 15, 'x') + "\n";
  REQUIRE(at_limit.size() == limit);
  TempToml fits(at_limit);
  const auto ok = parse({"--config", fits.path});
  INFO(ok.output);
  REQUIRE(!is_error(ok));
  CHECK(ok.config.tick_hz == 60);

  TempToml over(at_limit + "\n");
  const char* program[] = {"swarmfield-server"};
  const auto from_flag = parse({"--config", over.path});
  const auto from_environment = parse_server_config(1, program, {{"SWARMFIELD_CONFIG", over.path}});
  for (const ConfigParseResult* r : {&from_flag, &from_environment}) {
    CHECK(is_error(*r));
    CHECK(r->output == "error: config file '" + over.path + "' is larger than 1 MiB (1048576 bytes), the limit of a config file");
  }
  // A device that never ends, a FIFO whose open would wait for a writer: refused unread (before,
  // /dev/zero was read until memory ran out, then up to the limit; a FIFO hung the server).
  const auto zero = parse({"--config", "/dev/zero"});
  CHECK(is_error(zero));
  CHECK(zero.output == "error: config file '/dev/zero' is a character device, not a regular file");
  const std::string fifo = over.path + ".fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const auto from_fifo = parse({"--config", fifo});
  std::remove(fifo.c_str());
  CHECK(is_error(from_fifo));
  CHECK(from_fifo.output == "error: config file '" + fifo + "' is a FIFO, not a regular file");
  // The kinds reader (swarmfield-tool sim --kinds-from) has the same limit.
  std::vector<swarmfield::sim::AgentKind> kinds;
  CHECK(swarmfield::server::read_kinds_file(over.path, kinds).find("is larger than 1 MiB (1048576 bytes)") !=
        std::string::npos);
}

TEST_CASE("server_config: --record naming a folder, or a file in a missing folder, is refused before listening") {
  const auto dir = parse({"--record", "/tmp"});
  CHECK(is_error(dir));
  CHECK(dir.output.find("'/tmp' is a folder") != std::string::npos);
  const auto missing = parse({"--record", "/nonexistent-swarmfield-dir/run.sfr"});
  CHECK(is_error(missing));
  CHECK(missing.output.find("--record '/nonexistent-swarmfield-dir/run.sfr': the folder '/nonexistent-swarmfield-dir' does not exist") !=
        std::string::npos);
  CHECK_FALSE(is_error(parse({"--record", "run.sfr"})));  // a bare name: the working folder
  // An existing file is replaced only when it is an older recording (it was any file, the
  // server's own map included).
  TempToml map_file("type octile\nheight 1\nwidth 1\nmap\n.\n");
  const auto over_map = parse({"--record", map_file.path});
  CHECK(is_error(over_map));
  CHECK(over_map.output.find("is an existing file that is not a recording") != std::string::npos);
  TempToml old_recording(std::string("SWFRPLAY") + std::string(8, '\0'));
  CHECK_FALSE(is_error(parse({"--record", old_recording.path})));
  TempToml empty("");
  CHECK_FALSE(is_error(parse({"--record", empty.path})));
  // A device is not a file to record into (it was opened and written: /dev/full failed only once
  // the match ran, and a disk's device node would have been overwritten).
  for (const char* device : {"/dev/null", "/dev/full"}) {
    const auto r = parse({"--record", device});
    INFO(device << ": " << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("is a device or socket, not a file") != std::string::npos);
  }
}

TEST_CASE("server_config: --duration above 1e7 s is an error (the clock would overflow)") {
  CHECK(is_run(parse({"--duration", "10000000"})));
  for (const char* d : {"1e10", "10000001", "inf"}) {
    const auto r = parse({"--duration", d});
    INFO(d << ": " << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("--duration") != std::string::npos);
  }
  TempToml file("duration = 1e10\n");
  CHECK(is_error(parse({"--config", file.path})));
}

TEST_CASE("server_config: a TOML key given in both spellings is an error") {
  TempToml file("tick_hz = 30\ntick-hz = 60\n");
  const auto r = parse({"--config", file.path});
  CHECK(is_error(r));
  CHECK(r.output.find("tick-hz") != std::string::npos);
  CHECK(r.output.find("second time") != std::string::npos);
  // Also when the flag overrides both.
  CHECK(is_error(parse({"--config", file.path, "--tick-hz", "20"})));
}

TEST_CASE("server_config: TOML values are validated even when a flag overrides them") {
  {
    TempToml file("port = 70000\n");
    const auto r = parse({"--config", file.path, "--port", "7000"});
    CHECK(is_error(r));
    CHECK(r.output.find("--port") != std::string::npos);
    CHECK(r.output.find("70000") != std::string::npos);
    CHECK(r.output.find(file.path) != std::string::npos);
  }
  {
    TempToml file("port = \"x\"\n");  // wrong type, overridden
    CHECK(is_error(parse({"--config", file.path, "--port", "7000"})));
  }
  {
    TempToml file("log-format = \"yaml\"\n");
    CHECK(is_error(parse({"--config", file.path, "--log-format", "text"})));
  }
  {
    TempToml file("port = 7100\n");  // valid and overridden: the flag wins
    const auto r = parse({"--config", file.path, "--port", "7000"});
    REQUIRE(is_run(r));
    CHECK(r.config.port == 7000);
  }
}

TEST_CASE("server_config: --threads and --player-speed (flags and TOML keys)") {
  {
    const auto r = parse({});
    REQUIRE(is_run(r));
    CHECK(r.config.threads == 2);
    CHECK(r.config.player_speed == 5.0);
  }
  {
    const auto r = parse({"--threads", "1", "--player-speed", "40"});
    REQUIRE(is_run(r));
    CHECK(r.config.threads == 1);
    CHECK(r.config.player_speed == 40.0);
  }
  // The bounds themselves are accepted.
  CHECK(is_run(parse({"--threads", "64", "--player-speed", "100"})));
  CHECK(is_run(parse({"--player-speed", "0.25"})));
  {
    TempToml file("threads = 4\nplayer_speed = 12.5\n");
    const auto r = parse({"--config", file.path});
    REQUIRE(is_run(r));
    CHECK(r.config.threads == 4);
    CHECK(r.config.player_speed == 12.5);
  }
  {
    TempToml file("threads = 4\nplayer-speed = 12\n");  // an integer speed is a number too
    const auto r = parse({"--config", file.path, "--threads", "3", "--player-speed", "7"});
    REQUIRE(is_run(r));
    CHECK(r.config.threads == 3);  // the flags win
    CHECK(r.config.player_speed == 7.0);
  }
}

TEST_CASE("server_config: --far-step-levels (flag and TOML key), 1 by default, range checked") {
  {
    const auto r = parse({});
    REQUIRE(is_run(r));
    CHECK(r.config.far_step_levels == 1);
  }
  {
    const auto r = parse({"--far-step-levels", "2"});
    REQUIRE(is_run(r));
    CHECK(r.config.far_step_levels == 2);
    CHECK(swarmfield::server::world_params(r.config).swarm.far_step_levels == 2);
  }
  {
    TempToml file("far-step-levels = 2\n");
    const auto r = parse({"--config", file.path});
    REQUIRE(is_run(r));
    CHECK(r.config.far_step_levels == 2);
  }
  for (const char* bad : {"0", "3", "-1", "two", "1.5"}) {
    const auto r = parse({"--far-step-levels", bad});
    INFO("--far-step-levels " << bad << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("far-step-levels") != std::string::npos);
  }
}

TEST_CASE("server_config: bad --threads / --player-speed give one error line naming the flag") {
  struct Case {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{"--threads", "0"}, "--threads must be in 1..64 (got 0)"},
      {{"--threads", "65"}, "--threads must be in 1..64 (got 65)"},
      {{"--threads", "-1"}, "--threads"},
      {{"--threads", "two"}, "threads"},
      {{"--threads", "1.5"}, "threads"},
      {{"--player-speed", "0"}, "--player-speed must be in (0, 100] world units per second"},
      {{"--player-speed", "-5"}, "--player-speed"},
      {{"--player-speed", "100.5"}, "--player-speed"},
      {{"--player-speed", "inf"}, "--player-speed"},
      {{"--player-speed", "nan"}, "player-speed"},
      {{"--player-speed", "fast"}, "player-speed"},
  };
  for (const auto& c : cases) {
    const auto r = parse(c.args);
    INFO("args=" << c.args.front() << " " << c.args.back() << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(c.needle) != std::string::npos);
  }
  {
    TempToml file("threads = \"2\"\n");
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find("'threads' must be an integer (got string)") != std::string::npos);
  }
  {
    TempToml file("player-speed = \"5\"\n");
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find("'player-speed' must be a number of world units per second (got string)") != std::string::npos);
  }
  {
    TempToml file("threads = 100\n");  // same validation as the flag, even when a flag overrides it
    const auto r = parse({"--config", file.path, "--threads", "2"});
    CHECK(is_error(r));
    CHECK(r.output.find("--threads must be in 1..64 (got 100)") != std::string::npos);
    CHECK(r.output.find(file.path) != std::string::npos);
  }
  {
    TempToml file("player_speed = 0.0\n");
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find("--player-speed") != std::string::npos);
  }
}

TEST_CASE("server_config: --help lists --threads and --player-speed with their defaults") {
  const auto r = parse({"--help"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("--threads N=2") != std::string::npos);
  CHECK(r.output.find("--player-speed UNITS_PER_S=5") != std::string::npos);
}

TEST_CASE("server_config: --slow-tick-ms (testing aid) defaults to off, flag and TOML key, range checked") {
  CHECK(parse({}).config.slow_tick_ms == 0);
  {
    const auto r = parse({"--slow-tick-ms", "50"});
    REQUIRE(is_run(r));
    CHECK(r.config.slow_tick_ms == 50);
  }
  {
    TempToml file("slow_tick_ms = 20\n");
    const auto r = parse({"--config", file.path});
    REQUIRE(is_run(r));
    CHECK(r.config.slow_tick_ms == 20);
  }
  CHECK(is_run(parse({"--slow-tick-ms", "1000"})));
  for (const char* bad : {"-1", "1001", "fast"}) {
    const auto r = parse({"--slow-tick-ms", bad});
    INFO("value=" << bad << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("slow-tick-ms") != std::string::npos);
  }
}

TEST_CASE("server_config: an empty flag value is an error naming the flag, for every value flag") {
  // CLI11 alone turned "" into 0 (--agents, --field-budget, --slow-tick-ms, ...) or an empty path
  // (--map: silently the generated city).
  for (const char* flag : {"--map", "--city-seed", "--city-size", "--agents", "--max-agents", "--tick-hz",
                           "--snapshot-hz", "--port", "--bind", "--max-clients", "--send-queue-kb", "--duration",
                           "--seed", "--log-level", "--log-format", "--spawn-wave", "--wave-interval",
                           "--status-interval", "--field-budget", "--threads", "--player-speed", "--slow-tick-ms",
                           "--max-connections-per-address", "--hello-timeout", "--idle-timeout", "--frame-timeout",
                           "--ack-timeout", "--udp-receive-buffer-kb", "--field-mode", "--config"}) {
    const auto r = parse({flag, ""});
    INFO("flag=" << flag << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(std::string(flag) + ": value is empty") != std::string::npos);
  }
  {
    const auto r = parse({"--agents="});
    INFO(r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("--agents") != std::string::npos);
  }
}

TEST_CASE("server_config: floating-point flags must be finite numbers") {
  for (const char* flag : {"--duration", "--wave-interval", "--status-interval", "--player-speed"}) {
    for (const char* bad : {"nan", "NaN", "inf", "-inf", "infinity"}) {
      const auto r = parse({flag, bad});
      INFO("flag=" << flag << " value=" << bad << " output=" << r.output);
      CHECK(is_error(r));
      CHECK(r.output.find(std::string(flag) + ": must be a finite number") != std::string::npos);
    }
  }
  CHECK(is_run(parse({"--duration", "2.5", "--player-speed", "1e1"})));
}

TEST_CASE("server_config: integer flags are decimal and in range, as in the environment") {
  // CLI11 alone saturated 2^64 to 2^64-1 (the server ran with another seed than asked) and read
  // "010" as octal 8 while SWARMFIELD_AGENTS=010 and TOML gave 10.
  for (const char* flag : {"--seed", "--city-seed"}) {
    for (const char* big : {"18446744073709551616", "99999999999999999999999"}) {
      const auto r = parse({flag, big});
      INFO("flag=" << flag << " value=" << big << " output=" << r.output);
      CHECK(is_error(r));
      CHECK(r.output.find(std::string(flag) + ": is out of range") != std::string::npos);
    }
  }
  {
    const auto r = parse({"--field-budget", "99999999999999999999"});
    INFO(r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("--field-budget: is out of range") != std::string::npos);
  }
  for (const char* bad : {"010", "0x10", "+5", "1e3", " 5"}) {
    const auto r = parse({"--agents", bad});
    INFO("value='" << bad << "' output=" << r.output);
    if (std::string_view(bad) == "010") {
      // Leading zeros are decimal, as in the environment.
      REQUIRE(is_run(r));
      CHECK(r.config.agents == 10);
    } else {
      CHECK(is_error(r));
      CHECK(r.output.find("--agents: must be a decimal integer") != std::string::npos);
    }
  }
  const auto r = parse({"--field-budget", "-1", "--seed", "18446744073709551615"});
  REQUIRE(is_run(r));
  CHECK(r.config.field_budget == -1);
  CHECK(r.config.seed == 18446744073709551615ull);
}

TEST_CASE("server_config: the auto field budget follows the map size, and hierarchical mode always gets one") {
  using swarmfield::server::resolve_field_budget;
  const std::size_t small = 256 * 256, big = 1024 * 1024;
  auto config = parse({});
  REQUIRE(is_run(config));
  CHECK(resolve_field_budget(config.config, small) == 0);
  CHECK(resolve_field_budget(config.config, big) == 200000);
  // Forced hierarchical on a small map: sector fields a few a tick, not all on each goal change.
  config = parse({"--field-mode", "hierarchical"});
  REQUIRE(is_run(config));
  CHECK(resolve_field_budget(config.config, small) == 200000);
  config = parse({"--field-mode", "hierarchical", "--field-budget", "0"});
  REQUIRE(is_run(config));
  CHECK(resolve_field_budget(config.config, small) == 0);  // what was asked for
}

TEST_CASE("server_config: negative seeds are an error, not a wrap to 2^64-1") {
  for (const char* flag : {"--seed", "--city-seed"}) {
    const auto r = parse({flag, "-1"});
    INFO("flag=" << flag << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(std::string(flag) + ": must not be negative") != std::string::npos);
  }
  const auto r = parse({"--seed", "18446744073709551615", "--city-seed", "0"});
  REQUIRE(is_run(r));
  CHECK(r.config.seed == 18446744073709551615ull);
  CHECK(r.config.city_seed == 0);
}

TEST_CASE("server_config: --field-budget 1..9999 is refused with what the values mean") {
  for (const char* ok : {"-1", "0", "10000", "200000"}) {
    INFO("value=" << ok);
    CHECK(is_run(parse({"--field-budget", ok})));
  }
  for (const char* bad : {"1", "500", "9999"}) {
    const auto r = parse({"--field-budget", bad});
    INFO("value=" << bad << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("--field-budget must be -1 (auto), 0 (whole rebuild in one tick) or >= 10000") !=
          std::string::npos);
    CHECK(r.output.find(std::string("(got ") + bad + ")") != std::string::npos);
  }
  TempToml file("field-budget = 100\n");
  const auto r = parse({"--config", file.path});
  INFO(r.output);
  CHECK(is_error(r));
  CHECK(r.output.find(">= 10000") != std::string::npos);
}

TEST_CASE("server_config: connection-security settings are range-checked, in flags and TOML") {
  const auto defaults = parse({});
  REQUIRE(is_run(defaults));
  CHECK(defaults.config.max_connections_per_address == 16);
  CHECK(defaults.config.idle_timeout_s == 15.0);
  CHECK(defaults.config.frame_timeout_s == 5.0);
  CHECK(defaults.config.hello_timeout_s == 3.0);
  CHECK(defaults.config.ack_timeout_s == 3.0);
  CHECK(defaults.config.udp_receive_buffer_kb == 8192);
  const auto ok = parse({"--max-connections-per-address", "1", "--idle-timeout", "3600", "--frame-timeout", "0.1",
                         "--hello-timeout", "600", "--ack-timeout", "0.5", "--udp-receive-buffer-kb", "64"});
  REQUIRE(is_run(ok));
  CHECK(ok.config.max_connections_per_address == 1);
  CHECK(ok.config.frame_timeout_s == 0.1);
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"--max-connections-per-address", "0"}, {"--max-connections-per-address", "65536"},
      {"--idle-timeout", "0.5"},              {"--idle-timeout", "1e10"},
      {"--frame-timeout", "0"},               {"--frame-timeout", "601"},
      {"--hello-timeout", "0.01"},            {"--ack-timeout", "1e300"},
      {"--udp-receive-buffer-kb", "63"},      {"--udp-receive-buffer-kb", "1048577"},
      {"--status-interval", "1e10"},          {"--status-interval", "0.01"},
      {"--bind", "localhost"},                {"--bind", "1.2.3"},
      {"--shutdown-when-empty", "-1"},        {"--shutdown-when-empty", "86401"},
      {"--record-max-mb", "-1"},              {"--record-max-mb", "1048577"}};
  CHECK(defaults.config.shutdown_when_empty_s == 0.0);  // never
  CHECK(parse({"--shutdown-when-empty", "30"}).config.shutdown_when_empty_s == 30.0);
  CHECK(defaults.config.record_max_mb == 1024.0);  // a recording stops at 1 GiB
  CHECK(parse({"--record-max-mb", "0"}).config.record_max_mb == 0.0);  // no limit
  CHECK(parse({"--record-max-mb", "0.5"}).config.record_max_mb == 0.5);
  // The refusal quotes the value as given (it read "got 1.04858e+06").
  CHECK(parse({"--record-max-mb", "1048577"}).output.find("(got 1048577;") != std::string::npos);
  for (const auto& [flag, value] : bad) {
    const auto r = parse({flag, value});
    INFO("flag=" << flag << " value=" << value << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(flag) != std::string::npos);
  }
  for (const char* flag : {"--idle-timeout", "--frame-timeout", "--hello-timeout", "--ack-timeout"}) {
    const auto r = parse({flag, "nan"});
    INFO("flag=" << flag << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(std::string(flag) + ": must be a finite number") != std::string::npos);
  }
  TempToml file("idle-timeout = 2\nmax_connections_per_address = 3\nudp-receive-buffer-kb = 128\n");
  const auto from_file = parse({"--config", file.path});
  INFO(from_file.output);
  REQUIRE(is_run(from_file));
  CHECK(from_file.config.idle_timeout_s == 2.0);
  CHECK(from_file.config.max_connections_per_address == 3);
  CHECK(from_file.config.udp_receive_buffer_kb == 128);
  TempToml bad_file("ack-timeout = 0\n");
  CHECK(is_error(parse({"--config", bad_file.path})));
}

TEST_CASE("server_config: non-ASCII outside strings and comments is refused before toml++ sees it") {
  // Found by fuzz_config: toml++ 3.3 reaches __builtin_unreachable() on most characters in
  // U+00A1..U+0499 where whitespace may appear (here a 'ŵ' in a key).
  TempToml crash("\nst =  \"12A.0.0.1\"\nl\xC5\xB5og-format = -\"json\"\n");
  const auto r = parse({"--config", crash.path});
  INFO(r.output);
  CHECK(is_error(r));
  CHECK(r.output.find(":3: a non-ASCII character outside a string or comment") != std::string::npos);
  // In strings (every kind) and comments it is fine.
  TempToml ok("# caf\xC3\xA9\nmap = \"caf\xC3\xA9.map\"\n"
              "log-level = 'info' # \xC5\xB5\n"
              "log-format = \"\"\"text\"\"\"\n");
  const auto accepted = parse({"--config", ok.path});
  INFO(accepted.output);
  REQUIRE(is_run(accepted));
  CHECK(accepted.config.map_path == "caf\xC3\xA9.map");
}

TEST_CASE("server_config: a table or key name of very many dotted parts is refused, not parsed (toml++ recursed until the stack ran out)") {
  // Found by a fresh-user trial: a 300 KB header [x.x.x...] of 150,000 parts crashed the server.
  std::string parts = "x";
  for (int i = 0; i < 150000; ++i) parts += ".x";
  for (const std::string& text : {"[" + parts + "]\n", "[[" + parts + "]]\n", "log-level = 'info'\n" + parts + " = 1\n"}) {
    TempToml deep(text);
    const auto r = parse({"--config", deep.path});
    INFO(r.output.substr(0, 200));
    CHECK(is_error(r));
    CHECK(r.output.find("a key or table name of more than 64 dotted parts") != std::string::npos);
  }
  // 64 parts pass the check (toml++ reads them); dots in strings, comments and numbers do not count.
  std::string sixty_four = "a";
  for (int i = 1; i < 64; ++i) sixty_four += ".a";
  CHECK(swarmfield::server::deep_key_path("[" + sixty_four + "]\n", swarmfield::server::kMaxKeyPathParts) == 0);
  CHECK(swarmfield::server::deep_key_path("[" + sixty_four + ".a]\n", swarmfield::server::kMaxKeyPathParts) == 1);
  std::string many_dots(200, '.');
  TempToml ok("# " + many_dots + "\nmap = \"" + many_dots + "map\"\nlog-level = 'info'\n");
  const auto accepted = parse({"--config", ok.path});
  INFO(accepted.output);
  CHECK(is_run(accepted));
  std::string floats = "v = [\n";
  for (int i = 0; i < 200; ++i) floats += "1.5, ";
  floats += "\n]\n";
  CHECK(swarmfield::server::deep_key_path(floats, swarmfield::server::kMaxKeyPathParts) == 0);
}

// ---- environment variables and --print-config --------------------------------------------------
namespace {

ConfigParseResult parse_env(std::vector<std::string> args, const swarmfield::server::Environment& env) {
  args.insert(args.begin(), "swarmfield-server");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return swarmfield::server::parse_server_config(static_cast<int>(argv.size()), argv.data(), env);
}

}  // namespace

TEST_CASE("server_config: flag > environment > file > default, per setting") {
  TempToml file("tick-hz = 60\nagents = 10\nsnapshot-hz = 15\nport = 7100\n");
  const auto r = parse_env({"--config", file.path, "--agents", "77"},
                           {{"SWARMFIELD_AGENTS", "55"}, {"SWARMFIELD_PORT", "7200"}, {"SWARMFIELD_LOG_FORMAT", "json"}});
  REQUIRE(is_run(r));
  CHECK(r.config.agents == 77);     // flag over environment and file
  CHECK(r.config.port == 7200);     // environment over file
  CHECK(r.config.tick_hz == 60);    // file over default
  CHECK(r.config.snapshot_hz == 15);
  CHECK(r.config.max_clients == 64);  // default
  CHECK(r.config.log_format == LogFormat::kJson);
}

TEST_CASE("server_config: every setting can come from the environment") {
  const auto r = parse_env({}, {{"SWARMFIELD_TICK_HZ", "60"},
                                {"SWARMFIELD_SEED", "18446744073709551615"},
                                {"SWARMFIELD_PLAYER_SPEED", "7.5"},
                                {"SWARMFIELD_BIND", "127.0.0.1"},
                                {"SWARMFIELD_MAP", "some.map"},
                                {"SWARMFIELD_IDLE_TIMEOUT", "20"},
                                {"SWARMFIELD_CONFIG_UNRELATED_IS_NOT_OK", "1"}});
  CHECK(is_error(r));  // an unknown SWARMFIELD_ variable
  CHECK(r.output.find("SWARMFIELD_CONFIG_UNRELATED_IS_NOT_OK") != std::string::npos);
  const auto ok = parse_env({}, {{"SWARMFIELD_TICK_HZ", "60"},
                                 {"SWARMFIELD_SEED", "18446744073709551615"},
                                 {"SWARMFIELD_PLAYER_SPEED", "7.5"},
                                 {"SWARMFIELD_BIND", "127.0.0.1"},
                                 {"SWARMFIELD_MAP", "some.map"},
                                 {"SWARMFIELD_IDLE_TIMEOUT", "20"},
                                 {"SWARMFIELD_TEST_VERBOSE", "1"},  // the test scripts' own: ignored
                                 {"SWARMFIELD_REQUIRE_ALL", "1"},   // CI's, for the tests: ignored
                                 {"SWARMFIELD_CALLER_PWD", "/tmp"}});
  REQUIRE(is_run(ok));
  CHECK(ok.config.tick_hz == 60);
  CHECK(ok.config.seed == 18446744073709551615ull);
  CHECK(ok.config.player_speed == 7.5);
  CHECK(ok.config.bind == "127.0.0.1");
  CHECK(ok.config.map_path == "some.map");
  CHECK(ok.config.idle_timeout_s == 20.0);
}

TEST_CASE("server_config: bad environment values are errors naming the variable") {
  struct Case {
    std::string name, value, needle;
  };
  const std::vector<Case> cases = {
      {"SWARMFIELD_TICK_HZ", "fast", "SWARMFIELD_TICK_HZ: must be an integer (got 'fast')"},
      {"SWARMFIELD_TICK_HZ", "", "SWARMFIELD_TICK_HZ: value is empty"},
      {"SWARMFIELD_TICK_HZ", "30x", "SWARMFIELD_TICK_HZ: must be an integer"},
      {"SWARMFIELD_SEED", "-1", "SWARMFIELD_SEED: must not be negative"},
      {"SWARMFIELD_DURATION", "nan", "SWARMFIELD_DURATION: must be a finite number"},
      {"SWARMFIELD_DURATION", "1s", "SWARMFIELD_DURATION: must be a number of seconds"},
      {"SWARMFIELD_LOG_FORMAT", "xml", "SWARMFIELD_LOG_FORMAT: must be text or json"},
      {"SWARMFIELD_TICK_HZ", "500", "--tick-hz must be in 1..240 (got 500) (set by environment SWARMFIELD_TICK_HZ)"},
      {"SWARMFIELD_TICKHZ", "30", "SWARMFIELD_TICKHZ is not a server setting"},
  };
  for (const auto& c : cases) {
    const auto r = parse_env({}, {{c.name, c.value}});
    INFO(c.name << "=" << c.value << " -> " << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(c.needle) != std::string::npos);
  }
  // Valid without the flags, like the file: a flag does not excuse a bad environment value.
  const auto r = parse_env({"--tick-hz", "30"}, {{"SWARMFIELD_TICK_HZ", "500"}});
  CHECK(is_error(r));
  CHECK(r.output.find("SWARMFIELD_TICK_HZ") != std::string::npos);
  // Both map sources in the environment.
  CHECK(is_error(parse_env({}, {{"SWARMFIELD_MAP", "a.map"}, {"SWARMFIELD_CITY_SEED", "2"}})));
}

TEST_CASE("server_config: a hexadecimal value is refused for every number setting (flags, environment), as for integers") {
  // Before: strtod (CLI11's conversion, and the environment's) read "0x10" as 16, so
  // --record-max-mb 0x10 ran with a 16 MiB limit while --agents 0x10 was refused.
  struct Case {
    std::string flag, variable, value, needle;
  };
  const std::vector<Case> cases = {
      {"--record-max-mb", "SWARMFIELD_RECORD_MAX_MB", "0x10", "--record-max-mb: must be a decimal number (got 0x10)"},
      {"--duration", "SWARMFIELD_DURATION", "0x1p4", "--duration: must be a decimal number (got 0x1p4)"},
      {"--player-speed", "SWARMFIELD_PLAYER_SPEED", "0X5", "--player-speed: must be a decimal number (got 0X5)"},
      {"--agents", "SWARMFIELD_AGENTS", "0x10", "--agents: must be a decimal integer (got 0x10)"},
  };
  for (const auto& c : cases) {
    const auto r = parse({c.flag, c.value});
    INFO(c.flag << " " << c.value << " -> " << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(c.needle) != std::string::npos);
    const auto e = parse_env({}, {{c.variable, c.value}});
    INFO(c.variable << "=" << c.value << " -> " << e.output);
    CHECK(is_error(e));
    CHECK(e.output.find(c.variable + ": must be a") != std::string::npos);
    CHECK(e.output.find("(got '" + c.value + "')") != std::string::npos);
  }
  // Decimal forms stay accepted: a sign, a fraction, an exponent.
  CHECK(parse({"--record-max-mb", "1.5e1"}).config.record_max_mb == 15.0);
  CHECK(parse({"--record-max-mb", ".5"}).config.record_max_mb == 0.5);
  CHECK(parse_env({}, {{"SWARMFIELD_RECORD_MAX_MB", "2E1"}}).config.record_max_mb == 20.0);
  // TOML writes hexadecimal integers natively (record-max-mb = 0x10 is the integer 16): left as TOML has it.
  TempToml file("record-max-mb = 0x10\nagents = 0x20\n");
  const auto t = parse({"--config", file.path});
  INFO(t.output);
  REQUIRE(is_run(t));
  CHECK(t.config.record_max_mb == 16.0);
  CHECK(t.config.agents == 32);
}

TEST_CASE("server_config: --record-max-mb without --record is warned about, naming both and where the limit was set") {
  // Before: accepted without a word, the limit of a recording that is never made. A warning, not
  // a refusal: a config file shared by servers that record and servers that do not may set it.
  const auto flag = parse_env({"--record-max-mb", "16"}, {});
  REQUIRE(is_run(flag));
  REQUIRE(flag.warnings.size() == 1);
  CHECK(flag.warnings[0] ==
        "--record-max-mb 16 (set by flag --record-max-mb) has no effect without --record: nothing is recorded");
  const auto env = parse_env({}, {{"SWARMFIELD_RECORD_MAX_MB", "0.5"}});
  REQUIRE(is_run(env));
  REQUIRE(env.warnings.size() == 1);
  CHECK(env.warnings[0] == "--record-max-mb 0.5 (set by environment SWARMFIELD_RECORD_MAX_MB) has no effect without "
                           "--record: nothing is recorded");
  TempToml file("record-max-mb = 64\n");
  const auto toml = parse_env({"--config", file.path}, {});
  REQUIRE(is_run(toml));
  REQUIRE(toml.warnings.size() == 1);
  CHECK(toml.warnings[0] ==
        "--record-max-mb 64 (set by file " + file.path + ") has no effect without --record: nothing is recorded");
  // With --record, or left at its default: nothing to say.
  const auto recorded = parse_env({"--record", "/tmp/swarmfield-config-test-no-such.rpl", "--config", file.path}, {});
  REQUIRE(is_run(recorded));
  CHECK(recorded.warnings.empty());
  CHECK(parse_env({}, {}).warnings.empty());
}

TEST_CASE("server_config: a merged value that fails validation names where it came from") {
  TempToml file("max-agents = 5000\n");
  const auto r = parse_env({"--config", file.path, "--agents", "6000"}, {});
  CHECK(is_error(r));
  CHECK(r.output.find("--agents must be in 0..5000 (got 6000)") != std::string::npos);
  CHECK(r.output.find("(set by flag --agents)") != std::string::npos);
}

TEST_CASE("server_config: a SWARMFIELD_CONFIG naming a directory is reported as SWARMFIELD_CONFIG") {
  const auto r = parse_env({}, {{"SWARMFIELD_CONFIG", "/tmp"}});
  CHECK(is_error(r));
  CHECK(r.output.find("SWARMFIELD_CONFIG '/tmp' is a directory") != std::string::npos);
}

TEST_CASE("server_config: SWARMFIELD_CONFIG names the file; --config wins; the map source comes whole from one source") {
  TempToml file("city-seed = 5\ntick-hz = 50\n");
  TempToml other("tick-hz = 40\n");
  const auto r = parse_env({}, {{"SWARMFIELD_CONFIG", file.path}});
  REQUIRE(is_run(r));
  CHECK(r.config.tick_hz == 50);
  CHECK(r.config.city_seed == 5);
  CHECK(r.config.config_path == file.path);
  const auto flag = parse_env({"--config", other.path}, {{"SWARMFIELD_CONFIG", file.path}});
  REQUIRE(is_run(flag));
  CHECK(flag.config.tick_hz == 40);
  // The environment's map replaces the file's city (not an error: the higher source decides).
  const auto map = parse_env({}, {{"SWARMFIELD_CONFIG", file.path}, {"SWARMFIELD_MAP", "x.map"}});
  REQUIRE(is_run(map));
  CHECK(map.config.map_path == "x.map");
  CHECK(map.config.city_seed == 1);
}

TEST_CASE("server_config: Kubernetes service-link variables are skipped with a warning, not refused") {
  // What the kubelet injects for Services named swarmfield (ports game 7777/TCP and UDP) and
  // swarmfield-http (8080), unless the pod sets enableServiceLinks: false.
  const std::vector<std::pair<std::string, std::string>> links = {
      {"SWARMFIELD_SERVICE_HOST", "10.0.0.11"},
      {"SWARMFIELD_SERVICE_PORT", "7777"},
      {"SWARMFIELD_SERVICE_PORT_GAME_TCP", "7777"},
      {"SWARMFIELD_PORT", "tcp://10.0.0.11:7777"},
      {"SWARMFIELD_PORT_7777_TCP", "tcp://10.0.0.11:7777"},
      {"SWARMFIELD_PORT_7777_TCP_PROTO", "tcp"},
      {"SWARMFIELD_PORT_7777_TCP_PORT", "7777"},
      {"SWARMFIELD_PORT_7777_TCP_ADDR", "10.0.0.11"},
      {"SWARMFIELD_PORT_7777_UDP", "udp://10.0.0.11:7777"},
      {"SWARMFIELD_PORT_7777_UDP_ADDR", "10.0.0.11"},
      {"SWARMFIELD_HTTP_SERVICE_HOST", "10.0.0.12"},
      {"SWARMFIELD_HTTP_PORT", "tcp://10.0.0.12:8080"},
      {"SWARMFIELD_HTTP_PORT_8080_TCP_PORT", "8080"},
  };
  std::vector<std::pair<std::string, std::string>> environment = links;
  environment.emplace_back("SWARMFIELD_AGENTS", "55");
  const auto r = parse_env({}, environment);
  INFO(r.output);
  REQUIRE(is_run(r));
  CHECK(r.config.agents == 55);       // the real settings still apply
  CHECK(r.config.port == 7777);       // the default, not the link's URL
  CHECK(r.config.http_port == parse({}).config.http_port);  // likewise
  REQUIRE(r.warnings.size() == links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    CHECK(swarmfield::server::is_service_link_variable(links[i].first, links[i].second));
  }
  bool named = false;
  for (const std::string& w : r.warnings) named = named || w.find("SWARMFIELD_PORT_7777_TCP_ADDR") != std::string::npos;
  CHECK(named);
  CHECK(r.warnings.front().find("enableServiceLinks: false") != std::string::npos);

  // A setting's own variable is still a setting, and its errors are still errors.
  const auto port = parse_env({}, {{"SWARMFIELD_PORT", "7300"}, {"SWARMFIELD_HTTP_PORT", "7301"}});
  REQUIRE(is_run(port));
  CHECK(port.config.port == 7300);
  CHECK(port.config.http_port == 7301);
  CHECK(port.warnings.empty());
  CHECK(is_error(parse_env({}, {{"SWARMFIELD_PORT", "http://x:1"}})));  // not a service link's scheme
  CHECK(is_error(parse_env({}, {{"SWARMFIELD_PORTS", "7777"}})));
  CHECK(is_error(parse_env({}, {{"SWARMFIELD_PORT_77777777_TCP", "x"}})));  // no port number has 8 digits
  CHECK(is_error(parse_env({}, {{"SWARMFIELD_PORT_7777_TCPX", "x"}})));
  // No setting's variable with a number looks like a link.
  const auto listing = parse({"--print-config"});
  REQUIRE(listing.action == ConfigParseResult::Action::kExit);
  std::size_t keys = 0;
  for (std::size_t at = 0; at < listing.output.size();) {
    const std::size_t eol = listing.output.find('\n', at);
    const std::string line = listing.output.substr(at, eol - at);
    at = eol == std::string::npos ? listing.output.size() : eol + 1;
    const std::size_t eq = line.find(" = ");
    if (line.empty() || line[0] == '#' || line[0] == '[' || eq == std::string::npos) continue;
    std::string name = "SWARMFIELD_";
    for (const char ch : line.substr(0, eq)) name += ch == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    CHECK_MESSAGE(!swarmfield::server::is_service_link_variable(name, "7"), name);
    ++keys;
  }
  CHECK(keys > 20);
}

TEST_CASE("server_config: --print-config lists every value with its source and reads back as TOML") {
  TempToml file("tick-hz = 60\nsnapshot-hz = 15\nplayer-speed = 0.1\nbind = \"127.0.0.1\"\n");
  const auto r = parse_env({"--config", file.path, "--agents", "77", "--print-config"},
                           {{"SWARMFIELD_PORT", "7200"}, {"SWARMFIELD_SEED", "18446744073709551615"}});
  REQUIRE(r.action == ConfigParseResult::Action::kExit);
  CHECK(r.exit_code == 0);
  INFO(r.output);
  CHECK(r.output.find("agents = 77  # flag --agents\n") != std::string::npos);
  CHECK(r.output.find("port = 7200  # environment SWARMFIELD_PORT\n") != std::string::npos);
  CHECK(r.output.find("tick-hz = 60  # file " + file.path + "\n") != std::string::npos);
  CHECK(r.output.find("max-clients = 64  # default\n") != std::string::npos);
  CHECK(r.output.find("seed = \"18446744073709551615\"") != std::string::npos);
  CHECK(r.output.find("# config file: " + file.path + " (flag --config)") != std::string::npos);
  // The listing is a valid config file that gives the same settings.
  const auto back = swarmfield::server::parse_config_toml(r.output, "printed");
  REQUIRE(is_run(back));
  CHECK(back.config.agents == 77);
  CHECK(back.config.port == 7200);
  CHECK(back.config.tick_hz == 60);
  CHECK(back.config.player_speed == 0.1);  // shortest round trip, exact
  CHECK(back.config.seed == 18446744073709551615ull);
  CHECK(back.config.bind == "127.0.0.1");
  CHECK(swarmfield::server::config_to_toml(back.config) ==
        swarmfield::server::config_to_toml(parse_env({"--config", file.path, "--agents", "77"},
                                                     {{"SWARMFIELD_PORT", "7200"}, {"SWARMFIELD_SEED", "18446744073709551615"}})
                                               .config));
}

TEST_CASE("server_config: parse_config_toml refuses unknown keys and bad values by name") {
  CHECK(is_error(swarmfield::server::parse_config_toml("tickrate = 3\n", "stored")));
  const auto r = swarmfield::server::parse_config_toml("agents = -3\n", "stored");
  CHECK(is_error(r));
  CHECK(r.output.find("--agents") != std::string::npos);
}

TEST_CASE("server_config: enemy kinds default to runner, walker, brute and come from [[kinds]] tables") {
  const auto defaults = parse({});
  REQUIRE(is_run(defaults));
  REQUIRE(defaults.config.kinds.size() == 3);
  CHECK(defaults.config.kinds[0].name == "runner");
  CHECK(defaults.config.kinds[2].name == "brute");

  TempToml file(
      "agents = 10\n"
      "[[kinds]]\n"
      "name = \"imp\"\n"
      "radius = 0.25\n"
      "speed = 5\n"
      "separation_weight = 0.5\n"
      "turn-rate = 10.0\n"
      "colour = \"#ff8000\"\n"
      "weight = 2\n"
      "[[kinds]]\n"
      "name = \"ogre\"\n"
      "radius = 1.5\n");
  const auto r = parse({"--config", file.path});
  REQUIRE(is_run(r));
  const auto& kinds = r.config.kinds;
  REQUIRE(kinds.size() == 2);
  CHECK(kinds[0].name == "imp");
  CHECK(kinds[0].radius == 0.25f);
  CHECK(kinds[0].max_speed == 5.0f);
  CHECK(kinds[0].separation_weight == 0.5f);
  CHECK(kinds[0].max_turn_rate == 10.0f);
  CHECK(kinds[0].colour == 0xFF8000u);
  CHECK(kinds[0].spawn_weight == 2.0f);
  CHECK(kinds[1].name == "ogre");
  CHECK(kinds[1].radius == 1.5f);
  const swarmfield::sim::AgentKind walker;
  CHECK(kinds[1].max_speed == walker.max_speed);  // missing keys: the walker's values
  CHECK(kinds[1].spawn_weight == walker.spawn_weight);
  CHECK(r.config.agents == 10);
}

TEST_CASE("server_config: bad [[kinds]] tables are one error line naming the kind and the key") {
  auto error_of = [](const std::string& text) {
    TempToml file(text);
    const auto r = parse({"--config", file.path});
    CHECK(is_error(r));
    CHECK(r.output.find(file.path) != std::string::npos);
    return r.output;
  };
  auto has = [](const std::string& text, const std::string& part) {
    INFO(text);
    return text.find(part) != std::string::npos;
  };
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nsped = 3\n"), "kinds[0]: unknown key 'sped'"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\n[[kinds]]\nname = \"b\"\nradius = 2.5\n"),
            "kinds[1] 'b': radius 2.5 is outside 0.2..2 cells"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nradius = 0.1\n"), "radius 0.1"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nweight = 0\n"), "kinds[0]: key 'weight' must be > 0 (got 0)"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nweight = -1.5\n"), "key 'weight' must be > 0"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\n[[kinds]]\nname = \"a\"\n"), "kinds[1] 'a': name is used twice"));
  CHECK(has(error_of("[[kinds]]\nradius = 0.5\n"), "kinds[0]: has no 'name'"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nspeed = \"fast\"\n"), "kinds[0]: key 'speed' must be a number"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\ncolour = \"red\"\n"), "key 'colour' must be a colour string"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nturn_rate = 1\nturn-rate = 2\n"), "a second time"));
  CHECK(has(error_of("kinds = 3\n"), "key 'kinds' must be an array of tables"));
  CHECK(has(error_of("kinds = []\n"), "key 'kinds' needs at least one [[kinds]] section (got an empty array"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nspeed = 0\n"), "kinds[0] 'a': speed 0"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nhealth = 0\n"), "kinds[0] 'a': health 0 must be in (0, 1e+06]"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\ndamage = -1\n"), "kinds[0] 'a': damage -1"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nattack-range = 5\n"), "kinds[0] 'a': attack_range 5 is outside 0..4 cells"));
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nhealth = \"lots\"\n"), "kinds[0]: key 'health' must be a number"));
  // Past a float's range: the value the file gives, not "inf" (it said "speed inf must be in (0, 100]").
  CHECK(has(error_of("[[kinds]]\nname = \"a\"\nspeed = 1e300\n"), "kinds[0]: key 'speed' is too large (got 1e+300)"));
}

TEST_CASE("server_config: combat is on by default; --no-combat, the combat keys, their ranges") {
  {
    const auto r = parse({});
    REQUIRE(is_run(r));
    CHECK(r.config.combat);
    CHECK(r.config.player_health == 100.0);
    CHECK(r.config.respawn_time_s == 3.0);
    CHECK(r.config.fire_range == 10.0);
    CHECK(r.config.fire_cone_deg == 15.0);
    CHECK(r.config.fire_damage == 20.0);
    CHECK(r.config.fire_interval_s == 0.25);
    CHECK(r.config.max_hits_per_shot == 3);
    CHECK(r.config.barricade_health == 300.0);
    CHECK(r.config.build_range == 4.0);
    CHECK(r.config.barricades_per_player == 8);
    CHECK(r.config.barricade_attackers == 4.0);
    const swarmfield::sim::WorldParams p = swarmfield::server::world_params(r.config);
    CHECK(p.combat.enabled);
    CHECK(p.combat.fire_cone == doctest::Approx(15.0 * 3.14159265358979 / 180.0));
    CHECK(swarmfield::sim::check_combat_params(p.combat).empty());
  }
  CHECK_FALSE(parse({"--no-combat"}).config.combat);
  CHECK_FALSE(parse({"--combat=false"}).config.combat);
  {
    const auto r = parse({"--player-health", "250", "--respawn-time", "0", "--fire-range", "30", "--fire-cone", "90",
                          "--fire-damage", "0", "--fire-interval", "0.05", "--max-hits-per-shot", "64"});
    REQUIRE(is_run(r));
    CHECK(r.config.player_health == 250.0);
    CHECK(r.config.respawn_time_s == 0.0);
    CHECK(r.config.max_hits_per_shot == 64);
    CHECK(swarmfield::sim::check_combat_params(swarmfield::server::world_params(r.config).combat).empty());
  }
  {
    const auto r = parse({"--barricade-health", "1e6", "--build-range", "256", "--barricades-per-player", "0",
                          "--barricade-attackers", "1"});
    REQUIRE(is_run(r));
    const swarmfield::sim::WorldParams p = swarmfield::server::world_params(r.config);
    CHECK(p.combat.barricade.health == 1.0e6f);
    CHECK(p.combat.barricade.build_range == 256.0f);
    CHECK(p.combat.barricade.per_player == 0);
    CHECK(p.combat.barricade.attackers == 1.0f);
    CHECK(swarmfield::sim::check_combat_params(p.combat).empty());
  }
  {
    TempToml file("combat = false\nplayer-health = 50\nfire_interval = 1\n[[kinds]]\nname = \"z\"\nhealth = 7\ndamage = 2.5\nattack-range = 0.5\n");
    const auto r = parse({"--config", file.path});
    REQUIRE_MESSAGE(is_run(r), r.output);
    CHECK_FALSE(r.config.combat);
    CHECK(r.config.player_health == 50.0);
    CHECK(r.config.fire_interval_s == 1.0);
    REQUIRE(r.config.kinds.size() == 1);
    CHECK(r.config.kinds[0].health == 7.0f);
    CHECK(r.config.kinds[0].damage == 2.5f);
    CHECK(r.config.kinds[0].attack_range == 0.5f);
    // Stored settings (replays) carry them back.
    const auto back = swarmfield::server::parse_config_toml(swarmfield::server::config_to_toml(r.config), "stored");
    REQUIRE_MESSAGE(is_run(back), back.output);
    CHECK(back.config.kinds == r.config.kinds);
    CHECK_FALSE(back.config.combat);
    CHECK(back.config.player_health == 50.0);
  }
  struct Case {
    std::vector<std::string> args;
    std::string needle;
  };
  for (const Case& c : std::vector<Case>{
           {{"--player-health", "0"}, "--player-health must be in (0, 1e+06] hit points (got 0)"},
           {{"--respawn-time", "-1"}, "--respawn-time must be in 0..1e+06 seconds"},
           {{"--fire-range", "0"}, "--fire-range must be in (0, 256] world units"},
           {{"--fire-range", "300"}, "--fire-range"},
           {{"--fire-cone", "91"}, "--fire-cone must be in 0..90 degrees"},
           {{"--fire-damage", "-2"}, "--fire-damage"},
           {{"--fire-interval", "0"}, "--fire-interval must be in (0, 1e+06] seconds"},
           {{"--max-hits-per-shot", "0"}, "--max-hits-per-shot"},
           {{"--max-hits-per-shot", "65"}, "--max-hits-per-shot"},
           {{"--fire-range", "nan"}, "--fire-range"},
           {{"--fire-interval", "1e-300"}, "--fire-interval"},  // > 0, but 0 as the float the sim holds
           {{"--player-health", "1e-300"}, "--player-health"},
           {{"--barricade-health", "0"}, "--barricade-health must be in (0, 1e+06] hit points"},
           {{"--build-range", "0"}, "--build-range must be in (0, 256] world units"},
           {{"--barricades-per-player", "1025"}, "--barricades-per-player"},
           {{"--barricades-per-player", "-1"}, "--barricades-per-player"},
           {{"--barricade-attackers", "0.5"}, "--barricade-attackers must be in 1..1024 agents"},
       }) {
    const auto r = parse(c.args);
    CHECK_MESSAGE(is_error(r), r.output);
    CHECK_MESSAGE(r.output.find(c.needle) != std::string::npos, r.output);
  }
}

TEST_CASE("server_config: [[waves]] and [zones] are read, resolved against the kinds, refused with the wave named, stored") {
  TempToml file(
      "[zones]\nnorth = [0, 0, 63, 4]\n\n"
      "[[waves]]\nname = \"first\"\nstart = 2\nkinds = { walker = 30, brute = 2 }\nzone = \"north\"\nduration = 5\n\n"
      "[[waves]]\ntrigger = \"cleared\"\nstart = 1.5\nkinds = { runner = 10 }\nzone = [10, 10, 20, 20]\nrepeat = 3\n"
      "every = 20\ngrowth = 1.5\n");
  const auto r = parse({"--config", file.path});
  REQUIRE_MESSAGE(is_run(r), r.output);
  REQUIRE(r.config.waves.size() == 2);
  CHECK(r.config.zones.at("north") == std::array<std::int64_t, 4>{0, 0, 63, 4});
  std::vector<swarmfield::sim::WaveSpec> waves;
  REQUIRE(swarmfield::server::resolve_waves(r.config, waves).empty());
  REQUIRE(waves.size() == 2);
  CHECK(waves[0].name == "first");
  CHECK(waves[0].trigger == swarmfield::sim::WaveTrigger::kAtTime);
  CHECK(waves[0].start_seconds == 2.0f);
  REQUIRE(waves[0].groups.size() == 2);  // a TOML table's keys come in name order: brute, walker
  CHECK(waves[0].groups[0].kind == 2);
  CHECK(waves[0].groups[0].count == 2);
  CHECK(waves[0].groups[1].kind == 1);
  CHECK(waves[0].groups[1].count == 30);
  CHECK(waves[0].zone == swarmfield::sim::SpawnZone{{0, 0}, {63, 4}});
  CHECK(waves[1].trigger == swarmfield::sim::WaveTrigger::kWhenCleared);
  CHECK(waves[1].repeat == 3);
  CHECK(waves[1].growth == 1.5f);
  CHECK(swarmfield::server::world_params(r.config).waves == waves);
  // Stored (replays) and read back the same.
  const auto back = swarmfield::server::parse_config_toml(swarmfield::server::config_to_toml(r.config), "stored");
  REQUIRE_MESSAGE(is_run(back), back.output);
  CHECK(back.config.waves == r.config.waves);
  CHECK(back.config.zones == r.config.zones);

  struct Case {
    std::string toml;
    std::string needle;
  };
  for (const Case& c : std::vector<Case>{
           {"[[waves]]\nkinds = { zombie = 3 }\n", "waves[0]: kind 'zombie' is not one of the kinds: runner, walker, brute"},
           {"[[waves]]\nname = \"x\"\nkinds = { walker = 3 }\nzone = \"south\"\n", "waves[0] ('x'): zone 'south' is not in the [zones] table"},
           {"[[waves]]\nkinds = { walker = 3 }\ntrigger = \"later\"\n", "\"time\" or \"cleared\""},
           {"[[waves]]\nkinds = { walker = 3 }\nrepeat = 2\n", "every must be in (0, 1e6] seconds when it repeats"},
           {"[[waves]]\nkinds = { walker = -3 }\n", "walker = -3 must be in 0..1000000"},
           {"[[waves]]\nkinds = { walker = 3 }\nzone = [5, 5, 1, 1]\n", "zone = [5, 5, 1, 1] must be [x0, y0, x1, y1]"},
           // A referenced zone is named where it is written, with its value (an inverted one, and
           // one past the 2^30 bound, which read as if the rule held).
           {"[zones]\nz = [5, 5, 4, 10]\n[[waves]]\nkinds = { walker = 3 }\nzone = \"z\"\n",
            "waves[0]: zone 'z' (zones.z) = [5, 5, 4, 10] must be"},
           {"[zones]\nz = [0, 0, 2147483647, 10]\n[[waves]]\nkinds = { walker = 3 }\nzone = \"z\"\n",
            "zone 'z' (zones.z) = [0, 0, 2147483647, 10] must be [x0, y0, x1, y1] cells with 0 <= x0 <= x1 < 2^30"},
           {"[[waves]]\nkinds = { walker = 3 }\nzone = [5, 5]\n", "must be [x0, y0, x1, y1]"},
           {"[[waves]]\nstart = 3\n", "waves[0]: has no 'kinds'"},
           {"[[waves]]\nkinds = { walker = 3 }\nspeed = 3\n", "unknown key 'speed'"},
           {"[[waves]]\nkinds = { walker = 3 }\nstart = -1\n", "start must be in 0..1e6 seconds"},
           {"[[waves]]\nkinds = { walker = 3 }\ngrowth = 0\n", "growth must be in (0, 100]"},
           {"waves = 3\n", "key 'waves' must be an array of tables"},
           {"zones = 3\n", "key 'zones' must be a table"},
       }) {
    TempToml bad(c.toml);
    const auto e = parse({"--config", bad.path});
    CHECK_MESSAGE(is_error(e), e.output);
    CHECK_MESSAGE(e.output.find(c.needle) != std::string::npos, c.toml << " -> " << e.output);
  }
}

TEST_CASE("server_config: [[kinds]] survive config_to_toml -> parse_config_toml bit for bit (replays store them)") {
  TempToml file(R"([[kinds]]
name = "tiny-one"
radius = 0.21
speed = 6.7
separation-weight = 0.3
turn-rate = 12.5
colour = "#0a0B0c"
weight = 0.7

[[kinds]]
name = "huge"
radius = 1.9
speed = 1.1
weight = 2
)");
  const auto r = parse({"--config", file.path});
  REQUIRE(is_run(r));
  REQUIRE(r.config.kinds.size() == 2);
  const std::string text = swarmfield::server::config_to_toml(r.config);
  const auto back = swarmfield::server::parse_config_toml(text, "stored");
  REQUIRE_MESSAGE(is_run(back), back.output << "\n" << text);
  CHECK(back.config.kinds == r.config.kinds);  // every float exact, names escaped, colours
  // The default set is written out too, so a stored config never depends on this build's defaults.
  const auto defaults = swarmfield::server::parse_config_toml(swarmfield::server::config_to_toml(parse({}).config), "d");
  REQUIRE(is_run(defaults));
  CHECK(defaults.config.kinds == parse({}).config.kinds);
  CHECK(swarmfield::server::config_to_toml(parse({}).config).find("[[kinds]]\nname = \"runner\"") != std::string::npos);
}

TEST_CASE("server_config: config_to_toml names one map source, so it reads back (a stored --map config)") {
  const auto with_map = parse({"--map", "/maps/Boston_0_512.map", "--agents", "10"});
  REQUIRE(is_run(with_map));
  const std::string text = swarmfield::server::config_to_toml(with_map.config);
  CHECK(text.find("map = \"/maps/Boston_0_512.map\"") != std::string::npos);
  CHECK(text.find("city-seed") == std::string::npos);
  const auto back = swarmfield::server::parse_config_toml(text, "stored");
  REQUIRE_MESSAGE(is_run(back), back.output);
  CHECK(back.config.map_path == "/maps/Boston_0_512.map");
  const auto city = parse({"--city-seed", "5", "--city-size", "96"});
  const std::string city_text = swarmfield::server::config_to_toml(city.config);
  CHECK(city_text.find("map =") == std::string::npos);
  const auto city_back = swarmfield::server::parse_config_toml(city_text, "stored");
  REQUIRE(is_run(city_back));
  CHECK(city_back.config.city_seed == 5);
  CHECK(city_back.config.city_size == 96);
}

TEST_CASE("server_config: a map file a lower layer names, dropped for a higher layer's generated city, is warned about") {
  // Found by a fresh-user trial: SWARMFIELD_MAP with --city-size ran the city, saying nothing.
  const auto r = parse_env({"--city-size", "64"}, {{"SWARMFIELD_MAP", "/maps/mine.map"}});
  REQUIRE(is_run(r));
  CHECK(r.config.map_path.empty());
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0] == "the map file '/maps/mine.map' from the environment (SWARMFIELD_MAP) is not used: the flags "
                         "choose the generated city (--city-size, --city-seed); give --map to use the file");
  // The map chosen where it is named, or a city over a city: nothing to say.
  CHECK(parse_env({"--map", "/maps/a.map"}, {{"SWARMFIELD_MAP", "/maps/mine.map"}}).warnings.empty());
  CHECK(parse_env({"--city-size", "64"}, {{"SWARMFIELD_CITY_SEED", "3"}}).warnings.empty());
}

TEST_CASE("server start-up: a spawn zone not wholly on the map, or inverted, is refused naming the key, the zone and the map's size") {
  using swarmfield::server::check_zones;
  // Found by a fresh-user trial: a zone beyond the map was accepted, every spawn of the wave
  // clamped onto the corner. A hostile trial then loaded [60, 60, 1000000, 1000000] on a 64 x 64
  // map with exit 0 (only the first corner was checked), and an inverted [zones] entry no wave
  // names was never looked at: now every corner must be on the map, in order.
  TempToml file(
      "[zones]\nnorth = [0, 0, 63, 4]\nfar = [100, 100, 200, 200]\n\n"
      "[[waves]]\nname = \"w\"\nkinds = { walker = 3 }\nzone = [10, 64, 20, 70]\n");
  const auto r = parse({"--config", file.path, "--city-size", "64"});
  REQUIRE_MESSAGE(is_run(r), r.output);
  const swarmfield::sim::GridMap map(64, 64);
  const std::string rule = " is not a rectangle on the map (64 x 64 cells): a zone is [x0, y0, x1, y1], corners included, "
                           "with 0 <= x0 <= x1 <= 63 and 0 <= y0 <= y1 <= 63; move it onto the map";
  CHECK(check_zones(r.config, map) == "zones.far = [100, 100, 200, 200]" + rule);
  auto config = r.config;
  config.zones.erase("far");
  CHECK(check_zones(config, map) == "waves[0] ('w'): zone = [10, 64, 20, 70]" + rule);
  CHECK(check_zones(config, swarmfield::sim::GridMap(64, 71)).empty());  // rows 64..70 are on this map
  config.waves.clear();
  CHECK(check_zones(config, map).empty());
  // The trial's zone, in the table and as a wave's own (unnamed: its index only).
  config.zones["edge"] = {60, 60, 1000000, 1000000};
  CHECK(check_zones(config, map) == "zones.edge = [60, 60, 1000000, 1000000]" + rule);
  config.zones.erase("edge");
  config.waves.push_back(r.config.waves[0]);
  config.waves.back().name.clear();
  config.waves.back().zone = std::array<std::int64_t, 4>{60, 60, 1000000, 1000000};
  CHECK(check_zones(config, map) == "waves[0]: zone = [60, 60, 1000000, 1000000]" + rule);
  config.waves.clear();
  // One cell over the last column or row, inverted, negative; the map's last cell is fine.
  for (const auto& zone : std::vector<std::array<std::int64_t, 4>>{
           {0, 0, 64, 4}, {0, 0, 4, 64}, {10, 10, 5, 20}, {10, 20, 20, 10}, {-1, 0, 4, 4}, {0, -5, 4, -1}}) {
    config.zones["z"] = zone;
    CHECK_MESSAGE(!check_zones(config, map).empty(), zone[0] << "," << zone[1] << "," << zone[2] << "," << zone[3]);
  }
  config.zones["z"] = {63, 63, 63, 63};
  CHECK(check_zones(config, map).empty());
}

TEST_CASE("server start-up: a relative path from the config file that names nothing says it is taken from the current folder") {
  using swarmfield::server::relative_path_note;
  // Before: "error: can not load map: m.map: cannot open file: No such file or directory", with
  // `map = "m.map"` in sub/c.toml: nothing said the path was looked up from the current folder,
  // not from sub/ (paths keep resolving from the current folder; the message says so).
  char dir_template[] = "/tmp/swarmfield-config-XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = dir_template;
  REQUIRE(mkdir((dir + "/sub").c_str(), 0700) == 0);
  const std::string toml = dir + "/sub/c.toml";
  std::ofstream(toml) << "map = \"swarmfield-no-such-map-7f3a.map\"\n";
  const auto r = parse({"--config", toml});
  REQUIRE_MESSAGE(is_run(r), r.output);
  swarmfield::sim::GridMap map;
  std::string name, error;
  REQUIRE_FALSE(swarmfield::server::load_map(r.config, map, name, error));
  CHECK(error.find("swarmfield-no-such-map-7f3a.map: cannot open file") != std::string::npos);
  char cwd[4096];
  REQUIRE(getcwd(cwd, sizeof cwd) != nullptr);
  CHECK(relative_path_note("map", r.config.map_path, r.sources, r.config.config_path) ==
        " (map = \"swarmfield-no-such-map-7f3a.map\" is from the config file " + toml +
            "; relative paths in it are taken from the current folder, " + cwd + ", not from the file's folder)");
  // No note for a path from a flag, an absolute path, or one that names a file.
  const auto flag = parse({"--config", toml, "--map", "swarmfield-no-such-map-7f3a.map"});
  REQUIRE(is_run(flag));
  CHECK(relative_path_note("map", flag.config.map_path, flag.sources, flag.config.config_path).empty());
  std::ofstream(toml) << "map = \"" << dir << "/none.map\"\n";
  const auto absolute = parse({"--config", toml});
  REQUIRE(is_run(absolute));
  CHECK(relative_path_note("map", absolute.config.map_path, absolute.sources, absolute.config.config_path).empty());
  std::ofstream(toml) << "map = \"sub\"\n";
  const auto exists = parse({"--config", toml});
  REQUIRE(is_run(exists));
  REQUIRE(chdir(dir.c_str()) == 0);
  CHECK(relative_path_note("map", exists.config.map_path, exists.sources, exists.config.config_path).empty());
  REQUIRE(chdir(cwd) == 0);
  std::remove(toml.c_str());
  rmdir((dir + "/sub").c_str());
  rmdir(dir.c_str());
}

TEST_CASE("server start-up: --rules naming a device is refused as a rules script, not as a config file") {
  swarmfield::server::ServerConfig config;
  config.rules_path = "/dev/zero";
  CHECK(swarmfield::server::load_rules_script(config) ==
        "--rules: rules script '/dev/zero' is a character device, not a regular file");
  CHECK(config.rules_script.empty());
}

TEST_CASE("server start-up: --agents above the map's density limit is refused naming the flag, the cells, the limit "
          "and the fix") {
  using swarmfield::server::blame_setting;
  using swarmfield::server::check_agent_density;
  // The reviewer's case: the 32 x 32 city has 976 walkable cells; runners (radius 0.25) pack
  // 4507 into them.
  const auto map_of = [](const ConfigParseResult& r) {
    swarmfield::sim::GridMap map;
    std::string name, error;
    REQUIRE(swarmfield::server::load_map(r.config, map, name, error));
    return map;
  };
  const auto r = parse_env({"--city-size", "32", "--agents", "100000"}, {});
  REQUIRE(is_run(r));  // the parser alone does not know the map
  const swarmfield::sim::GridMap map = map_of(r);
  REQUIRE(map.walkable_count() == 976);
  const std::string error = check_agent_density(r.config, map);
  CHECK(error ==
        "--agents 100000 is above the density limit: the map's 976 walkable cells hold at most 4507 agents (hexagonal "
        "packing of the smallest kind spawned, 'runner', radius 0.25); ask for at most 4507 agents (--agents) or use a "
        "bigger map (--city-size or --map)");
  CHECK(blame_setting(error, r.sources, r.config.config_path) == " (set by flag --agents)");
  // From the environment: the message says so.
  const auto env = parse_env({"--city-size", "32"}, {{"SWARMFIELD_AGENTS", "100000"}});
  REQUIRE(is_run(env));
  CHECK(blame_setting(check_agent_density(env.config, map), env.sources, env.config.config_path) ==
        " (set by environment SWARMFIELD_AGENTS)");
  // The limit itself is accepted, one more is not; --max-agents is only the capacity (waves stop
  // at the limit), so a large one is no error.
  CHECK(check_agent_density(parse_env({"--city-size", "32", "--agents", "4507"}, {}).config, map).empty());
  CHECK_FALSE(check_agent_density(parse_env({"--city-size", "32", "--agents", "4508"}, {}).config, map).empty());
  CHECK(check_agent_density(
            parse_env({"--city-size", "32", "--agents", "10", "--max-agents", "2000000", "--spawn-wave", "100000"}, {})
                .config,
            map)
            .empty());
  // Kinds from the file: only brutes (radius 0.8) hold 440 on this map, so the default 2000 is refused.
  TempToml brutes("city-size = 32\n[[kinds]]\nname = \"brute\"\nradius = 0.8\n");
  const auto big = parse_env({"--config", brutes.path}, {});
  REQUIRE(is_run(big));
  const std::string brute_error = check_agent_density(big.config, map);
  CHECK(brute_error.find("--agents 2000 is above the density limit") != std::string::npos);
  CHECK(brute_error.find("at most 440 agents") != std::string::npos);
  CHECK(brute_error.find("'brute', radius 0.8") != std::string::npos);
  CHECK(blame_setting(brute_error, big.sources, big.config.config_path) == " (set by default)");
}

TEST_CASE("server --help: --agents documents the density limit") {
  const auto r = parse({"--help"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("density limit") != std::string::npos);
  CHECK(r.output.find("0.9069 / (pi r^2)") != std::string::npos);
}

TEST_CASE("server_config: --agones-port-name (flag, environment, TOML key) must be a Kubernetes port name") {
  CHECK(parse({}).config.agones_port_name == "game");
  const auto flag = parse({"--agones-port-name", "play-1"});
  REQUIRE(is_run(flag));
  CHECK(flag.config.agones_port_name == "play-1");
  const auto env = parse_env({}, {{"SWARMFIELD_AGONES_PORT_NAME", "udp"}});
  REQUIRE(is_run(env));
  CHECK(env.config.agones_port_name == "udp");
  TempToml file("agones-port-name = \"from-file\"\n");
  const auto from_file = parse({"--config", file.path});
  INFO(from_file.output);
  REQUIRE(is_run(from_file));
  CHECK(from_file.config.agones_port_name == "from-file");
  const std::string longest(63, 'a');
  CHECK(parse({"--agones-port-name", longest}).config.agones_port_name == longest);
  const auto printed = parse({"--agones-port-name", "play", "--print-config"});
  CHECK(printed.output.find("agones-port-name = \"play\"  # flag --agones-port-name\n") != std::string::npos);

  const std::vector<std::string> bad_names = {"", "Game", "game_udp", "game.udp", "game udp", "g\xc3\xa4me",
                                             std::string(64, 'a')};
  for (const std::string& bad : bad_names) {
    const auto r = parse({"--agones-port-name", bad});
    INFO("value='" << bad << "' output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("--agones-port-name") != std::string::npos);
  }
  const auto refused = parse({"--agones-port-name", "Game"});
  CHECK(refused.output.find("--agones-port-name must be 1..63 characters of a-z, 0-9 and '-'") != std::string::npos);
  CHECK(refused.output.find("(got 'Game')") != std::string::npos);
  const auto bad_env = parse_env({}, {{"SWARMFIELD_AGONES_PORT_NAME", "game_udp"}});
  CHECK(is_error(bad_env));
  CHECK(bad_env.output.find("--agones-port-name") != std::string::npos);
  TempToml bad_file("agones-port-name = \"GAME\"\n");
  const auto bad_toml = parse({"--config", bad_file.path});
  CHECK(is_error(bad_toml));
  CHECK(bad_toml.output.find("--agones-port-name") != std::string::npos);
}

TEST_CASE("server_config: --agones-players-list names a List (none = no List calls)") {
  CHECK(parse({}).config.agones_players_list == "players");
  CHECK(parse({"--agones-players-list", "team-red"}).config.agones_players_list == "team-red");
  CHECK(parse({"--agones-players-list", "none"}).config.agones_players_list == "none");
  const auto env = parse_env({}, {{"SWARMFIELD_AGONES_PLAYERS_LIST", "lobby"}});
  REQUIRE(is_run(env));
  CHECK(env.config.agones_players_list == "lobby");
  // Strings, not a list of const char*: a c_str() of a temporary in it dangles (ASan found it).
  for (const std::string& bad : std::vector<std::string>{"Players", "players list", "a_b", std::string(64, 'p')}) {
    const auto r = parse({"--agones-players-list", bad});
    INFO(bad << ": " << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find("--agones-players-list must be 'none' or 1..63 characters") != std::string::npos);
  }
}

TEST_CASE("server_config: match settings at allocation: the match's end conditions, checked as their flags") {
  using swarmfield::server::apply_match_settings;
  const swarmfield::server::ServerConfig base = parse({"--duration", "60"}).config;
  const auto ok = apply_match_settings(base, {{"duration", "900"}, {"shutdown-when-empty", "20"}, {"match-id", "m-1"}});
  CHECK(ok.errors.empty());
  CHECK(ok.config.duration_s == 900.0);
  CHECK(ok.config.shutdown_when_empty_s == 20.0);
  CHECK(ok.applied == std::vector<std::string>{"duration=900", "shutdown-when-empty=20"});
  // Bad values keep what was there; settings fixed at start-up and unknown keys are refused by name.
  const auto bad = apply_match_settings(
      base, {{"duration", "soon"}, {"shutdown-when-empty", "-1"}, {"agents", "5"}, {"no-such", "1"}, {"map", "x.map"}});
  CHECK(bad.applied.empty());
  CHECK(bad.config.duration_s == 60.0);
  CHECK(bad.config.shutdown_when_empty_s == base.shutdown_when_empty_s);
  REQUIRE(bad.errors.size() == 5);
  std::string all;
  for (const auto& e : bad.errors) all += e + "\n";
  INFO(all);
  CHECK(all.find("'duration': ") != std::string::npos);
  CHECK(all.find("'shutdown-when-empty': --shutdown-when-empty") != std::string::npos);
  CHECK(all.find("'agents' is not a match setting") != std::string::npos);
  CHECK(all.find("'map' is not a match setting") != std::string::npos);
  CHECK(all.find("'no-such' is not a match setting") != std::string::npos);
  // An allocation sets a length; it can not lift the operator's.
  for (const char* none : {"0", "-0", "0.0"}) {
    const auto lifted = apply_match_settings(base, {{"duration", none}});
    CHECK(lifted.config.duration_s == 60.0);
    REQUIRE(lifted.errors.size() == 1);
    CHECK(lifted.errors[0].find("can not remove one") != std::string::npos);
  }
}

TEST_CASE("server_config: --version prints the version and the protocol and exits 0") {
  const auto r = parse({"--version"});
  CHECK(r.action == ConfigParseResult::Action::kExit);
  CHECK(r.exit_code == 0);
  CHECK(r.output == std::string("swarmfield-server ") + SWARMFIELD_VERSION + " (protocol 3)");
}

TEST_CASE("server_config: the browser spectator's flags (--web-port, --web-bind, --web-root)") {
  const auto defaults = parse({});
  REQUIRE(is_run(defaults));
  CHECK(defaults.config.web_port == -1);  // off
  CHECK(defaults.config.web_root.empty());
  const auto on = parse({"--web-port", "0", "--web-bind", "127.0.0.1", "--web-root", "/srv/page"});
  REQUIRE(is_run(on));
  CHECK(on.config.web_port == 0);
  CHECK(on.config.web_bind == "127.0.0.1");
  CHECK(on.config.web_root == "/srv/page");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--web-port", "-2"}, {"--web-port", "65536"}, {"--web-bind", "localhost"}}) {
    const auto r = parse(args);
    INFO("args=" << args[0] << " " << args[1] << " output=" << r.output);
    CHECK(is_error(r));
    CHECK(r.output.find(args[0]) != std::string::npos);
  }
  // The page's stream is neither sealed nor token-checked: with --auth tokens only when the
  // operator opens spectating.
  const auto tokens = parse({"--web-port", "0", "--auth", "tokens", "--key-file", "/dev/null"});
  CHECK(is_error(tokens));
  CHECK(tokens.output.find("--web-spectators-open") != std::string::npos);
  const auto opened = parse({"--web-port", "0", "--auth", "tokens", "--key-file", "/dev/null", "--web-spectators-open"});
  REQUIRE(is_run(opened));
  CHECK(opened.config.web_spectators_open);
}

TEST_CASE("server_config: the default snapshot rate follows a tick rate below it; a given one is kept and checked") {
  const auto slow = parse({"--tick-hz", "10"});
  INFO(slow.output);
  REQUIRE(is_run(slow));
  CHECK(slow.config.snapshot_hz == 10);  // was refused: "--snapshot-hz must be in 1..10 (got 20)"
  const auto fast = parse({"--tick-hz", "60"});
  REQUIRE(is_run(fast));
  CHECK(fast.config.snapshot_hz == 20);
  const auto given = parse({"--tick-hz", "10", "--snapshot-hz", "5"});
  REQUIRE(is_run(given));
  CHECK(given.config.snapshot_hz == 5);
  CHECK(is_error(parse({"--tick-hz", "10", "--snapshot-hz", "20"})));
  TempToml file("tick-hz = 7\n");
  const auto from_file = parse({"--config", file.path});
  INFO(from_file.output);
  REQUIRE(is_run(from_file));
  CHECK(from_file.config.snapshot_hz == 7);
}
