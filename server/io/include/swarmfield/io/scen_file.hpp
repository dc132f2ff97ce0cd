#pragma once
// MovingAI scenario (.scen) files: shortest-path queries with their known optimal lengths.
#include <cstdint>
#include <string>
#include <vector>

namespace swarmfield::io {

/// One problem of a `.scen` file (https://movingai.com/benchmarks/formats.html). Coordinates
/// are cells, (x, y) = (column, row), origin top-left; `optimal_length` is in cells (octile:
/// diagonal sqrt 2, no corner cutting).
struct ScenLine {
  int line = 0;               ///< 1-based line number in the file (for messages)
  std::int32_t bucket = 0;
  std::string map_name;       ///< bare file name of the map, e.g. "Boston_0_256.map"
  std::int32_t map_width = 0;
  std::int32_t map_height = 0;
  std::int32_t start_x = 0;
  std::int32_t start_y = 0;
  std::int32_t goal_x = 0;
  std::int32_t goal_y = 0;
  double optimal_length = 0.0;
};

/// Parses `.scen` text: an optional "version N" first line, then one problem per line with 9
/// columns separated by tabs (runs of spaces are accepted too); blank lines are skipped; CRLF
/// is accepted. Returns false with "source:line: problem" in `error` on a wrong column count,
/// a non-number, a negative coordinate or size, or a negative/non-finite length. `out` is
/// replaced only on success.
[[nodiscard]] bool parse_scen(const std::string& text, const std::string& source, std::vector<ScenLine>& out,
                              std::string& error);

/// Reads and parses a `.scen` file (errors name the file; a missing file says so).
[[nodiscard]] bool read_scen_file(const std::string& path, std::vector<ScenLine>& out, std::string& error);

}  // namespace swarmfield::io
