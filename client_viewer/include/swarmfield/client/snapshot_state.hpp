#pragma once
// A decoded snapshot as the client uses it: the header's players, tick, echo time and counts,
// every agent the client tracks (dequantized to world units, sorted by id) and the density
// grid of the agents it does not track. Built from the frame SnapshotReceiver holds after a
// decode (protocol/SNAPSHOTS.md).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/protocol/snapshot/agent_frame.hpp"
#include "swarmfield/protocol/snapshot/density_grid.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"

namespace swarmfield::client {

/// An agent ready to draw: world units, heading in radians (0 = +x, y grows downward).
struct RenderAgent {
  std::uint32_t id = 0;
  float x = 0.0f;
  float y = 0.0f;
  float heading = 0.0f;
  std::uint8_t kind = 0;  ///< index into Welcome::kinds, as received (check before indexing)

  friend bool operator==(const RenderAgent&, const RenderAgent&) = default;
};

struct SnapshotState {
  std::uint32_t sequence = 0;  ///< per connection, from 1
  std::uint32_t tick = 0;      ///< server tick
  std::uint64_t echo_client_time_us = 0;  ///< the newest Input.client_time_us the server had (RTT)
  std::uint32_t total_agents = 0;         ///< in the world, tracked or not
  std::uint64_t rebuilds = 0;
  std::uint32_t wave = 0;  ///< comings of the server's wave table started so far
  std::vector<protocol::PlayerState> players;
  /// Tracked agents, sorted by id. Agents this snapshot did not update (the server's budget
  /// went to others) stand where the shared velocity predictor puts them at `tick`.
  std::vector<RenderAgent> agents;
  std::size_t updated = 0;  ///< agents whose values this snapshot carried
  /// Untracked agents in the view, by square of 2^cell_log2 map cells (empty: none sent).
  protocol::DensityGrid density;
  float cell_size = 1.0f;  ///< world units per map cell (the density grid's unit)
  /// Agents this snapshot removed because they died (killed), where the client last had them;
  /// each death appears in one snapshot only (SnapshotReceiver::deaths).
  std::vector<RenderAgent> deaths;
};

/// Fills `out` from a decoded header and frame and the agents it removed as deaths
/// (SnapshotReceiver::deaths); `cell_size` is the map's (Welcome.map).
void unpack_frame(const protocol::SnapshotHeader& header, const protocol::AgentFrame& frame, float cell_size,
                  SnapshotState& out, std::span<const protocol::AgentState> deaths = {});

/// Lower bound of the agents the density grid stands for: the sum over its squares of
/// protocol::density_level_floor (levels are log2 buckets of the counts).
[[nodiscard]] std::uint64_t density_agents_floor(const protocol::DensityGrid& grid) noexcept;

}  // namespace swarmfield::client
