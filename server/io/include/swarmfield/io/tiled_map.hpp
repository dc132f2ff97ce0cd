#pragma once
// Tiled JSON maps (.tmj, https://doc.mapeditor.org/en/stable/reference/json-map-format/) to and
// from a GridMap. Pure: bytes in, bytes out; the caller reads and writes files (map_file.hpp).
//
// The convention (README "Map formats"): each tile of an embedded tileset says what a cell is by
// its custom properties:
//   wall  (bool)  true: the cell is blocked (cost 255), whatever `cost` says
//   cost  (int)   1..254: the cell's traversal cost (1 = road); absent with wall = false: 1
//   spawn (bool)  true: a spawn cell (walkable; reported in `spawns`, see below)
// Cells holding no tile (GID 0) in every tile layer are walkable, cost 1. With several tile
// layers a cell takes the highest cost of its tiles (a wall in any layer blocks it) and is a spawn
// cell if any of its tiles says so. Object, image layers and tileset images are ignored.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

namespace swarmfield::io {

/// Largest .tmj file read (bytes): the JSON is parsed into a document of ~16 bytes per number, so
/// a 32 MiB file of tile numbers costs ~300 MB while parsing. Big maps use base64 + zlib data
/// (what write_map_file writes above kTiledCsvCellLimit cells), a few bytes per kilocell.
inline constexpr std::size_t kMaxTiledFileBytes = 32u * 1024u * 1024u;

/// Maps of at most this many cells are written with plain JSON arrays (readable, diffable), larger
/// ones with base64 + zlib layer data.
inline constexpr std::size_t kTiledCsvCellLimit = std::size_t{1} << 20;

/// Parses a Tiled JSON map. Accepted: orientation "orthogonal", a fixed size (not "infinite") of
/// 1..`max_side` cells a side, one or more tile layers of the map's size whose data is a JSON
/// array of GIDs (encoding absent or "csv"), a csv string, or base64 of little-endian 32-bit GIDs,
/// uncompressed or with compression "zlib", "gzip" or "zstd"; embedded tilesets (each with its
/// firstgid; the tileset owning a GID is the one with the largest firstgid not above it). The flip
/// and rotation bits of a GID (the top four) are ignored. Refused, with `error` naming `source`
/// and the reason (line 0): malformed JSON, another orientation, an infinite map, group layers,
/// external tilesets (.tsx: "embed it"), a layer of the wrong size or data length, bad base64,
/// data that does not decompress to exactly width * height GIDs, a GID no tileset owns (or past
/// its tilecount), a used tile without a `wall` or `cost` property, a property of the wrong type
/// or a cost outside 1..254, no tile layer. `out` and `spawns` are untouched on failure; on
/// success `spawns` (when given) gets the spawn cells in row-major order.
[[nodiscard]] bool parse_tiled_map(std::string_view text, std::string_view source, sim::GridMap& out,
                                   sim::MapError& error, std::vector<sim::CellCoord>* spawns = nullptr,
                                   std::int32_t max_side = 8192);

/// The map as Tiled JSON: one tile layer "costs", one embedded tileset "swarmfield" (no image)
/// with a tile per distinct cost the map uses plus a spawn tile when `spawns` is not empty, each
/// tile carrying the properties above. Data is a JSON array up to kTiledCsvCellLimit cells, base64
/// of zlib-compressed GIDs above. parse_tiled_map() of the result gives back `map` and `spawns`
/// (spawn cells outside the map are dropped).
[[nodiscard]] std::string encode_tiled_map(const sim::GridMap& map, const std::vector<sim::CellCoord>& spawns);

}  // namespace swarmfield::io
