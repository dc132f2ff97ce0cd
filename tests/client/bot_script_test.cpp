// Bot script parser: good scripts parse to the right commands; every error names file:line.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "swarmfield/client/bot_script.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

using swarmfield::client::BotCommandKind;
using swarmfield::client::BotScript;
using swarmfield::client::BotScriptError;
using swarmfield::client::parse_bot_script;

namespace {
// Parses text that must fail; returns the "file:line: message" string.
std::string error_of(const std::string& text) {
  BotScript script;
  BotScriptError error;
  const bool ok = parse_bot_script(text, "t.bot", script, error);
  CHECK_FALSE(ok);
  return error.to_string();
}
bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
}  // namespace

TEST_CASE("a script with every command, comments, blank lines and CRLF parses") {
  const std::string text =
      "# patrol\r\n"
      "\n"
      "goto 10 20.5   # first corner\r\n"
      "   goto -3 +4 12\n"
      "wait 1.5\n"
      "\t wander 3\n"
      "repeat\n";
  BotScript script;
  BotScriptError error;
  REQUIRE_MESSAGE(parse_bot_script(text, "patrol.bot", script, error), error.to_string());
  CHECK(script.source == "patrol.bot");
  REQUIRE(script.commands.size() == 5);
  CHECK(script.commands[0].kind == BotCommandKind::kGoto);
  CHECK(script.commands[0].x == doctest::Approx(10.0));
  CHECK(script.commands[0].y == doctest::Approx(20.5));
  CHECK(script.commands[0].seconds == 0.0f);
  CHECK(script.commands[0].line == 3);
  CHECK(script.commands[1].x == doctest::Approx(-3.0));
  CHECK(script.commands[1].y == doctest::Approx(4.0));
  CHECK(script.commands[1].seconds == doctest::Approx(12.0));
  CHECK(script.commands[1].line == 4);
  CHECK(script.commands[2].kind == BotCommandKind::kWait);
  CHECK(script.commands[2].seconds == doctest::Approx(1.5));
  CHECK(script.commands[3].kind == BotCommandKind::kWander);
  CHECK(script.commands[3].seconds == doctest::Approx(3.0));
  CHECK(script.commands[3].line == 6);
  CHECK(script.commands[4].kind == BotCommandKind::kRepeat);
  CHECK(script.repeats());
}

TEST_CASE("a script saved with a UTF-8 byte order mark parses (it was 'unknown command \\xEF\\xBB\\xBFgoto')") {
  BotScript script;
  BotScriptError error;
  REQUIRE_MESSAGE(parse_bot_script("\xEF\xBB\xBFgoto 3 4\r\nwait 1\r\n", "t.bot", script, error), error.to_string());
  REQUIRE(script.commands.size() == 2);
  CHECK(script.commands[0].kind == BotCommandKind::kGoto);
  CHECK(script.commands[0].line == 1);
}

TEST_CASE("a script without repeat ends; the built-in script parses and repeats") {
  BotScript script;
  BotScriptError error;
  REQUIRE(parse_bot_script("wait 0\ngoto 1 1", "t.bot", script, error));
  CHECK(script.commands.size() == 2);
  CHECK_FALSE(script.repeats());
  REQUIRE(parse_bot_script(swarmfield::client::default_bot_script(), "<built-in>", script, error));
  CHECK(script.repeats());
}

TEST_CASE("fire [S] and cease parse; fire takes a wait's limits, cease no argument") {
  BotScript script;
  BotScriptError error;
  REQUIRE_MESSAGE(parse_bot_script("fire\nfire 2.5\nwait 1\ncease   # stop\nfire 0\nrepeat\n", "t.bot", script, error),
                  error.to_string());
  REQUIRE(script.commands.size() == 6);
  CHECK(script.commands[0].kind == BotCommandKind::kFire);
  CHECK_FALSE(script.commands[0].timed);
  CHECK(script.commands[0].line == 1);
  CHECK(script.commands[1].kind == BotCommandKind::kFire);
  CHECK(script.commands[1].timed);
  CHECK(script.commands[1].seconds == doctest::Approx(2.5));
  CHECK(script.commands[3].kind == BotCommandKind::kCease);
  CHECK(script.commands[3].line == 4);
  CHECK(script.commands[4].timed);
  CHECK(script.commands[4].seconds == 0.0f);
  CHECK(script.repeats());
  // Only zero-time commands before repeat is a valid script (the brain keeps it from spinning).
  REQUIRE(parse_bot_script("fire\nrepeat\n", "t.bot", script, error));
  CHECK(script.commands.size() == 2);
  REQUIRE(parse_bot_script("fire", "t.bot", script, error));  // a bare line, no newline
  CHECK(script.commands.size() == 1);

  CHECK(error_of("fire -1\n") == "t.bot:1: duration '-1' must be >= 0 and <= 86400 seconds");
  CHECK(error_of("fire x\n") == "t.bot:1: duration 'x' is not a decimal number (like 12, -3.5 or 1e2)");
  CHECK(error_of("wait 1\nfire nan\n") == "t.bot:2: duration 'nan' is not a finite number");
  CHECK(error_of("wait -1e39\n") == "t.bot:1: duration '-1e39' must be >= 0 and <= 86400 seconds");
  CHECK(error_of("wait 1e-50\n") ==  // below a float's range, yet finite
        "t.bot:1: duration '1e-50' is too close to 0 for a float (write 0 or a larger value)");
  CHECK(error_of("fire 1e9\n") == "t.bot:1: duration '1e9' must be >= 0 and <= 86400 seconds");
  CHECK(error_of("fire 1 2\n") == "t.bot:1: 'fire' takes 0 or 1 argument(s), got 2 (usage: fire [SECONDS])");
  CHECK(error_of("cease now\n") == "t.bot:1: 'cease' takes 0 argument(s), got 1 (usage: cease)");
  CHECK(error_of("fire\nrepeat\ncease\n") ==
        "t.bot:3: command after 'repeat' (line 2) would never run; 'repeat' must be the last command");
  CHECK(starts_with(error_of("Fire\n"), "t.bot:1: unknown command 'Fire' (expected goto, wait, wander, kite, fire, cease"));
}

TEST_CASE("build X Y parses whole, non-negative map cells; anything else is refused with file:line") {
  BotScript script;
  BotScriptError error;
  REQUIRE_MESSAGE(parse_bot_script("build 3 4\nbuild +0 8191   # the edges\nwait 1\nrepeat\n", "t.bot", script, error),
                  error.to_string());
  REQUIRE(script.commands.size() == 4);
  CHECK(script.commands[0].kind == BotCommandKind::kBuild);
  CHECK(script.commands[0].cell_x == 3);
  CHECK(script.commands[0].cell_y == 4);
  CHECK(script.commands[0].line == 1);
  CHECK(script.commands[1].kind == BotCommandKind::kBuild);
  CHECK(script.commands[1].cell_x == 0);
  CHECK(script.commands[1].cell_y == 8191);
  CHECK(script.repeats());

  CHECK(error_of("build\n") == "t.bot:1: 'build' takes 2 argument(s), got 0 (usage: build X Y)");
  CHECK(error_of("wait 1\nbuild 1\n") == "t.bot:2: 'build' takes 2 argument(s), got 1 (usage: build X Y)");
  CHECK(error_of("build 1 2 3\n") == "t.bot:1: 'build' takes 2 argument(s), got 3 (usage: build X Y)");
  CHECK(error_of("build a b\n") == "t.bot:1: cell X 'a' is not a whole number (map cells; ~N for N cells from the bot's own)");
  CHECK(error_of("build 1 b\n") == "t.bot:1: cell Y 'b' is not a whole number (map cells; ~N for N cells from the bot's own)");
  CHECK(error_of("build 1.5 2\n") == "t.bot:1: cell X '1.5' is not a whole number (map cells; ~N for N cells from the bot's own)");
  CHECK(error_of("build 1e2 2\n") == "t.bot:1: cell X '1e2' is not a whole number (map cells; ~N for N cells from the bot's own)");
  CHECK(error_of("build 99999999999999999999 2\n") == "t.bot:1: cell X '99999999999999999999' must be >= 0 and <= 8191 (map cells)");
  CHECK(error_of("build -1 2\n") == "t.bot:1: cell X '-1' must be >= 0 and <= 8191 (map cells)");
  CHECK(error_of("build 2 -3\n") == "t.bot:1: cell Y '-3' must be >= 0 and <= 8191 (map cells)");
  CHECK(error_of("build 8192 0\n") == "t.bot:1: cell X '8192' must be >= 0 and <= 8191 (map cells)");
  CHECK(error_of("build ~8192 0\n") == "t.bot:1: cell X '~8192' must be within ~-8191..~8191 (map cells)");
  CHECK(error_of("build ~x 0\n") == "t.bot:1: cell X '~x' is not a whole number (map cells; ~N for N cells from the bot's own)");
  {
    BotScript rel;
    REQUIRE(parse_bot_script("build ~-3 ~\n", "t.bot", rel, error));
    CHECK(rel.commands[0].relative_x);
    CHECK(rel.commands[0].relative_y);
    CHECK(rel.commands[0].cell_x == -3);
    CHECK(rel.commands[0].cell_y == 0);
  }
  CHECK(starts_with(error_of("Build 1 2\n"), "t.bot:1: unknown command 'Build' (expected goto, wait, wander, kite, fire, cease, build or repeat)"));
}

TEST_CASE("parse errors name file:line and the problem") {
  CHECK(starts_with(error_of("wait 1\nfly 3 4\n"), "t.bot:2: unknown command 'fly'"));
  // A binary file: its bytes quoted as \xNN and cut at 40, never copied raw into the message.
  CHECK(starts_with(error_of(std::string("\x7f" "ELF\x1b[2J\x01 1\n", 12)), "t.bot:1: unknown command '\\x7FELF\\x1B[2J\\x01'"));
  CHECK(error_of(std::string(5000, 'z') + "\n").find(std::string(40, 'z') + "...'") != std::string::npos);
  CHECK(error_of(std::string(5000, 'z') + "\n").size() < 200);
  CHECK(starts_with(error_of("goto 1\n"), "t.bot:1: 'goto' takes 2 or 3 argument(s), got 1"));
  CHECK(starts_with(error_of("goto 1 2 3 4\n"), "t.bot:1: 'goto' takes 2 or 3 argument(s), got 4"));
  CHECK(starts_with(error_of("\n\ngoto 1 abc\n"), "t.bot:3: Y 'abc' is not a decimal number"));
  CHECK(starts_with(error_of("goto 1x 2\n"), "t.bot:1: X '1x' is not a decimal number"));
  CHECK(starts_with(error_of("goto nan 2\n"), "t.bot:1: X 'nan' is not a finite number"));
  CHECK(starts_with(error_of("goto inf 2\n"), "t.bot:1: X 'inf' is not a finite number"));
  CHECK(starts_with(error_of("goto 1 2 0\n"), "t.bot:1: timeout '0' must be > 0"));
  CHECK(starts_with(error_of("wait -1\n"), "t.bot:1: duration '-1' must be >= 0"));
  CHECK(starts_with(error_of("wait 1e9\n"), "t.bot:1: duration '1e9' must be >= 0 and <= 86400"));
  CHECK(starts_with(error_of("wait\n"), "t.bot:1: 'wait' takes 1 argument(s), got 0"));
  CHECK(starts_with(error_of("wander 1 2\n"), "t.bot:1: 'wander' takes 1 argument(s), got 2"));
  CHECK(starts_with(error_of("kite\n"), "t.bot:1: 'kite' takes 1 argument(s), got 0"));
  CHECK(starts_with(error_of("kite -2\n"), "t.bot:1: duration '-2'"));
  CHECK(starts_with(error_of("kite x\n"), "t.bot:1: duration 'x'"));
  CHECK(starts_with(error_of("wait 1\nrepeat now\n"), "t.bot:2: 'repeat' takes 0 argument(s), got 1"));
  CHECK(starts_with(error_of("# nothing\nrepeat\n"), "t.bot:2: 'repeat' with no command before it"));
  CHECK(starts_with(error_of("wait 1\nrepeat\n\nwait 2\n"), "t.bot:4: command after 'repeat' (line 2)"));
  CHECK(error_of("# only comments\n\n") == "t.bot: script has no commands");
  CHECK(error_of("") == "t.bot: script has no commands");
  CHECK(starts_with(error_of("GOTO 1 2\n"), "t.bot:1: unknown command 'GOTO'"));
}

TEST_CASE("a number too large names the command's own limit; hex and other non-decimal forms are not decimal") {
  // `wait 1e308` said "at most 3.4e38" (a float's limit) while a duration's is 86400 s, and
  // `goto 0x10 5` said "not a finite number" (from_chars stops at the 'x').
  const std::string seconds = " must be >= 0 and <= 86400 seconds";
  CHECK(error_of("wait 1e308\n") == "t.bot:1: duration '1e308'" + seconds);
  CHECK(error_of("wander 1e39\n") == "t.bot:1: duration '1e39'" + seconds);
  CHECK(error_of("kite 1e308\n") == "t.bot:1: duration '1e308'" + seconds);
  CHECK(error_of("fire 1e308\n") == "t.bot:1: duration '1e308'" + seconds);
  CHECK(error_of("goto 1 2 1e308\n") == "t.bot:1: timeout '1e308' must be > 0 and <= 86400 seconds");
  CHECK(error_of("build 1 99999999999999999999\n") == "t.bot:1: cell Y '99999999999999999999' must be >= 0 and <= 8191 (map cells)");
  CHECK(error_of("build ~-99999999999999999999 0\n") ==
        "t.bot:1: cell X '~-99999999999999999999' must be within ~-8191..~8191 (map cells)");
  // A position has no limit of its own (a target off the map is skipped when the bot runs): a
  // float's is the one there is.
  CHECK(error_of("goto 1e308 5\n") == "t.bot:1: X '1e308' is too large (at most 3.4e38)");

  const std::string decimal = " is not a decimal number (like 12, -3.5 or 1e2)";
  CHECK(error_of("goto 0x10 5\n") == "t.bot:1: X '0x10'" + decimal);
  CHECK(error_of("goto 5 0x1p4\n") == "t.bot:1: Y '0x1p4'" + decimal);
  CHECK(error_of("goto 1,5 5\n") == "t.bot:1: X '1,5'" + decimal);
  CHECK(error_of("goto 1 2 0x10\n") == "t.bot:1: timeout '0x10'" + decimal);
  CHECK(error_of("wait 0x10\n") == "t.bot:1: duration '0x10'" + decimal);
  CHECK(error_of("wander 1e\n") == "t.bot:1: duration '1e'" + decimal);
  CHECK(error_of("kite 0b101\n") == "t.bot:1: duration '0b101'" + decimal);
  CHECK(error_of("fire 5s\n") == "t.bot:1: duration '5s'" + decimal);
  CHECK(error_of("build 0x10 5\n") == "t.bot:1: cell X '0x10' is not a whole number (map cells; ~N for N cells from the bot's own)");
  // nan and inf are what "not a finite number" is for.
  CHECK(error_of("wait inf\n") == "t.bot:1: duration 'inf' is not a finite number");
  CHECK(error_of("goto -infinity 5\n") == "t.bot:1: X '-infinity' is not a finite number");
}

TEST_CASE("load_bot_script reads files and reports unreadable ones") {
  BotScript script;
  BotScriptError error;
  CHECK_FALSE(swarmfield::client::load_bot_script("/nonexistent/dir/x.bot", script, error));
  CHECK(error.to_string() == "/nonexistent/dir/x.bot: can not open the script file");
  CHECK_FALSE(swarmfield::client::load_bot_script(".", script, error));  // a folder reads as empty
  CHECK(error.to_string() == ".: is a folder, not a script file");
  // Not regular files (found by a fresh-user trial: /dev/zero grew the bot without bound, a
  // FIFO hung it), and files past the size limit, are refused before they are read.
  CHECK_FALSE(swarmfield::client::load_bot_script("/dev/zero", script, error));
  CHECK(error.to_string() == "/dev/zero: is a character device, not a script file");
  const std::string fifo = "bot_script_test_fifo";
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(swarmfield::client::load_bot_script(fifo, script, error));
  CHECK(error.to_string() == fifo + ": is a FIFO, not a script file");
  std::remove(fifo.c_str());
  const std::string big = "bot_script_test_big.bot";
  {
    std::ofstream out(big);
    out << "wait 1\n";
  }
  std::filesystem::resize_file(big, swarmfield::client::kMaxBotScriptBytes + 1);  // sparse: no disk used
  CHECK_FALSE(swarmfield::client::load_bot_script(big, script, error));
  CHECK(error.to_string() == big + ": is larger than 16 MiB, the limit of a bot script");
  std::remove(big.c_str());

  const std::string path = "bot_script_test_tmp.bot";
  {
    std::ofstream out(path);
    out << "wait 2\nbogus\n";
  }
  CHECK_FALSE(swarmfield::client::load_bot_script(path, script, error));
  CHECK(error.to_string() == path + ":2: unknown command 'bogus' (expected goto, wait, wander, kite, fire, cease, build or repeat)");
  std::remove(path.c_str());
}

TEST_CASE("the example patrol script in client_viewer/scripts parses") {
  BotScript script;
  BotScriptError error;
  const std::string path = std::string(SWARMFIELD_CLIENT_SCRIPTS_DIR) + "/patrol.bot";
  REQUIRE_MESSAGE(swarmfield::client::load_bot_script(path, script, error), error.to_string());
  CHECK(script.commands.size() >= 4);
  CHECK(script.repeats());
}

TEST_CASE("the demo's patrol: its first loop starts at the first player's spawn on the default city") {
  // The demo serves the procedural city (seed 1, 256 x 256) and its player spawns on the
  // walkable cell nearest the map's centre (server::centre_most_walkable). Its first four
  // waypoints must be walkable, reachable from there, and near enough to be walked in the
  // headless demo's 30 s at a player's 5 cells per second (the old patrol's first waypoint was
  // the map's far corner, ~180 cells away: the demo never showed it arrive anywhere).
  const swarmfield::sim::GridMap map = swarmfield::sim::generate_city({256, 256, 1});
  swarmfield::sim::CellCoord start{-1, -1};
  float best = 1e30f;
  for (std::int32_t y = 0; y < map.height(); ++y) {
    for (std::int32_t x = 0; x < map.width(); ++x) {
      if (!map.walkable(x, y)) continue;
      const float dx = static_cast<float>(x) + 0.5f - 128.0f, dy = static_cast<float>(y) + 0.5f - 128.0f;
      if (dx * dx + dy * dy < best) {
        best = dx * dx + dy * dy;
        start = {x, y};
      }
    }
  }
  REQUIRE(start.x >= 0);
  swarmfield::sim::IntegrationField reach;
  const swarmfield::sim::CellCoord goals[1] = {start};
  reach.build(map, goals);
  BotScript script;
  BotScriptError error;
  const std::string path = std::string(SWARMFIELD_CLIENT_SCRIPTS_DIR) + "/patrol.bot";
  REQUIRE_MESSAGE(swarmfield::client::load_bot_script(path, script, error), error.to_string());
  float walked = 0.0f;
  swarmfield::sim::Vec2 at = map.cell_center(start);
  int gotos = 0;
  for (const auto& c : script.commands) {
    if (c.kind != BotCommandKind::kGoto) continue;
    const swarmfield::sim::CellCoord cell = map.world_to_cell({c.x, c.y});
    INFO("goto " << c.x << " " << c.y << " (line " << c.line << ")");
    CHECK(map.walkable(cell.x, cell.y));
    CHECK(reach.reachable(cell.x, cell.y));
    if (gotos < 4) walked += std::hypot(c.x - at.x, c.y - at.y);
    at = {c.x, c.y};
    ++gotos;
  }
  CHECK(gotos >= 4);
  CHECK(walked <= 5.0f * 30.0f);
}
