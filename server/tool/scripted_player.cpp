// The scripted player of `swarmfield-tool sim` (scripted_player.hpp).
#include "scripted_player.hpp"

#include <array>

#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::tool {

ScriptedPlayer::ScriptedPlayer(const sim::GridMap& map, sim::Vec2 start) : map_(map) {
  const sim::CellCoord start_cell = map.world_to_cell(start);
  sim::IntegrationField reach;
  const sim::CellCoord goals[1] = {start_cell};
  reach.build(map, goals);
  // Waypoints: the reachable cells nearest to the four quarter points of the map.
  const float w = static_cast<float>(map.width()), h = static_cast<float>(map.height());
  const std::array<sim::Vec2, 4> targets = {{{0.25f * w, 0.25f * h}, {0.75f * w, 0.25f * h},
                                             {0.75f * w, 0.75f * h}, {0.25f * w, 0.75f * h}}};
  for (const sim::Vec2 t : targets) {
    float best = std::numeric_limits<float>::infinity();
    sim::CellCoord best_cell{-1, -1};
    for (std::int32_t y = 0; y < map.height(); ++y) {
      for (std::int32_t x = 0; x < map.width(); ++x) {
        if (!reach.reachable(x, y)) continue;
        const float dx = static_cast<float>(x) + 0.5f - t.x, dy = static_cast<float>(y) + 0.5f - t.y;
        const float d2 = dx * dx + dy * dy;
        if (d2 < best) {
          best = d2;
          best_cell = {x, y};
        }
      }
    }
    if (best_cell.x >= 0 && !(best_cell == start_cell)) waypoints_.push_back(best_cell);
  }
}

sim::Vec2 ScriptedPlayer::intent(sim::Vec2 position) {
  if (waypoints_.empty()) return {};
  // Move on when the waypoint is reached, or when no progress was made for kStuckTicks.
  float dist = sim::length(map_.cell_center(waypoints_[next_]) - position);
  if (dist < best_dist_ - 0.1f) {
    best_dist_ = dist;
    ticks_without_progress_ = 0;
  } else {
    ++ticks_without_progress_;
  }
  if (dist < 0.5f || ticks_without_progress_ > kStuckTicks) {
    next_ = (next_ + 1) % waypoints_.size();
    dist = sim::length(map_.cell_center(waypoints_[next_]) - position);
    best_dist_ = dist;
    ticks_without_progress_ = 0;
  }
  const sim::CellCoord goals[1] = {waypoints_[next_]};
  nav_.update(map_, goals);
  sim::Vec2 dir = sim::sample_flow(map_, nav_.flow(), position);
  if (dir.x == 0.0f && dir.y == 0.0f) {  // in the waypoint cell: head for its centre
    dir = sim::normalized_or_zero(map_.cell_center(waypoints_[next_]) - position);
  }
  return dir;
}

}  // namespace swarmfield::tool
