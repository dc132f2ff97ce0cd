#pragma once
// Agent size classes: which square footprint an agent of a given radius plans with, where it
// stands on the grid, whether its disc fits somewhere, and the per-class grid its field is
// planned on. After Harabor & Botea, "Hierarchical Path Planning for Multi-Size Agents in
// Heterogeneous Environments" (IEEE CIG 2008): a class-n agent occupies an n x n block of cells,
// and the class-n planning grid is the map where a cell is walkable iff its clearance >= n.
#include <cstdint>
#include <span>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// A set of size classes: bit n - 1 set = class n present (n in 1..kMaxSizeClass).
using SizeClassMask = std::uint8_t;
[[nodiscard]] constexpr SizeClassMask size_class_bit(int size_class) noexcept {
  return size_class >= 1 && size_class <= kMaxSizeClass ? static_cast<SizeClassMask>(1u << (size_class - 1)) : 0;
}

/// Size class of an agent of radius `radius` (world units) on a map of `cell_size` (world units
/// per cell): n = ceil(2 * radius / cell_size), i.e. the smallest n x n block of cells its disc
/// fits in, clamped to 1..kMaxSizeClass. Meant for radii of 0.2..2 cells (classes 1..4); a
/// non-finite or non-positive radius gives 1; a radius above 2 cells gives kMaxSizeClass, whose
/// block is then too small for the disc (the crowd should not create such agents). Examples:
/// radius 0.49 -> 1, 0.5 -> 1, 0.75 -> 2 (so it cannot use a 1-cell gap), 0.9 -> 2 (it can use a
/// 2-cell corridor), 1.5 -> 3, 2.0 -> 4.
[[nodiscard]] int size_class_of_radius(float radius, float cell_size) noexcept;

/// Reference block of a class-`size_class` agent at world position `p`: the top-left cell of
/// the n x n block whose centre is nearest p, floor(p / cell_size - n / 2 + 0.5) per axis (cells).
/// For class 1 this is the cell containing p (GridMap::world_to_cell). Non-finite or far-off
/// positions give a far-off cell (like world_to_cell), which no map contains.
/// Inline: every agent of a hierarchical map asks once or twice a tick. On unit cells with
/// 2 <= p < 2^22 per axis the float difference p - (n - 1) / 2 is exact (p is a multiple of
/// its ulp, at most 1/4 there, and so is the shift; the difference lies in [0, p]), so
/// truncating it is the double computation's floor; elsewhere reference_block_exact().
[[nodiscard]] inline CellCoord reference_block(Vec2 p, int size_class, float cell_size) noexcept;
/// reference_block() in double precision, for any cell size and position.
[[nodiscard]] CellCoord reference_block_exact(Vec2 p, int size_class, float cell_size) noexcept;

/// World position of the centre of the n x n block with top-left `block`: (block + n / 2) *
/// cell_size. The lattice a class-n field is sampled on (reference_block() inverts it).
[[nodiscard]] Vec2 block_center(CellCoord block, int size_class, float cell_size) noexcept;

/// True if a disc of `radius` (world units) centred at `p` (world units) overlaps no blocked
/// cell and stays on the map (the map edge counts as a wall). Touching a wall (distance exactly
/// `radius`) counts as fitting. Exact (closest point of each nearby blocked square); cost
/// O((2 * radius / cell_size + 2)^2) cell reads. Non-finite input or a negative radius: false.
[[nodiscard]] bool disc_fits(const GridMap& map, Vec2 p, float radius) noexcept;

/// A position near `p` where a disc of `radius` (world units) fits (disc_fits() is true there):
/// `p` itself if the disc fits there, else the nearest point to `p` of the block placements of
/// its class -- for every block b with clearance >= n within `max_cells` (Chebyshev distance,
/// cells) of p's reference block, the square of centres that keeps the disc inside b -- ties
/// broken by scan order (deterministic). For repairing an agent pushed into a wall. Returns
/// false (and leaves `out` alone) when none is within reach, for a radius above kMaxSizeClass / 2
/// cells that does not fit at `p`, for non-finite input, or when
/// `clearance` does not match `map` (see ClearanceMap::matches). O(max_cells^2).
[[nodiscard]] bool nearest_fitting_position(const GridMap& map, const ClearanceMap& clearance, Vec2 p, float radius,
                                            std::int32_t max_cells, Vec2& out) noexcept;

/// Goal block of class `size_class` for a goal (player) at world position `p`: its reference
/// block if that fits (clearance >= n), else the fitting block within `max_cells` (Chebyshev,
/// cells) whose centre is nearest p, ties by scan order. False when none is within reach (the
/// class cannot approach this goal: its field treats it as absent).
[[nodiscard]] bool class_goal_block(const ClearanceMap& clearance, Vec2 p, int size_class, float cell_size,
                                    std::int32_t max_cells, CellCoord& out) noexcept;

/// Makes `class_map` the class-`size_class` planning grid of `map`: same size and cell size; a
/// cell (read: the block with that top-left cell) is walkable iff clearance >= n, and its cost
/// is the largest cost of the n x n block's cells (a big agent pays for the worst cell it
/// covers; unit-cost maps stay unit-cost, so the fast search still applies). `clearance` must
/// match `map`. Updates `class_map` in place with GridMap::set_cost, so its revision() changes
/// only if a block changed and nothing is allocated unless the size changed.
void update_class_map(const GridMap& map, const ClearanceMap& clearance, int size_class, GridMap& class_map);

/// update_class_map() after cost changes at map cells `cells` only: recomputes the blocks that
/// hold a changed cell (top-left within size_class - 1 cells up and left of it), so O(cells x
/// size_class^2); the class map's own change log (GridMap::changes_since()) then lists the
/// blocks that changed. `class_map` must be the class map of the map before the changes (same
/// size) and `clearance` already updated for `map`; false (nothing done) on another size: call
/// update_class_map() then.
bool update_class_map_cells(const GridMap& map, const ClearanceMap& clearance, int size_class,
                            std::span<const CellCoord> cells, GridMap& class_map);

inline CellCoord reference_block(Vec2 p, int size_class, float cell_size) noexcept {
  constexpr float kExactBelow = 4194304.0f;  // 2^22: ulp <= 1/4
  // The argument needs the shift, (n - 1) / 2, to be a multiple of 1/2 no larger than p's lower bound.
  static_assert(kMaxSizeClass <= 5, "reference_block's float path assumes shifts of at most 2 cells");
  if (cell_size == 1.0f && size_class >= 1 && size_class <= kMaxSizeClass && p.x >= 2.0f && p.y >= 2.0f &&
      p.x < kExactBelow && p.y < kExactBelow) {
    const float shift = 0.5f * static_cast<float>(size_class - 1);
    return {static_cast<std::int32_t>(p.x - shift), static_cast<std::int32_t>(p.y - shift)};
  }
  return reference_block_exact(p, size_class, cell_size);
}

}  // namespace swarmfield::sim
