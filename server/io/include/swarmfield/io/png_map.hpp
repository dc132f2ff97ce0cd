#pragma once
// PNG images as maps: one pixel per cell, top row first, by a fixed colour table. Pure: bytes in,
// pixels out; the caller reads and writes files (map_file.hpp).
//
// The colour table (README "Map formats"):
//   black   (0, 0, 0)          wall (cost 255)
//   grey    (v, v, v), v >= 1  cost 256 - v: white (255) is cost 1 (road), (254) cost 2, ...
//                              (2) cost 254; (1) is a wall too. So a lighter grey is cheaper.
//   red     (255, 0, 0)        spawn cell: walkable, cost 1, reported in `spawns`
//   alpha 0 (any colour)       wall (transparent = outside the map)
// Any other colour, and any partly transparent pixel, is an error naming the pixel and colour.
// Accepted: any PNG colour type and bit depth (palette, grey, 16-bit, with or without alpha);
// not interlaced.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

namespace swarmfield::io {

/// The spawn colour of the table above, as 0xRRGGBB.
inline constexpr std::uint32_t kPngSpawnColour = 0xFF0000;

/// Grey level (0..255) of a cost in the table above: 0 for a wall, else 256 - cost.
[[nodiscard]] constexpr std::uint8_t png_grey_of_cost(std::uint8_t cost) noexcept {
  return cost == sim::kBlockedCost ? 0 : static_cast<std::uint8_t>(256 - cost);
}

/// Decodes a PNG held in `bytes` into a map by the table above. The image is width x height
/// cells, each side 1..`max_side`: the header is checked (and libpng's user limits set) before
/// any row is read or cell buffer allocated. False with `error` naming `source` and the reason
/// (line 0): not a PNG, a truncated or corrupt image (libpng's message), a size out of range, an
/// interlaced image, a colour outside the table (naming the pixel (x, y) and its #rrggbb colour
/// and alpha). `out` and `spawns` are untouched on failure; on success `spawns` (when given)
/// gets the red cells in row-major order.
[[nodiscard]] bool parse_png_map(std::string_view bytes, std::string_view source, sim::GridMap& out,
                                 sim::MapError& error, std::vector<sim::CellCoord>* spawns = nullptr,
                                 std::int32_t max_side = 8192);

/// The map's pixels by the table above (row-major RGB, 3 bytes a cell), for write_png_rgb():
/// walls black, costs grey, `spawns` red. False with `error` when a spawn cell is not cost 1 (the
/// table has no colour for it); spawn cells outside the map or on walls are dropped.
[[nodiscard]] bool png_map_pixels(const sim::GridMap& map, const std::vector<sim::CellCoord>& spawns,
                                  std::vector<std::uint8_t>& rgb, std::string& error);

}  // namespace swarmfield::io
