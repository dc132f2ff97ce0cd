// C1. Two walls touching diagonally ("X" gap): no flow arrow or agent crosses the corner where
// (5,3) and (4,4) touch; the agent goes round by row 7 in at most 1.1x the optimal time and its
// disc never overlaps a wall cell.
#include <doctest/doctest.h>

#include <vector>

#include "scenario_support.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::scenario;

namespace {

constexpr const char* kMap =
    "##########\n"
    "#A...#...#\n"
    "#....#...#\n"
    "#....#...#\n"
    "#...#....#\n"
    "#...#..P.#\n"
    "#...#....#\n"
    "#........#\n"
    "##########\n";

}  // namespace

TEST_CASE("C1: no flow arrow crosses the diagonal wall corner") {
  const Scene scene(kMap);
  REQUIRE_FALSE(scene.map.walkable(5, 3));
  REQUIRE_FALSE(scene.map.walkable(4, 4));
  NavigationFields nav;
  const CellCoord goal[1] = {scene.one('P')};
  REQUIRE(nav.update(scene.map, goal));

  // Every arrow of the field is a legal step (no corner cutting anywhere), and in particular
  // neither cell beside the X gap points across it.
  int arrows = 0;
  for (std::int32_t y = 0; y < scene.map.height(); ++y) {
    for (std::int32_t x = 0; x < scene.map.width(); ++x) {
      const FlowDirection d = nav.flow().at(x, y);
      if (d == FlowDirection::kNone) continue;
      ++arrows;
      const CellCoord off = kDirectionOffsets[static_cast<std::size_t>(d)];
      CAPTURE(x);
      CAPTURE(y);
      CHECK(legal_step(scene.map, {x, y}, {x + off.x, y + off.y}));
    }
  }
  CHECK(arrows == static_cast<int>(scene.map.walkable_count()) - 1);  // all but the goal
  CHECK(nav.flow().at(4, 3) != FlowDirection::kSE);
  CHECK(nav.flow().at(5, 4) != FlowDirection::kNW);

  // Smoothed sampling never points into the corner: from anywhere in (4,3) the sampled direction
  // has no south-east component pair, from anywhere in (5,4) no north-west one.
  int samples = 0;
  for (int i = 1; i < 10; ++i) {
    for (int j = 1; j < 10; ++j) {
      const float fx = 0.1f * static_cast<float>(i), fy = 0.1f * static_cast<float>(j);
      const Vec2 nw_side = sample_flow(scene.map, nav.flow(), {4.0f + fx, 3.0f + fy});
      const Vec2 se_side = sample_flow(scene.map, nav.flow(), {5.0f + fx, 4.0f + fy});
      CAPTURE(fx);
      CAPTURE(fy);
      CHECK(length(nw_side) == doctest::Approx(1.0f).epsilon(1e-4));
      CHECK(length(se_side) == doctest::Approx(1.0f).epsilon(1e-4));
      CHECK_FALSE((nw_side.x > 0.01f && nw_side.y > 0.01f));
      CHECK_FALSE((se_side.x < -0.01f && se_side.y < -0.01f));
      ++samples;
    }
  }
  CHECK(samples == 81);
}

namespace {

/// One agent from A to P, stepped by `steering`: it goes round by row 7 within 1.1x the optimal
/// time (octile; any-angle paths are no longer), only through legal cell steps, its disc clear
/// of walls.
void run_agent(Steering steering) {
  const Scene scene(kMap);
  const CellCoord start = scene.one('A');
  const CellCoord player = scene.one('P');
  const SwarmParams params;  // defaults: radius 0.35, max_speed 3 cells/s
  ScenarioRun run(scene.map, player, steering, 4, params);
  const std::uint32_t id = run.swarm().add(scene.map.cell_center(start));
  REQUIRE(id != Swarm::kInvalidAgent);

  const double optimal = optimal_length(scene.map, start, player);
  const double optimal_ticks = ticks_for(optimal, params.max_speed);
  const int limit = static_cast<int>(3.0 * optimal_ticks);
  CellCoord cell = start;
  bool visited_row7 = false;
  bool legal = true;
  float worst_overlap = 0.0f;
  int arrival = -1;
  for (int t = 1; t <= limit && arrival < 0; ++t) {
    run.step();
    REQUIRE(all_finite(run.swarm()));
    const Vec2 p = position_of(run.swarm(), id);
    const CellCoord now = scene.map.world_to_cell(p);
    if (!(now == cell)) {
      if (!legal_step(scene.map, cell, now)) {
        legal = false;
        MESSAGE("illegal cell step (" << cell.x << "," << cell.y << ") -> (" << now.x << "," << now.y
                                      << ") at tick " << t);
      }
      cell = now;
    }
    if (now.y == 7) visited_row7 = true;
    worst_overlap = std::max(worst_overlap, wall_overlap(scene.map, p, params.radius));
    if (run.arrived(id)) arrival = t;
  }
  MESSAGE("C1 (" << steering_name(steering) << "): optimal " << optimal << " cells = " << optimal_ticks
                 << " ticks; arrival tick " << arrival << " (ratio " << arrival / optimal_ticks
                 << "); worst disc/wall overlap " << worst_overlap);
  CHECK(arrival > 0);
  CHECK(static_cast<double>(arrival) <= 1.1 * optimal_ticks);
  CHECK(visited_row7);
  CHECK(legal);
  CHECK(worst_overlap <= 1e-4f);
}

}  // namespace

TEST_CASE("C1: the agent goes round by row 7 within 1.1x optimal time, its disc clear of walls") {
  run_agent(Steering::kFlowField);
}

TEST_CASE("C1 (World: NavigationSet, any-angle): round by row 7 within 1.1x optimal time, disc clear of walls") {
  run_agent(Steering::kWorld);
}
