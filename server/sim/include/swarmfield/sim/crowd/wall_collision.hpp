#pragma once
// Collision of a disc with the blocked cells of a grid map: sliding a move along walls,
// rounding door posts, and moving a disc out of walls. Used by the swarm step for agents and by
// World for players. Lengths in world units. The collision shape is the disc's bounding square
// (exact along walls, conservative by up to (sqrt 2 - 1) r at convex corners), for any radius up
// to kMaxSizeClass / 2 cells: a square of side 2r overlaps exactly the cells a block of cells
// must leave walkable, which is what the size classes plan with (size_class.hpp).
#include <cmath>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Radius the wall collision works with for a disc of `radius` (world units) on cells of
/// `cell_size`: at least 1% of a cell (so the span tests stay meaningful) and at most
/// kMaxSizeClass / 2 cells (the largest block a size class plans with). NaN gives the lower
/// bound.
[[nodiscard]] float wall_collision_radius(float radius, float cell_size) noexcept;

/// Tolerance (world units) of the span tests for "touching is not overlapping": a disc clamped
/// against a wall at k*cs - r must not count the wall cell as spanned when the float sum x + r
/// rounds a few ulps past k*cs. Grows with the map extent because float ulps do.
[[nodiscard]] float wall_span_epsilon(const GridMap& map) noexcept;

/// Moves a disc of `radius` (world units) from `from` by `move`, one axis at a time (x then y),
/// stopping each axis where the disc's bounding square would enter a blocked (or out-of-map)
/// cell, and pushing it out when it already overlaps one: the result keeps the centre at least
/// `radius` (see wall_collision_radius) from every blocked cell in the rows/columns it spans,
/// never crosses a diagonal wall corner, and lies in a walkable cell whenever `from` does.
/// Precondition for that guarantee: the disc's square at `from` is clear (square_fits; for a
/// radius below half a cell, `from` in a walkable cell is enough: see move_out_of_walls and
/// move_disc_out_of_walls). Then the square at the result is clear too.
[[nodiscard]] Vec2 slide_along_walls(const GridMap& map, Vec2 from, Vec2 move, float radius) noexcept;

/// After wall sliding took a move from `p0` only to `p1`: when an axis was stopped by a wall
/// cell that only the disc's edge overlaps (a door post; the cell straight ahead of the centre
/// is free), moves the disc sideways toward the opening by up to what that axis lost, keeping
/// the total displacement from `p0` within `budget` (world units). Otherwise returns `p1`.
/// Same wall guarantees as slide_along_walls.
[[nodiscard]] Vec2 slide_round_corner(const GridMap& map, Vec2 p0, Vec2 p1, Vec2 move, float budget,
                                      float radius) noexcept;

/// True when slide_round_corner(map, p0, p1, move, ...) can change `p1`: some axis lost more
/// than the corner tolerance (2 * wall_span_epsilon) to the walls. The float difference p1 - p0
/// rarely equals the move exactly, so callers test this before the call instead of comparing.
[[nodiscard]] inline bool may_round_corner(Vec2 p0, Vec2 p1, Vec2 move, float corner_eps) noexcept {
  return !(std::abs(move.x - (p1.x - p0.x)) <= corner_eps) || !(std::abs(move.y - (p1.y - p0.y)) <= corner_eps);
}

/// The point nearest to `p` whose disc of `radius` (taken as at most 0.49 cell: for a bigger
/// disc use move_disc_out_of_walls) lies inside one walkable cell: `p` clamped into the nearest
/// walkable cell (Euclidean distance to the cell's square, ties to the first in ring-scan order)
/// shrunk by `radius`. A non-finite `p` is treated as the map centre and a point off the map is
/// first clamped onto its rectangle. Returns `p` unchanged (after those substitutions) if the map
/// has no walkable cell.
[[nodiscard]] Vec2 move_out_of_walls(const GridMap& map, Vec2 p, float radius) noexcept;

/// True when the bounding square of a disc of `radius` at `p` (the collision shape of
/// slide_along_walls, with its touching tolerance) overlaps no blocked or off-map cell. False for
/// non-finite `p`. Cost O((2r / cell + 2)^2) cell reads.
[[nodiscard]] bool square_fits(const GridMap& map, Vec2 p, float radius) noexcept;

/// A disc of any `radius` (wall_collision_radius; up to kMaxSizeClass / 2 cells) moved out of
/// walls: `p` if square_fits there, else the nearest point to `p` (ties by ring-scan order) that
/// keeps the disc's square inside an all-walkable block of n x n cells, n = its size class
/// (size_class_of_radius), found through `clearance` (ClearanceMap::fits; must match `map`) by
/// rings of blocks round p's reference block. A non-finite `p` is searched from the map centre.
/// Returns false (and leaves `out` alone) when no such block exists on the map or `clearance`
/// does not match `map`. Cost O(k^2) blocks for the nearest fit k blocks away; for repairs, not
/// per tick.
[[nodiscard]] bool move_disc_out_of_walls(const GridMap& map, const ClearanceMap& clearance, Vec2 p, float radius,
                                          Vec2& out) noexcept;

}  // namespace swarmfield::sim
