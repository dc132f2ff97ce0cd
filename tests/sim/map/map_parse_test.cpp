// MovingAI and ASCII map parsing: good input, every error, line endings, real files.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

using namespace swarmfield::sim;

namespace {

const std::string kGood =
    "type octile\n"
    "height 3\n"
    "width 4\n"
    "map\n"
    ".G@O\n"
    "TWS.\n"
    "....\n";

std::string with_crlf(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

/// Parses `text` expecting failure; returns the error.
MapError parse_fail(const std::string& text) {
  GridMap out(1, 1, 9);
  MapError error;
  const bool ok = parse_movingai_map(text, "bad.map", out, error);
  CHECK_FALSE(ok);
  CHECK(out.width() == 1);  // untouched
  CHECK(out.cost(0, 0) == 9);
  CHECK(error.source == "bad.map");
  return error;
}

}  // namespace

TEST_CASE("movingai: good map, every terrain character") {
  GridMap m;
  MapError e;
  REQUIRE(parse_movingai_map(kGood, "good.map", m, e, 5));
  CHECK(m.width() == 4);
  CHECK(m.height() == 3);
  CHECK(m.cost(0, 0) == 1);             // .
  CHECK(m.cost(1, 0) == 1);             // G
  CHECK(m.cost(2, 0) == kBlockedCost);  // @
  CHECK(m.cost(3, 0) == kBlockedCost);  // O
  CHECK(m.cost(0, 1) == kBlockedCost);  // T
  CHECK(m.cost(1, 1) == kBlockedCost);  // W
  CHECK(m.cost(2, 1) == 5);             // S with swamp_cost 5
  CHECK(m.walkable_count() == 8);
}

TEST_CASE("movingai: CRLF and a missing final newline parse the same") {
  GridMap lf;
  GridMap crlf;
  GridMap no_nl;
  GridMap crlf_no_nl;
  MapError e;
  REQUIRE(parse_movingai_map(kGood, "a", lf, e));
  REQUIRE(parse_movingai_map(with_crlf(kGood), "b", crlf, e));
  REQUIRE(parse_movingai_map(kGood.substr(0, kGood.size() - 1), "c", no_nl, e));
  const std::string c = with_crlf(kGood);
  REQUIRE(parse_movingai_map(c.substr(0, c.size() - 2), "d", crlf_no_nl, e));
  CHECK(crlf.costs() == lf.costs());
  CHECK(no_nl.costs() == lf.costs());
  CHECK(crlf_no_nl.costs() == lf.costs());
}

TEST_CASE("movingai: trailing blank lines are tolerated") {
  GridMap m;
  MapError e;
  CHECK(parse_movingai_map(kGood + "\n\n", "t", m, e));
}

TEST_CASE("movingai: header errors name the source, line and problem") {
  SUBCASE("empty file") {
    const MapError e = parse_fail("");
    CHECK(e.message.find("empty") != std::string::npos);
  }
  SUBCASE("a map type other than octile") {
    const MapError e = parse_fail("type hexagonal\nheight 1\nwidth 4\nmap\n....\n");
    CHECK(e.line == 1);
    CHECK(e.message.find("\"hexagonal\" is not supported") != std::string::npos);
  }
  SUBCASE("missing type line") {
    const MapError e = parse_fail("height 3\nwidth 4\nmap\n....\n");
    CHECK(e.line == 1);
    CHECK(e.message.find("type octile") != std::string::npos);
    CHECK(e.to_string().rfind("bad.map:1: ", 0) == 0);
  }
  SUBCASE("a binary file: its bytes are quoted as \\xNN, never copied raw") {
    const MapError e = parse_fail(std::string("\x7f" "ELF\x02\x01\x1b[31m\r\x00zz\n", 16));
    CHECK(e.line == 1);
    CHECK(e.message.find("found \"\\x7FELF\\x02\\x01\\x1B[31m\\x0D\\x00zz\"") != std::string::npos);
    const std::string text = e.to_string();
    CHECK(std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; }));
  }
  SUBCASE("height not a number") {
    const MapError e = parse_fail("type octile\nheight x3\nwidth 4\nmap\n");
    CHECK(e.line == 2);
    CHECK(e.message.find("height") != std::string::npos);
  }
  SUBCASE("height zero") {
    const MapError e = parse_fail("type octile\nheight 0\nwidth 4\nmap\n");
    CHECK(e.line == 2);
    CHECK(e.message.find("out of range") != std::string::npos);
  }
  SUBCASE("width too large") {
    const MapError e = parse_fail("type octile\nheight 3\nwidth 99999\nmap\n");
    CHECK(e.line == 3);
    CHECK(e.message.find("width") != std::string::npos);
  }
  SUBCASE("width line missing") {
    const MapError e = parse_fail("type octile\nheight 3\nmap\n....\n");
    CHECK(e.line == 3);
    CHECK(e.message.find("width") != std::string::npos);
  }
  SUBCASE("map line missing") {
    const MapError e = parse_fail("type octile\nheight 1\nwidth 4\n....\n");
    CHECK(e.line == 4);
    CHECK(e.message.find("'map'") != std::string::npos);
  }
  SUBCASE("file ends in the header") {
    const MapError e = parse_fail("type octile\nheight 1\n");
    CHECK(e.message.find("ends inside the header") != std::string::npos);
  }
}

TEST_CASE("movingai: body errors name the line and problem") {
  const std::string head = "type octile\nheight 3\nwidth 4\nmap\n";
  SUBCASE("row too short") {
    const MapError e = parse_fail(head + "....\n...\n....\n");
    CHECK(e.line == 6);
    CHECK(e.message.find("3 characters, expected width 4") != std::string::npos);
  }
  SUBCASE("a non-ASCII character is named, not counted as bytes") {
    const MapError e = parse_fail(head + "....\n.\xc3\xa9..\n....\n");  // ".é..": 4 letters, 5 bytes
    CHECK(e.line == 6);
    CHECK(e.message.find("row 1 holds a non-ASCII character at column 1") != std::string::npos);
  }
  SUBCASE("row too long") {
    const MapError e = parse_fail(head + "....\n....\n.....\n");
    CHECK(e.line == 7);
  }
  SUBCASE("bad character") {
    const MapError e = parse_fail(head + "....\n..x.\n....\n");
    CHECK(e.line == 6);
    CHECK(e.message.find("'x'") != std::string::npos);
    CHECK(e.message.find("column 3") != std::string::npos);
  }
  SUBCASE("control character is shown as a byte code") {
    const MapError e = parse_fail(head + "....\n..\t.\n....\n");
    CHECK(e.message.find("0x09") != std::string::npos);
  }
  SUBCASE("too few rows") {
    const MapError e = parse_fail(head + "....\n....\n");
    CHECK(e.line == 7);
    CHECK(e.message.find("too few rows") != std::string::npos);
  }
  SUBCASE("no rows at all") {
    const MapError e = parse_fail(head);
    CHECK(e.line == 5);
    CHECK(e.message.find("too few rows") != std::string::npos);
  }
  SUBCASE("too many rows") {
    const MapError e = parse_fail(head + "....\n....\n....\n....\n");
    CHECK(e.line == 8);
    CHECK(e.message.find("too many rows") != std::string::npos);
  }
  SUBCASE("CRLF errors report the same line") {
    const MapError e = parse_fail(with_crlf(head + "....\n..x.\n....\n"));
    CHECK(e.line == 6);
  }
}

TEST_CASE("ascii: walls, markers in row-major order, leading blank lines skipped") {
  GridMap m;
  MapError e;
  std::vector<MapMarker> markers;
  REQUIRE(parse_ascii_map(R"(
#####
#A.P#
#a..#
#####
)",
                          "t", m, e, &markers));
  CHECK(m.width() == 5);
  CHECK(m.height() == 4);
  CHECK_FALSE(m.walkable(0, 0));
  CHECK(m.walkable(1, 1));
  CHECK(m.cost(1, 1) == kDefaultCost);  // markers are walkable
  REQUIRE(markers.size() == 3);
  CHECK(markers[0].symbol == 'A');
  CHECK(markers[0].cell == CellCoord{1, 1});
  CHECK(markers[1].symbol == 'P');
  CHECK(markers[1].cell == CellCoord{3, 1});
  CHECK(markers[2].symbol == 'a');
  CHECK(markers[2].cell == CellCoord{1, 2});
}

TEST_CASE("ascii: errors") {
  GridMap m;
  MapError e;
  CHECK_FALSE(parse_ascii_map("\n\n", "t", m, e));
  CHECK(e.message.find("empty") != std::string::npos);
  CHECK_FALSE(parse_ascii_map("###\n#.\n###\n", "t", m, e));
  CHECK(e.line == 2);
  CHECK(e.message.find("expected 3") != std::string::npos);
  CHECK_FALSE(parse_ascii_map("###\n#\x01#\n###\n", "t", m, e));
  CHECK(e.line == 2);
  CHECK(e.message.find("column 2") != std::string::npos);
}

TEST_CASE("real MovingAI files parse with the documented sizes and free counts") {
  struct Case {
    const char* path;
    std::int32_t w, h;
    std::size_t free;
  };
  // Counts from data/maps/README.md.
  const Case cases[] = {
      {"/street/Berlin_0_256.map", 256, 256, 48147},  // CRLF, no final newline
      {"/street/Boston_0_256.map", 256, 256, 47768},  // CRLF
      {"/game/den312d.map", 65, 81, 2445},            // LF, with T (trees, blocked)
  };
  // The Berlin file really ends without a newline (so the case is covered).
  std::string berlin;
  std::string reason;
  REQUIRE(swarmfield::io::read_text_file(std::string(SWARMFIELD_MAPS_DIR) + "/street/Berlin_0_256.map", berlin, reason));
  REQUIRE_FALSE(berlin.empty());
  CHECK(berlin.back() != '\n');
  for (const Case& c : cases) {
    CAPTURE(c.path);
    GridMap m;
    MapError e;
    const bool ok = swarmfield::io::read_map_file(std::string(SWARMFIELD_MAPS_DIR) + c.path, m, e);
    INFO(e.to_string());
    REQUIRE(ok);
    CHECK(m.width() == c.w);
    CHECK(m.height() == c.h);
    CHECK(m.walkable_count() == c.free);
  }
}

TEST_CASE("a MovingAI scenario given as a map is named as such, not as a map with a bad row") {
  // Before: "row 1 has 53 characters, expected 9" for Boston_0_256.map.scen.
  const std::string scen =
      "version 1\n"
      "0\tBoston_0_256.map\t256\t256\t215\t202\t214\t202\t1.00000000\n"
      "0\tBoston_0_256.map\t256\t256\t65\t165\t66\t162\t3.41421356\n";
  swarmfield::sim::GridMap map;
  swarmfield::sim::MapError error;
  CHECK_FALSE(swarmfield::sim::parse_ascii_map(scen, "Boston_0_256.map.scen", map, error));
  CHECK(error.message.find("MovingAI scenario file (.scen") != std::string::npos);
  // A map whose first row happens to start with "version " is still a map.
  CHECK(swarmfield::sim::parse_ascii_map("version .\n.........\n", "odd.txt", map, error));
}
