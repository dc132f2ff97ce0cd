#pragma once
// Helpers shared by the spatial hash, swarm and world tests: seeds, ASCII scenes, checks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/map/map_parse.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::sim::test {

/// Seed of a randomized test: SWARMFIELD_TEST_SEED from the environment when set (to replay a
/// failure), else `fallback`. The seed is printed with the test's messages either way.
inline std::uint64_t test_seed(std::uint64_t fallback) {
  std::uint64_t seed = fallback;
  if (const char* env = std::getenv("SWARMFIELD_TEST_SEED")) seed = std::strtoull(env, nullptr, 0);
  MESSAGE("seed = " << seed << " (replay with SWARMFIELD_TEST_SEED=" << seed << ")");
  return seed;
}

/// SplitMix64: a tiny, fully specified generator for test data.
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform float in [lo, hi).
  float uniform(float lo, float hi) noexcept {
    return lo + (hi - lo) * static_cast<float>(next() >> 40) * (1.0f / 16777216.0f);
  }
  std::int32_t below(std::int32_t n) noexcept { return static_cast<std::int32_t>(next() % static_cast<std::uint64_t>(n)); }
};

/// An open `w` x `h` map (cells) with a one-cell wall round it.
inline GridMap bordered(std::int32_t w, std::int32_t h) {
  GridMap map(w, h);
  for (std::int32_t x = 0; x < w; ++x) {
    map.set_cost(x, 0, kBlockedCost);
    map.set_cost(x, h - 1, kBlockedCost);
  }
  for (std::int32_t y = 0; y < h; ++y) {
    map.set_cost(0, y, kBlockedCost);
    map.set_cost(w - 1, y, kBlockedCost);
  }
  return map;
}

/// An ASCII map (`#` blocked) with its markers; fails the test when it does not parse.
struct AsciiScene {
  GridMap map;
  std::vector<MapMarker> markers;

  explicit AsciiScene(std::string_view text) {
    MapError error;
    const bool ok = parse_ascii_map(text, "test", map, error, &markers);
    REQUIRE_MESSAGE(ok, error.to_string());
  }
  [[nodiscard]] std::vector<CellCoord> cells_of(char symbol) const {
    std::vector<CellCoord> out;
    for (const MapMarker& m : markers) {
      if (m.symbol == symbol) out.push_back(m.cell);
    }
    return out;
  }
};

[[nodiscard]] inline bool all_finite(const Swarm& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isfinite(s.xs()[i]) || !std::isfinite(s.ys()[i]) || !std::isfinite(s.headings()[i]) ||
        !std::isfinite(s.vxs()[i]) || !std::isfinite(s.vys()[i])) {
      return false;
    }
  }
  return true;
}

/// Positions indexed by id (ids 0..n-1 when the swarm was filled once and never cleared).
inline void positions_by_id(const Swarm& s, std::vector<Vec2>& out) {
  out.assign(s.size(), Vec2{});
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::uint32_t id = s.ids()[i];
    REQUIRE(id < out.size());
    out[id] = {s.xs()[i], s.ys()[i]};
  }
}

/// Deepest overlap of two agents' discs (O(n^2): small swarms), as a share of the smaller radius;
/// 0 when none overlaps.
[[nodiscard]] inline float deepest_pair_overlap(const Swarm& s) {
  float worst = 0.0f;
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::size_t j = i + 1; j < s.size(); ++j) {
      const float ri = s.kind_table()[s.kinds()[i]].radius, rj = s.kind_table()[s.kinds()[j]].radius;
      const float d = std::hypot(s.xs()[i] - s.xs()[j], s.ys()[i] - s.ys()[j]);
      worst = std::max(worst, (ri + rj - d) / std::min(ri, rj));
    }
  }
  return worst;
}

/// Number of agents whose centre lies in a blocked (or off-map) cell.
[[nodiscard]] inline std::size_t agents_in_walls(const GridMap& map, const Swarm& s) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!map.walkable_at({s.xs()[i], s.ys()[i]})) ++n;
  }
  return n;
}

/// Deepest overlap (world units) of a disc of radius r at p with any blocked (or off-map) cell;
/// 0 when the disc touches none.
[[nodiscard]] inline float wall_overlap(const GridMap& map, Vec2 p, float r) {
  const CellCoord c = map.world_to_cell(p);
  const float cs = map.cell_size();
  const auto reach = static_cast<std::int32_t>(std::ceil(r / cs)) + 1;
  float worst = 0.0f;
  for (std::int32_t y = c.y - reach; y <= c.y + reach; ++y) {
    for (std::int32_t x = c.x - reach; x <= c.x + reach; ++x) {
      if (map.walkable(x, y)) continue;
      const float x0 = static_cast<float>(x) * cs, y0 = static_cast<float>(y) * cs;
      const float dx = std::max({x0 - p.x, 0.0f, p.x - (x0 + cs)});
      const float dy = std::max({y0 - p.y, 0.0f, p.y - (y0 + cs)});
      worst = std::max(worst, r - std::sqrt(dx * dx + dy * dy));
    }
  }
  return worst;
}

}  // namespace swarmfield::sim::test
