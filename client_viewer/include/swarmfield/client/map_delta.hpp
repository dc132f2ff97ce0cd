#pragma once
// The server's map changes (protocol::MapDelta: barricades built, damaged or destroyed) applied
// to the client's copy of the map: each listed cell's cost, and the barricades kept for drawing.
// Pure: no sockets, no clock (Connection calls it for every MapDelta it receives).
#include <cstdint>
#include <map>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::client {

/// The barricades a client knows of: cell index (y * map width + x, map cells) -> the
/// barricade's health as a fraction of full, 1..255 (255 = whole). Ordered by index (row by
/// row); a destroyed barricade is removed.
using Barricades = std::map<std::uint32_t, std::uint8_t>;

/// What a client keeps of the server's map changes beside the costs, and counts of them.
struct MapChangeState {
  Barricades barricades;
  std::uint32_t revision = 0;        ///< revision of the newest delta applied (0 before any)
  std::uint64_t deltas_applied = 0;  ///< MapDeltas applied
  std::uint64_t deltas_ignored = 0;  ///< MapDeltas whose revision was not newer than `revision`
  std::uint64_t cells_skipped = 0;   ///< cells of applied deltas that lie outside the map
};

/// Applies `delta` to `map` and `state`. Ignored (false, counted in deltas_ignored, nothing
/// changed) when a delta was applied before and delta.revision is not newer (greater) than
/// state.revision. Otherwise each listed cell inside the map gets its cost (map.set_cost(): the
/// map's revision() moves when a cost changes, so whatever is built on the map can tell; a cost
/// of 0, which the decoder refuses, reads as 1) and its barricade (kept with its health 1..255,
/// removed with 0); a cell outside the map is skipped and counted in cells_skipped. True when
/// applied; state.revision is then delta.revision.
bool apply_map_delta(const protocol::MapDelta& delta, sim::GridMap& map, MapChangeState& state);

}  // namespace swarmfield::client
