#pragma once
// The integration + flow pair, rebuilt only when its inputs change, optionally spread over
// several updates (time-sliced) while the previous complete pair stays readable.
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/nav/field/any_angle_field.hpp"
#include "swarmfield/sim/nav/field/blocked_count_table.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::sim {

class WorkerPool;

/// Owns the integration and flow fields for a set of goal cells. `update()` rebuilds both only
/// when the goal cells differ from the last build (as a sequence) or the map's revision changed;
/// a goal moving inside its cell never triggers a rebuild. A map of a different size also
/// rebuilds; after swapping in another map of the same size and revision, call invalidate().
///
/// Time slicing (set_rebuild_budget() > 0). Two field pairs: the front one (the last complete
/// build, what integration() / flow() return) and a back one under construction. update()
/// spends at most about the budget (work units, see kLinearCellsPerWorkUnit) on the back
/// build; when it completes, the pairs swap (by contents: integration() and flow() keep
/// returning the same objects, so references and pointers to them stay valid). Policy:
///  - No usable front (first build, map of another size, after invalidate()): the build runs
///    all at once, budget or not, since agents would have no field to read meanwhile.
///  - Inputs (goal cells, map revision) equal to the front's: nothing to do; a back build in
///    progress is abandoned (the front is already exact, e.g. a player who stepped back).
///  - Inputs differ from the front's and no build is in progress: a back build starts for them.
///  - Inputs change again while a build is in progress: the build is NOT restarted; it
///    finishes for the inputs it started with, the pairs swap, and a build for the newest
///    inputs starts right away (with what is left of the budget). Progress guarantee: while
///    the inputs differ from the front's, a build is in progress and advances on every update,
///    so it completes within T = ceil(cost / budget) + 1 updates; rebuilds complete even when
///    a player changes cell on every update (one completion per build duration), and the front
///    always equals the inputs of some update at most 2T updates ago. Restarting instead
///    would never complete when a build takes more updates than a player takes to change cell.
/// A back build works on a snapshot of the map taken when it starts (IntegrationField::
/// begin()); a map change during it is picked up by the next build. Same inputs and budgets
/// give the same fields and counters (no clock is read). The back pair's buffers are reserved
/// by an all-at-once build made while the budget is non-zero (so: set the budget before the
/// first update()), else by the first time-sliced build; after that no update() allocates
/// (unless the number of goal cells grows). Memory: two pairs, ~9 bytes per cell each.
/// Sizing: at 80,000-150,000 units per ms (see kLinearCellsPerWorkUnit), 200,000 units per
/// update costs ~1.5-2.5 ms and rebuilds Boston_0_1024 (~1.2e6 units) every 6-7 updates.
///
/// Any-angle layer (set_any_angle(true), off by default): every build then also computes an
/// AnyAngleField after the flow field (same front/back pairs, same budget; a build completes
/// only with its waypoints) for the cells within set_any_angle_range() of a goal, using a
/// BlockedCountTable of the build's map snapshot that is kept between builds and rebuilt only
/// for a new map revision (or after invalidate()). Its work: the cells given waypoints, plus
/// (cells / 8 + the goals' box cells) / kLinearCellsPerWorkUnit. Memory: +6 bytes and 1 bit per
/// cell per pair, +4 bytes per cell for the table, +4 bytes per cell of the goals' boxes.
class NavigationFields {
 public:
  /// Brings the fields up to date for `goal_cells` on `map`, within the rebuild budget (see
  /// the class comment). Call once per tick. Returns true if the front fields changed (a build
  /// completed and was swapped in, or an all-at-once rebuild ran).
  bool update(const GridMap& map, std::span<const CellCoord> goal_cells);
  /// Forces the next update() to rebuild, all at once (the front is considered unusable),
  /// abandoning any build in progress.
  void invalidate() noexcept {
    valid_ = false;
    ++generation_;
  }
  /// Builds the any-angle layer with every rebuild (see the class comment). Turning it on or
  /// off invalidates the front (the next update() rebuilds all at once).
  void set_any_angle(bool on) noexcept {
    if (on != any_angle_) invalidate();
    any_angle_ = on;
  }
  [[nodiscard]] bool any_angle_enabled() const noexcept { return any_angle_; }
  /// Path distance (cost units: cells on a unit-cost map) from the nearest goal within which
  /// cells get any-angle waypoints (AnyAngleField's range; beyond it agents follow the smoothed
  /// flow). Default kDefaultAnyAngleRange; AnyAngleField::kUnboundedRange = every reachable
  /// cell. The layer's cost grows with the cells within range (~ goals * range^2 on open
  /// ground), not with the map. A different value invalidates the front like set_any_angle().
  void set_any_angle_range(float range) noexcept {
    if (!(range == any_angle_range_)) invalidate();
    any_angle_range_ = range;
  }
  [[nodiscard]] float any_angle_range() const noexcept { return any_angle_range_; }
  /// Default any-angle range (cells): ~30 s of walking at 3 cells/s, about the radius of a
  /// crowd of 25,000 packed round one player. On the 1024 street maps 9,400-21,000 cells get
  /// waypoints for one goal, 59,000-63,000 for four (of ~800,000 reachable); the rebuild then
  /// costs 1.01-1.05x (one goal) and 1.17-1.21x (four) of one without the layer, against
  /// 3.3-3.8x for every cell (field/nav_rebuild in bench/, 2026-12-01).
  static constexpr float kDefaultAnyAngleRange = 96.0f;

  /// Work units (see kLinearCellsPerWorkUnit) each update() may spend on a rebuild; 0 (the
  /// default) = every rebuild runs all at once inside the update() that needs it. A full
  /// rebuild costs about 2 * cells / kLinearCellsPerWorkUnit + reachable cells +
  /// cells / kLinearCellsPerWorkUnit (flow) units, e.g. ~1.2e6 on Boston_0_1024. An update may
  /// overshoot by less than one map row of a linear pass (width / kLinearCellsPerWorkUnit) plus
  /// the snapshot of a build it starts (cells / kLinearCellsPerWorkUnit). With 0, a build in
  /// progress is abandoned by the next update() that needs a rebuild, which runs all at once.
  void set_rebuild_budget(std::size_t work_units_per_update) noexcept { budget_ = work_units_per_update; }
  [[nodiscard]] std::size_t rebuild_budget() const noexcept { return budget_; }
  /// Threads for the linear passes of all-at-once rebuilds (values and flow rows, split by
  /// rows; the search stays sequential); null (the default) = the calling thread only. Not
  /// owned: it must outlive this object or be reset. Results are identical either way.
  /// Time-sliced builds do not use it (their slices are small).
  void set_worker_pool(WorkerPool* pool) noexcept { pool_ = pool; }

  /// The front (last complete) fields.
  [[nodiscard]] const IntegrationField& integration() const noexcept { return front_.integration; }
  [[nodiscard]] const FlowField& flow() const noexcept { return front_.flow; }
  /// The front any-angle layer; empty (size 0) unless set_any_angle(true).
  [[nodiscard]] const AnyAngleField& any_angle() const noexcept { return front_.angle; }
  /// Completed rebuilds: how many times the front fields were replaced by a new complete
  /// build (all-at-once or time-sliced). Abandoned builds are not counted. With budget 0 this
  /// is the number of updates that rebuilt, as before time slicing existed.
  [[nodiscard]] std::uint64_t rebuild_count() const noexcept { return rebuilds_; }
  /// Builds started (all-at-once ones included): rebuild_count() + builds abandoned + (1 if
  /// rebuild_in_progress()).
  [[nodiscard]] std::uint64_t builds_started() const noexcept { return started_; }
  /// True while a time-sliced back build is under construction.
  [[nodiscard]] bool rebuild_in_progress() const noexcept { return back_active_; }
  /// True when the inputs of the last update() (goal cells, map revision) differ from those the
  /// front fields were built for, i.e. agents are following a field that is out of date.
  [[nodiscard]] bool front_stale() const noexcept { return stale_; }
  /// Goal cells the front fields were built for.
  [[nodiscard]] std::span<const CellCoord> goals() const noexcept { return front_.goals; }
  /// Revision of the map the front fields were built on (GridMap::revision()).
  [[nodiscard]] std::uint32_t front_map_revision() const noexcept { return front_.map_revision; }
  /// Work units spent by the last update() (0 when it had nothing to build).
  [[nodiscard]] std::uint64_t last_update_work() const noexcept { return last_work_; }

 private:
  struct FieldSet {
    IntegrationField integration;
    FlowField flow;
    std::vector<CellCoord> goals;  // inputs the set was (or is being) built for
    std::uint32_t map_revision = 0;
    std::int32_t flow_row = 0;     // next flow row to build (back set, once the integration is done)
    AnyAngleField angle;           // only with any_angle_
    bool angle_started = false;    // back set: angle.begin() was called for this build
  };

  [[nodiscard]] static bool same_inputs(const FieldSet& set, const GridMap& map,
                                        std::span<const CellCoord> goals) noexcept;
  void build_front_now(const GridMap& map, std::span<const CellCoord> goals);
  void start_back(const GridMap& map, std::span<const CellCoord> goals);
  /// Advances the back build by about `budget` units (see the overshoot note); returns the
  /// units spent.
  std::uint64_t advance_back(std::uint64_t budget);
  [[nodiscard]] bool back_complete() const noexcept;
  void swap_back_in() noexcept;
  /// Brings table_ up to date for `set`'s map snapshot, for about `budget` units; returns the
  /// units spent and sets `ready` when the table is complete for it.
  std::uint64_t advance_table(const FieldSet& set, std::uint64_t budget, bool& ready);

  FieldSet front_;
  FieldSet back_;
  std::size_t budget_ = 0;
  WorkerPool* pool_ = nullptr;
  bool valid_ = false;
  bool any_angle_ = false;
  float any_angle_range_ = kDefaultAnyAngleRange;
  // Blocked-cell table for the any-angle sight tests, shared by the builds (see the class comment).
  BlockedCountTable table_;
  const GridMap* sight_map_ = nullptr;  // the map of the update in progress (its costs block sight)
  bool table_valid_ = false;
  std::uint32_t table_revision_ = 0;
  std::uint64_t table_generation_ = 0;
  std::uint64_t generation_ = 1;  // bumped by invalidate(): a table from before is never reused
  bool back_active_ = false;
  bool stale_ = false;
  std::uint64_t rebuilds_ = 0;
  std::uint64_t started_ = 0;
  std::uint64_t last_work_ = 0;
};

}  // namespace swarmfield::sim
