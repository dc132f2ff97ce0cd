#pragma once
// Parsing of map text into a GridMap. Pure: the caller reads the file (server/io does).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim {

/// Where and why a map failed to parse. `line` is 1-based (0 when not tied to a line).
struct MapError {
  std::string source;   ///< file name or other label given by the caller
  int line = 0;
  std::string message;
  /// "source:line: message" (or "source: message" when line == 0).
  [[nodiscard]] std::string to_string() const;
};

/// Parses the MovingAI `.map` format (https://movingai.com/benchmarks/formats.html):
///   type octile / height H / width W / map / H rows of W characters.
/// CRLF or LF line ends, final newline optional. `.` and `G` are cost kDefaultCost, `S`
/// (swamp) cost `swamp_cost`, `@ O T W` blocked; any other character is an error.
/// Returns false and fills `error` (naming `source`, the line and the problem) on a missing or
/// malformed header, a size of 0 or above `max_side` cells, a row of the wrong length, too few
/// or too many rows, or an unknown character. `out` is untouched on failure.
[[nodiscard]] bool parse_movingai_map(std::string_view text, std::string_view source, GridMap& out,
                                      MapError& error, std::uint8_t swamp_cost = 3,
                                      std::int32_t max_side = 8192);

/// Parses a small ASCII test map: rows of equal length, `#` blocked, any other printable
/// character walkable (cost 1). Marker characters (e.g. `P`, `A`, `a`) are reported in
/// `markers` as (character, cell) pairs in row-major order. Same error rules as above.
struct MapMarker {
  char symbol = 0;
  CellCoord cell;
};
[[nodiscard]] bool parse_ascii_map(std::string_view text, std::string_view source, GridMap& out,
                                   MapError& error, std::vector<MapMarker>* markers = nullptr);

}  // namespace swarmfield::sim
