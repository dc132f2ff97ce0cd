// NavigationSet: one field per size class present; big agents take the wide road or hold;
// any-angle builds are deterministic and identical for every time-slicing budget.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "benchmark_maps.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;

namespace {

/// A class-`n` point follower on the set's sample(); returns the visited positions.
std::vector<Vec2> follow(const NavigationSet& set, int n, Vec2 p, int max_steps, NavStatus* last = nullptr) {
  std::vector<Vec2> path{p};
  NavSample s;
  for (int i = 0; i < max_steps; ++i) {
    s = set.sample(n, p);
    if (s.status == NavStatus::kAtGoal || (s.direction.x == 0.0f && s.direction.y == 0.0f)) break;
    float len = 0.05f;
    if (s.status == NavStatus::kGoalInSight) len = std::min(len, length(s.target - p));
    p += s.direction * len;
    path.push_back(p);
  }
  if (last != nullptr) *last = s.status;
  return path;
}

bool passes_cell(const GridMap& m, const std::vector<Vec2>& path, CellCoord c) {
  for (const Vec2 p : path)
    if (m.world_to_cell(p) == c) return true;
  return false;
}

// A 1-cell gap (x = 10, y = 6) on the direct way; a 3-wide detour through the bottom.
constexpr std::string_view kGapMap = R"(
######################
#.........#..........#
#.........#..........#
#.........#..........#
#.........#..........#
#.........#..........#
#....................#
#.........#..........#
#.........#..........#
#.........#..........#
#.........#..........#
#.........#..........#
#.........#..........#
#.........#..........#
#....................#
#....................#
#....................#
######################
)";

}  // namespace

TEST_CASE("size classes: a gap narrower than the class's diameter is avoided for the wide detour") {
  const GridMap m = test::ascii(kGapMap);
  NavigationSet set;
  const Vec2 goal[1] = {{16.5f, 6.5f}};
  const SizeClassMask classes = size_class_bit(1) | size_class_bit(2);
  set.update(m, goal, classes);
  REQUIRE(set.has_class(1));
  REQUIRE(set.has_class(2));
  CHECK_FALSE(set.has_class(3));
  CHECK(set.sample(3, {3.0f, 6.5f}).status == NavStatus::kNoField);
  const Vec2 start{3.5f, 6.5f};
  // Class 1 (radius <= 0.5) takes the 1-cell gap: the short way.
  const std::vector<Vec2> small = follow(set, 1, start, 4000);
  CHECK(passes_cell(m, small, {10, 6}));
  CHECK(set.sample(1, small.back()).status == NavStatus::kAtGoal);
  // Class 2 (radius 0.75, say) cannot: it goes round through the wide bottom rows.
  const std::vector<Vec2> big = follow(set, 2, start, 8000);
  CHECK_FALSE(passes_cell(m, big, {10, 6}));
  bool went_low = false;
  ClearanceMap clearance;
  clearance.build(m);
  for (const Vec2 p : big) {
    went_low = went_low || p.y > 14.0f;
    // The whole way its reference block fits, so a disc of radius n / 2 - 0.5 does: the field
    // keeps the centre within half a cell of a fitting block's centre (the crowd's wall
    // collision handles the rest of a radius up to n / 2).
    CHECK(clearance.fits(reference_block(p, 2, 1.0f), 2));
    CHECK(disc_fits(m, p, 0.5f));
  }
  CHECK(went_low);
  CHECK(length(big.back() - goal[0]) < 0.6f);  // arrived at its goal block
  // Its field is on the class grid: the gap's block is not walkable there.
  CHECK_FALSE(set.class_grid(2).walkable(9, 5));
  CHECK(set.fields(2).integration().cost_to_goal(2, 6) > set.fields(1).integration().cost_to_goal(3, 6) + 10.0);
}

TEST_CASE("any-angle range: beyond it each class follows its own flow; a new range rebuilds every class") {
  const GridMap m = test::ascii(kGapMap);
  NavigationSet set;
  CHECK(set.any_angle_range() == NavigationFields::kDefaultAnyAngleRange);
  const Vec2 goal[1] = {{16.5f, 6.5f}};
  const SizeClassMask classes = size_class_bit(1) | size_class_bit(2);
  set.update(m, goal, classes);
  const std::uint64_t built = set.rebuild_count();
  set.set_any_angle_range(4.0f);
  set.update(m, goal, classes);
  CHECK(set.rebuild_count() == built + 2);  // both classes, same goals
  CHECK(set.fields(2).any_angle().range() == 4.0f);
  const Vec2 start{3.5f, 6.5f};
  CHECK(set.sample(1, start).status == NavStatus::kFollowFlow);
  CHECK(set.sample(1, start).goal == -1);
  CHECK(set.sample(1, {15.5f, 6.5f}).status == NavStatus::kGoalInSight);
  // The big class still goes round (its flow is planned on its class grid) and fits all the way.
  NavStatus last = NavStatus::kNoField;
  const std::vector<Vec2> big = follow(set, 2, start, 8000, &last);
  CHECK(last == NavStatus::kAtGoal);
  CHECK_FALSE(passes_cell(m, big, {10, 6}));
  ClearanceMap clearance;
  clearance.build(m);
  int beyond = 0;
  for (const Vec2 p : big) {
    CHECK(clearance.fits(reference_block(p, 2, 1.0f), 2));
    beyond += set.sample(2, p).status == NavStatus::kFollowFlow ? 1 : 0;
  }
  CHECK(beyond > 100);
  const std::vector<Vec2> small = follow(set, 1, start, 4000, &last);
  CHECK(last == NavStatus::kAtGoal);
  CHECK(passes_cell(m, small, {10, 6}));
}

TEST_CASE("size classes: no gap wide enough -> the big class has no route and holds") {
  const GridMap m = test::ascii(R"(
################
#......#.......#
#......#.......#
#..............#
#......#.......#
#......#.......#
################
)");
  NavigationSet set;
  const Vec2 goal[1] = {{12.5f, 3.5f}};
  set.update(m, goal, size_class_bit(1) | size_class_bit(2));
  const NavSample small = set.sample(1, {2.5f, 3.5f});
  CHECK(small.status == NavStatus::kGoalInSight);
  const NavSample big = set.sample(2, {3.0f, 3.0f});
  CHECK(big.status == NavStatus::kNoRoute);
  CHECK(big.direction == Vec2{});
}

TEST_CASE("size classes: a 2-wide corridor passes class 2, not class 3") {
  const GridMap m = test::ascii(R"(
##################
#.....############
#.....############
#.................
#.................
#.....############
#.....############
##################
)");
  // The corridor opens to the map edge on the right; the goal is at its far end.
  NavigationSet set;
  const Vec2 goal[1] = {{16.0f, 4.0f}};
  set.update(m, goal, size_class_bit(2) | size_class_bit(3));
  NavStatus last{};
  const std::vector<Vec2> path = follow(set, 2, {3.0f, 3.5f}, 8000, &last);
  CHECK(last == NavStatus::kAtGoal);
  ClearanceMap clearance;
  clearance.build(m);
  for (const Vec2 p : path) {
    CHECK(clearance.fits(reference_block(p, 2, 1.0f), 2));
    CHECK(disc_fits(m, p, 0.5f));
  }
  CHECK(path.back().x > 15.0f);  // through the corridor
  CHECK(set.sample(3, {3.5f, 3.5f}).status == NavStatus::kNoRoute);
}

TEST_CASE("NavigationSet: rebuilds per class only when a goal changes class cell or the map changes") {
  GridMap m = test::ascii(kGapMap);
  NavigationSet set;
  const SizeClassMask both = size_class_bit(1) | size_class_bit(2);
  std::vector<Vec2> goal{{16.2f, 6.2f}};
  CHECK(set.update(m, goal, both));
  const std::uint64_t built = set.rebuild_count();
  CHECK(built == 2);
  goal[0] = {16.4f, 6.4f};  // same cell for class 1 and same block for class 2
  CHECK_FALSE(set.update(m, goal, both));
  CHECK(set.rebuild_count() == built);
  // The sampler steers at the goal's current position, not the one of the build.
  CHECK(set.goal_positions(1)[0] == goal[0]);
  CHECK(set.sample(1, {14.5f, 6.4f}).target == goal[0]);
  // A wall far from any 2x2 block's change still bumps class 1 only when class 2's grid is unchanged.
  m.set_cost(1, 1, kBlockedCost);
  CHECK(set.update(m, goal, both));
  CHECK(set.rebuild_count() == built + 2);  // the corner cell was part of a 2x2 block too
  m.set_cost(20, 6, kBlockedCost);  // cell next to the right wall: blocks of class 2 touching it change too
  set.update(m, goal, both);
  // Only class 1 present: class 2 costs nothing.
  const std::uint64_t before = set.fields(2).rebuild_count();
  goal[0] = {12.5f, 3.5f};
  set.update(m, goal, size_class_bit(1));
  CHECK(set.fields(2).rebuild_count() == before);
  CHECK_FALSE(set.has_class(2));
}

TEST_CASE("any-angle builds: identical for every budget, and deterministic") {
  const GridMap m = test::boston_256();
  const std::vector<Vec2> first{{30.5f, 30.5f}};
  const std::vector<Vec2> second{{200.2f, 180.7f}, {40.5f, 220.5f}};
  const SizeClassMask classes = size_class_bit(1) | size_class_bit(2);
  NavigationSet reference;
  reference.update(m, second, classes);
  for (const std::size_t budget : {std::size_t{1}, std::size_t{7}, std::size_t{5000}, std::size_t{100000000}}) {
    CAPTURE(budget);
    NavigationSet set;
    set.set_rebuild_budget(budget);
    set.update(m, first, classes);
    std::size_t updates = 0;
    while (set.fields(1).front_stale() || set.fields(2).front_stale() || updates == 0) {
      set.update(m, second, classes);
      REQUIRE(++updates < 2000000);
    }
    for (int n = 1; n <= 2; ++n) {
      CAPTURE(n);
      CHECK(set.fields(n).integration().values() == reference.fields(n).integration().values());
      CHECK(set.fields(n).flow().directions() == reference.fields(n).flow().directions());
      // Waypoints, goal indices and sight of every cell (raw entries beyond the range are not
      // part of the result).
      const AnyAngleField& a = set.fields(n).any_angle();
      const AnyAngleField& r = reference.fields(n).any_angle();
      std::size_t differ = 0, with = 0;
      for (std::int32_t y = 0; y < m.height(); ++y) {
        for (std::int32_t x = 0; x < m.width(); ++x) {
          with += r.has_waypoint(x, y) ? 1 : 0;
          differ += a.packed(x, y) != r.packed(x, y) || a.goal_index(x, y) != r.goal_index(x, y) ||
                    a.goal_in_sight(x, y) != r.goal_in_sight(x, y);
        }
      }
      CHECK(differ == 0);
      CHECK(a.region_cells() == r.region_cells());
      CHECK(with > 1000);
    }
    if (budget == 7) CHECK(updates > 100);  // really sliced
  }
  // The class-1 integration is exactly today's field (the any-angle layer changes no value).
  IntegrationField plain;
  const CellCoord cells[2] = {m.world_to_cell(second[0]), m.world_to_cell(second[1])};
  plain.build(m, cells);
  CHECK(plain.values() == reference.fields(1).integration().values());
}
