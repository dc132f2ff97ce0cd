#include "swarmfield/client/bot_steering.hpp"

#include <array>

namespace swarmfield::client {

BotSteering::TargetStatus BotSteering::set_target(const sim::GridMap& map, sim::Vec2 target) {
  const sim::CellCoord cell = map.world_to_cell(target);
  if (!map.in_bounds(cell.x, cell.y)) {
    has_target_ = false;
    return TargetStatus::kOutsideMap;
  }
  if (!map.walkable(cell)) {
    has_target_ = false;
    return TargetStatus::kBlocked;
  }
  target_ = target;
  has_target_ = true;
  const bool same = built_ && map_ == &map && cell == target_cell_ && map.revision() == map_revision_ &&
                    integration_.width() == map.width() && integration_.height() == map.height();
  if (!same) {
    const std::array<sim::CellCoord, 1> goals{cell};
    integration_.build(map, goals);
    flow_.build(map, integration_);
    target_cell_ = cell;
    map_revision_ = map.revision();
    map_ = &map;
    built_ = true;
    ++rebuilds_;
  }
  return TargetStatus::kOk;
}

bool BotSteering::reachable_from(const sim::GridMap& map, sim::Vec2 p) const noexcept {
  if (!has_target_ || !built_) return false;
  const sim::CellCoord c = map.world_to_cell(p);
  return integration_.reachable(c.x, c.y);
}

sim::Vec2 BotSteering::direction(const sim::GridMap& map, sim::Vec2 p) const noexcept {
  if (!has_target_ || !built_) return {};
  const sim::Vec2 straight = sim::normalized_or_zero(target_ - p);
  const sim::CellCoord c = map.world_to_cell(p);
  if (c == target_cell_) return straight;
  const sim::Vec2 flow = sim::sample_flow(map, flow_, p);
  if (flow.x == 0.0f && flow.y == 0.0f) return straight;
  return flow;
}

}  // namespace swarmfield::client
