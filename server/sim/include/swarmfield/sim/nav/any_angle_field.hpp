#pragma once
// Any-angle layer over a flow field: per cell, the farthest point of its field path it can see
// (a waypoint), and whether that point is the goal itself (line of sight to the goal).
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/blocked_count_table.hpp"
#include "swarmfield/sim/nav/flow_field.hpp"
#include "swarmfield/sim/nav/integration_field.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Waypoints in the manner of Basic Theta* (Daniel, Nash, Koenig & Felner, "Theta*: Any-Angle
/// Path Planning on Grids", JAIR 39, 2010), run over a finished field instead of inside a
/// search: in the field's own order (a cell after its flow successor), with s = next(c),
///   waypoint(c) = waypoint(s) if c sees waypoint(s), else s;   waypoint(goal cell) = itself.
/// Cells whose waypoint is a goal cell see that goal: the line-of-sight layer of Emerson's flow
/// field tiles (Game AI Pro, 2013, ch. 23) and bevy_flowfield_tiles_plugin, obtained from the
/// same pass. Each cell also carries the index of the goal its search came from (propagated
/// along the flow). Paths through the waypoints are never longer than the field's own grid path
/// (each waypoint replaces a piece of it by a straight segment) and bend only where a wall does.
///
/// Sight is asked of the whole cell, not its centre (see cell_sees_cell()): an agent anywhere in
/// a cell can head straight for the cell's waypoint without touching a wall, which is what the
/// sampler does. The grid is that of the field: a size class's planning grid for class fields.
///
/// Storage: per cell a packed waypoint (x | y << 16, cells) and a 16-bit goal word (goal index,
/// in-sight bit): 6 bytes. Maps wider or higher than 65534 cells get no waypoints.
/// Built a slice at a time like the other fields; results are identical for any slicing.
class AnyAngleField {
 public:
  static constexpr std::uint32_t kNoWaypoint = 0xFFFFFFFEu;  ///< blocked or unreachable cell
  static constexpr std::uint16_t kInSightBit = 0x8000u;
  static constexpr std::uint16_t kGoalIndexMask = 0x3FFFu;   ///< goals beyond index 16383 share it
  /// Largest map side with waypoints.
  static constexpr std::int32_t kMaxSide = 65534;

  /// Starts a build over the complete `integration` (and its snapshot) with `goal_cells` in
  /// goal-index order (index i = position in the span; a cell listed twice keeps the first
  /// index; off-map or unreachable goals are skipped). Resets every cell (a linear pass,
  /// charged as cells / kLinearCellsPerWorkUnit work units, returned). Allocates only when the
  /// map is larger than any before.
  std::uint64_t begin(const IntegrationField& integration, std::span<const CellCoord> goal_cells);
  /// Continues the build for about `budget` work units (one unit per cell given a waypoint, plus
  /// the row scan at kLinearCellsPerWorkUnit cells per unit); returns the units spent. `flow`
  /// must be the complete flow field of `integration` and `table` complete for its snapshot.
  /// The cell whose chain of unfinished successors is followed may overshoot the budget by the
  /// length of that chain (at most its field path). A budget of 0 does nothing.
  std::uint64_t advance(const FlowField& flow, const BlockedCountTable& table, std::uint64_t budget);
  /// True once every cell has its waypoint (also before the first begin()).
  [[nodiscard]] bool done() const noexcept { return next_cell_ >= cells_; }
  /// Reserves the buffers for a `width` x `height` field.
  void reserve(std::int32_t width, std::int32_t height);

  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }
  /// Packed waypoint of an in-bounds cell (x | y << 16), or kNoWaypoint.
  [[nodiscard]] std::uint32_t packed(std::int32_t x, std::int32_t y) const noexcept {
    return waypoints_[index(x, y)];
  }
  /// True if the cell has a waypoint (it is walkable and some goal reaches it); false off-map.
  [[nodiscard]] bool has_waypoint(std::int32_t x, std::int32_t y) const noexcept {
    return in_bounds(x, y) && waypoints_[index(x, y)] < kNoWaypoint;
  }
  /// Waypoint of a cell with has_waypoint(); a goal cell's is itself.
  [[nodiscard]] CellCoord waypoint(std::int32_t x, std::int32_t y) const noexcept {
    const std::uint32_t w = waypoints_[index(x, y)];
    return {static_cast<std::int32_t>(w & 0xFFFFu), static_cast<std::int32_t>(w >> 16)};
  }
  /// True if the cell's waypoint is its goal's cell (a straight, clear segment to it).
  [[nodiscard]] bool goal_in_sight(std::int32_t x, std::int32_t y) const noexcept {
    return has_waypoint(x, y) && (goals_[index(x, y)] & kInSightBit) != 0;
  }
  /// Index of the goal (in begin()'s list) whose search reached the cell; -1 without a waypoint.
  [[nodiscard]] std::int32_t goal_index(std::int32_t x, std::int32_t y) const noexcept {
    return has_waypoint(x, y) ? static_cast<std::int32_t>(goals_[index(x, y)] & kGoalIndexMask) : -1;
  }
  [[nodiscard]] const std::vector<std::uint32_t>& waypoints() const noexcept { return waypoints_; }
  [[nodiscard]] const std::vector<std::uint16_t>& goal_words() const noexcept { return goals_; }

 private:
  static constexpr std::uint32_t kUnset = 0xFFFFFFFFu;
  static constexpr std::uint16_t kPendingBit = 0x4000u;  // goal word of a cell waiting in a chain
  static constexpr std::uint16_t kChainStart = 8;       // back link of the chain's first cell

  [[nodiscard]] bool in_bounds(std::int32_t x, std::int32_t y) const noexcept {
    return x >= 0 && y >= 0 && x < width_ && y < height_;
  }
  [[nodiscard]] std::size_t index(std::int32_t x, std::int32_t y) const noexcept {
    return static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x);
  }
  std::uint64_t resolve(std::uint32_t start, std::int32_t x, std::int32_t y, const std::uint8_t* dirs,
                        const BlockedCountTable& table);

  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::size_t cells_ = 0;
  std::size_t next_cell_ = 0;  // row-major scan position of advance()
  std::vector<std::uint32_t> waypoints_;
  std::vector<std::uint16_t> goals_;
};

/// True if every point of cell `from`'s square sees the centre of cell `to` on `table`'s grid:
/// the convex hull of that square and that point meets the interior of no blocked cell (touching
/// a wall is allowed). First the box spanned by the two cells (clear box: true, one O(1) count),
/// else band by band along the pair's minor axis, one O(1) count per band; pairs needing more
/// than 8 bands are refused (on Boston_0_1024 the pass costs ~23 ms with 8 bands, ~40 with 32, for paths
/// within 0.5% as short). Conservative: never true through a wall, and exact up to 8
/// bands. Both cells on the map.
[[nodiscard]] bool cell_sees_cell(const BlockedCountTable& table, CellCoord from, CellCoord to) noexcept;

/// What sample_any_angle() found.
enum class NavStatus : std::uint8_t {
  kNoField,      ///< no field for this position's class (or the field's size differs)
  kNoRoute,      ///< the position's reference block is blocked for the class or no goal reaches it
  kFollow,       ///< heading for a waypoint; the goal is not in sight
  kGoalInSight,  ///< heading straight at the goal's exact position
  kAtGoal,       ///< within kAtGoalCells of the goal's position: direction {0, 0}
};

/// Result of sample_any_angle(). World units throughout.
struct NavSample {
  Vec2 direction{};         ///< unit vector, or {0, 0} (kAtGoal, or nothing to follow)
  Vec2 target{};            ///< the point the reference block heads for (goal position or waypoint centre)
  std::int32_t goal = -1;   ///< goal index it heads to (-1 when none)
  NavStatus status = NavStatus::kNoField;
};

/// Distance (cells) below which a position counts as on its goal (kAtGoal).
inline constexpr float kAtGoalCells = 1.0e-3f;

/// Desired direction of an agent of size class `size_class` at world position `p`, from
/// `field` (built on that class's planning grid, whose lattice point b is the centre of block b,
/// see block_center()) and the goals' current world positions `goals` (by goal index; a goal
/// index beyond the span uses its cell's centre). Each of the four lattice points around p
/// (bilinear weights) contributes the unit vector from p to its target -- the goal's exact
/// position when in sight, else its waypoint's block centre -- so the heading turns smoothly
/// across cell borders and is exactly the straight line to the goal where all four see it.
/// Samples without a waypoint, and a sample diagonal to p's reference block across a blocked
/// corner, are skipped. status/target/goal describe p's reference block (reference_block());
/// when that has no waypoint, status is kNoRoute and direction is the blend of the others
/// (possibly {0, 0}); the crowd decides whether to follow it, hold or escape. O(1), no
/// allocation. `cell_size` is the map's (world units per cell).
/// What following it guarantees (tests/sim/nav): an agent's centre stays within half a cell of
/// the centre of a block that fits its class, i.e. a disc of radius n / 2 - 0.5 cells never
/// touches a wall; the last up to half a cell of a bigger radius is the crowd's wall collision's.
[[nodiscard]] NavSample sample_any_angle(const AnyAngleField& field, int size_class, float cell_size,
                                         std::span<const Vec2> goals, Vec2 p) noexcept;

}  // namespace swarmfield::sim
