#pragma once
// Hierarchical navigation, second layer: route costs of every portal node of a SectorGraph to
// the nearest goal, built in time slices (see docs in server/sim/src/nav/hierarchical/HIERARCHICAL.md).
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"

namespace swarmfield::sim {

/// Distances to the nearest goal over a SectorGraph: the goals enter through the portals of
/// their sectors (in-sector costs from each goal), then Dijkstra over the graph (binary heap).
/// cost_at() gives a cell's cost through its own sector's portals (a Dijkstra inside the sector
/// seeded with the portals' distances; for checks and tools, not per agent).
/// Time slicing: begin() seeds the goals, advance(budget) settles nodes for about `budget` work
/// units (kWorkUnitsPerEdge per edge looked at, one per node settled) and returns true when done;
/// the costs are those of build() whatever the budgets (unless the graph changed during the
/// build: follow_update()). Until then node_cost() holds tentative values (read a complete
/// PortalRoutes meanwhile; HierarchicalFields keeps two).
class PortalRoutes {
 public:
  /// Work units per graph edge looked at by advance() (measured ~15 ns an edge on the tiled
  /// 4096 street maps, against ~6-9 ns for a unit of the whole-map search).
  static constexpr std::uint64_t kWorkUnitsPerEdge = 2;
  /// Distances of every node for `goals` (map cells; off-map and blocked ones ignored).
  void build(const SectorGraph& graph, const GridMap& map, std::span<const CellCoord> goals);
  /// Starts a build: the goals' entries through their sectors (one in-sector search per goal,
  /// charged to work_units()). `graph` must stay as it is until the build completes, or each
  /// change to it be followed by follow_update().
  void begin(const SectorGraph& graph, const GridMap& map, std::span<const CellCoord> goals);
  /// Continues the build for about `budget` work units (0: to the end); true when complete.
  bool advance(std::uint64_t budget);
  /// True between begin() and the advance() that completes the build.
  [[nodiscard]] bool in_progress() const noexcept { return graph_ != nullptr; }
  /// Stops a build in progress (node_cost() keeps its tentative values; buffers are kept).
  void abandon() noexcept {
    graph_ = nullptr;
    heap_.clear();
  }
  /// Follows a SectorGraph::update() (`remap` = its node_remap(), `node_count` = its node count
  /// now): node n's cost moves to remap[n] (kNoNode: dropped), new nodes read kUnreachable. The
  /// costs stay those of the map before the change (readable, out of date) until the next build.
  /// A build in progress is abandoned (its graph changed).
  void remap_nodes(std::span<const std::uint32_t> remap, std::size_t node_count);
  /// Follows a SectorGraph::update() of `graph` (the graph this object routes; `map` its map
  /// now) without abandoning a build in progress: node costs and queued nodes move to their new
  /// ids (as remap_nodes(); new portals start unreached), the goals in the `updated` sectors
  /// (SectorGraph::updated_sectors()) enter again, and those sectors' nodes and the nodes across
  /// their borders are queued again at their costs, so the build goes on over the new graph,
  /// relaxes the new edges and reaches the new portals. Where the change only opened cells the
  /// result equals a fresh build's; where paths got dearer, nodes already settled keep their
  /// lower costs (a route may lead at a new wall, and spawn reachability count a just-enclosed
  /// sector as reachable, until a build begun after the change replaces it). Idle: remap_nodes().
  /// Cost: O(nodes + queue) for the remap plus the updated sectors' edges and goals' sectors.
  /// A map changing faster than a time-sliced build completes no longer restarts it for good.
  /// Returns the work units popping the queued nodes again will take (each node queued once,
  /// also on the border of two updated sectors: 1 + kWorkUnitsPerEdge per edge), so that a caller can grant them on top of its slice: a build then still
  /// advances by its own slice when the map changes every tick.
  std::uint64_t follow_update(const SectorGraph& graph, const GridMap& map, std::span<const std::uint32_t> remap,
                              std::span<const std::uint32_t> updated);
  /// Work units of the current (or, when idle, the last) build.
  [[nodiscard]] std::uint64_t work_units() const noexcept { return work_; }
  /// Distance of node `n` to the nearest goal (raw units), kUnreachable if none reaches it.
  [[nodiscard]] std::uint32_t node_cost(std::uint32_t n) const noexcept { return cost_[n]; }
  /// Nodes this routes object has costs for (the graph's node count at begin()).
  [[nodiscard]] std::size_t node_count() const noexcept { return cost_.size(); }
  /// Cost of map cell `c` to the nearest goal along the graph: the best of its sector's portals
  /// plus the in-sector path to them (and the in-sector path to a goal in the same sector).
  /// kUnreachable for blocked or unreached cells. Allocates; O(sector cells log).
  [[nodiscard]] std::uint32_t cost_at(const SectorGraph& graph, const GridMap& map, CellCoord c) const;
  /// Goals of the last build (the walkable ones, map cells).
  [[nodiscard]] std::span<const CellCoord> goals() const noexcept { return goals_; }
  /// Nodes settled by the last build (its work).
  [[nodiscard]] std::size_t settled() const noexcept { return settled_; }

 private:
  std::vector<std::uint32_t> cost_;
  std::vector<std::uint32_t> remap_scratch_;  // remap_costs()
  /// Node n's cost moves to remap[n] (dropped when kNoNode); ids no old node maps to read
  /// kUnreachable. The costs of remap_nodes() and follow_update().
  void remap_costs(std::span<const std::uint32_t> remap, std::size_t node_count);
  /// The goal `g` (walkable, in `graph`) enters through its sector's portals: their costs
  /// lowered to the in-sector path from it, and queued. Adds the sector's cells to work_.
  void seed_goal(const SectorGraph& graph, const GridMap& map, CellCoord g);
  std::vector<CellCoord> goals_;
  std::vector<std::uint64_t> heap_;  // (cost << 32 | node), a binary min-heap
  // seed_goal(): the in-sector costs from the goal and that search's queue (reused, so that a
  // warm build allocates nothing).
  std::vector<std::uint32_t> sector_costs_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sector_heap_;  // (cost, local cell)
  const SectorGraph* graph_ = nullptr;  // while a build is in progress
  std::size_t settled_ = 0;
  std::uint64_t work_ = 0;
};

}  // namespace swarmfield::sim
