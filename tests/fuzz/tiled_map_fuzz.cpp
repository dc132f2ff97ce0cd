// libFuzzer target: the Tiled JSON map parser (io::parse_tiled_map) on arbitrary bytes. Checked:
// no crash; a refusal names the file and is one line; an accepted map is within the side limit,
// holds only costs 1..255, its spawn cells are walkable cells of the map, and writing it back
// (io::encode_tiled_map) and parsing that gives the same grid and spawn cells.
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "swarmfield/io/tiled_map.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sim = swarmfield::sim;
  namespace io = swarmfield::io;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr std::int32_t kMaxSide = 512;  // keeps each run fast; the limit itself is under test
  sim::GridMap map;
  sim::MapError error;
  std::vector<sim::CellCoord> spawns;
  if (!io::parse_tiled_map(text, "fuzz.tmj", map, error, &spawns, kMaxSide)) {
    const std::string line = error.to_string();
    if (error.message.empty() || line.find("fuzz.tmj: ") != 0) std::abort();
    if (error.message.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  if (map.width() < 1 || map.height() < 1 || map.width() > kMaxSide || map.height() > kMaxSide) std::abort();
  for (const std::uint8_t c : map.costs())
    if (c == 0) std::abort();
  for (const sim::CellCoord c : spawns)
    if (!map.walkable(c)) std::abort();
  sim::GridMap again;
  std::vector<sim::CellCoord> again_spawns;
  if (!io::parse_tiled_map(io::encode_tiled_map(map, spawns), "again.tmj", again, error, &again_spawns, kMaxSide))
    std::abort();
  if (again.costs() != map.costs() || again.width() != map.width() || again_spawns != spawns) std::abort();
  return 0;
}
