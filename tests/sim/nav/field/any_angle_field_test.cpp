// AnyAngleField: sight test against a brute-force supercover, waypoints on real maps, the range
// (which cells get waypoints, and that they are the unbounded pass's), and the paths a kinematic
// point follower takes along sample_any_angle() (open ground and street maps, within and beyond
// the range) with the heading change per tick where the range ends.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark_maps.hpp"
#include "swarmfield/sim/nav/field/any_angle_field.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;

namespace {

/// True if the interior of blocked cell (x, y)'s square meets the interior of the convex hull of
/// cell c's square and cell w's centre: separating-axis test in doubled integer coordinates over
/// every pair of the hull's candidate vertices and the square's axes (written independently of
/// the library; touching is not meeting).
bool hull_meets_square(std::int32_t x, std::int32_t y, CellCoord c, CellCoord w) {
  using P = std::pair<std::int64_t, std::int64_t>;
  const std::vector<P> hull = {{2 * c.x, 2 * c.y}, {2 * c.x + 2, 2 * c.y}, {2 * c.x, 2 * c.y + 2},
                               {2 * c.x + 2, 2 * c.y + 2}, {2 * w.x + 1, 2 * w.y + 1}};
  const std::vector<P> sq = {{2 * x, 2 * y}, {2 * x + 2, 2 * y}, {2 * x, 2 * y + 2}, {2 * x + 2, 2 * y + 2}};
  std::vector<P> axes = {{1, 0}, {0, 1}};
  for (std::size_t i = 0; i < hull.size(); ++i)
    for (std::size_t j = i + 1; j < hull.size(); ++j)
      axes.push_back({-(hull[j].second - hull[i].second), hull[j].first - hull[i].first});
  for (const P& a : axes) {
    if (a.first == 0 && a.second == 0) continue;
    std::int64_t hmin = INT64_MAX, hmax = INT64_MIN, smin = INT64_MAX, smax = INT64_MIN;
    for (const P& p : hull) {
      const std::int64_t v = a.first * p.first + a.second * p.second;
      hmin = std::min(hmin, v);
      hmax = std::max(hmax, v);
    }
    for (const P& p : sq) {
      const std::int64_t v = a.first * p.first + a.second * p.second;
      smin = std::min(smin, v);
      smax = std::max(smax, v);
    }
    if (hmax <= smin || smax <= hmin) return false;  // separated (or only touching)
  }
  return true;
}

/// Brute-force sight of the whole cell c to w's centre: no blocked (or off-map) cell meets it.
bool brute_sight(const GridMap& m, CellCoord c, CellCoord w) {
  for (std::int32_t y = std::min(c.y, w.y) - 1; y <= std::max(c.y, w.y) + 1; ++y)
    for (std::int32_t x = std::min(c.x, w.x) - 1; x <= std::max(c.x, w.x) + 1; ++x)
      if (!m.walkable(x, y) && hull_meets_square(x, y, c, w)) return false;
  return true;
}

/// The any-angle fields of `m` for `goals` (all at once), waypoints within `range`.
struct Fields {
  NavigationFields nav;
  Fields(const GridMap& m, std::span<const CellCoord> goals, float range = NavigationFields::kDefaultAnyAngleRange) {
    nav.set_any_angle(true);
    nav.set_any_angle_range(range);
    nav.update(m, goals);
  }
};

BlockedCountTable table_of(const IntegrationField& f) {
  BlockedCountTable t;
  t.begin(f);
  (void)t.advance(f, UINT64_MAX);
  return t;
}

/// A kinematic point following sample_any_angle() with fixed small steps (cells) until it is
/// on its goal: path length (world units), whether it arrived or stepped into a blocked cell,
/// and the largest change of direction between consecutive steps where it crossed the range's
/// edge (a step whose reference block's status differs from the previous one's, kFollowFlow on
/// one side) and elsewhere.
struct Walk {
  double length = 0.0;
  bool arrived = false;
  bool entered_wall = false;
  int steps = 0;
  int flow_steps = 0;              // steps beyond the range (kFollowFlow)
  double edge_turn_deg = 0.0;      // largest turn within kEdgeSteps of a crossing of the range's edge
  int edge_crossings = 0;
};
constexpr int kEdgeSteps = 15;  // steps either side of a crossing (1.5 cells at 0.1 cells a step)

double turn_deg(Vec2 a, Vec2 b) {
  const double dot = std::clamp(static_cast<double>(a.x) * b.x + static_cast<double>(a.y) * b.y, -1.0, 1.0);
  return std::acos(dot) * 180.0 / 3.14159265358979;
}

/// `flow` null: sample_any_angle() without a flow field (cells beyond the range are skipped).
Walk follow(const GridMap& m, const AnyAngleField& field, const FlowField* flow, int size_class,
            std::span<const Vec2> goals, Vec2 p, float step, int max_steps) {
  Walk w;
  std::vector<double> turns;
  std::vector<int> crossings;
  Vec2 last_dir{};
  NavStatus last_status = NavStatus::kNoField;
  for (; w.steps < max_steps; ++w.steps) {
    const NavSample s = flow != nullptr ? sample_any_angle(field, *flow, size_class, m.cell_size(), goals, p)
                                        : sample_any_angle(field, size_class, m.cell_size(), goals, p);
    if (s.status == NavStatus::kAtGoal) {
      w.arrived = true;
      break;
    }
    if (s.direction.x == 0.0f && s.direction.y == 0.0f) break;
    if (w.steps > 0) {
      turns.push_back(turn_deg(last_dir, s.direction));
      if ((s.status == NavStatus::kFollowFlow) != (last_status == NavStatus::kFollowFlow))
        crossings.push_back(w.steps);
    }
    w.flow_steps += s.status == NavStatus::kFollowFlow ? 1 : 0;
    last_dir = s.direction;
    last_status = s.status;
    // The last step lands exactly on the goal (the follower stops where the crowd would arrive).
    float len = step;
    if (s.status == NavStatus::kGoalInSight) len = std::min(step, length(s.target - p));
    p += s.direction * len;
    w.length += len;
    if (!m.walkable_at(p)) w.entered_wall = true;
  }
  w.edge_crossings = static_cast<int>(crossings.size());
  for (const int c : crossings) {
    // turns[i] is the turn between steps i and i + 1.
    for (int i = std::max(c - 1 - kEdgeSteps, 0); i < std::min(c - 1 + kEdgeSteps, static_cast<int>(turns.size())); ++i)
      w.edge_turn_deg = std::max(w.edge_turn_deg, turns[static_cast<std::size_t>(i)]);
  }
  return w;
}

}  // namespace

TEST_CASE("sight: never through a wall; exact against a brute-force hull test up to 8 bands") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    const GridMap m = test::random_map(seed, 48, 40, static_cast<int>(2 + seed * 2), false);
    IntegrationField f;
    const CellCoord goal[1] = {{1, 1}};
    f.build(m, goal);
    const BlockedCountTable t = table_of(f);
    test::TestRng rng{seed * 77};
    int seen = 0, agree = 0, pairs = 0;
    for (int i = 0; i < 4000; ++i) {
      const CellCoord a{rng.below(48), rng.below(40)};
      const CellCoord b{rng.below(48), rng.below(40)};
      if (!m.walkable(a) || !m.walkable(b)) continue;
      ++pairs;
      const bool ours = cell_sees_cell(t, a, b);
      const bool truth = brute_sight(m, a, b);
      if (ours) CHECK(truth);  // sound: never claims sight through a wall
      seen += ours ? 1 : 0;
      // Up to 8 bands the test is exact.
      if (std::min(std::abs(a.x - b.x), std::abs(a.y - b.y)) < 8) {
        CHECK(ours == truth);
        agree += ours == truth ? 1 : 0;
      }
    }
    CHECK(seen > 10);  // not vacuous
    CHECK(agree > pairs / 2);
  }
}

TEST_CASE("any-angle: on open ground every cell sees the goal") {
  const GridMap m = test::ascii(R"(
################
#..............#
#..............#
#..............#
#..............#
#..............#
#..............#
#..............#
################
)");
  const CellCoord goal[1] = {{4, 3}};
  Fields f(m, goal);
  const AnyAngleField& a = f.nav.any_angle();
  for (std::int32_t y = 0; y < m.height(); ++y) {
    for (std::int32_t x = 0; x < m.width(); ++x) {
      CAPTURE(x);
      CAPTURE(y);
      CHECK(a.has_waypoint(x, y) == m.walkable(x, y));
      if (!m.walkable(x, y)) continue;
      CHECK(a.goal_in_sight(x, y));
      CHECK(a.waypoint(x, y) == goal[0]);
      CHECK(a.goal_index(x, y) == 0);
    }
  }
}

TEST_CASE("any-angle: waypoints bend at the corner of a wall, goal indices follow the search") {
  const GridMap m = test::ascii(R"(
############
#..........#
#..........#
#.....######
#..........#
#..........#
############
)");
  const CellCoord goals[2] = {{10, 1}, {10, 5}};
  Fields f(m, goals);
  const AnyAngleField& a = f.nav.any_angle();
  // Right of the wall's end each goal is seen directly from its own half.
  CHECK(a.goal_in_sight(8, 2));
  CHECK(a.goal_index(8, 2) == 0);
  CHECK(a.goal_in_sight(8, 4));
  CHECK(a.goal_index(8, 4) == 1);
  // (1, 1) sees goal 0 along the top row.
  CHECK(a.goal_in_sight(1, 1));
  // Every waypoint is in sight of its cell (the brute-force supercover agrees).
  for (std::int32_t y = 0; y < m.height(); ++y)
    for (std::int32_t x = 0; x < m.width(); ++x)
      if (a.has_waypoint(x, y)) CHECK(brute_sight(m, {x, y}, a.waypoint(x, y)));
}

TEST_CASE("any-angle: every waypoint on Boston_0_256 is in sight and on the cell's field path") {
  const GridMap m = test::boston_256();
  const CellCoord goals[2] = {{128, 128}, {30, 220}};
  REQUIRE(m.walkable(goals[0]));
  REQUIRE(m.walkable(goals[1]));
  Fields f(m, goals, AnyAngleField::kUnboundedRange);
  const AnyAngleField& a = f.nav.any_angle();
  const IntegrationField& in = f.nav.integration();
  const FlowField& flow = f.nav.flow();
  std::size_t checked = 0, in_sight = 0, far = 0;
  for (std::int32_t y = 0; y < m.height(); y += 3) {
    for (std::int32_t x = 0; x < m.width(); x += 3) {
      REQUIRE(a.has_waypoint(x, y) == in.reachable(x, y));
      if (!in.reachable(x, y)) continue;
      const CellCoord w = a.waypoint(x, y);
      CHECK(brute_sight(m, {x, y}, w));
      // Walk the flow from (x, y): the waypoint lies on it, and its goal is where the walk ends.
      CellCoord c{x, y};
      bool met = c == w;
      while (flow.at(c.x, c.y) != FlowDirection::kNone) {
        const CellCoord o = kDirectionOffsets[static_cast<std::size_t>(flow.at(c.x, c.y))];
        c = {c.x + o.x, c.y + o.y};
        met = met || c == w;
      }
      CHECK(met);
      CHECK(c == goals[a.goal_index(x, y)]);
      CHECK(a.goal_in_sight(x, y) == (w == c));
      ++checked;
      in_sight += a.goal_in_sight(x, y) ? 1 : 0;
      far += std::max(std::abs(w.x - x), std::abs(w.y - y)) > 5 ? 1 : 0;
    }
  }
  CHECK(checked > 2000);
  CHECK(in_sight > 50);
  CHECK(far > checked / 4);  // waypoints are mostly far ahead, not the next cell
}

TEST_CASE("range: waypoints exactly for the cells within the range, each the unbounded pass's") {
  // Unit costs (Boston_0_256) and random costs 1..254 (the region's boxes assume each step costs
  // at least 1), a range through the middle of the map, several goals with overlapping boxes.
  struct Case {
    GridMap map;
    std::vector<CellCoord> goals;
    float range;
  };
  std::vector<Case> cases;
  cases.push_back({test::boston_256(), {{128, 128}, {30, 220}, {140, 120}}, 40.0f});
  cases.push_back({test::boston_256(), {{128, 128}}, 0.5f});
  // Open ground: the box's edge cells are exactly at the range (straight rows and columns).
  cases.push_back({GridMap(70, 56), {{30, 25}}, 20.0f});
  cases.push_back({GridMap(70, 56), {{30, 25}, {45, 30}}, 12.5f});
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    GridMap m = test::random_map(seed, 90, 70, 20, true);
    std::vector<CellCoord> g;
    for (const CellCoord c : {CellCoord{10, 10}, CellCoord{60, 40}})
      if (m.walkable(c)) g.push_back(c);
    cases.push_back({std::move(m), g, 150.0f});
  }
  for (const Case& c : cases) {
    CAPTURE(c.range);
    CAPTURE(c.map.width());
    REQUIRE_FALSE(c.goals.empty());
    Fields bounded(c.map, c.goals, c.range);
    Fields full(c.map, c.goals, AnyAngleField::kUnboundedRange);
    const IntegrationField& in = full.nav.integration();
    const AnyAngleField& a = bounded.nav.any_angle();
    const AnyAngleField& u = full.nav.any_angle();
    std::size_t inside = 0, outside = 0;
    for (std::int32_t y = 0; y < c.map.height(); ++y) {
      for (std::int32_t x = 0; x < c.map.width(); ++x) {
        CAPTURE(x);
        CAPTURE(y);
        const bool within = in.reachable(x, y) && in.cost_to_goal(x, y) <= static_cast<double>(c.range) + 1e-9;
        REQUIRE(a.has_waypoint(x, y) == within);
        REQUIRE(u.has_waypoint(x, y) == in.reachable(x, y));
        if (!within) {
          outside += in.reachable(x, y) ? 1 : 0;
          CHECK(a.packed(x, y) == AnyAngleField::kNoWaypoint);
          continue;
        }
        ++inside;
        CHECK(a.packed(x, y) == u.packed(x, y));
        CHECK(a.goal_index(x, y) == u.goal_index(x, y));
        CHECK(a.goal_in_sight(x, y) == u.goal_in_sight(x, y));
      }
    }
    CHECK(a.region_cells() == inside);
    CHECK(inside >= c.goals.size());
    if (c.range > 1.0f) CHECK(inside > 200);
    CHECK(outside > 200);  // the range really cuts
  }
}

TEST_CASE("range: a flow field of another goal (same size) still gives a finished, in-bounds build") {
  // Misuse: the chain walk then meets cells without flow or outside the region; it must stop
  // (a cell without flow becomes its own waypoint) and never index out of the map.
  const GridMap m = test::boston_256();
  const CellCoord goal_a[1] = {{128, 128}};
  const CellCoord goal_b[1] = {{30, 220}};
  IntegrationField a;
  a.build(m, goal_a);
  IntegrationField b;
  b.build(m, goal_b);
  FlowField flow_b;
  flow_b.build_rows(b, 0, b.height());
  const BlockedCountTable t = table_of(a);
  AnyAngleField field;
  (void)field.begin(a, goal_a, 60.0f);
  std::uint64_t spent = 0;
  for (int i = 0; i < 100000 && !field.done(); ++i) spent += field.advance(flow_b, t, 97);
  CHECK(field.done());
  CHECK(spent > 0);
  std::size_t with = 0;
  for (std::int32_t y = 0; y < m.height(); ++y) {
    for (std::int32_t x = 0; x < m.width(); ++x) {
      if (!field.has_waypoint(x, y)) continue;
      ++with;
      const CellCoord w = field.waypoint(x, y);
      CHECK((w.x >= 0 && w.y >= 0 && w.x < m.width() && w.y < m.height()));
    }
  }
  CHECK(with == field.region_cells());
  // The walk reached goal b (no flow there): a dead end, its own waypoint, no sight.
  REQUIRE(field.has_waypoint(goal_b[0].x, goal_b[0].y));
  CHECK(field.waypoint(goal_b[0].x, goal_b[0].y) == goal_b[0]);
  CHECK_FALSE(field.goal_in_sight(goal_b[0].x, goal_b[0].y));
}

TEST_CASE("follower: straight at a goal in sight, <= 1.01x the straight line at any angle") {
  const GridMap m(200, 200);
  const Vec2 goal_pos{100.3f, 100.6f};
  const CellCoord goal[1] = {m.world_to_cell(goal_pos)};
  Fields f(m, goal);
  const Vec2 goals[1] = {goal_pos};
  double worst = 0.0, worst_flow = 0.0;
  for (int k = 0; k < 36; ++k) {
    const double ang = (static_cast<double>(k) + 0.37) * 2.0 * 3.14159265358979 / 36.0;
    const Vec2 start{goal_pos.x + static_cast<float>(80.0 * std::cos(ang)), goal_pos.y + static_cast<float>(80.0 * std::sin(ang))};
    const double straight = length(goal_pos - start);
    const Walk w = follow(m, f.nav.any_angle(), &f.nav.flow(), 1, goals, start, 0.05f, 4000);
    CAPTURE(k);
    CHECK(w.arrived);
    CHECK_FALSE(w.entered_wall);
    CHECK(w.flow_steps == 0);  // within the range all the way
    worst = std::max(worst, w.length / straight);
    // Today's 8-direction flow with the same follower, until it reaches the goal cell.
    Vec2 p = start;
    double len = 0.0;
    for (int i = 0; i < 4000 && !(m.world_to_cell(p) == goal[0]); ++i) {
      const Vec2 d = sample_flow(m, f.nav.flow(), p);
      p += d * 0.05f;
      len += 0.05;
    }
    len += length(goal_pos - p);
    worst_flow = std::max(worst_flow, len / straight);
  }
  MESSAGE("open ground: worst path / straight line = " << worst << " (8-direction flow: " << worst_flow << ")");
  CHECK(worst <= 1.01);
  CHECK(worst_flow > 1.01);  // the measurement can tell: the 8-direction field fails it
}

TEST_CASE("follower on open ground from beyond the range: no snap at the range's edge") {
  // A runner at 3 cells/s on a 30 Hz tick moves 0.1 cells a tick: with that step, the direction
  // may turn by less than 15 degrees a tick where the range ends (C9's bound).
  const GridMap m(200, 200);
  const Vec2 goal_pos{100.3f, 100.6f};
  const CellCoord goal[1] = {m.world_to_cell(goal_pos)};
  constexpr float kRange = 30.0f;
  Fields f(m, goal, kRange);
  const Vec2 goals[1] = {goal_pos};
  double worst_turn = 0.0, worst_ratio = 0.0;
  for (int k = 0; k < 36; ++k) {
    const double ang = (static_cast<double>(k) + 0.37) * 2.0 * 3.14159265358979 / 36.0;
    const Vec2 start{goal_pos.x + static_cast<float>(80.0 * std::cos(ang)), goal_pos.y + static_cast<float>(80.0 * std::sin(ang))};
    const Walk w = follow(m, f.nav.any_angle(), &f.nav.flow(), 1, goals, start, 0.1f, 4000);
    CAPTURE(k);
    REQUIRE(w.arrived);
    CHECK_FALSE(w.entered_wall);
    CHECK(w.flow_steps > 300);       // really started beyond the range
    CHECK(w.edge_crossings >= 1);
    worst_turn = std::max(worst_turn, w.edge_turn_deg);
    // Beyond the range it walks the smoothed 8-direction flow: no longer than the octile path.
    const double dx = std::fabs(goal_pos.x - start.x), dy = std::fabs(goal_pos.y - start.y);
    const double octile = std::max(dx, dy) + (std::sqrt(2.0) - 1.0) * std::min(dx, dy);
    CHECK(w.length <= octile + 0.5);
    worst_ratio = std::max(worst_ratio, w.length / length(goal_pos - start));
  }
  MESSAGE("open ground from 80 cells, range " << kRange << ": worst turn per 0.1-cell step at the range's edge "
                                              << worst_turn << " degrees; worst path / straight line " << worst_ratio);
  CHECK(worst_turn < 15.0);
}

TEST_CASE("follower on street maps: no longer than the octile optimum (+ tolerance), within and beyond the range") {
  // Tolerance: the follower steers from its exact position toward targets seen from cell
  // centres and blends the four samples around it, so near a bend it may swing up to about half
  // a cell wide of the polyline through the waypoints; 0.5 cells per path covers that (the
  // polyline itself is never longer than the grid path: each waypoint shortcuts a piece of it).
  // Beyond the range the follower walks the smoothed 8-direction flow, whose blends cut the
  // grid path's corners: the same tolerance.
  constexpr double kTolerance = 0.5;
  constexpr float kRange = NavigationFields::kDefaultAnyAngleRange;
  const char* maps[] = {"street/Boston_0_512.map", "street/Boston_0_1024.map", "street/Paris_1_512.map",
                        "street/Paris_1_1024.map", "street/Berlin_0_256.map", "street/Milan_1_1024.map"};
  double worst_edge_turn = 0.0;
  for (const char* name : maps) {
    CAPTURE(name);
    const GridMap m = test::read_benchmark_map(name);
    // Goal: the walkable cell nearest the centre.
    CellCoord g{m.width() / 2, m.height() / 2};
    for (std::int32_t r = 0; !m.walkable(g); ++r) g = {m.width() / 2 + r % 7, m.height() / 2 + r / 7};
    const CellCoord goal[1] = {g};
    Fields f(m, goal, kRange);
    const Vec2 goals[1] = {m.cell_center(g)};
    test::TestRng rng{0x5eedull + static_cast<std::uint64_t>(m.width())};
    struct Stats {
      double sum_ratio = 0.0, max_ratio = 0.0, max_excess = -1e9, edge_turn = 0.0;
      int walks = 0, walls = 0;
    };
    Stats within, beyond;  // starts within the range / beyond it
    while (within.walks < 30 || beyond.walks < 30) {
      const CellCoord s{rng.below(m.width()), rng.below(m.height())};
      if (!f.nav.integration().reachable(s.x, s.y) || f.nav.integration().cost_to_goal(s.x, s.y) < 20.0) continue;
      const double optimum = f.nav.integration().cost_to_goal(s.x, s.y);
      Stats& st = optimum <= kRange ? within : beyond;
      if (st.walks >= 30) continue;
      const Walk w = follow(m, f.nav.any_angle(), &f.nav.flow(), 1, goals, m.cell_center(s), 0.1f,
                            static_cast<int>(optimum * 20.0) + 200);
      CAPTURE(s.x);
      CAPTURE(s.y);
      REQUIRE(w.arrived);
      if (&st == &beyond) CHECK(w.flow_steps > 0);
      st.walls += w.entered_wall ? 1 : 0;
      CHECK(w.length <= optimum + kTolerance);
      st.sum_ratio += w.length / optimum;
      st.max_ratio = std::max(st.max_ratio, w.length / optimum);
      st.max_excess = std::max(st.max_excess, w.length - optimum);
      st.edge_turn = std::max(st.edge_turn, w.edge_turn_deg);
      ++st.walks;
    }
    for (const Stats* st : {&within, &beyond}) {
      MESSAGE(std::string(name) << (st == &within ? ", starts within" : ", starts beyond") << " the range (" << kRange
                   << "): path / octile optimum mean " << st->sum_ratio / st->walks << ", max " << st->max_ratio
                   << ", max excess " << st->max_excess << " cells; walks touching a wall cell " << st->walls
                   << "; worst turn per 0.1-cell step at the range's edge " << st->edge_turn << " degrees");
    }
    worst_edge_turn = std::max(worst_edge_turn, beyond.edge_turn);
  }
  MESSAGE("street maps: worst turn per 0.1-cell step at the range's edge " << worst_edge_turn << " degrees");
  CHECK(worst_edge_turn < 15.0);
}
