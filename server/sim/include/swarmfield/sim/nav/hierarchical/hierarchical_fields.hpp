#pragma once
// Hierarchical navigation, layer 4: the sector graph, time-sliced portal routes (front and back)
// and the per-sector fields, kept up to date under one per-tick work budget (see
// server/sim/src/nav/hierarchical/HIERARCHICAL.md).
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/hierarchical/near_fields.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_fields.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"

namespace swarmfield::sim {

/// Navigation for big maps without a whole-map field: what a goal change costs is bounded by the
/// portal graph and the occupied sectors, not by the map.
///
/// Per tick: begin_tick(); note_agent() for each agent; update(map, goal_cells). update():
///  - first call, a map of another size, or another revision the map's change log no longer
///    reaches: the graph is built (all at once; ~0.5 s at 4096 on street maps, see
///    HIERARCHICAL.md) and the routes with it;
///  - another revision the log reaches (GridMap::changes_since()): SectorGraph::update() with the
///    changed cells (only the touched sectors and neighbours whose portals moved are recomputed),
///    the front routes follow the new node ids (remap_nodes(): readable, out of date), the sector
///    fields of the recomputed sectors are dropped, and a back route build for the current goals
///    starts (time-sliced like a goal change); a build in progress goes on over the new graph
///    (PortalRoutes::follow_update()) and is swapped in when done, and since it may be out of
///    date where the change made paths dearer, another build starts after it: a map changing
///    faster than a build completes neither starves the routes nor forces a build all at once;
///  - goal cells (as a sequence) differing from the front routes' and no route build in
///    progress: a back route build starts; a build in progress continues even if the goals
///    change again (it finishes, is swapped in, and the next starts: the front always belongs to
///    some recent goals, as NavigationFields does); goals back to the front's abandon it;
///  - a completed back build is swapped in (SectorFields::set_routes(): the sector fields stay
///    readable and are rebuilt for the occupied sectors, most agents first);
///  - the near fields (NearFields: exact fields in a window round each goal) are brought up to
///    date for the goal cells;
///  - budget (set_budget(), work units as kLinearCellsPerWorkUnit defines them): about
///    1 / kNearBudgetShare goes to the near fields first, at most about half of what is left to the sector
///    fields, the routes get the rest (at least 1 / kMinRouteShare of the budget, plus the work a
///    map change queued again for a build in progress), and fields take what the routes leave;
///    0 = everything at once. A map change's own work (graph update, remaps) is outside it.
/// Deterministic (no clock). The map is read during update() only.
class HierarchicalFields {
 public:
  /// The near fields' part of the budget: 1 / kNearBudgetShare of it.
  static constexpr std::uint64_t kNearBudgetShare = 8;
  /// A route build in progress gets at least 1 / kMinRouteShare of the budget an update, even
  /// when a map change (graph update) or the fields spent it all: a map changing every tick
  /// would otherwise starve the routes (the update may then overrun the budget by that share, and
  /// by the nodes a change queued again: proportional to the sectors it updated).
  static constexpr std::uint64_t kMinRouteShare = 4;
  void set_budget(std::uint64_t work_units_per_update) noexcept { budget_ = work_units_per_update; }
  [[nodiscard]] std::uint64_t budget() const noexcept { return budget_; }
  /// Sector side for the next graph build (cells; SectorGraph::kDefaultSectorSide).
  void set_sector_side(std::int32_t side) noexcept { side_ = side; }

  /// Brings the graph up to `map`'s size and revision: a whole build if it has none for the size
  /// (e.g. at start-up, before clients connect: ~0.5-13 s on 4096-8192 maps; the next update()
  /// then builds the routes at once), else the local update of the changed cells described in
  /// the class comment (also after more changes than the map's change log holds: then the
  /// cells of the map's changed blocks, GridMap::cells_changed_since()). Returns the work units
  /// spent (one per map cell for a whole build; for an update, one per cell of each recomputed sector per portal of it, plus one per node id for
  /// the remap).
  std::uint64_t prepare(const GridMap& map);
  /// The next update() rebuilds the graph and routes (e.g. another map of the same size and
  /// revision was swapped in).
  void invalidate() noexcept {
    width_ = -1;
    front_valid_ = false;
    near_.invalidate();
  }
  void begin_tick() { fields_.begin_tick(); }
  void note_agent(CellCoord c) { fields_.note_agent(c); }
  /// See the class comment. Returns the work units spent (graph builds included, charged one
  /// unit per map cell).
  std::uint64_t update(const GridMap& map, std::span<const CellCoord> goal_cells);

  [[nodiscard]] const SectorGraph& graph() const noexcept { return graph_; }
  /// The front (complete) routes.
  [[nodiscard]] const PortalRoutes& routes() const noexcept { return front_; }
  [[nodiscard]] const SectorFields& fields() const noexcept { return fields_; }
  [[nodiscard]] SectorFields& fields() noexcept { return fields_; }
  /// Near fields on (the default) or off (not built; readers then see none: the sector fields
  /// up to the goal's cell, as before they existed). For comparisons and as a switch.
  void set_near_fields(bool on) noexcept { near_on_ = on; }
  [[nodiscard]] bool near_fields_on() const noexcept { return near_on_; }
  /// The near fields (exact, with the any-angle layer, in a window round each goal).
  [[nodiscard]] const NearFields& near() const noexcept { return near_; }
  [[nodiscard]] NearFields& near() noexcept { return near_; }
  /// Goal cells the front routes were built for.
  [[nodiscard]] std::span<const CellCoord> goals() const noexcept { return front_goals_; }
  [[nodiscard]] bool route_build_in_progress() const noexcept { return back_.in_progress(); }
  /// Completed route builds (the front replaced), graph builds.
  [[nodiscard]] std::uint64_t route_builds() const noexcept { return route_builds_; }
  [[nodiscard]] std::uint64_t graph_builds() const noexcept { return graph_builds_; }
  /// Local graph updates after map changes (SectorGraph::update()).
  [[nodiscard]] std::uint64_t graph_updates() const noexcept { return graph_updates_; }
  /// Work units of the last update().
  [[nodiscard]] std::uint64_t last_update_work() const noexcept { return last_work_; }

 private:
  SectorGraph graph_;
  PortalRoutes front_;
  PortalRoutes back_;
  SectorFields fields_;
  NearFields near_;
  bool near_on_ = true;
  std::vector<CellCoord> front_goals_;
  std::vector<CellCoord> back_goals_;
  std::int32_t width_ = -1;
  std::int32_t height_ = -1;
  std::uint32_t revision_ = 0;
  std::int32_t side_ = SectorGraph::kDefaultSectorSide;
  std::uint64_t budget_ = 0;
  bool front_valid_ = false;  // front_ holds routes for the current graph
  bool routes_stale_ = false;  // the map changed since the front's routes began: a back build runs
  bool back_follows_change_ = false;  // the back build went on across a map change
  std::uint64_t route_extra_ = 0;     // work units the change queued again for the back build
  std::uint64_t graph_updates_ = 0;
  std::uint64_t route_builds_ = 0;
  std::uint64_t graph_builds_ = 0;
  std::uint64_t last_work_ = 0;
};

}  // namespace swarmfield::sim
