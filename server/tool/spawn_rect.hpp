#pragma once
// `swarmfield-tool sim --spawn-rect X0,Y0,X1,Y1`: agents placed uniformly in a world rectangle,
// each where its kind's disc fits (no wall under its collision square), before the first tick.
#include <cstddef>
#include <cstdint>
#include <string>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/size_classes/clearance_map.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::tool {

/// The walkable cells the world rectangle `rect` = [x0, x1) x [y0, y1) (world units) covers,
/// wholly or in part: the area its agents' centres are drawn in, rounded up to whole cells, for
/// its density limit (sim::density_limit of these cells).
[[nodiscard]] std::size_t rect_walkable_cells(const sim::GridMap& map, const float rect[4]);

/// Checks that every kind the spawn can draw has a place in `rect` (world units) where its disc
/// fits: "" or an error sentence naming the first kind that has none ("--spawn-rect 'TEXT': no
/// place in it fits a brute (radius 0.8: needs a 2 x 2 block of walkable cells)").
[[nodiscard]] std::string check_kinds_fit(const sim::World& world, const sim::ClearanceMap& clearance,
                                          const float rect[4], const std::string& rect_text);

/// Adds `n` agents uniformly in the world rectangle [x0, x1) x [y0, y1), each where its kind's
/// disc fits (square_fits: no wall under its collision square), so the first step's repair moves
/// nobody. A std::mt19937_64 seeded with `seed` (bits mapped by hand so a seed replays on every
/// standard library) draws the kind by weight like the world's spawner, then points of the
/// rectangle until one fits (exactly uniform over the places that fit); a kind for which
/// 1000 draws find none (its places are a tiny part of the rectangle) is placed from then on by
/// its fit boxes instead: a box by area, a uniform point in it. Call check_kinds_fit first:
/// a kind drawn without a place is skipped. Stops early when the swarm is full.
void spawn_in_rect(sim::World& world, const sim::ClearanceMap& clearance, std::uint32_t n, const float rect[4],
                   std::uint64_t seed);

}  // namespace swarmfield::tool
