// libFuzzer target: the PNG map decoder (io::parse_png_map, libpng underneath) on arbitrary
// bytes. Checked: no crash or sanitizer report (libpng's longjmp included); a refusal names the
// file and is one line; an accepted map is within the side limit, holds only costs 1..255, its
// spawn cells are walkable cost-1 cells, and its pixels (io::png_map_pixels) are the colour table's
// for each cell.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/io/png_map.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sim = swarmfield::sim;
  namespace io = swarmfield::io;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  constexpr std::int32_t kMaxSide = 512;  // keeps each run fast; the limit itself is under test
  sim::GridMap map;
  sim::MapError error;
  std::vector<sim::CellCoord> spawns;
  if (!io::parse_png_map(bytes, "fuzz.png", map, error, &spawns, kMaxSide)) {
    if (error.message.empty() || error.to_string().find("fuzz.png: ") != 0) std::abort();
    if (error.message.find('\n') != std::string::npos) std::abort();
    return 0;
  }
  if (map.width() < 1 || map.height() < 1 || map.width() > kMaxSide || map.height() > kMaxSide) std::abort();
  for (const sim::CellCoord c : spawns)
    if (map.cost(c.x, c.y) != sim::kDefaultCost) std::abort();
  std::vector<std::uint8_t> rgb;
  std::string why;
  if (!io::png_map_pixels(map, spawns, rgb, why)) std::abort();
  if (rgb.size() != map.cell_count() * 3) std::abort();
  for (std::size_t i = 0; i < map.cell_count(); ++i) {
    const std::uint8_t c = map.costs()[i];
    if (c == 0) std::abort();
    if (rgb[3 * i + 1] != io::png_grey_of_cost(c) && rgb[3 * i] != 255) std::abort();
  }
  return 0;
}
