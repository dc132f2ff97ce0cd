#pragma once
// A frozen copy of AnyAngleField as of main ac6ba2d (before the faster pass), kept as the
// reference the exactness test compares the production pass with, waypoint by waypoint.
#include "swarmfield/sim/nav/field/any_angle_field.hpp"

namespace swarmfield::sim::reference {
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
/// Range ("any-angle near the goal", SPEC): only the cells whose integration value is at most
/// `range` cost units (cells on a unit-cost map: the path distance to the nearest goal) get
/// waypoints; the region is closed under the flow (a successor's value is lower), so each of its
/// waypoints is exactly the one the unbounded pass gives. The pass then costs O(cells of the
/// region + goals * (2 * range + 1)^2 / kLinearCellsPerWorkUnit) instead of O(map): a cell at
/// Chebyshev distance k from every goal has a value >= k (every step costs >= 1), so the region
/// lies in the boxes of half-side floor(range) round the goals, and only those are scanned.
/// Outside the region an agent follows the smoothed flow (the sampler below with a FlowField).
///
/// Sight is asked of the whole cell, not its centre (see cell_sees_cell()): an agent anywhere in
/// a cell can head straight for the cell's waypoint without touching a wall, which is what the
/// sampler does. The grid is that of the field: a size class's planning grid for class fields.
///
/// Storage: per cell a packed waypoint (x | y << 16, cells), a 16-bit goal word (goal index,
/// in-sight bit) and a region bit: 6 bytes + 1 bit. Only the region's entries are written by a
/// build (plus a clear of the region bits, cells / 8 bytes). Maps wider or higher than 65534
/// cells get no waypoints. Built a slice at a time like the other fields; results are
/// identical for any slicing.
class AnyAngleField {
 public:
  static constexpr std::uint32_t kNoWaypoint = 0xFFFFFFFEu;  ///< blocked or unreachable cell
  static constexpr std::uint16_t kInSightBit = 0x8000u;
  static constexpr std::uint16_t kGoalIndexMask = 0x3FFFu;   ///< goals beyond index 16383 share it
  /// Largest map side with waypoints.
  static constexpr std::int32_t kMaxSide = 65534;
  /// A range that covers every reachable cell (the pass over the whole field).
  static constexpr float kUnboundedRange = std::numeric_limits<float>::infinity();

  /// Starts a build over the complete `integration` (and its snapshot) with `goal_cells` in
  /// goal-index order (index i = position in the span; a cell listed twice keeps the first
  /// index; off-map or unreachable goals are skipped), for the cells whose value is at most
  /// `range` cost units (cells on unit-cost maps; see the class comment; NaN or negative: only
  /// the goal cells). Clears the region bits and marks the cells of the goals' boxes (linear
  /// passes, charged as cells / 8 / kLinearCellsPerWorkUnit + box cells /
  /// kLinearCellsPerWorkUnit work units, returned). Allocates only when the map is larger than
  /// any before or the goal count grows.
  std::uint64_t begin(const IntegrationField& integration, std::span<const CellCoord> goal_cells,
                      float range);
  /// begin() over every reachable cell (range kUnboundedRange).
  std::uint64_t begin(const IntegrationField& integration, std::span<const CellCoord> goal_cells) {
    return begin(integration, goal_cells, kUnboundedRange);
  }
  /// Continues the build for about `budget` work units (one unit per cell given a waypoint, plus
  /// the scan of the goals' boxes at kLinearCellsPerWorkUnit cells per unit); returns the units spent. `flow`
  /// must be the complete flow field of `integration` and `table` complete for its snapshot.
  /// The cell whose chain of unfinished successors is followed may overshoot the budget by the
  /// length of that chain (at most its field path). A budget of 0 does nothing.
  std::uint64_t advance(const FlowField& flow, const BlockedCountTable& table, std::uint64_t budget);
  /// True once every cell of the region has its waypoint (also before the first begin()).
  [[nodiscard]] bool done() const noexcept { return next_pending_ >= pending_count_; }
  /// Reserves the buffers for a `width` x `height` field and builds for `goal_count` goals within
  /// `range`, so that such a begin() allocates nothing.
  void reserve(std::int32_t width, std::int32_t height, std::size_t goal_count = 0, float range = kUnboundedRange);

  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }
  /// Packed waypoint of an in-bounds cell (x | y << 16), or kNoWaypoint (no waypoint).
  [[nodiscard]] std::uint32_t packed(std::int32_t x, std::int32_t y) const noexcept {
    return in_region(index(x, y)) ? waypoints_[index(x, y)] : kNoWaypoint;
  }
  /// True if the cell has a waypoint (it is walkable, some goal reaches it, and its value is
  /// within the build's range); false off-map.
  [[nodiscard]] bool has_waypoint(std::int32_t x, std::int32_t y) const noexcept {
    return in_bounds(x, y) && in_region(index(x, y));
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
  /// The raw per-cell arrays (row-major). Only the entries of cells with has_waypoint() are
  /// meaningful: a bounded build leaves the others as earlier builds wrote them.
  [[nodiscard]] const std::vector<std::uint32_t>& waypoints() const noexcept { return waypoints_; }
  [[nodiscard]] const std::vector<std::uint16_t>& goal_words() const noexcept { return goals_; }
  /// The region bits (bit i & 63 of word i >> 6 = has_waypoint() of the cell with row-major
  /// index i < width() * height()), for readers that test several cells at once.
  [[nodiscard]] const std::vector<std::uint64_t>& region_bits() const noexcept { return region_; }
  /// The range (cost units) of the last begin().
  [[nodiscard]] float range() const noexcept { return range_; }
  /// Cells given a waypoint by the last complete build (goal cells included).
  [[nodiscard]] std::size_t region_cells() const noexcept { return region_cells_; }

 private:
  static constexpr std::uint16_t kPendingBit = 0x4000u;  // goal word of a cell waiting in a chain
  static constexpr std::uint16_t kChainStart = 8;       // back link of the chain's first cell

  [[nodiscard]] bool in_bounds(std::int32_t x, std::int32_t y) const noexcept {
    return x >= 0 && y >= 0 && x < width_ && y < height_;
  }
  [[nodiscard]] std::size_t index(std::int32_t x, std::int32_t y) const noexcept {
    return static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x);
  }
  [[nodiscard]] bool in_region(std::size_t i) const noexcept { return ((region_[i >> 6] >> (i & 63u)) & 1u) != 0; }
  void set_region(std::size_t i) noexcept { region_[i >> 6] |= std::uint64_t{1} << (i & 63u); }
  std::uint64_t resolve(std::uint32_t start, std::int32_t x, std::int32_t y, const std::uint8_t* dirs,
                        const BlockedCountTable& table);
  /// The region's limit in raw integration units for `range` (cost units).
  [[nodiscard]] static std::uint32_t raw_limit(float range) noexcept;
  /// Half-side (cells) of a goal's box on a `width` x `height` map for `limit`.
  [[nodiscard]] static std::int32_t box_half(std::int32_t width, std::int32_t height, std::uint32_t limit) noexcept;
  /// Most region cells (goals excepted) `goal_count` goals can have: the sum of their box areas.
  [[nodiscard]] static std::size_t pending_bound(std::int32_t width, std::int32_t height, std::size_t goal_count,
                                                 std::uint32_t limit) noexcept;
  /// Calls fn(x0, x1) for each maximal run [x0, x1] of row y covered by the goals' boxes, in
  /// increasing x.
  template <typename Fn>
  void for_each_run(std::int32_t y, Fn&& fn) const;

  /// A goal's box of cells [x0, x1] x [y0, y1] (inclusive, clamped to the map).
  struct Box {
    std::int32_t x0, y0, x1, y1;
  };

  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  std::size_t cells_ = 0;
  float range_ = kUnboundedRange;
  std::vector<Box> boxes_;     // sorted by x0 (then y0, x1, y1)
  // The region's cells other than the goals (packed like waypoints), row-major: the first
  // pending_count_ entries of pending_ (whose size only grows); next_pending_ is the next one
  // advance() looks at (cells already finished by an earlier cell's chain are skipped).
  std::vector<std::uint32_t> pending_;
  std::size_t pending_count_ = 0;
  std::size_t next_pending_ = 0;
  std::size_t region_cells_ = 0;
  std::size_t resolved_ = 0;   // cells given a waypoint by the current build (goals included)
  std::vector<std::uint32_t> waypoints_;
  std::vector<std::uint16_t> goals_;
  std::vector<std::uint64_t> region_;  // one bit per cell: has a waypoint from this build
};

/// True if every point of cell `from`'s square sees the centre of cell `to` on `table`'s grid:
/// the convex hull of that square and that point meets the interior of no blocked cell (touching
/// a wall is allowed). First the box spanned by the two cells (clear box: true, one O(1) count),
/// else band by band along the pair's minor axis, one O(1) count per band (exact integer
/// arithmetic); pairs needing more than 8 bands are refused (the unbounded pass on
/// Boston_0_1024 cost ~23 ms with 8 bands, ~40 with 32, for paths within 0.5% as short). Within
/// the default range ~87% of the tests end at the clear box, ~10% need bands, ~3% are refused.
/// Conservative: never true through a wall, and exact up to 8 bands. Both cells on the map.
[[nodiscard]] bool cell_sees_cell(const BlockedCountTable& table, CellCoord from, CellCoord to) noexcept;

}  // namespace swarmfield::sim::reference
