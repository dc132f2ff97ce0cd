#pragma once
// World -> delta snapshot payloads (protocol/SNAPSHOTS.md). Once per snapshot tick the world is
// quantized and indexed for every client at once (SnapshotWorldState); per client a
// ClientSnapshotStream picks what to send (view rectangle + margin, the 16,384 tracked agents
// nearest the view centre, a density grid for the rest, priority by age and nearness), keeps
// it within the client's byte budget, and encodes it against the newest frame the client
// acknowledged (UDP) or the previous snapshot (TCP). Pure: no sockets, no clocks.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/snapshot/snapshot_relevance.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"
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
  std::span<const float> headings;           ///< radians
  std::span<const std::uint8_t> kinds = {};  ///< kind index per agent; empty = all kind 0
};

/// What every client's snapshot of one tick is made from, computed once per snapshot tick, and
/// the relevance of each distinct view rectangle asked for in that tick (clients with the same
/// rectangle, e.g. every whole-map viewer, share it: measured 2.5 ms of the 3.1 ms a 100k-agent
/// whole-map snapshot cost per client).
struct SnapshotWorldState {
  protocol::QuantizedAgents agents;            ///< every agent, quantized, by id, tile-indexed
  std::vector<protocol::PlayerState> players;  ///< by id, at most protocol::kMaxSnapshotPlayers
  std::uint32_t tick = 0;
  std::uint64_t rebuilds = 0;
  float cell_size = 1.0f;  ///< world units per map cell (the quantization's unit)
  std::uint32_t wave = 0;  ///< comings of the wave table started (set by the server after assign)
  /// Ids of agents killed recently, sorted (RecentDeaths; set by the server after assign): the
  /// snapshots flag the removed agents among them as deaths.
  std::vector<std::uint32_t> recent_deaths;

  /// From arrays (tests, benchmarks): players sorted by id and cut to kMaxSnapshotPlayers.
  void assign(const AgentArrays& arrays, std::span<const sim::Player> world_players, std::uint32_t world_tick,
              std::uint64_t rebuild_count, float map_cell_size);
  /// From a World: its swarm (kinds included), players, tick and rebuild count.
  void assign(const sim::World& world);
  /// The relevance of `view` with `params` for this tick's agents: computed on the first request
  /// since assign(), then shared. Valid until the next assign(). Not thread-safe while it
  /// computes; once every view of the tick was asked for (ClientSnapshotStream::prepare), later
  /// calls only look up and may run on several threads.
  const protocol::ViewRelevance& relevance(const protocol::QuantizedRect& view, const protocol::RelevanceParams& params);
  /// Relevances computed since assign() (distinct views).
  [[nodiscard]] std::size_t relevances_computed() const noexcept { return relevances_used_; }

 private:
  std::vector<std::unique_ptr<protocol::ViewRelevance>> relevances_;  // [0, relevances_used_) are this tick's
  std::size_t relevances_used_ = 0;
};

struct ClientSnapshotParams {
  double bits_per_second = 1'000'000.0;  ///< the client's budget (> 0)
  double snapshots_per_second = 20.0;    ///< > 0
  float margin = kAoiMarginWorld;        ///< world units around the view rectangle
  std::size_t max_tracked = 16384;       ///< agents tracked individually at most
  /// Agent entries of the frame history (SnapshotSender): 4 frames of max_tracked agents
  /// (1.6 MB, taken whole, see history_pool), more frames when they are smaller. 8 x 16384 kept
  /// more old frames of a converged horde's view as baselines but cost 8 bots 25 MiB: a 1024
  /// map's server then passed its 128 MiB at 100k agents.
  std::size_t history_agents = 4 * 16384;
  /// The history's memory (history_agents x 24 bytes, 1.6 MB by default) taken whole with the
  /// client's first agents rather than as its view fills, so that a server's memory stays flat
  /// while it runs (a horde converging on a player multiplies what its snapshots carry over
  /// minutes); a client that never sees an agent costs nothing.
  protocol::HistoryPool history_pool = protocol::HistoryPool::kFixed;
};

/// One client's stream of snapshots, server side. No allocation once warm.
class ClientSnapshotStream {
 public:
  explicit ClientSnapshotStream(const ClientSnapshotParams& params);

  /// Makes sure `world` holds the relevance of this client's view (serially, before
  /// build() runs for several clients at once on a worker pool; build() calls it itself too).
  void prepare(SnapshotWorldState& world, const ViewRect& view);
  /// Encodes the next snapshot for a client looking at `view` (world units; empty = players
  /// only) into `payload`, echoing `echo_client_time_us`. False (nothing to send, nothing
  /// consumed) only if the codec refused, i.e. `world.tick` is not after the previous call's.
  /// Streams are independent: build() may run for different streams on different threads once
  /// prepare() ran for each of them this tick.
  bool build(SnapshotWorldState& world, const ViewRect& view, std::uint64_t echo_client_time_us,
             std::vector<std::uint8_t>& payload);
  /// The client's acknowledgement (Input or SnapshotAck). False for a sequence never sent.
  bool on_ack(const protocol::SnapshotAck& ack) noexcept { return sender_.on_ack(ack); }
  /// TCP (true: every snapshot is delivered, the next is a delta against it) or UDP (false).
  void set_reliable(bool reliable) noexcept { sender_.set_reliable(reliable); }

  /// Sequence of the last snapshot built (0 before the first).
  [[nodiscard]] std::uint32_t last_sequence() const noexcept { return sender_.next_sequence() - 1; }
  [[nodiscard]] const protocol::SnapshotEncodeStats& last_stats() const noexcept { return sender_.last_stats(); }
  [[nodiscard]] const protocol::RelevanceStats& last_relevance() const noexcept { return selector_.stats(); }
  [[nodiscard]] const protocol::SnapshotSender& sender() const noexcept { return sender_; }

 private:
  ClientSnapshotParams params_;
  protocol::SnapshotSender sender_;
  protocol::SnapshotSelector selector_;
  protocol::SnapshotBudget budget_;
  protocol::AgentCandidates candidates_;
  protocol::DensityGrid grid_;
  protocol::SnapshotHeader header_;
  std::size_t last_grid_bytes_ = 0;

  [[nodiscard]] protocol::QuantizedRect area(const SnapshotWorldState& world, const ViewRect& view) const noexcept;
  [[nodiscard]] protocol::RelevanceParams relevance_params() const noexcept;
};

/// The kind table as Welcome carries it (name, radius, colour; at most protocol::kMaxKinds).
[[nodiscard]] std::vector<protocol::KindInfo> kind_infos(std::span<const sim::AgentKind> kinds);

}  // namespace swarmfield::server
