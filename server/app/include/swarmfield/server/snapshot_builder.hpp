#pragma once
// World -> protocol::Snapshot for one client: every player, and the agents inside the client's
// view rectangle grown by a margin (area of interest), sorted by id, with the world's total
// agent count and the echo of the client's clock for RTT. Pure: no sockets, no clocks.
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/protocol/messages.hpp"
#include "swarmfield/server/view_rect.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::server {

/// Extra world units around a view rectangle, so agents entering the view between two
/// snapshots are already known to the client (3 u/s * a few snapshot intervals).
inline constexpr float kAoiMarginWorld = 4.0f;

/// Agent state as parallel arrays (all of equal length), e.g. from sim::Swarm.
struct AgentArrays {
  std::span<const std::uint32_t> ids;
  std::span<const float> xs;  ///< world units
  std::span<const float> ys;
  std::span<const float> headings;  ///< radians
  std::span<const std::uint8_t> kinds = {};  ///< kind index per agent; empty = all kind 0
};

struct SnapshotMeta {
  std::uint32_t tick = 0;
  std::uint64_t rebuilds = 0;
  std::uint64_t echo_client_time_us = 0;
};

/// Fills `out` (its vectors are reused: no allocation once warm). Agents whose position lies in
/// `view.grown(margin)` are included, sorted by id; an empty view includes none. When more than
/// `max_agents` qualify, the lowest ids are kept. Players (at most kMaxPlayersPerSnapshot, lowest
/// ids first) are always all included. total_agents = agents.ids.size(). Positions are
/// quantized with protocol::quantize_position / quantize_heading; kinds are copied when
/// `agents.kinds` is given (else the block's kinds are empty). `scratch` is working memory.
void build_snapshot(const AgentArrays& agents, std::span<const sim::Player> players, const ViewRect& view,
                    float margin, const SnapshotMeta& meta, std::size_t max_agents, protocol::Snapshot& out,
                    std::vector<std::uint32_t>& scratch);

/// Convenience: the same from a World (tick, rebuild count, swarm arrays and kinds, players).
void build_snapshot(const sim::World& world, const ViewRect& view, std::uint64_t echo_client_time_us,
                    std::size_t max_agents, protocol::Snapshot& out, std::vector<std::uint32_t>& scratch);

/// The kind table as Welcome carries it (name, radius, colour; at most protocol::kMaxKinds).
[[nodiscard]] std::vector<protocol::KindInfo> kind_infos(std::span<const sim::AgentKind> kinds);

}  // namespace swarmfield::server
