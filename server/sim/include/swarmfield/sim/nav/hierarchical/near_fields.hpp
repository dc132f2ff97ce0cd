#pragma once
// Hierarchical navigation, the near field: per goal, the exact integration + flow + any-angle
// fields (NavigationFields) over a window of the planning grid round the goal, so that agents
// near a goal surround it, walk straight lines in sight of it and get right of way by path
// distance, as with the whole-map field (see server/sim/src/nav/hierarchical/HIERARCHICAL.md).
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/any_angle_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Near fields of hierarchical mode: one window per goal (index = goal index), a square of
/// side 2 * (ceil(range) + kWindowMarginCells) + kSnapCells + 1 cells (217 for the default
/// any-angle range of 96; clamped to the grid) placed round the goal's cell, its corner
/// snapped to multiples of kSnapCells so that a goal walking inside a snap square does not move
/// it. The window's copy of the grid gets a NavigationFields (integration, flow, any-angle
/// within `range`; front/back, time-sliced) seeded with every goal inside the window. Nothing
/// new is searched: the window is an ordinary small map for the existing fields.
///
/// Exactness. A path that leaves the window is not seen, so a window value is an upper bound
/// of the true (whole-grid, all goals) value. A path from block b that leaves the window across
/// side k (one not on the grid's edge) and ends at a goal seeded in the window costs at least
/// X_k(b) + E_k: b's distance to the grid cells beyond that side plus the least such distance
/// of a seeded goal (a step costs >= 1 cost unit per Chebyshev cell); one to a goal not seeded
/// (by goal index: outside the window when the front was built) costs at least its Chebyshev
/// distance from b. So with L(b) = min(min over k of X_k(b) + E_k, min over unseen goals of
/// that distance), a window
/// value v(b) <= L(b) - kTrustMarginCells (cost units) is exact, and so are the values of b's
/// neighbours at or below v(b) (each <= L - 1 away): b's flow direction and waypoint are then
/// those of the whole-grid field (tests/sim/nav/hierarchical/near_fields_test.cpp checks it cell by cell).
/// Such blocks are "trusted"; a lone goal's window trusts every block within `range` of it
/// (E_k >= ceil(range) + kWindowMarginCells). Two goals close enough to sit in each other's
/// windows shrink E_k, and the blocks between them may be trusted by neither (they then follow
/// the sector fields).
///
/// Sampling and priorities read the front of each window, from the origin that front was
/// built on (the window may have moved since: its placements are kept until the front passes
/// them). Windows of goals off the grid ({-1, -1}) are idle and read as absent.
class NearFields {
 public:
  /// Corner snap (cells): a window moves only when its goal leaves the snap square.
  static constexpr std::int32_t kSnapCells = 16;
  /// Cells beyond the range on each side of the goal (the trust margin plus one).
  static constexpr std::int32_t kWindowMarginCells = 4;
  /// Cost units a value must stay below L (see the class comment).
  static constexpr std::uint32_t kTrustMarginCells = 3;
  /// Priority (NearFields::priority()) of a block no window trusts: after every trusted
  /// value, before kUnreachable.
  static constexpr std::uint32_t kFarPriority = kUnreachable - 1;

  /// Any-angle range (cost units; NavigationFields::set_any_angle_range()) and so the window
  /// size. A change rebuilds every window (all at once) at the next update().
  void set_range(float range);
  [[nodiscard]] float range() const noexcept { return range_; }
  /// Every window rebuilds all at once at the next update() (e.g. another grid of the same
  /// size and revision).
  void invalidate() noexcept;

  /// Brings the windows up to date for `goal_cells` (cells of `grid`, index = goal index;
  /// {-1, -1} or off-grid = no goal) on `grid`, spending about `budget` work units
  /// (kLinearCellsPerWorkUnit; 0 = all at once) over the windows in turn (the first window
  /// served rotates each update). A window is re-placed (its grid copy rewritten, a linear pass
  /// charged as such) when its goal leaves the snap square or the grid's size or revision
  /// changed; it rebuilds when its copy or its seeded goals changed (NavigationFields' policy:
  /// a first build runs all at once, later ones time-sliced behind the front). Returns the work
  /// units spent. Allocates when the goal count grows or a window is first placed.
  std::uint64_t update(const GridMap& grid, std::span<const CellCoord> goal_cells, std::uint64_t budget);
  /// Goal positions (world units, by goal index) that sample() steers to; call after update().
  /// Allocates only when the goal count grows.
  void set_goal_positions(std::span<const Vec2> goals);

  /// Index of a window whose front trusts block `b` (cells of the grid), -1 if none; `raw`
  /// gets b's value there (raw units, as IntegrationField::raw()). O(windows * goals).
  [[nodiscard]] std::int32_t find(CellCoord b, std::uint32_t& raw) const noexcept;
  /// Right of way of block `b`: its trusted value (raw units), else kFarPriority.
  [[nodiscard]] std::uint32_t priority(CellCoord b) const noexcept {
    std::uint32_t raw = 0;
    return find(b, raw) >= 0 ? raw : kFarPriority;
  }
  /// sample_any_angle() of an agent of `size_class` at world position `p` (cell size
  /// `cell_size`) on the front of a window trusting its reference block, with the goal
  /// positions of set_goal_positions(); status kNoField when no window trusts the block or the
  /// sample there is not kFollow / kGoalInSight / kAtGoal (the caller then uses the sector
  /// fields).
  [[nodiscard]] NavSample sample(int size_class, float cell_size, Vec2 p) const noexcept {
    CellCoord block;
    std::uint32_t priority = 0;
    return sample(size_class, cell_size, p, block, priority);
  }
  /// sample() that also gives p's reference block (`block`) and its priority() (`priority`)
  /// from the same trust check: the swarm's steering wants both for every agent, and the check
  /// (O(windows * goals)) ran twice.
  [[nodiscard]] NavSample sample(int size_class, float cell_size, Vec2 p, CellCoord& block,
                                 std::uint32_t& priority) const noexcept;

  /// Windows (one per goal index seen; idle ones included).
  [[nodiscard]] std::size_t window_count() const noexcept { return windows_.size(); }
  /// Window i's fields (front: integration(), flow(), any_angle() on the window's lattice).
  [[nodiscard]] const NavigationFields& window_fields(std::size_t i) const noexcept { return windows_[i].fields; }
  /// Grid cell of window i's front's cell (0, 0); {-1, -1} when it has no usable front.
  [[nodiscard]] CellCoord window_origin(std::size_t i) const noexcept {
    return windows_[i].front_ready ? windows_[i].front_origin : CellCoord{-1, -1};
  }
  /// Completed window builds (all windows), placements (grid copies).
  [[nodiscard]] std::uint64_t build_count() const noexcept;
  [[nodiscard]] std::uint64_t placement_count() const noexcept { return placements_; }
  /// Bytes held by the windows (grid copies and field pairs, approximate: capacities).
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

 private:
  struct Placement {
    std::uint32_t revision;  // the window copy's revision when placed
    CellCoord origin;
  };
  struct Window {
    NavigationFields fields;
    GridMap map;                         // the window's copy of the grid
    CellCoord origin{-1, -1};            // grid cell of map's (0, 0); -1: never placed
    std::vector<CellCoord> local_goals;  // every goal in window coordinates, {-1, -1} outside
    std::vector<Placement> placements;   // origins of revisions not older than the front's
    bool active = false;                 // its goal is on the grid
    // Front, resolved after each update().
    bool front_ready = false;
    CellCoord front_origin{-1, -1};
    std::int32_t front_w = 0, front_h = 0;
    std::int32_t exit_side[4] = {0, 0, 0, 0};  // E_k of the class comment (cells; left, top, right, bottom)
    std::vector<CellCoord> unseen;         // goals (grid cells) the front was not seeded with
    std::vector<Vec2> local_positions;     // goal positions in the front's window coordinates
  };

  void place(Window& w, const GridMap& grid, CellCoord origin);
  void resolve_front(Window& w, const GridMap& grid, std::span<const CellCoord> goal_cells);
  /// Whether w's front is trusted at block b, which must lie in the front (find() checks).
  [[nodiscard]] bool trusts(const Window& w, CellCoord b, std::uint32_t& raw) const noexcept;

  std::vector<Window> windows_;
  float range_ = NavigationFields::kDefaultAnyAngleRange;
  std::int32_t grid_w_ = -1, grid_h_ = -1;
  std::uint32_t grid_revision_ = 0;
  std::size_t first_ = 0;  // window served first by the next update()
  std::uint64_t placements_ = 0;
};

}  // namespace swarmfield::sim
