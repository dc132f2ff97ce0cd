// swarmfield-tool as a user runs it: `scen` on a correct and a deliberately wrong scenario,
// `field` on a generated city, and the error exits of both.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tool_test_support.hpp"

using namespace swarmfield::tool::test;

namespace {

const std::string kMap = std::string(SWARMFIELD_MAPS_DIR) + "/street/Boston_0_256.map";
const std::string kScen = kMap + ".scen";

/// The first `count` problem lines of the Boston scenario; every `corrupt_every`-th gets +1.5
/// added to its optimal length (0 = none corrupted).
std::string scen_excerpt(int count, int corrupt_every) {
  std::ifstream in(kScen);
  std::string line;
  std::getline(in, line);
  std::string out = line + "\n";
  for (int i = 0; i < count && std::getline(in, line); ++i) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (corrupt_every > 0 && i % corrupt_every == 0) {
      const std::size_t tab = line.rfind('\t');
      const double len = std::stod(line.substr(tab + 1));
      line = line.substr(0, tab + 1) + std::to_string(len + 1.5);
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("tool scen: a correct excerpt passes, a corrupted one fails with one line per mismatch") {
  const auto dir = temp_dir();
  const auto good = dir / "good.scen";
  const auto bad = dir / "bad.scen";
  std::ofstream(good) << scen_excerpt(40, 0);
  std::ofstream(bad) << scen_excerpt(40, 4);

  const Run ok = run_tool("scen " + kMap + " " + good.string() + " --no-progress");
  INFO(ok.out);
  CHECK(ok.status == 0);
  CHECK(ok.out.find("checked=40 mismatches=0 max_rel_err=") != std::string::npos);

  // stdout only, so the last line is the summary.
  const Run fail = run_tool("scen " + kMap + " " + bad.string() + " --no-progress", false);
  INFO(fail.out);
  CHECK(fail.status == 1);
  const std::vector<std::string> out = lines_of(fail.out);
  REQUIRE(out.size() == 11);
  for (std::size_t i = 0; i < 10; ++i) CHECK(out[i].rfind("mismatch line=", 0) == 0);
  CHECK(out.back().rfind("checked=40 mismatches=10 max_rel_err=", 0) == 0);
}

TEST_CASE("tool scen: unreadable or inconsistent input exits 2 with a reason") {
  const Run missing = run_tool("scen /nonexistent.map " + kScen);
  CHECK(missing.status == 2);
  CHECK(missing.out.find("/nonexistent.map: cannot open file") != std::string::npos);
  const Run wrong_map = run_tool("scen " + std::string(SWARMFIELD_MAPS_DIR) + "/game/den312d.map " + kScen);
  CHECK(wrong_map.status == 2);
  CHECK(wrong_map.out.find("wrong map file?") != std::string::npos);
  const Run usage = run_tool("scen");
  CHECK(usage.status == 2);  // CLI11's own codes (106, ...) would break scripts that test for 2
  CHECK(usage.out.find("error: ") != std::string::npos);

  const auto dir = temp_dir();
  const auto empty = dir / "empty.scen";
  { std::ofstream(empty) << "version 1\n"; }
  const Run no_lines = run_tool("scen " + kMap + " " + empty.string());
  CHECK(no_lines.status == 2);
  CHECK(no_lines.out.find("has no scenario lines") != std::string::npos);
  const auto outside = dir / "outside.scen";
  { std::ofstream(outside) << "version 1\n0\tBoston_0_256.map\t256\t256\t1\t1\t300\t2\t1.0\n"; }
  const Run out_of_map = run_tool("scen " + kMap + " " + outside.string());
  CHECK(out_of_map.status == 2);
  CHECK(out_of_map.out.find("goal (300,2) is outside the 256x256 map") != std::string::npos);
}

TEST_CASE("tool field: city picture, and clear errors for bad goals and paths") {
  const auto dir = temp_dir();
  const auto png = dir / "city.png";
  const Run ok = run_tool("field --city-seed 3 --size 64 --goal 1,1 --repeat 2 --png " + png.string());
  INFO(ok.out);
  CHECK(ok.status == 0);
  CHECK(ok.out.find("reachable: ") != std::string::npos);
  CHECK(ok.out.find("build: integration") != std::string::npos);
  CHECK(std::filesystem::file_size(png) > 1000);

  const Run blocked = run_tool("field " + std::string(SWARMFIELD_MAPS_DIR) + "/game/den312d.map --goal 0,0");
  CHECK(blocked.status == 2);
  CHECK(blocked.out.find("blocked cell; nearest walkable cell") != std::string::npos);
  const Run outside = run_tool("field --city-seed 1 --size 64 --goal 64,3");
  CHECK(outside.status == 2);
  CHECK(outside.out.find("outside the map") != std::string::npos);
  const Run syntax = run_tool("field --city-seed 1 --goal '3;4'");
  CHECK(syntax.status == 2);
  CHECK(syntax.out.find("expected X,Y") != std::string::npos);
  const Run unwritable = run_tool("field --city-seed 1 --size 64 --png /nonexistent/dir/x.png");
  CHECK(unwritable.status == 2);
  CHECK(unwritable.out.find("cannot create file") != std::string::npos);
  // --scale 64 on a 4096 city asked for a 262144 px square picture: std::bad_alloc, abort (134).
  const Run huge = run_tool("field --city-seed 1 --size 4096 --field-mode whole --repeat 1 --scale 64 --png " +
                            (dir / "huge.png").string());
  CHECK(huge.status == 2);
  CHECK(huge.out.find("--scale 64: the picture would be 262144 px a side (at most 8192); use --scale 2 or less") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "huge.png"));
  const Run bad_map = run_tool("field " + kScen);
  CHECK(bad_map.status == 2);
  CHECK(bad_map.out.find(kScen + ":1: this is a MovingAI scenario file (.scen") != std::string::npos);
}

TEST_CASE("tool field: hierarchical mode reports the sector graph, routes and sector field builds") {
  const Run hier = run_tool("field --city-seed 3 --size 256 --goal 2,2 --repeat 2 --field-mode hierarchical");
  INFO(hier.out);
  CHECK(hier.status == 0);
  CHECK(hier.out.find("field mode: hierarchical") != std::string::npos);
  CHECK(hier.out.find("sector graph: 16 sectors of 64 cells") != std::string::npos);
  CHECK(hier.out.find("routes (goal change): ") != std::string::npos);
  CHECK(hier.out.find("sector fields: 16 built") != std::string::npos);
  // The whole-map field reaches the same cells.
  const Run whole = run_tool("field --city-seed 3 --size 256 --goal 2,2 --repeat 1 --field-mode whole");
  CHECK(whole.status == 0);
  const auto reachable = [](const std::string& out) {
    const std::size_t at = out.find("reachable: ");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  CHECK_FALSE(reachable(whole.out).empty());
  CHECK(reachable(whole.out) == reachable(hier.out));
  // auto below 4096 a side: whole.
  const Run automatic = run_tool("field --city-seed 3 --size 256 --repeat 1");
  CHECK(automatic.out.find("field mode: whole (auto") != std::string::npos);
  const Run bad = run_tool("field --city-seed 3 --size 64 --field-mode fast");
  CHECK(bad.status == 2);
  CHECK(bad.out.find("bad --field-mode 'fast'") != std::string::npos);
  const Run picture = run_tool("field --city-seed 3 --size 64 --field-mode hierarchical --png /tmp/x.png");
  CHECK(picture.status == 2);
  CHECK(picture.out.find("--png draws the whole-map field") != std::string::npos);
}

TEST_CASE("tool scen: a NaN, infinite or negative --tolerance is an error, not a pass for everything") {
  // Before: --tolerance nan made every comparison false, so a scenario with wrong lengths
  // printed mismatches=0 and exited 0.
  const auto dir = temp_dir();
  const auto bad = dir / "bad_tolerance.scen";
  std::ofstream(bad) << scen_excerpt(8, 1);  // every line 1.5 too long
  for (const std::string value : {"nan", "NaN", "inf", "-inf"}) {
    const Run r = run_tool("scen " + kMap + " " + bad.string() + " --no-progress --tolerance " + value);
    INFO(value << "\n" << r.out);
    CHECK(r.status == 2);
    CHECK(r.out.find("--tolerance: must be a finite number (got " + value + ")") != std::string::npos);
    CHECK(r.out.find("mismatches=") == std::string::npos);
  }
  for (const std::string value : {"-0.5", "0", "''"}) {
    const Run r = run_tool("scen " + kMap + " " + bad.string() + " --no-progress --tolerance " + value);
    INFO(value << "\n" << r.out);
    CHECK(r.status == 2);
    CHECK(r.out.find("--tolerance") != std::string::npos);
  }
  // The file really is wrong: a valid tolerance reports every line.
  const Run r = run_tool("scen " + kMap + " " + bad.string() + " --no-progress --tolerance 1e-3", false);
  INFO(r.out);
  CHECK(r.status == 1);
  CHECK(r.out.find("checked=8 mismatches=8") != std::string::npos);
}

TEST_CASE("tool: NaN/inf numbers, empty values and negative seeds are errors for every subcommand, exit 2") {
  struct Case {
    std::string args;
    std::string needle;
  };
  const std::string sim = "sim --city-seed 1 --size 32 --agents 10 --ticks 5 --no-progress";
  const std::vector<Case> cases = {
      {sim + " --tick-hz nan", "--tick-hz: must be a finite number (got nan)"},
      {sim + " --tick-hz inf", "--tick-hz: must be a finite number (got inf)"},
      {sim + " --seed -1", "--seed: must not be negative (got -1)"},
      {"sim --city-seed -1 --size 32 --agents 10 --ticks 5 --no-progress", "--city-seed: must not be negative"},
      {"field --city-seed -7 --size 32", "--city-seed: must not be negative"},
      {sim + " --agents ''", "--agents: value is empty"},
      {sim + " --ticks ''", "--ticks: value is empty"},
      {sim + " --seed ''", "--seed: value is empty"},
      {"sim '' --agents 10 --ticks 5 --no-progress", "MAP: value is empty"},
      {"field --city-seed '' --size 32", "--city-seed: value is empty"},
      {"field --city-seed 1 --size 32 --goal ''", "--goal: value is empty"},
      {"field --city-seed 1 --size 32 --png ''", "--png: value is empty"},
      {"scen '' " + kScen, "MAP: value is empty"},
      {"scen " + kMap + " ''", "SCEN: value is empty"},
      {"scen " + kMap + " " + kScen + " --every ''", "--every: value is empty"},
      {"frob", "unknown subcommand 'frob' (expected one of scen, field, sim, probe, replay"},
      // Echoed words are printable (an escape sequence cleared the terminal) and short.
      {"\"$(printf 'fr\\033[2Job')\"", "unknown subcommand 'fr?[2Job'"},
      {"--ticks 5 sim --city-seed 1 --size 32", "unknown option '--ticks' (an option of 'sim': give it after 'sim')"},
      {"sim --city-seed 1 --size 32 --kind \"$(printf 'r\\033[2Jx')\"", "--kind 'r?[2Jx': unknown kind 'r?[2Jx'"},
  };
  for (const auto& c : cases) {
    const Run r = run_tool(c.args);
    INFO(c.args << "\n" << r.out);
    CHECK(r.status == 2);
    CHECK(r.out.find(c.needle) != std::string::npos);
    CHECK(r.out.find("state_hash=") == std::string::npos);
  }
}

TEST_CASE("tool probe: a refused connection says so; a SWARMFIELD_HTTP_PORT that is no port is an error, not 8080") {
  // Port 1: privileged, nothing listens there in a test.
  const Run refused = run_tool("probe --port 1 --timeout 1");
  CHECK(refused.status == 1);
  CHECK(refused.out.find("probe 127.0.0.1:1/healthz: could not connect") != std::string::npos);
  for (const char* bad : {"abc", "-1", "0", "70000"}) {
    ::setenv("SWARMFIELD_HTTP_PORT", bad, 1);
    const Run r = run_tool("probe --timeout 1");
    const Run explicit_port = run_tool("probe --port 1 --timeout 1");  // --port wins, no error
    const Run other = run_tool("field --city-seed 1 --size 32 --repeat 1");  // other subcommands ignore it
    ::unsetenv("SWARMFIELD_HTTP_PORT");
    INFO("SWARMFIELD_HTTP_PORT=" << bad << ": " << r.out);
    CHECK(r.status == 2);
    CHECK(r.out.find("SWARMFIELD_HTTP_PORT='" + std::string(bad) + "' is not a port") != std::string::npos);
    CHECK(explicit_port.status == 1);
    CHECK(other.status == 0);
  }
}
