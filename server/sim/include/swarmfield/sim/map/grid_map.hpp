#pragma once
// The city map: a W x H grid of cells with a one-byte traversal cost each (the cost field).
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Integer cell coordinate: x = column, y = row, origin top-left (MovingAI convention).
struct CellCoord {
  std::int32_t x = 0;
  std::int32_t y = 0;
  constexpr bool operator==(const CellCoord&) const noexcept = default;
};

/// Traversal cost of a cell: 1..254 passable (1 = road), 255 impassable.
inline constexpr std::uint8_t kBlockedCost = 255;
inline constexpr std::uint8_t kDefaultCost = 1;

/// Immutable-by-convention grid of per-cell costs. `revision()` changes whenever a cost
/// changes, so fields know when to rebuild; the change log (changes_since()) says which cells
/// changed, so that derived data (clearance, class grids, the sector graph) can follow a change
/// locally instead of rebuilding over the whole map.
class GridMap {
 public:
  /// Entries the change log holds at most (8 bytes each): when full, the older half is dropped
  /// (amortised O(1) per change); readers further behind ask changed_blocks_since().
  static constexpr std::size_t kChangeLogLimit = std::size_t{1} << 16;
  /// Side (cells) of the blocks whose latest change the map remembers beside the log (4 bytes
  /// per block: 1 MiB at 8192 x 8192, allocated on the first logged change).
  static constexpr std::int32_t kChangeBlockSide = 16;

  GridMap() = default;
  /// A `width` x `height` grid (cells), every cell cost `fill`. `cell_size` is the edge length
  /// of a cell in world units (> 0).
  GridMap(std::int32_t width, std::int32_t height, std::uint8_t fill = kDefaultCost,
          float cell_size = 1.0f);
  /// A `width` x `height` grid (cells) with the given row-major costs (revision 0). When
  /// `costs.size()` differs from width * height the missing cells read as kBlockedCost and extra
  /// entries are dropped. Used by parsers and generators to avoid one set_cost() per cell.
  [[nodiscard]] static GridMap from_costs(std::int32_t width, std::int32_t height, std::vector<std::uint8_t> costs,
                                          float cell_size = 1.0f);

  [[nodiscard]] std::int32_t width() const noexcept { return width_; }
  [[nodiscard]] std::int32_t height() const noexcept { return height_; }
  [[nodiscard]] float cell_size() const noexcept { return cell_size_; }
  [[nodiscard]] std::size_t cell_count() const noexcept { return costs_.size(); }
  [[nodiscard]] std::uint32_t revision() const noexcept { return revision_; }

  [[nodiscard]] bool in_bounds(std::int32_t x, std::int32_t y) const noexcept {
    return x >= 0 && y >= 0 && x < width_ && y < height_;
  }
  [[nodiscard]] std::size_t index(std::int32_t x, std::int32_t y) const noexcept {
    return static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x);
  }
  /// Cost of a cell; out-of-bounds cells read as kBlockedCost.
  [[nodiscard]] std::uint8_t cost(std::int32_t x, std::int32_t y) const noexcept {
    return in_bounds(x, y) ? costs_[index(x, y)] : kBlockedCost;
  }
  [[nodiscard]] bool walkable(std::int32_t x, std::int32_t y) const noexcept {
    return cost(x, y) != kBlockedCost;
  }
  [[nodiscard]] bool walkable(CellCoord c) const noexcept { return walkable(c.x, c.y); }
  /// Sets one cell's cost (ignored out of bounds); if it changed, bumps revision() by one and
  /// logs the cell (see changes_since()).
  void set_cost(std::int32_t x, std::int32_t y, std::uint8_t cost);
  /// The cells changed from revision `since` to revision() (one entry per set_cost() that
  /// changed a cost, in order; a cell may appear more than once): true and `out` set when the log
  /// reaches back to `since`; false (and `out` empty) when it does not (older than the log, or a
  /// revision this map never had, e.g. another map's): rebuild whole then. `out` stays valid
  /// until the next set_cost(). `since` == revision(): true, empty.
  [[nodiscard]] bool changes_since(std::uint32_t since, std::span<const CellCoord>& out) const noexcept;
  /// For a reader the change log no longer reaches (changes_since() false): every cell of the
  /// kChangeBlockSide-square blocks changed after revision `since` (a superset of the changed
  /// cells, block by block in row-major order), so that a bulk change (more than
  /// kChangeLogLimit / 2 cells between two reads) is still followed locally. True and `out`
  /// replaced; false (`out` cleared) when `since` is a revision this map never had, when it
  /// predates the block record (the log was off since), or when the blocks hold more than
  /// `max_cells` cells (a whole rebuild is cheaper then). O(blocks) to scan.
  [[nodiscard]] bool changed_blocks_since(std::uint32_t since, std::size_t max_cells, std::vector<CellCoord>& out) const;
  /// What derived data follows a change by: changes_since(), or when the log no longer reaches
  /// back changed_blocks_since() into `scratch` (then `out` views it) up to
  /// bulk_change_limit() cells. True and `out` set; false: rebuild whole. `scratch` is
  /// touched only for a bulk change (a caller's local vector allocates nothing otherwise).
  [[nodiscard]] bool cells_changed_since(std::uint32_t since, std::vector<CellCoord>& scratch,
                                         std::span<const CellCoord>& out) const;
  /// Most cells a bulk change may list before readers rebuild whole instead: 1 / 8 of the map,
  /// at most 2^18 (the clearance update's scratch grows 16 entries a cell).
  [[nodiscard]] std::size_t bulk_change_limit() const noexcept {
    return std::min<std::size_t>(costs_.size() / 8, std::size_t{1} << 18);
  }
  /// Switches the change log on (the default) or off. Off, set_cost() still bumps revision()
  /// but logs nothing (nor the blocks), and changes_since() reaches back only to the current
  /// revision (a reader behind rebuilds whole). For maps nobody follows cell by cell, e.g. a window copy refilled
  /// wholesale on every move, whose log would otherwise fill to kChangeLogLimit for nothing.
  void set_change_log(bool on) noexcept;

  /// Cell containing a world position: floor(p / cell_size) on both axes, negatives included.
  [[nodiscard]] CellCoord world_to_cell(Vec2 p) const noexcept;
  /// World position of a cell's centre.
  [[nodiscard]] Vec2 cell_center(CellCoord c) const noexcept;
  /// True if the world position lies in an in-bounds walkable cell.
  [[nodiscard]] bool walkable_at(Vec2 p) const noexcept { return walkable(world_to_cell(p)); }

  [[nodiscard]] const std::vector<std::uint8_t>& costs() const noexcept { return costs_; }
  /// Cells of cost below kBlockedCost. O(1): kept up to date by set_cost() (a run-time blocker
  /// on an 8192 x 8192 map must not cost a 64 MiB scan).
  [[nodiscard]] std::size_t walkable_count() const noexcept { return walkable_; }

 private:
  std::int32_t width_ = 0;
  std::int32_t height_ = 0;
  float cell_size_ = 1.0f;
  std::uint32_t revision_ = 0;
  std::vector<std::uint8_t> costs_;
  std::size_t walkable_ = 0;  // cells of costs_ below kBlockedCost
  // change_log_[i] is the cell whose change made revision log_base_ + i + 1.
  std::vector<CellCoord> change_log_;
  std::uint32_t log_base_ = 0;
  bool log_on_ = true;
  // Per kChangeBlockSide block: the revision its latest logged change made (0: none), for
  // changes after revision blocks_base_ (empty until the first logged change).
  std::vector<std::uint32_t> block_revision_;
  std::uint32_t blocks_base_ = 0;
  [[nodiscard]] std::int32_t blocks_x() const noexcept { return (width_ + kChangeBlockSide - 1) / kChangeBlockSide; }
};

}  // namespace swarmfield::sim
