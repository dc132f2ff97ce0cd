// swarmfield-tool sim as a designer runs it: scenes from the command line (--player,
// --spawn-rect, --kind, --threads), the CSV of agent rows, and clear errors for bad values.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tool_test_support.hpp"

using namespace swarmfield::tool::test;

namespace {

struct Row {
  long tick = 0;
  long id = 0;
  std::string kind;
  double x = 0, y = 0, vx = 0, vy = 0;
};

std::vector<Row> read_csv(const std::filesystem::path& path, std::string& header) {
  std::ifstream in(path);
  std::getline(in, header);
  std::vector<Row> rows;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    std::string field[7];
    for (auto& f : field) std::getline(ss, f, ',');
    rows.push_back({std::stol(field[0]), std::stol(field[1]), field[2], std::stod(field[3]), std::stod(field[4]),
                    std::stod(field[5]), std::stod(field[6])});
  }
  return rows;
}

std::string last_line(const std::string& out) {
  const auto lines = lines_of(out);
  return lines.empty() ? "" : lines.back();
}

}  // namespace

TEST_CASE("tool sim: a standing player, agents in a rectangle, chosen kinds, a CSV every K ticks") {
  const auto csv = temp_dir() / "scene.csv";
  const std::string scene = "sim --city-seed 1 --size 64 --player 32.5,40.5 --agents 200 --spawn-rect 0,0,64,14 "
                            "--kind runner:3 --kind brute:1 --no-progress";
  const Run r = run_tool(scene + " --ticks 90 --seed 5 --csv " + csv.string() + " --csv-every 30", false);
  INFO(r.out);
  REQUIRE(r.status == 0);
  CHECK(last_line(r.out).rfind("ticks=90 agents=200 rebuilds=", 0) == 0);
  std::string header;
  const std::vector<Row> rows = read_csv(csv, header);
  CHECK(header == "tick,id,kind,x,y,vx,vy");
  REQUIRE(rows.size() == 3 * 200);  // ticks 30, 60, 90
  std::map<std::string, int> kinds;
  std::map<long, double> mean_distance;
  for (const Row& row : rows) {
    CHECK((row.tick == 30 || row.tick == 60 || row.tick == 90));
    if (row.tick == 30) ++kinds[row.kind];
    mean_distance[row.tick] += std::hypot(row.x - 32.5, row.y - 40.5) / 200.0;
    CHECK(std::hypot(row.vx, row.vy) <= 4.5 * 1.01);  // the runner is the fastest kind named
  }
  MESSAGE("kinds at tick 30: runner " << kinds["runner"] << ", brute " << kinds["brute"] << "; mean distance to the player "
                                      << mean_distance[30] << " -> " << mean_distance[60] << " -> " << mean_distance[90]);
  CHECK(kinds.size() == 2);  // only the kinds named
  CHECK(kinds["runner"] > 2 * kinds["brute"]);  // 3 : 1
  CHECK(kinds["brute"] > 20);
  CHECK(mean_distance[60] < mean_distance[30]);  // the crowd closes in on the standing player
  CHECK(mean_distance[90] < mean_distance[60]);

  // Spawned inside the rectangle: after one tick every agent is within one step of it (brutes
  // only where their disc fits: the open border rows and columns; the alleys are 1 cell wide).
  const auto first = temp_dir() / "first.csv";
  REQUIRE(run_tool(scene + " --ticks 1 --seed 5 --csv " + first.string(), false).status == 0);
  const std::vector<Row> start = read_csv(first, header);
  REQUIRE(start.size() == 200);
  for (const Row& row : start) {
    CHECK(row.x >= 0.0);
    CHECK(row.x <= 64.0);
    CHECK(row.y >= 0.0);
    CHECK(row.y <= 14.0 + 0.2);
  }

  // Same scene on 1 and 3 threads: the same last line; another seed: another hash.
  const std::string one = last_line(run_tool(scene + " --ticks 90 --seed 5 --threads 1", false).out);
  const std::string three = last_line(run_tool(scene + " --ticks 90 --seed 5 --threads 3", false).out);
  const std::string other = last_line(run_tool(scene + " --ticks 90 --seed 6", false).out);
  CHECK(one == three);
  CHECK(one != other);
  std::filesystem::remove(csv);
  std::filesystem::remove(first);
}

TEST_CASE("tool sim --players-csv: where the scripted player walked, at the agent rows' ticks") {
  const auto agents = temp_dir() / "chase_agents.csv";
  const auto players = temp_dir() / "chase_players.csv";
  // The scripted player (no --player) walks between waypoints at 5 cells per second.
  const Run r = run_tool("sim --city-seed 2 --size 64 --agents 50 --ticks 60 --no-progress --csv-every 15 --csv " +
                             agents.string() + " --players-csv " + players.string(),
                         false);
  REQUIRE(r.status == 0);
  std::ifstream in(players);
  std::string header;
  std::getline(in, header);
  CHECK(header == "tick,player,x,y,vx,vy");
  std::vector<std::vector<double>> rows;
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    std::vector<double> row;
    for (std::string f; std::getline(ss, f, ',');) row.push_back(std::stod(f));
    REQUIRE(row.size() == 6);
    rows.push_back(row);
  }
  REQUIRE(rows.size() == 4);  // one player, ticks 15, 30, 45, 60
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i][0] == doctest::Approx(15.0 * static_cast<double>(i + 1)));
    CHECK(rows[i][1] == doctest::Approx(rows[0][1]));  // the same player throughout
    CHECK(std::hypot(rows[i][4], rows[i][5]) == doctest::Approx(5.0).epsilon(0.02));  // walking at its speed
    if (i > 0) {
      // 15 ticks at 5 cells per second: 2.5 cells at most (less where it turns at a waypoint).
      const double moved = std::hypot(rows[i][2] - rows[i - 1][2], rows[i][3] - rows[i - 1][3]);
      CHECK(moved > 1.0);
      CHECK(moved <= 2.5 + 1e-3);
    }
  }
  // The agent rows come at the same ticks.
  std::string agent_header;
  const std::vector<Row> agent_rows = read_csv(agents, agent_header);
  REQUIRE(!agent_rows.empty());
  CHECK(agent_rows.front().tick == 15);
  CHECK(agent_rows.back().tick == 60);
  // Without --csv, --csv-every applies to the players' rows alone.
  const auto alone = temp_dir() / "chase_players_alone.csv";
  REQUIRE(run_tool("sim --city-seed 2 --size 64 --agents 50 --ticks 60 --no-progress --csv-every 30 --players-csv " +
                       alone.string(),
                   false)
              .status == 0);
  std::ifstream alone_in(alone);
  std::size_t alone_lines = 0;
  for (std::string line; std::getline(alone_in, line);) ++alone_lines;
  CHECK(alone_lines == 3);  // header + ticks 30 and 60
  std::filesystem::remove(agents);
  std::filesystem::remove(players);
  std::filesystem::remove(alone);
}

TEST_CASE("tool sim: bad scene values are one clear error line, exit 2") {
  struct Case {
    std::string args;
    std::string needle;
  };
  const std::string base = "sim --city-seed 1 --size 32 --agents 10 --ticks 5 --no-progress";
  const std::vector<Case> cases = {
      {"--player 1,2,3", "--player '1,2,3': expected X,Y"},
      {"--player x,1", "--player 'x,1': expected X,Y"},
      {"--player nan,1", "--player 'nan,1': expected X,Y"},
      // Hexadecimal: strtof read "0x10" as 16 (the player stood at 16,5), where the integer
      // options refuse it.
      {"--player 0x10,5", "--player '0x10,5': expected X,Y (two decimal numbers, world units)"},
      {"--player 1,0x1p2", "--player '1,0x1p2': expected X,Y"},
      {"--spawn-rect 0,0,0x10,5", "--spawn-rect '0,0,0x10,5': expected X0,Y0,X1,Y1 (four decimal numbers"},
      {"--kind runner:0x2", "--kind 'runner:0x2': the weight after ':' must be a decimal number > 0"},
      {"--tick-hz 0x1e", "--tick-hz: must be a decimal number (got 0x1e)"},
      {"--ticks 0x10", "--ticks: must be a decimal integer (got 0x10)"},
      {"--player 100,5", "--player '100,5' is off the map (0..32 x 0..32 world units)"},
      {"--spawn-rect 5,5,1,1", "--spawn-rect '5,5,1,1': need 0 <= X0 < X1 <= 32"},
      {"--spawn-rect 1,2,3", "--spawn-rect '1,2,3': expected X0,Y0,X1,Y1"},
      {"--spawn-rect 0,0,40,5", "--spawn-rect '0,0,40,5': need"},
      {"--kind ogre", "--kind 'ogre': unknown kind 'ogre' (known: runner, walker, brute)"},
      {"--kind runner:0", "--kind 'runner:0': the weight after ':' must be a decimal number > 0"},
      {"--kind runner:-1", "the weight after ':' must be a decimal number > 0"},
      {"--kind runner:abc", "the weight after ':' must be a decimal number > 0"},
      {"--kind runner:1e39", "the weight after ':' must be a decimal number > 0 and at most 3.4e38"},
      {"--kind walker --kind walker", "kind 'walker' given twice"},
      {"--field-mode sectors", "--field-mode 'sectors': expected whole, hierarchical or auto"},
      {"--csv-every 5", "--csv-every needs --csv FILE"},
      {"--tick 5", "unknown option '--tick' (did you mean '--ticks'?)"},
      {"--sead 2", "unknown option '--sead' (did you mean '--seed'?)"},
      {"--threads 1 --threads 2", "--threads is given 2 times; give it once"},
      {"--csv /nonexistent-dir/a.csv", "--csv '/nonexistent-dir/a.csv': cannot write"},
      {"--players-csv /nonexistent-dir/p.csv", "--players-csv '/nonexistent-dir/p.csv': cannot write"},
      {"--csv /tmp/swarmfield_same.csv --players-csv /tmp/../tmp/swarmfield_same.csv", "are the same file"},
      {"--threads 0", "--threads"},
      {"--threads 65", "--threads"},
      {"--csv-every 0 --csv /tmp/x.csv", "--csv-every"},
  };
  for (const auto& c : cases) {
    const Run r = run_tool(base + " " + c.args);
    INFO(c.args << "\n" << r.out);
    CHECK(r.status == 2);
    CHECK(r.out.find(c.needle) != std::string::npos);
    CHECK(r.out.find("state_hash=") == std::string::npos);
  }
  // A rectangle with no walkable cell: a walled 8 x 8 map with one open cell.
  const auto map = temp_dir() / "walled.map";
  {
    std::ofstream out(map);
    out << "type octile\nheight 8\nwidth 8\nmap\n";
    for (int y = 0; y < 8; ++y) out << (y == 4 ? "@@@@.@@@" : "@@@@@@@@") << "\n";
  }
  // (Two agents: one walkable cell's density limit for the default agent, radius 0.35.)
  const Run r = run_tool("sim " + map.string() + " --agents 2 --ticks 2 --spawn-rect 0,0,3,3 --no-progress");
  INFO(r.out);
  CHECK(r.status == 2);
  CHECK(r.out.find("--spawn-rect '0,0,3,3' holds no walkable cell") != std::string::npos);
  // A player inside a wall: the world would move it to the open cell without a word.
  const Run wall = run_tool("sim " + map.string() + " --agents 1 --ticks 2 --player 1.5,1.5 --no-progress");
  INFO(wall.out);
  CHECK(wall.status == 2);
  CHECK(wall.out.find("--player '1.5,1.5' stands in a wall (cell 1,1 is blocked)") != std::string::npos);
  CHECK(run_tool("sim " + map.string() + " --agents 1 --ticks 2 --player 4.5,4.5 --no-progress", false).status == 0);
  // A map file has its own size: --size beside it is refused (it was ignored without a word).
  const Run sized = run_tool("sim " + map.string() + " --size 64 --agents 1 --ticks 2 --no-progress");
  INFO(sized.out);
  CHECK(sized.status == 2);
  CHECK(sized.out.find("MAP excludes --size") != std::string::npos);
  std::filesystem::remove(map);
}

TEST_CASE("tool sim --kinds-from: the [[kinds]] of a server config file, --kind picks among them") {
  const auto dir = temp_dir();
  const auto write = [&](const std::string& name, const std::string& text) {
    const auto path = dir / name;
    std::ofstream(path) << text;
    return path.string();
  };
  // A config file as the server reads it: other keys are the server's, not read here.
  const std::string good = write("kinds_good.toml",
                                 "tick-hz = 30\n[[kinds]]\nname = \"crawler\"\nradius = 0.3\nspeed = 1.5\nweight = 1\n"
                                 "[[kinds]]\nname = \"tank\"\nradius = 0.9\nspeed = 1\nweight = 1\n");
  const auto csv = dir / "kinds_from.csv";
  const std::string base = "sim --city-seed 1 --size 64 --player 32.5,32.5 --agents 200 --ticks 3 --seed 5 --no-progress ";
  const Run r = run_tool(base + "--kinds-from " + good + " --csv " + csv.string(), false);
  INFO(r.out);
  REQUIRE(r.status == 0);
  std::string header;
  std::map<std::string, int> kinds;
  double fastest = 0;
  for (const Row& row : read_csv(csv, header)) {
    if (row.tick != 3) continue;
    ++kinds[row.kind];
    fastest = std::max(fastest, std::hypot(row.vx, row.vy));
  }
  CHECK(kinds.size() == 2);
  CHECK(kinds["crawler"] > 50);
  CHECK(kinds["tank"] > 50);
  CHECK(fastest <= 1.5 * 1.01);  // the file's speeds, not the default kinds' (runner 4.5)
  // --kind names one of the file's kinds; the default kinds are not there.
  const Run only = run_tool(base + "--kinds-from " + good + " --kind tank --csv " + csv.string(), false);
  REQUIRE(only.status == 0);
  for (const Row& row : read_csv(csv, header)) CHECK(row.kind == "tank");
  const Run unknown = run_tool(base + "--kinds-from " + good + " --kind runner");
  CHECK(unknown.status == 2);
  CHECK(unknown.out.find("unknown kind 'runner' (known: crawler, tank)") != std::string::npos);

  struct Case {
    std::string text;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"tick-hz = 30\n", "no [[kinds]] section"},
      {"kinds = []\n", "needs at least one [[kinds]] section"},
      {"[[kinds]]\nradius = 0.3\n", "kinds[0]: has no 'name'"},
      {"[[kinds]]\nname = \"a\"\nspeed = \"fast\"\n", "kinds[0]: key 'speed' must be a number (got string)"},
      {"[[kinds]]\nname = \"a\"\nweight = 0\n", "kinds[0]: key 'weight' must be > 0"},
      {"[[kinds]\nname = 1\n", "kinds_bad.toml:1:"},
  };
  for (const Case& c : cases) {
    const std::string path = write("kinds_bad.toml", c.text);
    const Run bad = run_tool(base + "--kinds-from " + path);
    INFO(c.text << "\n" << bad.out);
    CHECK(bad.status == 2);
    CHECK(bad.out.find("error: --kinds-from: ") != std::string::npos);
    CHECK(bad.out.find(c.needle) != std::string::npos);
  }
  const Run missing = run_tool(base + "--kinds-from " + (dir / "no-such.toml").string());
  CHECK(missing.status == 2);
  CHECK(missing.out.find("can not read") != std::string::npos);
  const Run folder = run_tool(base + "--kinds-from " + dir.string());
  CHECK(folder.status == 2);
  CHECK(folder.out.find("is a directory, not a TOML file") != std::string::npos);
  // Over the 1 MiB limit of a config file: refused, naming the file and the limit.
  const std::string big = write("kinds_big.toml", "[[kinds]]\nname = \"a\"\n#" + std::string(std::size_t{1} << 20, 'x') + "\n");
  const Run too_big = run_tool(base + "--kinds-from " + big);
  CHECK(too_big.status == 2);
  CHECK(too_big.out.find("error: --kinds-from: config file '" + big + "' is larger than 1 MiB (1048576 bytes)") !=
        std::string::npos);
  std::filesystem::remove(big);
  std::filesystem::remove(csv);
}

TEST_CASE("tool sim: more --agents than the map's density limit is one clear error, exit 2") {
  // The 32 x 32 city (seed 1) has 976 walkable cells: 2299 default agents (radius 0.35) or
  // 4507 runners (radius 0.25) at hexagonal packing. Accepted up to 10 million before.
  const Run r = run_tool("sim --city-seed 1 --size 32 --agents 100000 --ticks 5 --no-progress");
  INFO(r.out);
  CHECK(r.status == 2);
  CHECK(r.out.find("error: --agents 100000 is above the density limit: the map's 976 walkable cells hold at most 2299 "
                   "agents (hexagonal packing of the smallest kind spawned, 'default', radius 0.35); ask for at most "
                   "2299 agents (--agents) or use a bigger map (--size N with --city-seed, or a bigger MAP)") !=
        std::string::npos);
  CHECK(r.out.find("state_hash=") == std::string::npos);
  // The smallest kind spawned sets the limit; a rectangle does not change it (the map's area).
  const Run over = run_tool("sim --city-seed 1 --size 32 --kind runner --kind brute --agents 4508 --ticks 1 --no-progress");
  INFO(over.out);
  CHECK(over.status == 2);
  CHECK(over.out.find("at most 4507 agents (hexagonal packing of the smallest kind spawned, 'runner', radius 0.25)") !=
        std::string::npos);
  const Run rect = run_tool("sim --city-seed 1 --size 32 --agents 2300 --spawn-rect 0,0,32,32 --ticks 1 --no-progress");
  INFO(rect.out);
  CHECK(rect.status == 2);
  CHECK(rect.out.find("--agents 2300 is above the density limit") != std::string::npos);
  // At the limit: runs.
  const Run at = run_tool("sim --city-seed 1 --size 32 --kind runner --agents 4507 --ticks 1 --no-progress", false);
  INFO(at.out);
  CHECK(at.status == 0);
  CHECK(at.out.find("ticks=1 agents=4507 ") != std::string::npos);
}

TEST_CASE("tool sim --spawn-rect: more agents than the rectangle's walkable cells hold is refused like the map's limit") {
  // A 30 x 30 map: open ground in rows 0..5 (180 cells: room for 831 runners), and below it a
  // corridor 2 cells wide, columns 10..11, rows 6..27 (44 cells: 203 runners). Before: only the
  // map's limit was checked, so 300 agents spawned in the corridor and started overlapping.
  const auto map = temp_dir() / "corridor.map";
  {
    std::ofstream out(map);
    out << "type octile\nheight 30\nwidth 30\nmap\n";
    for (int y = 0; y < 30; ++y) {
      std::string row(30, '@');
      for (int x = 0; x < 30; ++x) {
        if (y <= 5 || ((x == 10 || x == 11) && y <= 27)) row[static_cast<std::size_t>(x)] = '.';
      }
      out << row << "\n";
    }
  }
  const std::string scene = "sim " + map.string() + " --player 5.5,2.5 --spawn-rect 10,6,12,28 --kind runner --kind walker "
                            "--ticks 1 --no-progress";
  const Run over = run_tool(scene + " --agents 300");
  INFO(over.out);
  CHECK(over.status == 2);
  CHECK(over.out.find("error: --agents 300 is above the density limit of --spawn-rect '10,6,12,28': its 44 walkable cells "
                      "hold at most 203 agents (hexagonal packing of the smallest kind spawned, 'runner', radius 0.25); "
                      "ask for at most 203 agents (--agents) or give a bigger rectangle (--spawn-rect)") != std::string::npos);
  CHECK(over.out.find("state_hash=") == std::string::npos);
  // At the rectangle's limit: runs. A rectangle's cells partly covered count whole (10.5..11.5: both columns).
  const Run at = run_tool(scene + " --agents 203", false);
  INFO(at.out);
  CHECK(at.status == 0);
  const Run partial = run_tool("sim " + map.string() + " --player 5.5,2.5 --spawn-rect 10.5,6,11.5,28 --kind runner "
                               "--ticks 1 --no-progress --agents 204");
  INFO(partial.out);
  CHECK(partial.status == 2);
  CHECK(partial.out.find("its 44 walkable cells hold at most 203 agents") != std::string::npos);
  std::filesystem::remove(map);
}

namespace {

/// A 40 x 30 map: open ground in rows 0..9; below it a comb of 1-cell corridors (every third
/// column) with one 2 x 2 pocket at columns 21..22, rows 26..27 -- the only place below row 10
/// where a brute's disc (radius 0.8, a 2 x 2 block) fits: its centre in [21.8, 22.2] x [26.8, 27.2].
std::filesystem::path write_comb_map() {
  const auto map = temp_dir() / "comb.map";
  std::ofstream out(map);
  out << "type octile\nheight 30\nwidth 40\nmap\n";
  for (int y = 0; y < 30; ++y) {
    std::string row(40, '.');
    if (y >= 10) {
      for (int x = 0; x < 40; ++x) {
        const bool pocket = (x == 21 || x == 22) && (y == 26 || y == 27);
        if (x % 3 != 0 && !pocket) row[static_cast<std::size_t>(x)] = '@';
      }
    }
    out << row << "\n";
  }
  return map;
}

}  // namespace

TEST_CASE("tool sim --spawn-rect: every agent where its kind's disc fits inside the rectangle") {
  const auto map = write_comb_map();
  const auto csv = temp_dir() / "comb.csv";
  // 1000 uniform draws in the rectangle find the pocket (0.16 of 800 square units) only ~18% of
  // the time: the sampler must use the brute's clearance, not luck.
  const Run r = run_tool("sim " + map.string() + " --player 5.5,5.5 --agents 60 --spawn-rect 0,10,40,30 --kind walker " +
                             "--kind brute --ticks 1 --seed 3 --no-progress --csv " + csv.string(),
                         false);
  INFO(r.out);
  REQUIRE(r.status == 0);
  std::string header;
  const std::vector<Row> rows = read_csv(csv, header);
  REQUIRE(rows.size() == 60);
  int brutes = 0;
  for (const Row& row : rows) {
    INFO(row.kind << " " << row.id << " at " << row.x << "," << row.y);
    // After one tick (a brute moves <= 2/30 units, a walker 0.1): still inside the rectangle.
    CHECK(row.y >= 10.0 - 0.2);
    if (row.kind != "brute") continue;
    ++brutes;
    CHECK(row.x >= 21.8 - 0.1);  // in the pocket, not moved out to the open ground by the repair
    CHECK(row.x <= 22.2 + 0.1);
    CHECK(row.y >= 26.8 - 0.1);
    CHECK(row.y <= 27.2 + 0.1);
  }
  CHECK(brutes > 15);

  // A rectangle of 1-cell corridors only: no place fits a brute; the walker alone is fine.
  const Run none = run_tool("sim " + map.string() + " --player 5.5,5.5 --agents 20 --spawn-rect 0,12,40,25 " +
                            "--kind walker --kind brute --ticks 1 --no-progress");
  INFO(none.out);
  CHECK(none.status == 2);
  CHECK(none.out.find("--spawn-rect '0,12,40,25': no place in it fits a brute (radius 0.8") != std::string::npos);
  CHECK(none.out.find("state_hash=") == std::string::npos);
  const Run walkers =
      run_tool("sim " + map.string() + " --player 5.5,5.5 --agents 20 --spawn-rect 0,12,40,25 --kind walker --ticks 1 "
               "--no-progress");
  CHECK(walkers.status == 0);
  std::filesystem::remove(map);
  std::filesystem::remove(csv);
}

TEST_CASE("tool sim --field-mode: hierarchical on a small map routes (rebuilds count its route builds) and closes in") {
  const std::string base = "sim --city-seed 2 --size 128 --agents 300 --ticks 120 --seed 4 --no-progress --field-mode ";
  const Run whole = run_tool(base + "whole", false);
  const Run hier = run_tool(base + "hierarchical", false);
  INFO(whole.out << "\n" << hier.out);
  REQUIRE(whole.status == 0);
  REQUIRE(hier.status == 0);
  const auto rebuilds = [](const std::string& out) {
    const std::size_t at = last_line(out).find("rebuilds=");
    return at == std::string::npos ? -1L : std::stol(last_line(out).substr(at + 9));
  };
  CHECK(rebuilds(whole.out) > 0);
  CHECK(rebuilds(hier.out) > 0);  // route builds (was 0: the whole-map field's count)
  CHECK(last_line(whole.out) != last_line(hier.out));  // another navigation, another state
}


TEST_CASE("tool sim --sleep-ticks: a settled pile sleeps (the summary counts asleep=), 0 turns sleep off") {
  // 300 walkers round a standing player on open ground, 20 s: the pile forms and rests.
  const auto dir = temp_dir();
  const auto map = dir / "open48.map";
  {
    std::ofstream out(map);
    out << "type octile\nheight 48\nwidth 48\nmap\n";
    for (int y = 0; y < 48; ++y) {
      for (int x = 0; x < 48; ++x) out << ((x == 0 || y == 0 || x == 47 || y == 47) ? '@' : '.');
      out << '\n';
    }
  }
  const std::string scene = "sim " + map.string() + " --player 24.5,24.5 --agents 300 --spawn-rect 4,4,44,44 "
                            "--kind walker --ticks 600 --seed 3 --no-progress";
  // The summary line on stderr: "sim: ... mean_dist=D asleep=N".
  auto asleep = [](const std::string& out) {
    const auto at = out.find("asleep=");
    return at == std::string::npos ? -1L : std::stol(out.substr(at + 7));
  };
  const Run on = run_tool(scene, true);
  INFO(on.out);
  REQUIRE(on.status == 0);
  CHECK(asleep(on.out) > 100);
  const Run off = run_tool(scene + " --sleep-ticks 0", true);
  REQUIRE(off.status == 0);
  CHECK(asleep(off.out) == 0);
  // Each the same on any thread count.
  const std::string on1 = last_line(run_tool(scene, false).out);
  const std::string on3 = last_line(run_tool(scene + " --threads 3", false).out);
  CHECK(on1 == on3);
  const Run bad = run_tool(scene + " --sleep-ticks 256", true);
  CHECK(bad.status == 2);
  CHECK(bad.out.find("--sleep-ticks must be in 0..255") != std::string::npos);
  std::filesystem::remove(map);
}
