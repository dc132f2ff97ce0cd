#include "swarmfield/client/snapshot_state.hpp"

#include "swarmfield/protocol/snapshot/agent_prediction.hpp"

namespace swarmfield::client {

namespace {

RenderAgent render_agent(const protocol::AgentState& a, std::uint32_t x, std::uint32_t y, float cell_size) {
  return RenderAgent{a.id, protocol::dequantize_agent_position(x, cell_size),
                     protocol::dequantize_agent_position(y, cell_size), protocol::dequantize_heading(a.heading), a.kind};
}

}  // namespace

void unpack_frame(const protocol::SnapshotHeader& header, const protocol::AgentFrame& frame, float cell_size,
                  SnapshotState& out, std::span<const protocol::AgentState> deaths) {
  out.sequence = header.sequence;
  out.tick = header.tick;
  out.echo_client_time_us = header.echo_client_time_us;
  out.total_agents = header.total_agents;
  out.rebuilds = header.rebuilds;
  out.wave = header.wave;
  out.players = header.players;
  out.deaths.clear();
  for (const protocol::AgentState& a : deaths) out.deaths.push_back(render_agent(a, a.x, a.y, cell_size));
  out.cell_size = cell_size;
  out.density = frame.grid;
  out.agents.resize(frame.agents.size());
  out.updated = 0;
  for (std::size_t i = 0; i < frame.agents.size(); ++i) {
    const protocol::AgentState& a = frame.agents[i];
    std::uint32_t x = a.x, y = a.y;
    if (a.tick == header.tick) {
      ++out.updated;
    } else {
      // Not sent this time: where the server's own predictor expects it now (at most 16 ticks
      // ahead of its last update), rather than frozen at its last position.
      x = protocol::predict_coordinate(a.x, a.vx, a.tick, header.tick);
      y = protocol::predict_coordinate(a.y, a.vy, a.tick, header.tick);
    }
    out.agents[i] = render_agent(a, x, y, cell_size);
  }
}

std::uint64_t density_agents_floor(const protocol::DensityGrid& grid) noexcept {
  std::uint64_t sum = 0;
  for (const std::uint8_t level : grid.levels) sum += protocol::density_level_floor(level);
  return sum;
}

}  // namespace swarmfield::client
