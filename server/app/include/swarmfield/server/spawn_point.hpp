#pragma once
// Where players appear: apart from each other, at the map's spawn cells or round its centre.
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::server {

/// Centre (world units) of the walkable cell nearest (Euclidean, in cells) to the map centre;
/// ties go to the first in row-major order. Searches square rings outward and stops once no
/// closer cell can exist. The map centre itself when no cell is walkable.
[[nodiscard]] sim::Vec2 centre_most_walkable(const sim::GridMap& map);

/// How far round the centre players spawn (cells, Chebyshev), and the spacing sought between them.
inline constexpr int kSpawnRadiusCells = 8;
inline constexpr float kSpawnSpacingCells = 3.0f;

/// Where the next player appears (world units, a cell's centre), apart from `players` (the
/// positions of those already in the world, world units):
/// - with `spawn_cells` (the map's: Tiled spawn tiles, red PNG pixels; walkable ones count), the
///   one farthest from its nearest player (ties: the first listed);
/// - else round `centre` (centre_most_walkable): of the walkable cells within kSpawnRadiusCells
///   that the centre's cell reaches by 4-neighbour steps (no spawn behind a wall), the one
///   farthest from its nearest player up to kSpawnSpacingCells, then the nearest the centre,
///   then the first in row-major order. The first player gets the centre itself.
/// Deterministic: the same players give the same point (recordings store it anyway).
[[nodiscard]] sim::Vec2 player_spawn_point(const sim::GridMap& map, std::span<const sim::CellCoord> spawn_cells,
                                           sim::Vec2 centre, std::span<const sim::Vec2> players);

}  // namespace swarmfield::server
