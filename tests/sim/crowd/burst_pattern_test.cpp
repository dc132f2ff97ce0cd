// Burst patterns (server/sim/src/crowd/burst_pattern.cpp): points in the unit disc, spread wider
// than the golden-angle spiral they start from, deterministic, no allocation after reserve().
#include "swarmfield/sim/crowd/burst_pattern.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace swarmfield::sim;

namespace {

float spacing_of(const std::vector<Vec2>& p) {
  float best = INFINITY;
  for (std::size_t i = 0; i < p.size(); ++i) {
    for (std::size_t j = i + 1; j < p.size(); ++j) best = std::min(best, length(p[i] - p[j]));
  }
  return best;
}

}  // namespace

TEST_CASE("burst patterns: in the unit disc, wider spaced than the spiral, 50 points within 98% of the best packing") {
  BurstPatterns patterns;
  for (const std::uint32_t group : {2u, 3u, 4u, 5u, 7u, 10u, 20u, 50u, 100u, 255u}) {
    CAPTURE(group);
    std::vector<Vec2> points, spiral;
    for (std::uint32_t r = 0; r < group; ++r) {
      points.push_back(patterns.point(r, group));
      spiral.push_back(vogel_point(r, group));
    }
    for (const Vec2 p : points) CHECK(length(p) <= 1.0f + 1e-6f);
    const float spacing = spacing_of(points);
    CHECK(spacing == doctest::Approx(patterns.spacing(group)));
    MESSAGE("group " << group << ": spacing " << spacing << " (spiral " << spacing_of(spiral) << ")");
    CHECK(spacing > spacing_of(spiral));
  }
  // 50 equal circles pack into a circle 7.947 times their radius at best (Specht's tables):
  // points 2 / (7.947 - 1) = 0.2879 apart in the unit disc. Crowd scenario C3 needs 0.28.
  CHECK(patterns.spacing(50) >= 0.28f);
  CHECK(patterns.spacing(2) == doctest::Approx(2.0f).epsilon(0.01));  // opposite ends
  // Beyond kMaxGroup: the spiral itself.
  CHECK(patterns.point(7, 300) == vogel_point(7, 300));
  // Deterministic: a second table computes the same points, bit for bit.
  BurstPatterns again;
  for (std::uint32_t r = 0; r < 50; ++r) CHECK(again.point(r, 50) == patterns.point(r, 50));
}
