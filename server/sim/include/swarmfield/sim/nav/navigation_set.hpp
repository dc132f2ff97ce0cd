#pragma once
// The fields of every agent size class present: one clearance map per map revision, one
// planning grid and one time-sliced field set (integration + flow + any-angle) per class.
#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/any_angle_field.hpp"
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"
#include "swarmfield/sim/nav/field_mode.hpp"
#include "swarmfield/sim/nav/hierarchical/hierarchical_fields.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

class WorkerPool;

/// Navigation for agents of several sizes toward several goals (players).
///
/// Per update(): the clearance map follows the map's revision (ClearanceMap; locally from the
/// map's change log, see follow_map());
/// for each class n present, its planning grid (update_class_map(): walkable iff clearance >= n,
/// block cost = max over the block; class 1 plans on the map itself) is refreshed when the
/// clearance changed, the goals' class-n cells are computed (class_goal_block(): the goal
/// position's reference block, or the nearest fitting block within kGoalReachCells; a goal no
/// class-n block can reach is left out of that class's field), and the class's NavigationFields
/// (with the any-angle layer on) is brought up to date. So a class's field is rebuilt only when
/// one of its goal cells or its planning grid changed -- never because a goal moved inside its
/// cell -- and classes not present cost nothing (their buffers are kept for when they return,
/// when they are rebuilt all at once). Time slicing, budgets and the front/back policy are
/// NavigationFields' (one budget per class per update). Deterministic; no allocation once warm
/// except when the map changes revision (class grids are updated in place) or grows, or the
/// goal count grows.
class NavigationSet {
 public:
  /// Distance (Chebyshev, cells) within which a goal that does not fit a class is moved to the
  /// nearest block that does (see class_goal_block()).
  static constexpr std::int32_t kGoalReachCells = 4;

  NavigationSet();

  /// Brings the fields of every class in `classes` up to date for `goals` (world positions,
  /// index = goal index, e.g. one per player) on `map`. Call once per tick. Returns true if some
  /// class's front fields changed.
  bool update(const GridMap& map, std::span<const Vec2> goals, SizeClassMask classes);
  /// Work units per class per update (NavigationFields::set_rebuild_budget; in hierarchical
  /// mode HierarchicalFields::set_budget); 0 = all at once.
  void set_rebuild_budget(std::size_t work_units_per_update) noexcept;
  /// Every class's fields: whole-map (NavigationFields) or hierarchical (HierarchicalFields on
  /// the class's planning grid: sector graph, portal routes, per-sector fields of the occupied
  /// sectors); kAuto (the default) = hierarchical on maps from kHierarchicalFromSide cells a
  /// side. In hierarchical mode fields(n) stays empty (no whole-map integration, flow or
  /// any-angle field: nothing reads reachability from them), sample(n, p) reads the sector
  /// fields (SectorFields::sample() on the class's lattice), and the agents (cells and classes)
  /// must be given each tick with note_agents() before update(). Takes effect at the next
  /// update().
  void set_field_mode(FieldMode mode) noexcept { mode_ = mode; }
  [[nodiscard]] FieldMode field_mode() const noexcept { return mode_; }
  /// True when the last update() ran class 1 hierarchically.
  [[nodiscard]] bool hierarchical() const noexcept { return hierarchical_; }
  /// Start-up work ahead of the first update() in hierarchical mode: the clearance map, the
  /// planning grids and the sector graphs of `classes` on `map` (seconds on 8192 maps), so the
  /// first tick only routes. Nothing in whole mode.
  void prepare(const GridMap& map, SizeClassMask classes);
  /// Agents this tick, for the occupied sectors: positions (world units) and, per agent, its
  /// size class (`classes`, 1..kMaxSizeClass; empty = all class 1; shorter spans: the agents
  /// both cover). Nothing is kept or done unless the mode resolves to hierarchical for `map`.
  void note_agents(const GridMap& map, std::span<const float> xs, std::span<const float> ys,
                   std::span<const std::uint8_t> classes = {});
  /// The class's hierarchical fields (meaningful when hierarchical() and has_class()).
  [[nodiscard]] const HierarchicalFields& hierarchical_fields(int size_class = 1) const noexcept {
    return hier_[slot(size_class)];
  }
  /// A hint, no effect on any result: starts loading what sample() will read for a class-1
  /// agent in map cell (x, y) in hierarchical mode (its sector field's direction codes, else
  /// its sector's portal fallback list). The swarm's steering calls it a few agents ahead: at
  /// 8192 cells a side nearly every agent's sector field is a cache miss.
  void prefetch_sample(std::int32_t x, std::int32_t y) const noexcept {
    if (hierarchical_) hier_[0].fields().prefetch(x, y);
  }
  /// Any-angle range of every class (NavigationFields::set_any_angle_range(); cost units, cells
  /// on a unit-cost map); default NavigationFields::kDefaultAnyAngleRange. A change rebuilds
  /// every class at its next update().
  void set_any_angle_range(float range) noexcept;
  [[nodiscard]] float any_angle_range() const noexcept { return slots_[0].fields.any_angle_range(); }
  /// Hierarchical mode's near fields (HierarchicalFields::set_near_fields()) on (default) or
  /// off for every class: off, agents follow the sector fields up to the goal's cell and all
  /// have the same priority (for comparisons).
  void set_near_fields(bool on) noexcept;
  /// Threads for the linear passes of all-at-once rebuilds (NavigationFields::set_worker_pool)
  /// and, in hierarchical mode, for the size classes' updates, one class per thread (each
  /// class's fields read only its own grid and goals: the same results on any thread count).
  void set_worker_pool(WorkerPool* pool) noexcept;
  /// Forces every class to rebuild all at once on the next update() (and the clearance map to be
  /// recomputed), e.g. after swapping in another map of the same size and revision.
  void invalidate() noexcept;

  /// True if `size_class` was present in the last update() (its fields are readable).
  [[nodiscard]] bool has_class(int size_class) const noexcept {
    return size_class >= 1 && size_class <= kMaxSizeClass && slots_[slot(size_class)].present;
  }
  /// The class's fields (integration and flow on its planning grid, any_angle()); only
  /// meaningful when has_class(). Lattice: cell b of these fields is the block with top-left b.
  [[nodiscard]] const NavigationFields& fields(int size_class) const noexcept {
    return slots_[slot(size_class)].fields;
  }
  /// The goal blocks (cells of the class's grid, by goal index; {-1, -1} for a goal no block of
  /// the class reaches) of the last update() for the class.
  [[nodiscard]] std::span<const CellCoord> goal_cells(int size_class) const noexcept {
    return slots_[slot(size_class)].goal_cells;
  }
  /// The class's planning grid (class 1: empty; it plans on the map itself).
  [[nodiscard]] const GridMap& class_grid(int size_class) const noexcept { return slots_[slot(size_class)].grid; }
  [[nodiscard]] const ClearanceMap& clearance() const noexcept { return clearance_; }
  /// True when clearance() is current for `map` (built or followed to its size and revision, and
  /// not invalidated since) and was built from that very map object: the World plans on a copy
  /// of its map where barricades are passable, and the copy's revision may equal the physical
  /// map's while their cells differ.
  [[nodiscard]] bool clearance_matches(const GridMap& map) const noexcept {
    return clearance_valid_ && clearance_.matches(map) && clearance_source_ == map.costs().data();
  }
  /// Goal positions (world units) by goal index of the class's front field: the current
  /// position of each goal whose class cell is still the one the front was built for, else the
  /// centre of that cell's block. What sample() steers to.
  [[nodiscard]] std::span<const Vec2> goal_positions(int size_class) const noexcept {
    return slots_[slot(size_class)].sample_goals;
  }
  /// Desired direction of a class-`size_class` agent at `p` (world units): sample_any_angle() on
  /// the class's front (its any-angle field and, beyond the any-angle range, its flow field:
  /// status kFollowFlow there). kNoField when the class was not in the last update(). O(1).
  /// In hierarchical mode: the near field's sample (NearFields::sample()) where a goal's window
  /// trusts p's reference block, else the sector fields'.
  [[nodiscard]] NavSample sample(int size_class, Vec2 p) const noexcept;
  /// sample() that also gives priority(size_class, `block`) for p's reference block `block`
  /// (reference_block(p, size_class, cell size)) when it comes from the same near-field trust
  /// check (hierarchical mode with near fields: one check per agent instead of two); `block`
  /// {kNoBlock, kNoBlock} and `priority` unset otherwise (call priority()).
  static constexpr std::int32_t kNoBlock = std::numeric_limits<std::int32_t>::min();
  [[nodiscard]] NavSample sample(int size_class, Vec2 p, CellCoord& block, std::uint32_t& priority) const noexcept;
  /// Right of way of a class-`size_class` agent on `block` (cells of the class's grid; lower
  /// goes first): the integration value (raw units) of the class's front field; in
  /// hierarchical mode the near field's trusted value, NearFields::kFarPriority where no
  /// window trusts the block (so agents round a goal are ordered as with the whole-map field,
  /// the rest after them, all equal). kUnreachable when unreached or the class is absent.
  [[nodiscard]] std::uint32_t priority(int size_class, CellCoord block) const noexcept;

  /// Work units spent by the last update() over all classes (clearance and class grids
  /// included, charged as linear passes).
  [[nodiscard]] std::uint64_t last_update_work() const noexcept { return last_work_; }
  /// Completed rebuilds summed over the classes.
  [[nodiscard]] std::uint64_t rebuild_count() const noexcept;

 private:
  struct ClassSlot {
    NavigationFields fields;
    GridMap grid;                    // planning grid (classes >= 2)
    bool grid_current = false;       // grid matches clearance_
    bool present = false;            // in the last update()
    std::vector<CellCoord> goal_cells;
    std::vector<Vec2> sample_goals;
    std::vector<Vec2> lattice_goals;  // hierarchical: sample_goals on the class's lattice
  };
  /// Brings the clearance map (and the current class grids) to `map`'s revision: locally from
  /// the map's change log when it reaches back (ClearanceMap::update(), update_class_map_cells()),
  /// else a whole rebuild (class grids marked for rebuilding). Returns the work units.
  std::uint64_t follow_map(const GridMap& map);
  [[nodiscard]] static std::size_t slot(int size_class) noexcept {
    return static_cast<std::size_t>(size_class < 1 ? 0 : (size_class > kMaxSizeClass ? kMaxSizeClass - 1 : size_class - 1));
  }

  std::array<ClassSlot, kMaxSizeClass> slots_;
  std::array<HierarchicalFields, kMaxSizeClass> hier_;
  FieldMode mode_ = FieldMode::kAuto;
  bool hierarchical_ = false;
  const std::uint8_t* clearance_source_ = nullptr;  // the cells clearance_ was built or followed from
  const GridMap* map_ = nullptr;  // the last update()'s map (sample() in hierarchical mode)
  ClearanceMap clearance_;
  bool clearance_valid_ = false;
  float cell_size_ = 1.0f;
  std::uint64_t last_work_ = 0;
  WorkerPool* pool_ = nullptr;  // hierarchical mode: the classes' updates side by side
};

}  // namespace swarmfield::sim
