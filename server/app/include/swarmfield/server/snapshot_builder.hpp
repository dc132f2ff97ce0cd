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
/// the relevances of the view rectangles asked for in that tick, shared between clients.
///
/// Sharing rule (issue 22, item 4: the work must not grow with how the clients' rectangles
/// differ, or 60 viewers one cell apart cost 60 relevances where 60 alike cost one):
///  1. A client's rectangle (view + margin, quantized) is clipped to the map and snapped outward
///     to a grid whose step grows with its size (protocol::snap_view: 1/16 to 1/8 of its
///     extent, at least a 16-cell tile), and every client whose rectangle snaps to the same one
///     shares its relevance. Each client takes from it the agents of its own rectangle, each
///     edge that snapped to the map's border taken to the border (sent_area(): SnapshotSelector
///     ::select with that rectangle). So a view inside the map receives what it would with a
///     relevance of its own (the cap, beyond 16384 agents in view, the nearness weights and
///     the density grid aside: those are the snapped rectangle's), and one within a step of
///     the border also the agents between it and the border: rectangles that differ near the
///     border (whole-map views a few cells apart) get the same agents, not only the same
///     relevance (each in-map edge costs its client the agents crossing it).
///  2. A hard bound: once the tick's relevances have done kRelevanceWorkPerTick x (agents +
///     tiles) of work (relevance_work(): agents inside, tiles visited), or kMaxRelevancesPerTick
///     were computed, no new one is: a client whose snapped rectangle is not among them takes
///     the computed relevance that covers its sent_area() best (the smallest that contains it,
///     else the one sharing the largest area with it; ties go to the earliest) and receives the
///     part of its view that relevance covers. So no set of rectangles makes a tick's relevance
///     work exceed (kRelevanceWorkPerTick + 1) x (agents + tiles); clients' views that do not
///     overlap never come near it (together they hold each agent and tile at most once).
/// Deterministic: the outcome depends only on the rectangles and the order of the requests.
/// (Measured before the rule: 2.5 ms of the 3.1 ms a 100k-agent whole-map snapshot cost per
/// client was the relevance; 60 whole-map viewers one cell apart made the snapshot phase 2.7x
/// that of 60 alike.)
struct SnapshotWorldState {
  /// Relevance work per tick, in units of the world's agents + tiles (see the sharing rule).
  static constexpr std::size_t kRelevanceWorkPerTick = 8;
  /// Relevances computed per tick at most, however few agents each visits. Bounds the lookups
  /// and the memory the relevances keep across ticks: each holds its tracked agents (at most
  /// max_tracked x 25 bytes, 410 kB, plus a 16 kB grid), the O(world) working memory is one
  /// shared RelevanceScratch, so 64 of them stay under 28 MB whatever rectangles clients pick.
  static constexpr std::size_t kMaxRelevancesPerTick = 64;

  protocol::QuantizedAgents agents;            ///< every agent, quantized, by id, tile-indexed
  std::vector<protocol::PlayerState> players;  ///< by id, at most protocol::kMaxSnapshotPlayers
  std::uint32_t tick = 0;
  std::uint64_t rebuilds = 0;
  float cell_size = 1.0f;  ///< world units per map cell (the quantization's unit)
  std::uint32_t wave = 0;  ///< comings of the wave table started (set by the server after assign)
  /// Ids of agents killed recently, sorted (RecentDeaths; set by the server after assign): the
  /// snapshots flag the removed agents among them as deaths.
  std::vector<std::uint32_t> recent_deaths;
  /// The map in position units (1/64 cell), one cell more on the far sides (a position rounds
  /// up to width x 64 at the border), where every agent lies: set by assign(World) and
  /// set_map_size(); empty (assign(arrays) alone) = unknown: rectangles are not clipped.
  protocol::QuantizedRect map_bounds;

  /// From arrays (tests, benchmarks): players sorted by id and cut to kMaxSnapshotPlayers.
  void assign(const AgentArrays& arrays, std::span<const sim::Player> world_players, std::uint32_t world_tick,
              std::uint64_t rebuild_count, float map_cell_size);
  /// From a World: its swarm (kinds included), players, tick, rebuild count and map size.
  void assign(const sim::World& world);
  /// map_bounds for a map of `width` x `height` cells (tests and benchmarks that assign arrays).
  void set_map_size(std::int32_t width_cells, std::int32_t height_cells) noexcept;
  /// The relevance shared by a client whose rectangle (view + margin, quantized) is `view`, with
  /// `params`, for this tick's agents, by the sharing rule above: that of snap_view(view)
  /// (computed on the first request since assign(), then shared) or, past the bound, the
  /// computed one that covers sent_area(view) best. Its rectangle contains sent_area(view)
  /// except past the bound.
  /// Valid until the next assign(). Not thread-safe while it computes; once every view of the
  /// tick was asked for (ClientSnapshotStream::prepare), later calls with those views only look
  /// up (past the bound nothing is computed any more, so the same choice is made again) and may
  /// run on several threads.
  const protocol::ViewRelevance& relevance(const protocol::QuantizedRect& view, const protocol::RelevanceParams& params);
  /// What a client whose rectangle is `view` takes from its relevance (rule 1): `view`, each
  /// edge whose snapped rectangle reaches map_bounds moved to the snapped (border) edge; inside
  /// snap_view(view); `view` itself while map_bounds is unknown.
  [[nodiscard]] protocol::QuantizedRect sent_area(const protocol::QuantizedRect& view) const noexcept;
  /// Relevances computed since assign() (distinct snapped rectangles, at most kMaxRelevancesPerTick).
  [[nodiscard]] std::size_t relevances_computed() const noexcept { return relevances_used_; }
  /// Work of the relevances computed since assign(), as the bound counts it: the agents inside
  /// their rectangles plus the tiles (QuantizedAgents' index) they visited.
  [[nodiscard]] std::size_t relevance_work() const noexcept { return work_; }

 private:
  std::vector<std::unique_ptr<protocol::ViewRelevance>> relevances_;  // [0, relevances_used_) are this tick's
  std::size_t relevances_used_ = 0;
  std::vector<float> shown_xs_, shown_ys_;  // assign(World)'s positions to show (Swarm::shown_positions)
  std::size_t work_ = 0;
  protocol::RelevanceScratch scratch_;  // shared by this tick's computations (they run one at a time)

  [[nodiscard]] const protocol::ViewRelevance& best_cover(const protocol::QuantizedRect& view) const noexcept;
  [[nodiscard]] std::size_t tiles_overlapped(const protocol::QuantizedRect& r) const noexcept;
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
  /// Updated agents' positions at the precision the view needs (protocol::view_precision_shift
  /// of its extent within the map: exact below 64 cells, 1/32 cell for a follow camera of 64..128,
  /// 1/8 cell for a whole 256-cell map, 1/4 cell from 512 cells); false: always exact (1/64 cell).
  bool view_precision = true;
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
  /// Replaces the acknowledgements (SnapshotSender::set_acks): a stream shared over UDP.
  void set_acks(const protocol::SnapshotAck& acks) noexcept { sender_.set_acks(acks); }
  /// TCP (true: every snapshot is delivered, the next is a delta against it) or UDP (false).
  void set_reliable(bool reliable) noexcept { sender_.set_reliable(reliable); }
  /// Starts the stream over (SnapshotSender::restart): the next snapshot is full, numbered
  /// `next_sequence`. For a client that decoded another stream meanwhile.
  void restart(std::uint32_t next_sequence) noexcept { sender_.restart(next_sequence); }
  /// Sequence the next snapshot will carry.
  [[nodiscard]] std::uint32_t next_sequence() const noexcept { return sender_.next_sequence(); }
  /// The area (position units) this client's snapshots cover for `view`: its rectangle with
  /// the margin, edges near the map's border taken to the border (SnapshotWorldState::sent_area).
  /// Two clients with the same area are sent the same agents by the same rules: whole-map views
  /// from windows of any shape have one area.
  [[nodiscard]] protocol::QuantizedRect sent_area(const SnapshotWorldState& world, const ViewRect& view) const noexcept {
    return world.sent_area(area(world, view));
  }

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
  protocol::DensityGrid grid_;
  protocol::SnapshotHeader header_;
  std::size_t last_grid_bytes_ = 0;

  [[nodiscard]] protocol::QuantizedRect area(const SnapshotWorldState& world, const ViewRect& view) const noexcept;
  [[nodiscard]] protocol::RelevanceParams relevance_params() const noexcept;
};

/// The kind table as Welcome carries it (name, radius, colour; at most protocol::kMaxKinds).
[[nodiscard]] std::vector<protocol::KindInfo> kind_infos(std::span<const sim::AgentKind> kinds);

}  // namespace swarmfield::server
