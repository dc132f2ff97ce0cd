#pragma once
// Helpers shared by the map/field tests: ASCII maps from string literals and a reference
// (textbook) Dijkstra to compare the bucket-queue integration field against.
#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

namespace swarmfield::sim::test {

/// Parses an ASCII map or fails the test.
/// Scenario C1 (scenarios/README.md): two walls touching only at a corner, an X-shaped gap that
/// no path may cut through; 'A' an agent's start, 'P' the player (goal, cell (7, 5)).
inline constexpr std::string_view kDiagonalGapMap = R"(
##########
#A...#...#
#....#...#
#....#...#
#...#....#
#...#..P.#
#...#....#
#........#
##########
)";

inline GridMap ascii(std::string_view text, std::vector<MapMarker>* markers = nullptr) {
  GridMap map;
  MapError error;
  const bool ok = parse_ascii_map(text, "test", map, error, markers);
  INFO(error.to_string());
  REQUIRE(ok);
  return map;
}

/// First marker with `symbol`, or fails the test.
inline CellCoord marker(const std::vector<MapMarker>& markers, char symbol) {
  for (const MapMarker& m : markers)
    if (m.symbol == symbol) return m.cell;
  FAIL("marker '" << symbol << "' not found");
  return {};
}

/// Textbook Dijkstra with std::priority_queue, written independently of the library: same
/// step costs (cost(next) * 985 orthogonal, * 1393 diagonal, no corner cutting).
inline std::vector<std::uint32_t> reference_field(const GridMap& m, const std::vector<CellCoord>& goals) {
  const std::int32_t w = m.width();
  const std::int32_t h = m.height();
  std::vector<std::uint64_t> d(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), UINT64_MAX);
  using Entry = std::pair<std::uint64_t, std::size_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> q;
  for (const CellCoord g : goals) {
    if (!m.walkable(g)) continue;
    d[m.index(g.x, g.y)] = 0;
    q.push({0, m.index(g.x, g.y)});
  }
  while (!q.empty()) {
    const auto [dv, u] = q.top();
    q.pop();
    if (dv != d[u]) continue;
    const auto x = static_cast<std::int32_t>(u % static_cast<std::size_t>(w));
    const auto y = static_cast<std::int32_t>(u / static_cast<std::size_t>(w));
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) {
        if (dx == 0 && dy == 0) continue;
        if (!m.walkable(x + dx, y + dy)) continue;
        if (dx != 0 && dy != 0 && (!m.walkable(x + dx, y) || !m.walkable(x, y + dy))) continue;
        const std::uint64_t nd = dv + std::uint64_t{m.cost(x + dx, y + dy)} * (dx != 0 && dy != 0 ? 1393u : 985u);
        const std::size_t n = m.index(x + dx, y + dy);
        if (nd < d[n]) {
          d[n] = nd;
          q.push({nd, n});
        }
      }
    }
  }
  std::vector<std::uint32_t> out(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) out[i] = d[i] == UINT64_MAX ? kUnreachable : static_cast<std::uint32_t>(d[i]);
  return out;
}

/// Small deterministic generator for randomized tests (seed printed by the caller).
struct TestRng {
  std::uint64_t state;
  std::uint64_t next() {
    state += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::int32_t below(std::int32_t n) { return static_cast<std::int32_t>(next() % static_cast<std::uint64_t>(n)); }
};

/// Random map: `blocked_percent` of cells blocked, the rest cost 1 or (if `costs`) 1..9.
inline GridMap random_map(std::uint64_t seed, std::int32_t w, std::int32_t h, int blocked_percent, bool costs) {
  TestRng rng{seed};
  GridMap m(w, h);
  for (std::int32_t y = 0; y < h; ++y)
    for (std::int32_t x = 0; x < w; ++x) {
      if (rng.below(100) < blocked_percent) {
        m.set_cost(x, y, kBlockedCost);
      } else if (costs) {
        m.set_cost(x, y, static_cast<std::uint8_t>(1 + rng.below(9)));
      }
    }
  return m;
}

}  // namespace swarmfield::sim::test
