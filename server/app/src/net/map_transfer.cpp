#include "swarmfield/server/net/map_transfer.hpp"

#include "swarmfield/protocol/transport/map_transfer.hpp"
#include "swarmfield/server/net/tcp_server.hpp"

namespace swarmfield::server {

MapTransfer prepare_map_transfer(const sim::GridMap& map, std::string name, int level) {
  MapTransfer t;
  // A file name can hold anything (bytes that are not UTF-8, control characters) and be long:
  // a MapInfo name the clients refuse would keep every client out.
  name = protocol::clean_name(name);
  t.info.width = map.width();
  t.info.height = map.height();
  t.info.cell_size = map.cell_size();
  t.info.name = std::move(name);
  // The protocol library owns the split so that client and server agree on it.
  const std::vector<protocol::MapChunk> chunks = protocol::make_map_chunks(map.costs(), t.info, level);
  for (const protocol::MapChunk& chunk : chunks) {
    Frame frame = make_frame(chunk);
    t.total_frame_bytes += frame ? frame->size() : 0;
    t.chunks.push_back(std::move(frame));
  }
  return t;
}

}  // namespace swarmfield::server
