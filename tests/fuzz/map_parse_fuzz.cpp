// libFuzzer target: the map parsers (MovingAI .map and the ASCII test format) on arbitrary text.
// First byte picks the parser. Checked: no crash; a refusal says why and where; an accepted map
// has the size its header (or rows) state, within the side limit, and only the documented costs.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "swarmfield/sim/map/map_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sim = swarmfield::sim;
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  sim::GridMap map;
  sim::MapError error;
  constexpr std::int32_t kMaxSide = 512;  // keeps each run fast; the limit itself is under test
  bool ok = false;
  std::vector<sim::MapMarker> markers;
  if (data[0] % 2 == 0) {
    ok = sim::parse_movingai_map(text, "fuzz.map", map, error, 3, kMaxSide);
  } else {
    ok = sim::parse_ascii_map(text, "fuzz.txt", map, error, &markers);
  }
  if (!ok) {
    if (error.message.empty() || error.to_string().find("fuzz.") != 0) std::abort();
    return 0;
  }
  if (map.width() < 1 || map.height() < 1) std::abort();
  if (data[0] % 2 == 0 && (map.width() > kMaxSide || map.height() > kMaxSide)) std::abort();
  for (std::int32_t y = 0; y < map.height(); ++y) {
    for (std::int32_t x = 0; x < map.width(); ++x) {
      const std::uint8_t c = map.cost(x, y);
      if (c != sim::kBlockedCost && c != sim::kDefaultCost && c != 3) std::abort();
    }
  }
  for (const auto& m : markers) {
    if (m.cell.x < 0 || m.cell.y < 0 || m.cell.x >= map.width() || m.cell.y >= map.height()) std::abort();
  }
  return 0;
}
