// io::parse_png_map / png_map_pixels: the colour table, every PNG colour type, each refusal with
// its message, hostile headers and truncated files, and the round trip through write_png_rgb.
#include <doctest/doctest.h>
#include <png.h>
#include <zlib.h>

#include <csetjmp>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/io/png_map.hpp"
#include "swarmfield/io/png_writer.hpp"
#include "temp_dir.hpp"

using namespace swarmfield;

namespace {

void append_to(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}
void flush_nothing(png_structp) {}

/// A PNG in memory: `rows` hold the raw samples of `colour` at `depth` bits (libpng's layout).
/// `palette` (RGB triples) for palette images, `trns` alpha per palette entry when not empty.
std::string encode(std::uint32_t w, std::uint32_t h, int colour, int depth, const std::vector<std::vector<std::uint8_t>>& rows,
                   int interlace = PNG_INTERLACE_NONE, const std::vector<png_color>& palette = {},
                   const std::vector<std::uint8_t>& trns = {}) {
  std::string out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  REQUIRE(setjmp(png_jmpbuf(png)) == 0);
  png_set_write_fn(png, &out, append_to, flush_nothing);
  png_set_IHDR(png, info, w, h, depth, colour, interlace, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (!palette.empty()) png_set_PLTE(png, info, palette.data(), static_cast<int>(palette.size()));
  if (!trns.empty()) png_set_tRNS(png, info, trns.data(), static_cast<int>(trns.size()), nullptr);
  png_write_info(png, info);
  std::vector<png_bytep> ptrs;
  for (const auto& r : rows) ptrs.push_back(const_cast<png_bytep>(r.data()));
  png_write_image(png, ptrs.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

struct Parsed {
  bool ok = false;
  sim::GridMap map;
  std::vector<sim::CellCoord> spawns;
  std::string error;
};

Parsed parse(const std::string& bytes, std::int32_t max_side = 8192) {
  Parsed p;
  sim::MapError e;
  p.ok = io::parse_png_map(bytes, "x.png", p.map, e, &p.spawns, max_side);
  p.error = p.ok ? "" : e.to_string();
  return p;
}

std::string refusal(const std::string& bytes, std::int32_t max_side = 8192) {
  const Parsed p = parse(bytes, max_side);
  CHECK_FALSE(p.ok);
  CHECK(p.error.rfind("x.png: ", 0) == 0);
  CHECK(p.error.find('\n') == std::string::npos);
  return p.error;
}

/// A bare PNG header claiming `w` x `h` (valid signature and IHDR CRC), and nothing more.
std::string header_only(std::uint32_t w, std::uint32_t h) {
  std::string s("\x89PNG\r\n\x1a\n", 8);
  const auto be = [&](std::uint32_t v) {
    for (int k = 24; k >= 0; k -= 8) s += static_cast<char>((v >> k) & 0xFF);
  };
  be(13);
  const std::size_t chunk = s.size();
  s += "IHDR";
  be(w);
  be(h);
  s += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, no interlace
  be(static_cast<std::uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(s.data() + chunk), 17)));
  return s;
}

}  // namespace

/// A one-row 8-bit palette PNG written byte by byte (no libpng): `indices` as its pixels and a
/// palette of `entries` grey colours, whatever the indices say. IDAT is a zlib stream of one
/// stored (uncompressed) block.
static std::string hand_made_palette_png(const std::vector<std::uint8_t>& indices, int entries) {
  const auto crc32 = [](const std::string& bytes) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (const char ch : bytes) {
      c ^= static_cast<std::uint8_t>(ch);
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return c ^ 0xFFFFFFFFu;
  };
  const auto be32 = [](std::uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  const auto chunk = [&](const std::string& type, const std::string& data) {
    return be32(static_cast<std::uint32_t>(data.size())) + type + data + be32(crc32(type + data));
  };
  std::string ihdr = be32(static_cast<std::uint32_t>(indices.size())) + be32(1);
  ihdr += std::string{8, 3, 0, 0, 0};  // depth 8, palette, deflate, no filter method, no interlace
  std::string plte;
  for (int i = 0; i < entries; ++i) plte += std::string(3, static_cast<char>(i == 0 ? 255 : 0));
  std::string raw(1, '\0');  // filter type 0
  for (const std::uint8_t v : indices) raw += static_cast<char>(v);
  std::uint32_t a = 1, b = 0;  // Adler-32 of the raw bytes
  for (const char ch : raw) {
    a = (a + static_cast<std::uint8_t>(ch)) % 65521u;
    b = (b + a) % 65521u;
  }
  const auto n = static_cast<std::uint16_t>(raw.size());
  std::string idat = {0x78, 0x01, 0x01, static_cast<char>(n & 0xFF), static_cast<char>(n >> 8),
                      static_cast<char>(~n & 0xFF), static_cast<char>((~n >> 8) & 0xFF)};
  idat += raw + be32((b << 16) | a);
  return std::string("\x89PNG\r\n\x1a\n", 8) + chunk("IHDR", ihdr) + chunk("PLTE", plte) + chunk("IDAT", idat) +
         chunk("IEND", "");
}

TEST_CASE("parse_png_map: black wall, grey cost 256 - v, red spawn, alpha 0 wall") {
  // RGBA: white, grey 254, grey 128, grey 1, black, red, transparent green.
  const std::vector<std::vector<std::uint8_t>> rows = {
      {255, 255, 255, 255, 254, 254, 254, 255, 128, 128, 128, 255, 1, 1, 1, 255, 0, 0, 0, 255, 255, 0, 0, 255, 0, 255, 0, 0}};
  const Parsed p = parse(encode(7, 1, PNG_COLOR_TYPE_RGB_ALPHA, 8, rows));
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK(p.map.costs() == std::vector<std::uint8_t>{1, 2, 128, 255, 255, 1, 255});
  CHECK(p.spawns == std::vector<sim::CellCoord>{{5, 0}});
}

TEST_CASE("parse_png_map: grey, 16-bit, 1-bit, palette and palette-with-transparency images") {
  // 8-bit grey and 16-bit grey (scaled to 8 bits).
  CHECK(parse(encode(3, 1, PNG_COLOR_TYPE_GRAY, 8, {{255, 200, 0}})).map.costs() == std::vector<std::uint8_t>{1, 56, 255});
  CHECK(parse(encode(2, 1, PNG_COLOR_TYPE_GRAY, 16, {{0xFF, 0xFF, 0x00, 0x00}})).map.costs() ==
        std::vector<std::uint8_t>{1, 255});
  // 1-bit grey: 1 white, 0 black (bits 1 0 1 0 0 0 0 0).
  CHECK(parse(encode(3, 1, PNG_COLOR_TYPE_GRAY, 1, {{0xA0}})).map.costs() == std::vector<std::uint8_t>{1, 255, 1});
  // Palette: white, red, black; entry 2 transparent through tRNS.
  const std::vector<png_color> pal = {{255, 255, 255}, {255, 0, 0}, {7, 7, 7}};
  const Parsed p = parse(encode(3, 1, PNG_COLOR_TYPE_PALETTE, 8, {{0, 1, 2}}, PNG_INTERLACE_NONE, pal, {255, 255, 0}));
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK(p.map.costs() == std::vector<std::uint8_t>{1, 1, 255});
  CHECK(p.spawns.size() == 1);
  // 2-bit palette indices (packed four to a byte): white, black, white, black.
  const std::vector<png_color> two = {{255, 255, 255}, {0, 0, 0}};
  const Parsed packed = parse(encode(4, 1, PNG_COLOR_TYPE_PALETTE, 2, {{0x11}}, PNG_INTERLACE_NONE, two));
  REQUIRE_MESSAGE(packed.ok, packed.error);
  CHECK(packed.map.costs() == std::vector<std::uint8_t>{1, 255, 1, 255});
}

TEST_CASE("parse_png_map: colours outside the table, partial alpha and interlacing are refused") {
  // A palette index beyond the palette: libpng's reader would draw it black (a wall); it is an
  // error. (libpng's writer refuses to write one, so the file is put together by hand.)
  CHECK(refusal(hand_made_palette_png({0, 1, 5, 0}, 2))
            .find("pixel (2, 0) has palette index 5, beyond the image's palette of 2 colours") != std::string::npos);
  CHECK(refusal(encode(3, 2, PNG_COLOR_TYPE_RGB, 8, {{255, 255, 255, 0, 0, 0, 9, 9, 9}, {255, 255, 255, 18, 52, 86, 0, 0, 0}}))
            .find("pixel (1, 1) has colour #123456 alpha 255, which the map colour table does not name") !=
        std::string::npos);
  CHECK(refusal(encode(1, 1, PNG_COLOR_TYPE_GRAY_ALPHA, 8, {{255, 128}})).find("pixel (0, 0) has colour #ffffff alpha 128") !=
        std::string::npos);
  CHECK(refusal(encode(4, 4, PNG_COLOR_TYPE_GRAY, 8, std::vector<std::vector<std::uint8_t>>(4, {255, 255, 255, 255}),
                       PNG_INTERLACE_ADAM7))
            .find("interlaced (Adam7) PNGs are not supported") != std::string::npos);
}

TEST_CASE("parse_png_map: hostile headers and broken files are refused before rows are read") {
  CHECK(refusal("").find("not a PNG file") != std::string::npos);
  CHECK(refusal("GIF89a....").find("not a PNG file") != std::string::npos);
  // A tiny file claiming a huge image: refused from its header, nothing allocated.
  CHECK(refusal(header_only(100000, 100000)).find("image is 100000 x 100000 pixels; each side must be 1..8192") !=
        std::string::npos);
  CHECK(refusal(header_only(0xFFFFFFFF, 1)).find("4294967295 x 1") != std::string::npos);
  CHECK(refusal(header_only(9000, 1)).find("1..8192") != std::string::npos);
  CHECK(refusal(header_only(600, 1), 512).find("1..512") != std::string::npos);
  // A header within limits but no image data: libpng's reason.
  CHECK(refusal(header_only(64, 64)).find("bad PNG: the file ends early (truncated PNG)") != std::string::npos);
  // A real image cut short, or with a byte of its data changed (CRC).
  const std::string good = encode(64, 64, PNG_COLOR_TYPE_GRAY, 8, std::vector<std::vector<std::uint8_t>>(64, std::vector<std::uint8_t>(64, 255)));
  REQUIRE(parse(good).ok);
  for (std::size_t cut = 9; cut < good.size(); cut += 7) {
    const Parsed p = parse(good.substr(0, cut));
    CHECK_FALSE(p.ok);
    CHECK(p.error.rfind("x.png: ", 0) == 0);
  }
  std::string corrupt = good;
  corrupt[corrupt.size() / 2] = static_cast<char>(corrupt[corrupt.size() / 2] ^ 0x55);
  CHECK(refusal(corrupt).find("bad PNG: ") != std::string::npos);
}

TEST_CASE("png_map_pixels: every cost and spawn survive write_png_rgb and parse_png_map") {
  sim::GridMap m(16, 16);
  for (int c = 1; c <= 255; ++c) m.set_cost(c % 16, c / 16, static_cast<std::uint8_t>(c));
  const std::vector<sim::CellCoord> spawns{{0, 0}, {1, 0} /* a wall: dropped */};
  m.set_cost(1, 0, sim::kBlockedCost);
  std::vector<std::uint8_t> rgb;
  std::string error;
  REQUIRE(io::png_map_pixels(m, spawns, rgb, error));
  const swarmfield::test::TempDir dir("swarmfield-png-map-test");
  const std::string path = (dir / "m.png").string();
  REQUIRE_MESSAGE(io::write_png_rgb(path, 16, 16, rgb, error), error);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Parsed p = parse(bytes);
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK(p.map.costs() == m.costs());
  CHECK(p.spawns == std::vector<sim::CellCoord>{{0, 0}});

  // The table has one spawn colour, of cost 1: a spawn cell of another cost can not be drawn.
  m.set_cost(0, 0, 9);
  CHECK_FALSE(io::png_map_pixels(m, {{0, 0}}, rgb, error));
  CHECK(error == "spawn cell (0, 0) has cost 9; the PNG colour table has spawn cells of cost 1 only");
}

TEST_CASE("the sample PNG map in docs/maps loads through read_map_file, as the .tmj it was drawn from") {
  sim::GridMap png;
  sim::GridMap tmj;
  sim::MapError e;
  std::vector<sim::CellCoord> png_spawns;
  std::vector<sim::CellCoord> tmj_spawns;
  REQUIRE_MESSAGE(io::read_map_file(std::string(SWARMFIELD_SOURCE_DIR) + "/docs/maps/sample_city.png", png, e, &png_spawns),
                  e.to_string());
  REQUIRE_MESSAGE(io::read_map_file(std::string(SWARMFIELD_SOURCE_DIR) + "/docs/maps/sample_city.tmj", tmj, e, &tmj_spawns),
                  e.to_string());
  CHECK(png.costs() == tmj.costs());
  CHECK(png_spawns == tmj_spawns);
  CHECK(png_spawns.size() == 20);
}
