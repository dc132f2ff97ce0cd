// C2. Diagonal approach to a one-cell door: for all four start/goal pairings (one agent each),
// arrival within 1.5x optimal time, no stall (more than 3 ticks below 10% of max speed) short of
// the goal, and the horizontally mirrored map gives the mirrored run (no tie-break bias).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "scenario_support.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::scenario;

namespace {

constexpr const char* kMap =
    "##########\n"
    "#A......A#\n"
    "#........#\n"
    "####.#####\n"
    "#........#\n"
    "#P......P#\n"
    "##########\n";

/// The map mirrored left-right (each row reversed).
std::string mirrored(const std::string& text) {
  std::string out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string row = text.substr(begin, end - begin);
    std::reverse(row.begin(), row.end());
    out += row;
    out += '\n';
    begin = end + 1;
  }
  return out;
}

struct Run {
  int arrival = -1;            // tick the agent entered the goal cell, -1 if never
  int longest_stall = 0;       // longest run of ticks below 10% of max speed before arrival
  std::vector<Vec2> track;     // position after each tick, up to arrival
};

Run run_one(const GridMap& map, CellCoord start, CellCoord goal_cell, const SwarmParams& params, int max_ticks,
            Steering steering) {
  ScenarioRun scenario(map, goal_cell, steering, 2, params);
  const std::uint32_t id = scenario.swarm().add(map.cell_center(start));
  REQUIRE(id != Swarm::kInvalidAgent);
  Run run;
  int stall = 0;
  for (int t = 1; t <= max_ticks; ++t) {
    scenario.step();
    const Swarm& swarm = scenario.swarm();
    REQUIRE(all_finite(swarm));
    const Vec2 p = position_of(swarm, id);
    REQUIRE(map.walkable_at(p));
    run.track.push_back(p);
    if (scenario.arrived(id)) {
      run.arrival = t;
      break;
    }
    stall = length(velocity_of(swarm, id)) < 0.1f * params.max_speed ? stall + 1 : 0;
    run.longest_stall = std::max(run.longest_stall, stall);
  }
  return run;
}

void run_pairings(Steering steering) {
  const std::string text = kMap;
  const Scene scene(text);
  const Scene mirror(mirrored(text));
  REQUIRE(mirror.map.walkable(5, 3));
  REQUIRE_FALSE(mirror.map.walkable(4, 3));
  const std::vector<CellCoord> starts = scene.cells_of('A');
  const std::vector<CellCoord> goals = scene.cells_of('P');
  REQUIRE(starts.size() == 2);
  REQUIRE(goals.size() == 2);
  const SwarmParams params;  // defaults: radius 0.35, max_speed 3 cells/s
  const std::int32_t w = scene.map.width();
  const float world_w = static_cast<float>(w) * scene.map.cell_size();

  int pairings = 0;
  for (const CellCoord start : starts) {
    for (const CellCoord goal : goals) {
      CAPTURE(start.x);
      CAPTURE(start.y);
      CAPTURE(goal.x);
      CAPTURE(goal.y);
      const double optimal = optimal_length(scene.map, start, goal);
      REQUIRE(std::isfinite(optimal));
      const double optimal_ticks = ticks_for(optimal, params.max_speed);
      const int limit = static_cast<int>(3.0 * optimal_ticks);
      const Run run = run_one(scene.map, start, goal, params, limit, steering);
      // The same pairing on the mirrored map: x -> w - 1 - x for cells, x -> W - x in the world.
      const CellCoord m_start{w - 1 - start.x, start.y};
      const CellCoord m_goal{w - 1 - goal.x, goal.y};
      const Run mrun = run_one(mirror.map, m_start, m_goal, params, limit, steering);
      float worst_mirror = 0.0f;
      const std::size_t common = std::min(run.track.size(), mrun.track.size());
      for (std::size_t t = 0; t < common; ++t) {
        const Vec2 a = run.track[t];
        const Vec2 b{world_w - mrun.track[t].x, mrun.track[t].y};
        worst_mirror = std::max(worst_mirror, length(a - b));
      }
      MESSAGE("C2 (" << steering_name(steering) << ") (" << start.x << "," << start.y << ")->(" << goal.x << ","
                     << goal.y << "): optimal " << optimal << " cells = " << optimal_ticks << " ticks; arrival "
                     << run.arrival << " (ratio " << run.arrival / optimal_ticks << "), mirrored arrival "
                     << mrun.arrival << "; longest stall " << run.longest_stall << "/" << mrun.longest_stall
                     << " ticks; worst mirror deviation " << worst_mirror << " cells");
      CHECK(run.arrival > 0);
      CHECK(static_cast<double>(run.arrival) <= 1.5 * optimal_ticks);
      CHECK(run.longest_stall <= 3);
      CHECK(mrun.arrival > 0);
      CHECK(std::abs(run.arrival - mrun.arrival) <= 2);
      CHECK(mrun.longest_stall <= 3);
      CHECK(worst_mirror <= 0.05f);
      ++pairings;
    }
  }
  CHECK(pairings == 4);
}

}  // namespace

TEST_CASE("C2: every diagonal pairing through the one-cell door arrives in time, without stalls, mirror-symmetric") {
  run_pairings(Steering::kFlowField);
}

TEST_CASE("C2 (World: NavigationSet, any-angle): every pairing through the door in time, no stalls, mirror-symmetric") {
  run_pairings(Steering::kWorld);
}
