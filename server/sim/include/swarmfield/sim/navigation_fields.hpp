#pragma once
// The integration + flow pair, rebuilt only when its inputs change.
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/flow_field.hpp"
#include "swarmfield/sim/integration_field.hpp"

namespace swarmfield::sim {

/// Owns the integration and flow fields for a set of goal cells. `update()` rebuilds both only
/// when the goal cells differ from the last build (as a sequence) or the map's revision changed;
/// a goal moving inside its cell never triggers a rebuild. A map of a different size also
/// rebuilds; after swapping in another map of the same size and revision, call invalidate().
class NavigationFields {
 public:
  /// Returns true if a rebuild happened.
  bool update(const GridMap& map, std::span<const CellCoord> goal_cells);
  /// Forces the next update() to rebuild.
  void invalidate() noexcept { valid_ = false; }

  [[nodiscard]] const IntegrationField& integration() const noexcept { return integration_; }
  [[nodiscard]] const FlowField& flow() const noexcept { return flow_; }
  [[nodiscard]] std::uint64_t rebuild_count() const noexcept { return rebuilds_; }
  [[nodiscard]] std::span<const CellCoord> goals() const noexcept { return goals_; }

 private:
  IntegrationField integration_;
  FlowField flow_;
  std::vector<CellCoord> goals_;
  std::uint32_t map_revision_ = 0;
  bool valid_ = false;
  std::uint64_t rebuilds_ = 0;
};

}  // namespace swarmfield::sim
