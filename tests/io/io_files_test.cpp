// swarmfield::io: map files, .scen parsing, PNG writing (round trip through libpng).
#include <doctest/doctest.h>
#include <png.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/io/png_writer.hpp"
#include "swarmfield/io/scen_file.hpp"
#include "temp_dir.hpp"

using namespace swarmfield;

namespace {

/// A file in a private temporary directory, both removed at the end of the test.
struct TempFile {
  swarmfield::test::TempDir dir{"swarmfield-io-test"};
  std::filesystem::path path;
  explicit TempFile(const std::string& name, const std::string& content = {}) : path(dir / name) {
    if (!content.empty()) std::ofstream(path, std::ios::binary) << content;
  }
  [[nodiscard]] std::string str() const { return path.string(); }
};

}  // namespace

TEST_CASE("read_map_file: MovingAI and ASCII by content; errors name the file") {
  const TempFile mai("a.map", "type octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.@.\r\n...");
  sim::GridMap m;
  sim::MapError e;
  REQUIRE(io::read_map_file(mai.str(), m, e));
  CHECK(m.width() == 3);
  CHECK_FALSE(m.walkable(1, 0));

  const TempFile txt("b.txt", "#####\n#.P.#\n#####\n");
  REQUIRE(io::read_map_file(txt.str(), m, e));
  CHECK(m.width() == 5);
  CHECK(m.walkable_count() == 3);

  // Saved with a UTF-8 byte order mark (Windows Notepad): the same maps (the .map was "expected
  // header 'type octile', found \"\xEF\xBB\xBFtype octile\"", the ASCII map a row of 8 cells).
  const TempFile mai_bom("a_bom.map", "\xEF\xBB\xBFtype octile\r\nheight 2\r\nwidth 3\r\nmap\r\n.@.\r\n...");
  REQUIRE_MESSAGE(io::read_map_file(mai_bom.str(), m, e), e.to_string());
  CHECK(m.width() == 3);
  CHECK_FALSE(m.walkable(1, 0));
  const TempFile txt_bom("b_bom.txt", "\xEF\xBB\xBF#####\n#.P.#\n#####\n");
  REQUIRE_MESSAGE(io::read_map_file(txt_bom.str(), m, e), e.to_string());
  CHECK(m.width() == 5);
  CHECK(m.walkable_count() == 3);

  // A .map file must be MovingAI's format: prose (or a Tiled file saved as .map) is refused
  // with the header it lacks, not read as a one-row ASCII map.
  for (const char* prose : {"hello world\n", "{\"width\": 4, \"height\": 4}", "#####\n#...#\n#####\n"}) {
    const TempFile no_header("d.map", prose);
    CHECK_FALSE(io::read_map_file(no_header.str(), m, e));
    CHECK(e.message.find("type octile") != std::string::npos);
  }

  const TempFile bad("c.map", "type octile\nheight 2\nwidth 3\nmap\n...\n.x.\n");
  CHECK_FALSE(io::read_map_file(bad.str(), m, e));
  CHECK(e.source == bad.str());
  CHECK(e.line == 6);
  CHECK(e.to_string().find(bad.str() + ":6: ") == 0);

  CHECK_FALSE(io::read_map_file("/nonexistent/dir/missing.map", m, e));
  CHECK(e.source == "/nonexistent/dir/missing.map");
  CHECK(e.line == 0);
  CHECK(e.message.find("No such file") != std::string::npos);
  CHECK(m.width() == 5);  // untouched by the failures
}

TEST_CASE("read_map_file: a FIFO, a directory or a device is refused at once, not read") {
  // A FIFO's open() waits for a writer and /dev/zero never ends: the reader must not block or
  // read them (the server would hang at start-up, or fill its memory up to the size limit).
  const TempFile fifo("pipe.map");
  REQUIRE(mkfifo(fifo.str().c_str(), 0600) == 0);
  sim::GridMap m;
  sim::MapError e;
  CHECK_FALSE(io::read_map_file(fifo.str(), m, e));
  CHECK(e.message == "is a FIFO, not a regular file");
  CHECK(e.source == fifo.str());
  CHECK_FALSE(io::read_map_file(fifo.dir.path, m, e));
  CHECK(e.message == "is a directory, not a regular file");
  CHECK_FALSE(io::read_map_file("/dev/zero", m, e));
  CHECK(e.message == "is a character device, not a regular file");
  std::string text, error;
  CHECK_FALSE(io::read_text_file("/dev/null", text, error));
  CHECK(error == "is a character device, not a regular file");
}

TEST_CASE("parse_scen: columns, version line, CRLF, blank lines, zero-length query") {
  std::vector<io::ScenLine> lines;
  std::string error;
  const std::string text =
      "version 1\r\n"
      "0\tBoston_0_256.map\t256\t256\t215\t202\t214\t202\t1.00000000\r\n"
      "\r\n"
      "0\tBoston_0_256.map\t256\t256\t7\t9\t7\t9\t0.00000000\r\n"
      "3 other.map 64 32 1 2 3 4 12.5\n";
  REQUIRE(io::parse_scen(text, "t.scen", lines, error));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].line == 2);
  CHECK(lines[0].map_name == "Boston_0_256.map");
  CHECK(lines[0].map_width == 256);
  CHECK(lines[0].start_x == 215);
  CHECK(lines[0].goal_x == 214);
  CHECK(lines[0].optimal_length == 1.0);
  CHECK(lines[1].optimal_length == 0.0);
  CHECK(lines[2].bucket == 3);
  CHECK(lines[2].map_height == 32);
  CHECK(lines[2].goal_y == 4);
  CHECK(lines[2].optimal_length == 12.5);
}

TEST_CASE("parse_scen: errors give file, line and column") {
  std::vector<io::ScenLine> lines{io::ScenLine{}};
  std::string error;
  CHECK_FALSE(io::parse_scen("version 1\n0\ta.map\t1\t1\t0\t0\t0\n", "x.scen", lines, error));
  CHECK(error.find("x.scen:2: expected 9") == 0);
  CHECK_FALSE(io::parse_scen("0\ta.map\t1\t1\t0\tq\t0\t0\t1.0\n", "x.scen", lines, error));
  CHECK(error.find("x.scen:1:") == 0);
  CHECK(error.find("start_y") != std::string::npos);
  CHECK_FALSE(io::parse_scen("0\ta.map\t1\t1\t-4\t0\t0\t0\t1.0\n", "x.scen", lines, error));
  CHECK(error.find("negative") != std::string::npos);
  CHECK_FALSE(io::parse_scen("0\ta.map\t1\t1\t0\t0\t0\t0\tnan\n", "x.scen", lines, error));
  CHECK(error.find("optimal_length") != std::string::npos);
  CHECK(lines.size() == 1);  // untouched
  CHECK_FALSE(io::read_scen_file("/nonexistent/x.scen", lines, error));
  CHECK(error.find("/nonexistent/x.scen: cannot open file: No such file") == 0);
}

TEST_CASE("read_scen_file: the real Boston_0_256 scenario") {
  std::vector<io::ScenLine> lines;
  std::string error;
  REQUIRE(io::read_scen_file(std::string(SWARMFIELD_MAPS_DIR) + "/street/Boston_0_256.map.scen", lines, error));
  CHECK(lines.size() == 950);
  std::size_t zero = 0;
  for (const auto& l : lines) zero += l.optimal_length == 0.0 ? 1 : 0;
  CHECK(zero == 1);  // README: one start == goal query
}

TEST_CASE("write_png_rgb: round trip through libpng, and errors") {
  const TempFile out("img.png");
  const std::int32_t w = 7;
  const std::int32_t h = 3;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(w * h * 3));
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i * 37 + 11);
  std::string error;
  REQUIRE(io::write_png_rgb(out.str(), w, h, rgb, error));

  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_file(&image, out.str().c_str()) != 0);
  CHECK(image.width == static_cast<png_uint_32>(w));
  CHECK(image.height == static_cast<png_uint_32>(h));
  image.format = PNG_FORMAT_RGB;
  std::vector<std::uint8_t> back(PNG_IMAGE_SIZE(image));
  REQUIRE(png_image_finish_read(&image, nullptr, back.data(), 0, nullptr) != 0);
  CHECK(back == rgb);

  CHECK_FALSE(io::write_png_rgb(out.str(), w, h + 1, rgb, error));
  CHECK(error.find("expected") != std::string::npos);
  CHECK_FALSE(io::write_png_rgb(out.str(), 0, h, {}, error));
  CHECK_FALSE(io::write_png_rgb("/nonexistent/dir/x.png", w, h, rgb, error));
  CHECK(error.find("/nonexistent/dir/x.png: cannot create file") == 0);
}
