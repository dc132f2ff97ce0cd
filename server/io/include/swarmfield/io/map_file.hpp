#pragma once
// Reading map files from disk into a GridMap, and writing them: the one place that picks a map
// format from a file name, for the server (--map), the tool, the benchmarks and the tests.
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

namespace swarmfield::io {

/// Largest map file accepted (bytes); a 8192 x 8192 MovingAI map is ~67 MB.
inline constexpr std::size_t kMaxMapFileBytes = 128u * 1024u * 1024u;

/// The map formats, told apart by the file name's extension (case-insensitive).
enum class MapFormat {
  kMovingAi,  ///< `.map` and anything not below: MovingAI text (or the ASCII test format)
  kTiled,     ///< `.tmj` or `.json`: Tiled JSON (tiled_map.hpp)
  kPng,       ///< `.png`: an image by the colour table (png_map.hpp)
};

/// The format `path` names by its extension: .tmj/.json Tiled, .png PNG, anything else MovingAI.
[[nodiscard]] MapFormat map_format_of(std::string_view path) noexcept;

/// Reads `path` and parses it by map_format_of(): a Tiled map (sim limits: 1..8192 cells a side;
/// file at most kMaxTiledFileBytes), a PNG image (same limits), or a text map: MovingAI `.map`
/// when the text starts with "type", otherwise an ASCII map (`#` blocked; see
/// sim::parse_ascii_map). On failure returns false, leaves `out` and `spawns` untouched and fills
/// `error` with the file name as source: a missing or unreadable file (line 0, with the OS
/// reason), no regular file, a file above the size limit, or the parser's error. `spawns`, when
/// given, gets the spawn cells the file marks (Tiled `spawn` tiles, red PNG pixels; none for text
/// maps), row-major. The server spawns players there (player_spawn_point).
[[nodiscard]] bool read_map_file(const std::string& path, sim::GridMap& out, sim::MapError& error,
                                 std::vector<sim::CellCoord>* spawns = nullptr);

/// Writes `map` to `path` in the format map_format_of() names: MovingAI text ('.' cost 1, 'S'
/// cost 3, '@' wall), Tiled JSON or a PNG by the colour table. The file is written beside `path`
/// and renamed over it, so a failure leaves no partial file (an existing `path` is replaced).
/// False with a one-line `error` naming the file: a cost the format can not hold (MovingAI: a
/// cost other than 1, 3 or a wall, naming the cell), a spawn cell the PNG table can not hold, or
/// the OS reason. `spawns` are dropped by MovingAI text (`dropped_spawns` set true then).
[[nodiscard]] bool write_map_file(const std::string& path, const sim::GridMap& map,
                                  const std::vector<sim::CellCoord>& spawns, std::string& error,
                                  bool* dropped_spawns = nullptr);

/// The map as MovingAI `.map` text ("type octile", '.', 'S' for cost `swamp_cost`, '@'). False
/// with `error` naming the first cell whose cost is none of those.
[[nodiscard]] bool encode_movingai_map(const sim::GridMap& map, std::string& text, std::string& error,
                                       std::uint8_t swamp_cost = 3);

/// Reads a whole regular file into `text`. False with a reason ("cannot open file: No such file
/// or directory", "is a FIFO, not a regular file", ...) in `error` when it cannot be opened or
/// read, is no regular file (a directory, FIFO, device or socket: opened without blocking and
/// refused, never read), or is larger than `max_bytes`.
[[nodiscard]] bool read_text_file(const std::string& path, std::string& text, std::string& error,
                                  std::size_t max_bytes = kMaxMapFileBytes);

}  // namespace swarmfield::io
