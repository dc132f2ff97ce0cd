// C9. Heading across cell borders: an agent runs along the border between cells whose arrows
// differ by 45 degrees (N vs NE). Expected: with smoothed sampling its heading changes by less
// than 15 degrees per tick; no 45-degree snaps.
//
// Map: an open 21 x 40 field with the player at (10, 1). Octile flow points straight N in the
// player's column 10 and diagonally at it elsewhere (NE in column 9, NW in column 11), so the
// lines x = 10 and x = 11 are borders between N and NE / NW arrows. Agents start on and next to
// those borders 37 cells south and run north along them, crossing them at a shallow angle (the
// raw arrow under an agent then snaps by 45 degrees; the smoothed direction must not).
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "scenario_support.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"

using namespace swarmfield::sim;
using namespace swarmfield::sim::scenario;

namespace {

constexpr float kDegree = std::numbers::pi_v<float> / 180.0f;

}  // namespace

TEST_CASE("C9: the arrows really differ by 45 degrees across the borders, and sampling is continuous there") {
  GridMap map(21, 40);
  NavigationFields nav;
  const CellCoord goal[1] = {{10, 1}};
  REQUIRE(nav.update(map, goal));
  for (std::int32_t y = 5; y < 39; ++y) {
    CAPTURE(y);
    REQUIRE(nav.flow().at(9, y) == FlowDirection::kNE);
    REQUIRE(nav.flow().at(10, y) == FlowDirection::kN);
    REQUIRE(nav.flow().at(11, y) == FlowDirection::kNW);
  }
  // Across a border the sampled direction is continuous (the raw arrows jump by 45 degrees),
  // and along a line crossing both borders it turns by well under 15 degrees per 0.1 cell.
  float worst_jump = 0.0f, worst_step = 0.0f;
  for (float y = 10.05f; y < 30.0f; y += 1.7f) {
    for (const float border : {10.0f, 11.0f}) {
      const Vec2 a = sample_flow(map, nav.flow(), {border - 1e-4f, y});
      const Vec2 b = sample_flow(map, nav.flow(), {border + 1e-4f, y});
      worst_jump = std::max(worst_jump, std::abs(angle_between(a, b)));
    }
    Vec2 previous = sample_flow(map, nav.flow(), {8.5f, y});
    for (int i = 1; i <= 40; ++i) {
      const Vec2 d = sample_flow(map, nav.flow(), {8.5f + 0.1f * static_cast<float>(i), y});
      worst_step = std::max(worst_step, std::abs(angle_between(previous, d)));
      previous = d;
    }
  }
  MESSAGE("C9: largest change of the sampled direction across a border " << worst_jump / kDegree
                                                                          << " deg, per 0.1 cell across both borders "
                                                                          << worst_step / kDegree << " deg");
  CHECK(worst_jump < 1.0f * kDegree);
  CHECK(worst_step < 15.0f * kDegree);
}

TEST_CASE("C9: agents running along N/NE and N/NW borders turn by less than 15 degrees per tick") {
  GridMap map(21, 40);
  NavigationFields nav;
  const CellCoord player{10, 1};
  const CellCoord goal[1] = {player};
  REQUIRE(nav.update(map, goal));
  const SwarmParams params;
  // Just west of the N/NE border and just east of the N/NW one (each run crosses its border
  // once, at a shallow angle, after running along it), and exactly on the N/NE border.
  const std::vector<float> starts = {9.9f, 9.95f, 9.99f, 9.999f, 11.001f, 11.01f, 11.05f, 11.1f, 10.0f};
  int raw_snaps = 0;  // 45-degree changes of the arrow under the agent: borders crossed
  float worst_move_turn = 0.0f, worst_heading_turn = 0.0f;
  int checked_ticks = 0;
  for (const float x0 : starts) {
    CAPTURE(x0);
    Swarm swarm(params, 2);  // one agent per run: nothing but the flow steers it
    swarm.set_environment(map, {});
    // Facing where the flow sends it, so the first ticks are not a turn on the spot.
    const Vec2 start{x0, 38.5f};
    const Vec2 d0 = sample_flow(map, nav.flow(), start);
    const std::uint32_t id = swarm.add(start, std::atan2(d0.y, d0.x));
    Vec2 last_move{};
    float last_heading = swarm.headings()[0];
    FlowDirection last_arrow = nav.flow().at(static_cast<std::int32_t>(x0), 38);
    for (int t = 0; t < 400; ++t) {
      swarm.step(map, nav.flow(), nav.integration(), kDt);
      REQUIRE(all_finite(swarm));
      const Vec2 p = position_of(swarm, id);
      const CellCoord c = map.world_to_cell(p);
      if (c == player) break;  // arrived
      const Vec2 v = velocity_of(swarm, id);
      const float heading = swarm.headings()[swarm.index_of(id)];
      const FlowDirection arrow = nav.flow().at(c.x, c.y);
      if (arrow != last_arrow) ++raw_snaps;
      last_arrow = arrow;
      // Only while cruising: the last cells before the goal are a stop, not a turn.
      if (length(v) > 0.5f * params.max_speed && p.y > 3.0f) {
        if (length(last_move) > 0.0f) {
          worst_move_turn = std::max(worst_move_turn, std::abs(angle_between(last_move, v)));
          const float dh = std::remainder(heading - last_heading, 2.0f * std::numbers::pi_v<float>);
          worst_heading_turn = std::max(worst_heading_turn, std::abs(dh));
          ++checked_ticks;
        }
        last_move = v;
      } else {
        last_move = {};
      }
      last_heading = heading;
    }
    CHECK(map.world_to_cell(position_of(swarm, id)) == player);
  }
  MESSAGE("C9: " << checked_ticks << " cruising ticks over " << starts.size() << " runs; " << raw_snaps
                 << " 45-degree changes of the raw arrow under the agents; largest turn of the move direction "
                 << worst_move_turn / kDegree << " deg/tick, of the heading " << worst_heading_turn / kDegree
                 << " deg/tick");
  CHECK(checked_ticks > 500);
  CHECK(raw_snaps >= 8);  // the agents do cross 45-degree borders
  CHECK(worst_move_turn < 15.0f * kDegree);
  CHECK(worst_heading_turn < 15.0f * kDegree);
}
