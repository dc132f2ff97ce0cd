#pragma once
// `swarmfield-tool sim`'s default player: walks a loop of waypoints (cells reachable from its
// start) following its own flow field, so the world's goal cell keeps changing and the fields
// keep rebuilding.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::tool {

class ScriptedPlayer {
 public:
  /// Waypoints: the cells reachable from `start` (world units) nearest the map's four quarter
  /// points (none equal to the start cell). `map` must outlive the player.
  ScriptedPlayer(const sim::GridMap& map, sim::Vec2 start);

  /// Intent for this tick (|intent| <= 1) given the player's current position (world units):
  /// along its flow field to the next waypoint, which changes when reached or after
  /// kStuckTicks ticks without progress. Zero without waypoints.
  sim::Vec2 intent(sim::Vec2 position);

  [[nodiscard]] std::size_t waypoint_count() const noexcept { return waypoints_.size(); }

 private:
  static constexpr std::uint64_t kStuckTicks = 150;
  const sim::GridMap& map_;
  std::vector<sim::CellCoord> waypoints_;
  std::size_t next_ = 0;
  float best_dist_ = std::numeric_limits<float>::infinity();
  std::uint64_t ticks_without_progress_ = 0;
  sim::NavigationFields nav_;
};

}  // namespace swarmfield::tool
