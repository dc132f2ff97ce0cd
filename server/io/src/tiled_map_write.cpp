// encode_tiled_map: a GridMap as a Tiled JSON map, one tile per (cost, spawn) the map uses.
// Written by hand rather than through a JSON document: the layout (one map row per line) stays
// readable, and an 8192 x 8192 map never becomes a 64-million-node document.
#include <array>
#include <string>

#include "layer_codecs.hpp"
#include "swarmfield/io/tiled_map.hpp"

namespace swarmfield::io {

namespace {

/// A tile of the written tileset: a cost, and whether it marks a spawn cell.
struct TileKind {
  std::uint8_t cost = sim::kDefaultCost;
  bool spawn = false;
};

std::string tile_json(std::size_t id, TileKind k) {
  std::string s = "      {\"id\": " + std::to_string(id) + ", \"properties\": [";
  if (k.cost == sim::kBlockedCost) {
    s += "{\"name\": \"wall\", \"type\": \"bool\", \"value\": true}";
  } else {
    s += "{\"name\": \"cost\", \"type\": \"int\", \"value\": " + std::to_string(k.cost) + "}";
    if (k.spawn) s += ", {\"name\": \"spawn\", \"type\": \"bool\", \"value\": true}";
  }
  return s + "]}";
}

}  // namespace

std::string encode_tiled_map(const sim::GridMap& map, const std::vector<sim::CellCoord>& spawns) {
  const std::int32_t w = map.width();
  const std::int32_t h = map.height();
  const std::size_t cells = map.cell_count();
  // Spawn marks per cell (a wall can not be a spawn cell: dropped there, as the parser does).
  std::vector<std::uint8_t> spawn(spawns.empty() ? 0 : cells, 0);
  for (const sim::CellCoord c : spawns)
    if (map.walkable(c)) spawn[map.index(c.x, c.y)] = 1;

  // Tile ids: (cost, spawn) pairs in use, in ascending cost, plain before spawn.
  std::array<std::array<std::int32_t, 256>, 2> id_of{};
  for (auto& row : id_of) row.fill(-1);
  const std::vector<std::uint8_t>& costs = map.costs();
  for (std::size_t i = 0; i < cells; ++i) id_of[spawn.empty() ? 0 : spawn[i]][costs[i]] = 0;
  std::vector<TileKind> kinds;
  for (int cost = 0; cost < 256; ++cost)
    for (int s = 0; s < 2; ++s)
      if (id_of[static_cast<std::size_t>(s)][static_cast<std::size_t>(cost)] == 0) {
        id_of[static_cast<std::size_t>(s)][static_cast<std::size_t>(cost)] = static_cast<std::int32_t>(kinds.size());
        kinds.push_back({static_cast<std::uint8_t>(cost), s == 1});
      }
  const auto gid = [&](std::size_t i) {
    return static_cast<std::uint32_t>(id_of[spawn.empty() ? 0 : spawn[i]][costs[i]] + 1);  // firstgid 1
  };

  std::string s;
  s.reserve(cells <= kTiledCsvCellLimit ? cells * 3 + 4096 : cells / 8 + 4096);
  s += "{\n  \"type\": \"map\", \"version\": \"1.10\", \"orientation\": \"orthogonal\", \"renderorder\": \"right-down\",\n";
  s += "  \"width\": " + std::to_string(w) + ", \"height\": " + std::to_string(h) +
       ", \"tilewidth\": 16, \"tileheight\": 16, \"infinite\": false,\n";
  s += "  \"nextlayerid\": 2, \"nextobjectid\": 1,\n";
  s += "  \"layers\": [{\n    \"id\": 1, \"name\": \"costs\", \"type\": \"tilelayer\", \"x\": 0, \"y\": 0, \"width\": " +
       std::to_string(w) + ", \"height\": " + std::to_string(h) + ", \"opacity\": 1, \"visible\": true,\n";
  if (cells <= kTiledCsvCellLimit) {
    s += "    \"data\": [\n";
    for (std::int32_t y = 0; y < h; ++y) {
      s += "      ";
      for (std::int32_t x = 0; x < w; ++x) {
        const std::size_t i = map.index(x, y);
        s += std::to_string(gid(i));
        if (i + 1 < cells) s += x + 1 < w ? "," : ",\n";
      }
    }
    s += "\n    ]\n";
  } else {
    s += "    \"encoding\": \"base64\", \"compression\": \"zlib\",\n";
    s += "    \"data\": \"" + detail::base64_encode(detail::zlib_compress_gids(cells, gid)) + "\"\n";
  }
  s += "  }],\n";
  s += "  \"tilesets\": [{\n    \"firstgid\": 1, \"name\": \"swarmfield\", \"tilecount\": " +
       std::to_string(kinds.size()) + ", \"columns\": 0, \"tilewidth\": 16, \"tileheight\": 16,\n";
  s += "    \"tiles\": [\n";
  for (std::size_t id = 0; id < kinds.size(); ++id) s += tile_json(id, kinds[id]) + (id + 1 < kinds.size() ? ",\n" : "\n");
  s += "    ]\n  }]\n}\n";
  return s;
}

}  // namespace swarmfield::io
