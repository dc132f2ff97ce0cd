#pragma once
// The integration + flow pair, rebuilt only when its inputs change, optionally spread over
// several updates (time-sliced) while the previous complete pair stays readable.
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/nav/flow_field.hpp"
#include "swarmfield/sim/nav/integration_field.hpp"

namespace swarmfield::sim {

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
class NavigationFields {
 public:
  /// Brings the fields up to date for `goal_cells` on `map`, within the rebuild budget (see
  /// the class comment). Call once per tick. Returns true if the front fields changed (a build
  /// completed and was swapped in, or an all-at-once rebuild ran).
  bool update(const GridMap& map, std::span<const CellCoord> goal_cells);
  /// Forces the next update() to rebuild, all at once (the front is considered unusable),
  /// abandoning any build in progress.
  void invalidate() noexcept { valid_ = false; }

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
  /// Work units spent by the last update() (0 when it had nothing to build).
  [[nodiscard]] std::uint64_t last_update_work() const noexcept { return last_work_; }

 private:
  struct FieldSet {
    IntegrationField integration;
    FlowField flow;
    std::vector<CellCoord> goals;  // inputs the set was (or is being) built for
    std::uint32_t map_revision = 0;
    std::int32_t flow_row = 0;     // next flow row to build (back set, once the integration is done)
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

  FieldSet front_;
  FieldSet back_;
  std::size_t budget_ = 0;
  WorkerPool* pool_ = nullptr;
  bool valid_ = false;
  bool back_active_ = false;
  bool stale_ = false;
  std::uint64_t rebuilds_ = 0;
  std::uint64_t started_ = 0;
  std::uint64_t last_work_ = 0;
};

}  // namespace swarmfield::sim
