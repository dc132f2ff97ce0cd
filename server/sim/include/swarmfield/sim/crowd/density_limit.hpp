#pragma once
// The density limit: the most agents a map's walkable area can physically hold. A request for
// more (a config's --agents, a tool run, a spawn wave) is refused or cut by the caller instead
// of packing discs on top of each other, where every agent's neighbour search sees hundreds of
// neighbours and a tick takes seconds (100000 agents on a 32 x 32 city: ~0.86 s a tick).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim {

/// Densest packing of equal discs in the plane, pi / (2 sqrt 3) ~ 0.9069: the hexagonal
/// lattice (Lagrange 1773 among lattice packings; Thue 1910 / Fejes Toth 1940 among all).
inline constexpr double kHexPackingDensity = 0.90689968211710892;
/// Factor on the packing bound. 1: the bound already overestimates what a map holds (walls cut
/// the lattice at every edge, bigger kinds take more room), so no crowd that fits is refused,
/// and anything above it can only exist as overlapping discs.
inline constexpr double kDensityLimitSlack = 1.0;

/// Most discs of `radius` world units that `walkable_cells` cells of `cell_size` world units a
/// side can hold without overlap: floor(kDensityLimitSlack * walkable_cells * cell_size^2 *
/// kHexPackingDensity / (pi * radius^2)) = floor(slack * area / (2 sqrt(3) radius^2)). At the
/// default runner radius 0.25 that is ~4.62 agents a cell. A radius <= 0 or not finite, or a
/// cell size <= 0 or not finite, gives UINT64_MAX (no limit); the result saturates there.
[[nodiscard]] std::uint64_t density_limit(std::size_t walkable_cells, float cell_size, float radius) noexcept;

/// Radius (world units) of the smallest kind a spawner places (spawn_weight > 0), or of the
/// smallest kind at all when no kind has a weight; 0 for an empty table. The smallest disc
/// makes the limit an upper bound whatever mix of kinds the draws give.
[[nodiscard]] float smallest_spawned_radius(std::span<const AgentKind> kinds) noexcept;

/// The limit of `map` (its walkable_count(), O(cells)) for agents of `kinds`:
/// density_limit(map.walkable_count(), map.cell_size(), smallest_spawned_radius(kinds)).
[[nodiscard]] std::uint64_t density_limit(const GridMap& map, std::span<const AgentKind> kinds) noexcept;

/// The limit in words, for error messages and logs: "the map's 976 walkable cells hold at most
/// 4507 agents (hexagonal packing of the smallest kind spawned, 'runner', radius 0.25)". A
/// limit of UINT64_MAX reads "no limit". Callers add the flag and how to fix it.
[[nodiscard]] std::string describe_density_limit(const GridMap& map, std::span<const AgentKind> kinds);
/// The same for `walkable_cells` cells of `cell_size` world units (a part of a map: a spawn
/// rectangle), the sentence starting with `whose` ("its 44 walkable cells hold at most ...").
[[nodiscard]] std::string describe_density_limit(std::size_t walkable_cells, float cell_size,
                                                 std::span<const AgentKind> kinds, std::string_view whose);

}  // namespace swarmfield::sim
