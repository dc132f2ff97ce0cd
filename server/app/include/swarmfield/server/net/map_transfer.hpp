#pragma once
// The map as sent to clients after Welcome: the cost bytes (one per cell, row-major)
// zstd-compressed once at startup and cut into MapChunk messages of kMapChunkBytes, framed
// and shared by every session.
#include <string>
#include <vector>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/server/net/tcp_session.hpp"
#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::server {

struct MapTransfer {
  protocol::MapInfo info;     ///< goes into Welcome.map
  std::vector<Frame> chunks;  ///< framed MapChunk messages, index 0..info.chunk_count-1
  std::size_t total_frame_bytes = 0;
};

/// Compresses `map.costs()` with zstd `level` and frames it as MapChunk messages
/// (protocol::make_map_chunks). `name` is the
/// label clients show (file name or "city-seed-N"), cut to kMaxNameBytes.
[[nodiscard]] MapTransfer prepare_map_transfer(const sim::GridMap& map, std::string name, int level = 9);

}  // namespace swarmfield::server
