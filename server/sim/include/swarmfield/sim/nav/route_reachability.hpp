#pragma once
// Hierarchical navigation: does a map cell reach a goal of the portal routes? (No whole-map
// integration field exists in hierarchical mode to answer it.)
#include <cstdint>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/sector_graph.hpp"

namespace swarmfield::sim {

/// Answers "can an agent at this cell reach a goal?" over a SectorGraph and its PortalRoutes
/// without a whole-map field: a flood fill from the cell inside its own sector (4-connected,
/// which with the fields' no-corner-cutting rule connects exactly what 8-connected moves do)
/// that stops at the first portal cell with a finite route cost or a goal cell of the routes.
/// Why that is exact: every entrance of a sector holds portals and its cells on one side are
/// contiguous, so the cell's in-sector component touches a border crossing only if it holds a
/// portal, and a portal's route cost is finite only if a goal is reachable from it (the portal
/// graph is complete for reachability, Botea et al. 2004).
/// Cost: O(cells of the sector component flooded) per call, at most one sector (64 x 64 cells
/// by default); no allocation once warm (scratch sized to the largest sector seen).
class RouteReachability {
 public:
  /// True when `c` (a map cell) is walkable and reaches a goal of `routes`. `routes` must be a
  /// finished build over `graph` (node costs for the graph's nodes), `map` the map the graph
  /// was built for. False for cells off the map, blocked cells, and when the routes do not
  /// belong to the graph (node counts differ) or have no goals.
  [[nodiscard]] bool reaches_goal(const SectorGraph& graph, const PortalRoutes& routes, const GridMap& map,
                                  CellCoord c);

 private:
  std::vector<std::uint32_t> stamp_;   // per sector cell: == visit_ when visited this call
  std::vector<std::uint32_t> target_;  // per sector cell: == visit_ when a portal or goal to reach
  std::vector<std::uint32_t> queue_;   // flood fill queue (sector-local indices)
  std::uint32_t visit_ = 0;
};

}  // namespace swarmfield::sim
