// io::parse_tiled_map / encode_tiled_map: the property convention, every encoding, each refusal
// with its message, hostile input, and the round trip through the writer.
#include <doctest/doctest.h>
#include <zlib.h>
#include <zstd.h>

#include <string>
#include <vector>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/io/tiled_map.hpp"
#include "../../server/io/src/layer_codecs.hpp"

using namespace swarmfield;

namespace {

// Tiles of the test tileset (firstgid 1): 1 floor (cost 1), 2 mud (cost 5), 3 wall, 4 spawn,
// 5 no properties.
const std::string kTileset = R"({"firstgid": 1, "name": "t", "tilecount": 5, "tiles": [
  {"id": 0, "properties": [{"name": "cost", "type": "int", "value": 1}]},
  {"id": 1, "properties": [{"name": "cost", "type": "int", "value": 5}, {"name": "note", "type": "string", "value": "x"}]},
  {"id": 2, "properties": [{"name": "wall", "type": "bool", "value": true}]},
  {"id": 3, "properties": [{"name": "spawn", "type": "bool", "value": true}, {"name": "wall", "type": "bool", "value": false}]},
  {"id": 4}]})";

/// A map document: `layer` is the body of the one tile layer after its size (e.g. the data).
std::string tmj(int w, int h, const std::string& layer, const std::string& tilesets = "[" + kTileset + "]",
                const std::string& top = "\"orientation\": \"orthogonal\", \"infinite\": false") {
  return "{" + top + ", \"width\": " + std::to_string(w) + ", \"height\": " + std::to_string(h) +
         ", \"tilesets\": " + tilesets + ", \"layers\": [{\"name\": \"ground\", \"type\": \"tilelayer\", \"width\": " +
         std::to_string(w) + ", \"height\": " + std::to_string(h) + ", " + layer + "}]}";
}

struct Parsed {
  bool ok = false;
  sim::GridMap map;
  std::vector<sim::CellCoord> spawns;
  std::string error;
};

Parsed parse(const std::string& text, std::int32_t max_side = 8192) {
  Parsed p;
  sim::MapError e;
  p.ok = io::parse_tiled_map(text, "x.tmj", p.map, e, &p.spawns, max_side);
  p.error = p.ok ? "" : e.to_string();
  return p;
}

/// The refusal message of `text` (checks it names the file and is one line).
std::string refusal(const std::string& text) {
  const Parsed p = parse(text);
  CHECK_FALSE(p.ok);
  CHECK(p.error.rfind("x.tmj: ", 0) == 0);
  CHECK(p.error.find('\n') == std::string::npos);
  return p.error;
}

std::vector<std::uint8_t> le_gids(const std::vector<std::uint32_t>& gids) {
  std::vector<std::uint8_t> raw;
  for (const std::uint32_t g : gids)
    for (int b = 0; b < 4; ++b) raw.push_back(static_cast<std::uint8_t>(g >> (8 * b)));
  return raw;
}

std::vector<std::uint8_t> gzip(const std::vector<std::uint8_t>& in) {
  z_stream s{};
  REQUIRE(deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<std::uint8_t> out(deflateBound(&s, static_cast<uLong>(in.size())) + 32);
  s.next_in = const_cast<Bytef*>(in.data());
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

std::string base64_layer(const std::vector<std::uint8_t>& bytes, const std::string& compression) {
  return "\"encoding\": \"base64\", \"compression\": \"" + compression + "\", \"data\": \"" +
         io::detail::base64_encode(bytes) + "\"";
}

}  // namespace

TEST_CASE("parse_tiled_map: costs, walls, spawn, empty cells; other properties ignored") {
  const Parsed p = parse(tmj(3, 2, R"("data": [1, 2, 3, 4, 0, 1])"));
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK(p.map.width() == 3);
  CHECK(p.map.height() == 2);
  CHECK(p.map.costs() == std::vector<std::uint8_t>{1, 5, 255, 1, 1, 1});
  REQUIRE(p.spawns.size() == 1);
  CHECK(p.spawns[0] == sim::CellCoord{0, 1});
}

TEST_CASE("parse_tiled_map: the same grid from array, csv string, base64, zlib, gzip and zstd data") {
  const std::vector<std::uint32_t> gids{3, 3, 1, 2, 0, 3};
  const std::vector<std::uint8_t> expected{255, 255, 1, 5, 1, 255};
  const std::vector<std::uint8_t> raw = le_gids(gids);
  std::vector<std::uint8_t> zstd(ZSTD_compressBound(raw.size()));
  zstd.resize(ZSTD_compress(zstd.data(), zstd.size(), raw.data(), raw.size(), 3));
  const std::vector<std::string> layers = {
      R"("data": [3, 3, 1, 2, 0, 3])",
      R"("encoding": "csv", "data": "3,3,1,\n2, 0,3\n")",
      "\"encoding\": \"base64\", \"data\": \"" + io::detail::base64_encode(raw) + "\"",
      base64_layer(raw, ""),
      base64_layer(io::detail::zlib_compress(raw), "zlib"),
      base64_layer(gzip(raw), "gzip"),
      base64_layer(zstd, "zstd"),
  };
  for (const std::string& layer : layers) {
    const Parsed p = parse(tmj(3, 2, layer));
    INFO(layer);
    REQUIRE_MESSAGE(p.ok, p.error);
    CHECK(p.map.costs() == expected);
  }
}

TEST_CASE("parse_tiled_map: flip bits are masked off; several tilesets by firstgid; layers stack") {
  const std::string sets = "[" + kTileset + R"(, {"firstgid": 100, "name": "u", "tiles": [
      {"id": 2, "properties": [{"name": "cost", "type": "float", "value": 9.0}]}]}])";
  // 0x80000003: wall flipped horizontally; 0x20000002: mud flipped diagonally; 102: u's tile 2.
  const Parsed p = parse(tmj(2, 2, R"("data": [2147483651, 536870914, 102, 1])", sets));
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK(p.map.costs() == std::vector<std::uint8_t>{255, 5, 9, 1});

  // Two layers: the highest cost wins, a wall anywhere blocks, a spawn under a wall is no spawn.
  const std::string two = R"({"orientation": "orthogonal", "width": 2, "height": 1, "tilesets": [)" + kTileset +
                          R"(], "layers": [
      {"name": "a", "type": "tilelayer", "width": 2, "height": 1, "data": [2, 4]},
      {"name": "o", "type": "objectgroup", "objects": []},
      {"name": "b", "type": "tilelayer", "width": 2, "height": 1, "data": [1, 3]}]})";
  const Parsed q = parse(two);
  REQUIRE_MESSAGE(q.ok, q.error);
  CHECK(q.map.costs() == std::vector<std::uint8_t>{5, 255});
  CHECK(q.spawns.empty());
}

TEST_CASE("parse_tiled_map: what is not supported is refused, saying what and how") {
  CHECK(refusal(tmj(2, 1, R"("data": [1, 1])", "[" + kTileset + "]", R"("orientation": "isometric")"))
            .find("orientation 'isometric' is not supported; only orthogonal maps are") != std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("data": [1, 1])", "[" + kTileset + "]", R"("infinite": true)"))
            .find("infinite (chunked layers); only fixed-size maps are supported") != std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("chunks": [], "data": [1, 1])")).find("layer 'ground' is infinite (chunked)") !=
        std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("data": [1, 1])", R"([{"firstgid": 1, "source": "terrain.tsx"}])"))
            .find("tileset 'terrain.tsx' is external") != std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("data": [1, 5])"))
            .find("tile 4 of tileset 't' (GID 5, used at cell (1, 0)) has no 'wall' or 'cost' property") !=
        std::string::npos);
  CHECK(refusal(R"({"type": "tileset", "name": "t"})").find("is a Tiled 'tileset' file, not a map") !=
        std::string::npos);
  CHECK(refusal(R"({"width": 1, "height": 1, "tilesets": [], "layers": [{"name": "g", "type": "group", "layers": []}]})")
            .find("layer 'g' is a group layer") != std::string::npos);
  CHECK(refusal(R"({"width": 1, "height": 1, "tilesets": [], "layers": []})").find("no tile layer") !=
        std::string::npos);
  CHECK(refusal(tmj(2, 1, base64_layer({1, 2, 3}, "lzma"))).find("compression 'lzma' is not supported") !=
        std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("encoding": "xml", "data": "1,1")")).find("encoding 'xml' is not supported") !=
        std::string::npos);
}

TEST_CASE("parse_tiled_map: bad properties are refused naming the tile") {
  const auto with_tile = [](const std::string& props) {
    return tmj(1, 1, R"("data": [1])", R"([{"firstgid": 1, "name": "t", "tiles": [{"id": 0, "properties": )" + props + "}]}]");
  };
  CHECK(refusal(with_tile(R"([{"name": "cost", "type": "int", "value": 0}])"))
            .find("tileset 't' tile 0: property 'cost' 0 is out of range (1..254)") != std::string::npos);
  CHECK(refusal(with_tile(R"([{"name": "cost", "type": "int", "value": 255}])")).find("out of range (1..254)") !=
        std::string::npos);
  CHECK(refusal(with_tile(R"([{"name": "cost", "type": "float", "value": 2.5}])")).find("'cost' 2.5 is out of range") !=
        std::string::npos);
  CHECK(refusal(with_tile(R"([{"name": "wall", "type": "string", "value": "yes"}])"))
            .find("property 'wall' must be a bool, found string") != std::string::npos);
  CHECK(refusal(with_tile(R"([{"name": "wall", "value": true}, {"name": "spawn", "value": true}])"))
            .find("both 'wall' and 'spawn'") != std::string::npos);
  CHECK(refusal(with_tile(R"({"cost": 3})")).find("'properties' must be an array") != std::string::npos);
}

TEST_CASE("parse_tiled_map: hostile input is refused before it costs memory, never crashes") {
  // Sizes are checked before anything is allocated (a billion-cell claim in a tiny file).
  CHECK(refusal(tmj(1000000000, 1000000000, R"("data": [])")).find("width 1000000000 is out of range (1..8192)") !=
        std::string::npos);
  CHECK(refusal(tmj(-3, 2, R"("data": [])")).find("width -3 is out of range") != std::string::npos);
  CHECK(refusal(R"({"width": "2", "height": 1, "layers": []})").find("width must be a number, found string") !=
        std::string::npos);
  CHECK(refusal(tmj(3, 2, R"("data": [1, 1])")).find("data holds 2 GIDs, expected width * height = 6") !=
        std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("encoding": "csv", "data": "1,1,1")")).find("more than width * height = 2") !=
        std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("encoding": "csv", "data": "1;1")")).find("expects ','") != std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("data": [1, -1])")).find("GID -1 is out of range") != std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("data": [1, 4294967296])")).find("out of range") != std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("data": [1, 9])")).find("GID 9 at cell (1, 0) is past the 5 tiles of tileset 't'") !=
        std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("data": [1, 1])", R"([{"firstgid": 3, "name": "late", "tiles": []}])"))
            .find("GID 1 at cell (0, 0) belongs to no tileset") != std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("encoding": "base64", "data": "AQAAAAEAAA*=")")).find("bad base64 at byte 10") !=
        std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("encoding": "base64", "data": "AQAAAA==")"))
            .find("base64 data holds 4 bytes, expected width * height * 4 = 8") != std::string::npos);
  CHECK(refusal(tmj(2, 1, R"("encoding": "base64", "data": "AQAAAAEAAAABAAAA")")).find("more than the 8 bytes") !=
        std::string::npos);
  // Compressed data: too short, too long (a bomb must stop at width * height * 4 bytes), corrupt.
  const std::vector<std::uint8_t> three = le_gids({1, 1, 1});
  CHECK(refusal(tmj(4, 1, base64_layer(io::detail::zlib_compress(three), "zlib")))
            .find("holds 12 bytes, expected 16") != std::string::npos);
  CHECK(refusal(tmj(2, 1, base64_layer(io::detail::zlib_compress(std::vector<std::uint8_t>(1 << 20, 0)), "zlib")))
            .find("holds more than the 8 bytes") != std::string::npos);
  CHECK(refusal(tmj(2, 1, base64_layer({0x78, 0x9c, 1, 2, 3, 4, 5}, "zlib"))).find("zlib: compressed layer data") !=
        std::string::npos);
  CHECK(refusal(tmj(2, 1, base64_layer({1, 2, 3, 4, 5}, "zstd"))).find("zstd layer data:") != std::string::npos);
  const std::vector<std::uint8_t> four = le_gids({1, 1, 1, 1});
  std::vector<std::uint8_t> zstd(ZSTD_compressBound(four.size()));
  zstd.resize(ZSTD_compress(zstd.data(), zstd.size(), four.data(), four.size(), 3));
  CHECK(refusal(tmj(2, 1, base64_layer(zstd, "zstd"))).find("zstd layer data holds more than the 8 bytes") !=
        std::string::npos);
  std::vector<std::uint8_t> cut = gzip(le_gids({1, 1}));
  cut.resize(cut.size() - 12);
  CHECK(refusal(tmj(2, 1, base64_layer(cut, "gzip"))).find("gzip: compressed layer data is truncated") !=
        std::string::npos);
  // Malformed JSON names the line and column; other shapes name the member.
  CHECK(refusal("{\"width\": 2,\n \"height\": }").find("malformed JSON: parse error at line 2, column") !=
        std::string::npos);
  CHECK(refusal("").find("malformed JSON") != std::string::npos);
  CHECK(refusal("[1, 2]").find("the document is not an object") != std::string::npos);
  CHECK(refusal(R"({"width": 1, "height": 1, "layers": [7]})").find("layer 0 is not an object") != std::string::npos);
  CHECK(refusal(std::string(100000, '[')).find("malformed JSON") != std::string::npos);  // deep nesting
  // Nesting is refused before the parse: each level cost a heap block (a 32 MiB file of
  // [[[...]]] took 1.3-2.5 GB and 2-7 s to be called 'not an object').
  CHECK(refusal(std::string(65, '[') + std::string(65, ']')).find("nested more than 64 deep") != std::string::npos);
  CHECK(refusal(R"({"width": 1, "height": 1, "layers": )" + std::string(70, '[') + std::string(70, ']') + "}")
            .find("nested more than 64 deep") != std::string::npos);
  // Brackets inside strings (escaped quotes too) are text, not nesting.
  CHECK(parse(tmj(2, 1, R"("name": ")" + std::string(100, '[') + R"(\"{{", "data": [1, 1])")).ok);
  // The side limit is the caller's.
  CHECK_FALSE(parse(tmj(3, 2, R"("data": [1, 1, 1, 1, 1, 1])"), 2).ok);
  // Declared tiles cost a slot each: 200 tilesets of 65,536 tiles in a 7 KB file asked for 13
  // million slots (20,000 in 660 KB: 5 GB, std::bad_alloc or the OOM killer).
  std::string many = "[";
  for (int i = 0; i < 200; ++i) many += std::string(i > 0 ? "," : "") + R"({"firstgid": 1, "tilecount": 65536})";
  many += "]";
  CHECK(refusal(tmj(2, 1, R"("data": [0, 0])", many)).find("the tilesets declare more than 1048576 tiles in all") !=
        std::string::npos);
  // Sixteen full tilesets still load.
  std::string sixteen = "[";
  for (int i = 0; i < 16; ++i)
    sixteen += std::string(i > 0 ? "," : "") + R"({"firstgid": )" + std::to_string(1 + i * 65536) + R"(, "tilecount": 65536})";
  sixteen += "]";
  CHECK(parse(tmj(2, 1, R"("data": [0, 0])", sixteen)).ok);
}

TEST_CASE("encode_tiled_map: round trip, csv up to the limit and base64 + zlib above it") {
  sim::GridMap small(5, 3);
  small.set_cost(1, 1, sim::kBlockedCost);
  small.set_cost(2, 1, 17);
  small.set_cost(4, 2, 254);
  const std::vector<sim::CellCoord> spawns{{0, 0}, {2, 1}, {1, 1} /* a wall: dropped */, {9, 9} /* outside */};
  const std::string text = io::encode_tiled_map(small, spawns);
  CHECK(text.find("\"data\": [") != std::string::npos);
  const Parsed p = parse(text);
  REQUIRE_MESSAGE(p.ok, p.error);
  CHECK(p.map.costs() == small.costs());
  CHECK(p.spawns == std::vector<sim::CellCoord>{{0, 0}, {2, 1}});

  sim::GridMap big(1025, 1024);  // above kTiledCsvCellLimit
  for (std::int32_t i = 0; i < 1000; ++i) big.set_cost((i * 37) % 1025, (i * 11) % 1024, static_cast<std::uint8_t>(1 + i % 255));
  const std::string big_text = io::encode_tiled_map(big, {});
  CHECK(big_text.find("\"compression\": \"zlib\"") != std::string::npos);
  CHECK(big_text.size() < 200000);
  const Parsed q = parse(big_text);
  REQUIRE_MESSAGE(q.ok, q.error);
  CHECK(q.map.costs() == big.costs());
}

TEST_CASE("the sample Tiled map in docs/maps loads through read_map_file") {
  sim::GridMap m;
  sim::MapError e;
  std::vector<sim::CellCoord> spawns;
  REQUIRE_MESSAGE(io::read_map_file(std::string(SWARMFIELD_SOURCE_DIR) + "/docs/maps/sample_city.tmj", m, e, &spawns),
                  e.to_string());
  CHECK(m.width() == 48);
  CHECK(m.height() == 32);
  CHECK(m.cost(0, 0) == sim::kBlockedCost);
  CHECK(m.cost(10, 22) == 4);              // the mud field
  CHECK(m.cost(21, 15) == sim::kBlockedCost);  // a flipped wall of the detail layer
  CHECK(spawns.size() == 20);              // the 5 x 4 spawn corner
  CHECK(m.walkable_count() > 1000);
}
