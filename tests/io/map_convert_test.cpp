// io::map_format_of / read_map_file / write_map_file across the three formats: the extension
// picks the format, conversions reproduce the grid, a format that can not hold a map says so.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "skip.hpp"
#include "swarmfield/io/map_file.hpp"
#include "temp_dir.hpp"

using namespace swarmfield;

namespace {

std::string path_in(const swarmfield::test::TempDir& dir, const std::string& name) { return (dir / name).string(); }

/// Writes `map` as `a`, reads it back, writes that as `b`, reads it back: both reads must give
/// the original costs.
void round_trip(const sim::GridMap& map, const std::string& a, const std::string& b) {
  std::string error;
  REQUIRE_MESSAGE(io::write_map_file(a, map, {}, error), error);
  sim::GridMap back;
  sim::MapError e;
  REQUIRE_MESSAGE(io::read_map_file(a, back, e), e.to_string());
  CHECK(back.width() == map.width());
  CHECK(back.height() == map.height());
  CHECK(back.costs() == map.costs());
  REQUIRE_MESSAGE(io::write_map_file(b, back, {}, error), error);
  sim::GridMap again;
  REQUIRE_MESSAGE(io::read_map_file(b, again, e), e.to_string());
  CHECK(again.costs() == map.costs());
}

}  // namespace

TEST_CASE("map_format_of: by extension, case-insensitive; anything else is MovingAI text") {
  CHECK(io::map_format_of("maps/x.tmj") == io::MapFormat::kTiled);
  CHECK(io::map_format_of("x.JSON") == io::MapFormat::kTiled);
  CHECK(io::map_format_of("a.b/x.Png") == io::MapFormat::kPng);
  CHECK(io::map_format_of("x.map") == io::MapFormat::kMovingAi);
  CHECK(io::map_format_of("x.txt") == io::MapFormat::kMovingAi);
  CHECK(io::map_format_of("dir.png/x") == io::MapFormat::kMovingAi);
  CHECK(io::map_format_of("png") == io::MapFormat::kMovingAi);
}

TEST_CASE("read_map_file: a file of one format named as another is refused naming the file") {
  const swarmfield::test::TempDir dir("swarmfield-convert-test");
  const std::string fake_png = path_in(dir, "x.png");
  std::ofstream(fake_png) << "type octile\nheight 1\nwidth 1\nmap\n.\n";
  sim::GridMap m;
  sim::MapError e;
  CHECK_FALSE(io::read_map_file(fake_png, m, e));
  CHECK(e.to_string() == fake_png + ": not a PNG file (no PNG signature)");
  const std::string fake_tmj = path_in(dir, "x.tmj");
  std::ofstream(fake_tmj) << "type octile\n";
  CHECK_FALSE(io::read_map_file(fake_tmj, m, e));
  CHECK(e.to_string().rfind(fake_tmj + ": malformed JSON: ", 0) == 0);
}

TEST_CASE("write_map_file: map -> tmj -> map and map -> png -> map reproduce the grid") {
  const swarmfield::test::TempDir dir("swarmfield-convert-test");
  sim::GridMap m(7, 5);
  m.set_cost(1, 1, sim::kBlockedCost);
  m.set_cost(2, 3, 3);  // swamp: the one cost besides 1 that a .map holds
  round_trip(m, path_in(dir, "a.tmj"), path_in(dir, "a.map"));
  round_trip(m, path_in(dir, "b.png"), path_in(dir, "b.map"));
  round_trip(m, path_in(dir, "c.map"), path_in(dir, "c.png"));
  round_trip(m, path_in(dir, "d.map"), path_in(dir, "d.json"));
}

TEST_CASE("write_map_file: a .map can not hold other costs; spawns it drops are reported; no partial file") {
  const swarmfield::test::TempDir dir("swarmfield-convert-test");
  sim::GridMap m(4, 2);
  m.set_cost(3, 1, 7);
  std::string error;
  const std::string out = path_in(dir, "x.map");
  CHECK_FALSE(io::write_map_file(out, m, {}, error));
  CHECK(error == out + ": cell (3, 1) has cost 7, which a MovingAI .map can not hold (1 '.', 3 'S', walls '@'); use "
                       ".tmj or .png");
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK_FALSE(std::filesystem::exists(out + ".tmp"));

  m.set_cost(3, 1, 1);
  bool dropped = false;
  REQUIRE(io::write_map_file(out, m, {{0, 0}}, error, &dropped));
  CHECK(dropped);
  REQUIRE(io::write_map_file(path_in(dir, "x.tmj"), m, {{0, 0}}, error, &dropped));
  CHECK_FALSE(dropped);

  CHECK_FALSE(io::write_map_file(path_in(dir, "no/such/dir/x.tmj"), m, {}, error));
  CHECK(error.find("no/such/dir/x.tmj: cannot create file: No such file") != std::string::npos);
}

// Its own ctest entry (io_map_convert_shared): skipped, never passed, without ../shared.
TEST_CASE("shared map: Boston_0_256.map -> tmj -> map and -> png -> map reproduce the grid") {
  const std::string path = std::string(SWARMFIELD_MAPS_DIR) + "/street/Boston_0_256.map";
  if (!std::filesystem::exists(path)) swarmfield::test::skip_test("no shared map " + path);
  sim::GridMap m;
  sim::MapError e;
  REQUIRE_MESSAGE(io::read_map_file(path, m, e), e.to_string());
  const swarmfield::test::TempDir dir("swarmfield-convert-test");
  round_trip(m, path_in(dir, "boston.tmj"), path_in(dir, "boston.map"));
  round_trip(m, path_in(dir, "boston.png"), path_in(dir, "boston2.map"));
  // Byte for byte: the .map written from the .tmj is the original file's grid in its own format.
  std::string text;
  std::string error;
  REQUIRE(io::encode_movingai_map(m, text, error));
  sim::GridMap again;
  REQUIRE(sim::parse_movingai_map(text, "again", again, e));
  CHECK(again.costs() == m.costs());
}
