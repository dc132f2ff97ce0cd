// Size classes: class of a radius, reference blocks, disc placement and class planning grids.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "swarmfield/sim/nav/size_classes/size_class.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;

namespace {

/// Reference overlap test written independently: every blocked cell of the map (and the map edge)
/// against the disc, by the distance from the centre to the square.
bool brute_disc_fits(const GridMap& m, Vec2 p, float r) {
  const double cs = m.cell_size();
  if (p.x - r < 0.0 || p.y - r < 0.0 || p.x + r > m.width() * cs || p.y + r > m.height() * cs) return false;
  for (std::int32_t y = 0; y < m.height(); ++y) {
    for (std::int32_t x = 0; x < m.width(); ++x) {
      if (m.walkable(x, y)) continue;
      const double dx = std::max({x * cs - p.x, 0.0, p.x - (x + 1) * cs});
      const double dy = std::max({y * cs - p.y, 0.0, p.y - (y + 1) * cs});
      if (dx * dx + dy * dy < static_cast<double>(r) * r) return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("size class of a radius: ceil(2 r) cells, clamped to 1..4") {
  CHECK(size_class_of_radius(0.2f, 1.0f) == 1);
  CHECK(size_class_of_radius(0.49f, 1.0f) == 1);
  CHECK(size_class_of_radius(0.5f, 1.0f) == 1);
  CHECK(size_class_of_radius(0.75f, 1.0f) == 2);
  CHECK(size_class_of_radius(0.9f, 1.0f) == 2);
  CHECK(size_class_of_radius(1.0f, 1.0f) == 2);
  CHECK(size_class_of_radius(1.5f, 1.0f) == 3);
  CHECK(size_class_of_radius(2.0f, 1.0f) == 4);
  CHECK(size_class_of_radius(3.0f, 1.0f) == 4);
  CHECK(size_class_of_radius(1.5f, 2.0f) == 2);  // world units: 0.75 cells
  CHECK(size_class_of_radius(0.0f, 1.0f) == 1);
  CHECK(size_class_of_radius(std::numeric_limits<float>::quiet_NaN(), 1.0f) == 1);
  CHECK(size_class_bit(1) == 1);
  CHECK(size_class_bit(4) == 8);
  CHECK(size_class_bit(5) == 0);
}

TEST_CASE("reference block: the block whose centre is nearest the position") {
  const GridMap m(20, 20, kDefaultCost, 1.0f);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 20.0f);
  for (int i = 0; i < 2000; ++i) {
    const Vec2 p{u(rng), u(rng)};
    CHECK(reference_block(p, 1, 1.0f) == m.world_to_cell(p));
    for (int n = 1; n <= kMaxSizeClass; ++n) {
      const CellCoord b = reference_block(p, n, 1.0f);
      const Vec2 c = block_center(b, n, 1.0f);
      // Within half a cell of the block centre on each axis.
      CHECK(std::fabs(c.x - p.x) <= 0.5f + 1e-5f);
      CHECK(std::fabs(c.y - p.y) <= 0.5f + 1e-5f);
    }
  }
  CHECK(reference_block({3.4f, 3.6f}, 2, 1.0f) == CellCoord{2, 3});
  CHECK(block_center({2, 3}, 2, 1.0f) == Vec2{3.0f, 4.0f});
  CHECK(reference_block({6.8f, 7.2f}, 2, 2.0f) == CellCoord{2, 3});  // world units / cell size
}

TEST_CASE("reference block: the inline float path equals the double computation") {
  // Positions at and one ulp either side of every half cell (where the floor changes for even
  // classes) and of every whole cell, across magnitudes up to and past the fast path's 2^22,
  // negatives and the top-left edge (below 2: the double path).
  std::vector<float> xs;
  for (const float base : {0.0f, 1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 17.5f, 1023.0f, 4095.5f, 8191.0f, 65535.5f, 1048575.5f,
                           4194303.5f, 4194304.0f, 8388607.0f}) {
    for (const float off : {0.0f, 0.25f, 0.5f, 0.75f}) {
      const float v = base + off;
      xs.push_back(v);
      xs.push_back(std::nextafter(v, 0.0f));
      xs.push_back(std::nextafter(v, 1.0e9f));
      xs.push_back(-v);
    }
  }
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(0.0f, 9000.0f);
  for (int i = 0; i < 4000; ++i) xs.push_back(u(rng));
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  xs.push_back(std::numeric_limits<float>::infinity());
  std::size_t compared = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const Vec2 p{xs[i], xs[(i * 7 + 3) % xs.size()]};
    for (int n = 0; n <= kMaxSizeClass + 1; ++n) {
      for (const float cs : {1.0f, 0.5f, 2.0f}) {
        const CellCoord fast = reference_block(p, n, cs), exact = reference_block_exact(p, n, cs);
        CHECK_MESSAGE(fast == exact, "p ", p.x, ",", p.y, " class ", n, " cell size ", cs);
        ++compared;
      }
    }
  }
  CHECK(compared > 50000);
}

TEST_CASE("disc_fits matches a brute-force check over the whole map") {
  const GridMap m = test::ascii(R"(
##########
#....#...#
#.##.#.#.#
#........#
#..#.....#
##########
)");
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> ux(-0.5f, 10.5f), uy(-0.5f, 6.5f), ur(0.0f, 2.0f);
  int fits = 0;
  for (int i = 0; i < 20000; ++i) {
    const Vec2 p{ux(rng), uy(rng)};
    const float r = ur(rng);
    const bool got = disc_fits(m, p, r);
    CHECK(got == brute_disc_fits(m, p, r));
    fits += got ? 1 : 0;
  }
  CHECK(fits > 500);  // the check is not vacuous
  CHECK(disc_fits(m, {1.5f, 1.5f}, 0.5f));       // touches the walls exactly
  CHECK_FALSE(disc_fits(m, {1.5f, 1.5f}, 0.51f));
  CHECK_FALSE(disc_fits(m, {std::numeric_limits<float>::infinity(), 1.5f}, 0.1f));
}

TEST_CASE("nearest_fitting_position repairs a big agent pushed into a narrow gap") {
  const GridMap m = test::ascii(R"(
############
#....#.....#
#....#.....#
#..........#
#....#.....#
############
)");
  ClearanceMap c;
  c.build(m);
  Vec2 out{};
  // In the 1-cell door at (5, 3): a radius-0.75 disc does not fit there.
  const Vec2 p{5.5f, 3.5f};
  REQUIRE_FALSE(disc_fits(m, p, 0.75f));
  REQUIRE(nearest_fitting_position(m, c, p, 0.75f, 4, out));
  CHECK(disc_fits(m, out, 0.75f));
  const float moved = std::hypot(out.x - p.x, out.y - p.y);
  CHECK(moved < 1.5f);
  // Where it already fits: unchanged.
  REQUIRE(nearest_fitting_position(m, c, {2.5f, 2.5f}, 0.75f, 4, out));
  CHECK(out == Vec2{2.5f, 2.5f});
  // Every random position gets a fitting answer near it, or none when nothing is in reach.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> ux(0.0f, 12.0f), uy(0.0f, 6.0f), ur(0.2f, 2.0f);
  int repaired = 0;
  for (int i = 0; i < 3000; ++i) {
    const Vec2 q{ux(rng), uy(rng)};
    const float r = ur(rng);
    if (nearest_fitting_position(m, c, q, r, 3, out)) {
      CHECK(disc_fits(m, out, r));
      ++repaired;
    } else {
      CHECK(r > 1.0f);  // only classes 3 and 4 find nothing in this 4-high map
    }
  }
  CHECK(repaired > 1000);
  // Radius 2 fits the 4 x 4 room exactly; anything wider than the largest class never does.
  REQUIRE(nearest_fitting_position(m, c, {3.0f, 3.0f}, 2.0f, 6, out));
  CHECK(disc_fits(m, out, 2.0f));
  CHECK_FALSE(nearest_fitting_position(m, c, {3.0f, 3.0f}, 2.2f, 6, out));
  // A clearance map of another revision is refused.
  GridMap changed = m;
  changed.set_cost(2, 2, kBlockedCost);
  CHECK_FALSE(nearest_fitting_position(changed, c, {3.0f, 3.0f}, 0.4f, 6, out));
}

TEST_CASE("class goal block: the player's block, else the nearest fitting one, else none") {
  const GridMap m = test::ascii(R"(
############
#..........#
#..........#
#####.######
#####.######
############
)");
  ClearanceMap c;
  c.build(m);
  CellCoord b{};
  REQUIRE(class_goal_block(c, {3.2f, 2.1f}, 2, 1.0f, 4, b));
  CHECK(b == CellCoord{2, 1});
  // A player in the 1-wide alley: class 1 gets its own cell, class 2 the nearest 2x2 block above.
  REQUIRE(class_goal_block(c, {5.5f, 4.5f}, 1, 1.0f, 4, b));
  CHECK(b == CellCoord{5, 4});
  REQUIRE(class_goal_block(c, {5.5f, 4.5f}, 2, 1.0f, 4, b));
  CHECK(c.fits(b, 2));
  CHECK(b.y == 1);
  CHECK((b.x == 4 || b.x == 5));
  CHECK_FALSE(class_goal_block(c, {5.5f, 4.5f}, 2, 1.0f, 1, b));  // out of reach
  CHECK_FALSE(class_goal_block(c, {5.5f, 2.0f}, 3, 1.0f, 8, b));  // no 3x3 block anywhere
}

TEST_CASE("class map: walkable iff the block fits, cost = max over the block, in-place updates") {
  GridMap m = test::ascii(R"(
########
#......#
#......#
###.####
#......#
########
)");
  m.set_cost(2, 2, 7);
  ClearanceMap c;
  c.build(m);
  GridMap class2;
  update_class_map(m, c, 2, class2);
  CHECK(class2.width() == m.width());
  CHECK(class2.walkable(1, 1));
  CHECK(class2.cost(1, 1) == 7);  // the block covers (2, 2)
  CHECK(class2.cost(4, 1) == 1);
  CHECK_FALSE(class2.walkable(3, 3));  // the 1-wide door
  CHECK_FALSE(class2.walkable(6, 1));  // would stick into the wall
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x) CHECK(class2.walkable(x, y) == c.fits({x, y}, 2));
  GridMap class1;
  update_class_map(m, c, 1, class1);
  CHECK(class1.costs() == m.costs());  // class 1 is the map itself
  // Same map again: the class map's revision does not move.
  const std::uint32_t rev = class2.revision();
  update_class_map(m, c, 2, class2);
  CHECK(class2.revision() == rev);
  // A change away from the class-2 blocks' cells (inside the wall row) leaves class 2 unchanged.
  m.set_cost(0, 3, 9);  // blocked -> walkable at the edge: no 2x2 block fits there anyway
  c.build(m);
  update_class_map(m, c, 2, class2);
  CHECK(class2.revision() == rev);
  m.set_cost(4, 1, kBlockedCost);
  c.build(m);
  update_class_map(m, c, 2, class2);
  CHECK(class2.revision() != rev);
  CHECK_FALSE(class2.walkable(3, 1));
}
