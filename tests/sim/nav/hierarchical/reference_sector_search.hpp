#pragma once
// A frozen copy of the sector field build as it was before the bucket queue (binary-heap
// Dijkstra, SectorFields::build_sector up to 2026-12-01): the reference sector_search_test
// compares SectorSearch and SectorFields with, value for value and direction for direction.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"

namespace swarmfield::sim::test {

/// The heap Dijkstra of the old build_sector on a local grid (SectorSearch::run's contract:
/// `open` kinds 0 blocked / 1 seed / 2 inner, `step` inner costs, seeds value << 32 | cell).
std::vector<std::uint32_t> reference_sector_search(std::size_t lw, std::size_t lh, const std::uint8_t* open,
                                                   const std::uint8_t* step, const std::vector<std::uint64_t>& seeds);

/// The old build_sector of sector `s` whole: its local values ((w + 2) x (h + 2), the ring
/// included) and its directions (w x h FlowDirection codes, 9 on goals).
struct ReferenceSector {
  std::vector<std::uint32_t> values;
  std::vector<std::uint8_t> dirs;
};
ReferenceSector reference_build_sector(const GridMap& map, const SectorGraph& g, const PortalRoutes& routes,
                                       std::uint32_t s);

}  // namespace swarmfield::sim::test
