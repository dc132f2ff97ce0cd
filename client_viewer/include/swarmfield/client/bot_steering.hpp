#pragma once
// Steering toward a waypoint around buildings: the bot builds its own flow field toward the
// waypoint's cell on its copy of the map (sim::IntegrationField + sim::FlowField, the same
// algorithm the server uses for the swarm) and follows the smoothed direction (sim::sample_flow).
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::client {

class BotSteering {
 public:
  enum class TargetStatus { kOk, kOutsideMap, kBlocked };

  /// Sets the waypoint (world units). Rebuilds the fields only when the target cell or the map
  /// revision changed. kOutsideMap / kBlocked when the target cell can not be a goal (the
  /// previous target is dropped then).
  TargetStatus set_target(const sim::GridMap& map, sim::Vec2 target);
  void clear() noexcept { has_target_ = false; }
  [[nodiscard]] bool has_target() const noexcept { return has_target_; }
  [[nodiscard]] sim::Vec2 target() const noexcept { return target_; }

  /// True when a walkable path leads from `p` to the target.
  [[nodiscard]] bool reachable_from(const sim::GridMap& map, sim::Vec2 p) const noexcept;

  /// Unit direction to walk from `p`: inside the target cell straight at the target, elsewhere
  /// the smoothed flow direction; straight at the target as a last resort (p in a blocked or
  /// unreachable cell). {0,0} without a target or when p is on the target.
  [[nodiscard]] sim::Vec2 direction(const sim::GridMap& map, sim::Vec2 p) const noexcept;

  /// Field rebuilds so far (tests check that re-setting the same cell does not rebuild).
  [[nodiscard]] std::uint64_t rebuilds() const noexcept { return rebuilds_; }
  [[nodiscard]] const sim::IntegrationField& integration() const noexcept { return integration_; }
  [[nodiscard]] const sim::FlowField& flow() const noexcept { return flow_; }

 private:
  sim::IntegrationField integration_;
  sim::FlowField flow_;
  sim::CellCoord target_cell_{};
  sim::Vec2 target_{};
  std::uint32_t map_revision_ = 0;
  const sim::GridMap* map_ = nullptr;
  bool has_target_ = false;
  bool built_ = false;
  std::uint64_t rebuilds_ = 0;
};

}  // namespace swarmfield::client
