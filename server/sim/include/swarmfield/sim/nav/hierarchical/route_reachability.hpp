#pragma once
// Hierarchical navigation: does a map cell reach a goal of the portal routes? (No whole-map
// integration field exists in hierarchical mode to answer it.)
#include <cstdint>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"

namespace swarmfield::sim {

/// Answers "can an agent at this cell reach a goal?" over a SectorGraph and its PortalRoutes
/// without a whole-map field: the cell reaches a goal iff its 4-connected component inside its
/// own sector (4-connected: with the fields' no-corner-cutting rule that connects exactly what
/// 8-connected moves do) holds a portal cell with a finite route cost or a goal cell of the
/// routes; a flood fill from those cells labels the sector. Why that is exact: every entrance of a sector holds portals and its cells on one side are
/// contiguous, so the cell's in-sector component touches a border crossing only if it holds a
/// portal, and a portal's route cost is finite only if a goal is reachable from it (the portal
/// graph is complete for reachability, Botea et al. 2004).
/// Cost: the first query in a sector labels the whole sector (a flood fill from its targets,
/// O(sector cells), 64 x 64 by default); with a `version` (see reaches_goal()) the labels are
/// kept, one bit a cell (512 bytes a 64 x 64 sector, allocated for every sector on the first
/// versioned query: 8 MiB at 8192 x 8192), and later queries in the sector are a bit lookup
/// until the version changes. A spawner drawing many cells where few reach a goal (sealed
/// blocks) paid a sector's flood fill per draw before: ~2.8 ms an agent on a 4096 map.
class RouteReachability {
 public:
  /// reaches_goal()'s `version` when the caller cannot say whether graph, routes or map
  /// changed: the sector is labelled afresh for this query alone.
  static constexpr std::uint64_t kUncached = ~std::uint64_t{0};
  /// True when `c` (a map cell) is walkable and reaches a goal of `routes`. `routes` must be a
  /// finished build over `graph` (node costs for the graph's nodes), `map` the map the graph
  /// was built for. False for cells off the map, blocked cells, and when the routes do not
  /// belong to the graph (node counts differ) or have no goals. `version`: a number that
  /// differs whenever the graph, the routes or the map differ from the last call's (e.g. the
  /// sum of HierarchicalFields' route builds, graph builds and updates and the map's revision:
  /// all only grow); equal versions reuse the sector labels, kUncached never does.
  [[nodiscard]] bool reaches_goal(const SectorGraph& graph, const PortalRoutes& routes, const GridMap& map,
                                  CellCoord c, std::uint64_t version = kUncached);
  /// Bytes held by the labels and scratch.
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

 private:
  /// Labels sector `s` into `bits` (one bit a sector cell, row-major): the cells whose
  /// 4-connected component inside the sector holds a portal with a finite route cost or a goal.
  void label_sector(const SectorGraph& graph, const PortalRoutes& routes, const GridMap& map, std::uint32_t s,
                    std::uint64_t* bits);

  std::vector<std::uint64_t> bits_;      // per sector: words_ words of labels (versioned queries)
  std::vector<std::uint64_t> version_;   // per sector: the version its labels are for
  std::vector<std::uint64_t> scratch_;   // the labels of an unversioned query
  std::vector<std::uint32_t> queue_;     // flood fill queue (sector-local indices)
  std::size_t words_ = 0;                // words a sector's labels take
  std::size_t sectors_ = 0;              // sectors bits_ is laid out for
};

}  // namespace swarmfield::sim
