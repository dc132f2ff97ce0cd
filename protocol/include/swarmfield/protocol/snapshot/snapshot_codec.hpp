#pragma once
// The delta snapshot codec: byte buffers in and out, no sockets, no clocks. A snapshot turns the
// client's baseline frame (the newest one it acknowledged, or the empty frame) into the next
// frame: agents removed, agents kept (updated with new values, or left as they were), agents
// added, all by merging two id-sorted lists, as Quake III's SV_EmitPacketEntities merges the old
// and new entity lists. Updated agents send only what the velocity predictor got wrong
// (agent_prediction.hpp), entropy-coded with rANS (rans_coder.hpp) under a context of the
// agent's speed. The wire layout is in protocol/SNAPSHOTS.md.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/protocol/snapshot/agent_frame.hpp"
#include "swarmfield/protocol/snapshot/agent_prediction.hpp"
#include "swarmfield/protocol/snapshot/bit_stream.hpp"
#include "swarmfield/protocol/snapshot/density_grid.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/snapshot/rans_coder.hpp"

namespace swarmfield::protocol {

/// First byte of every delta snapshot payload (format 1).
/// 0xD1 before players carried health and kills; 0xD2 before the wave, the players' shots,
/// score and aim, and the death flags of removed agents; 0xD3 before the precision shift; 0xD4
/// before the position symbols in the velocity's frame and four speed classes.
inline constexpr std::uint8_t kSnapshotFormat = 0xD5;
/// Fixed bytes before the players: format, flags, sequence, tick, baseline distance, echo time,
/// total agents, rebuilds, wave, player count.
inline constexpr std::size_t kSnapshotHeaderBytes = 36;
inline constexpr std::size_t kSnapshotPlayerBytes = 37;
/// Players a delta snapshot carries at most (their count travels in a byte).
inline constexpr std::size_t kMaxSnapshotPlayers = 255;

/// What a snapshot says besides the agents.
struct SnapshotHeader {
  std::uint32_t sequence = 0;           ///< per client, from 1, +1 per snapshot sent
  std::uint32_t tick = 0;               ///< world tick
  std::uint32_t baseline_distance = 0;  ///< 0 = full (empty baseline), else the baseline is sequence - this (<= 32)
  bool predicted = true;                ///< residuals against the velocity predictor (else against the baseline)
  /// Updated agents' positions in steps of 2^precision_shift position units (0..kMaxPrecisionShift,
  /// agent_prediction.hpp): a view that shows a cell in a few pixels needs no 1/64 cell (see
  /// view_precision_shift). Added agents are always exact.
  std::uint8_t precision_shift = 0;
  std::uint64_t echo_client_time_us = 0;
  std::uint32_t total_agents = 0;       ///< in the world
  std::uint64_t rebuilds = 0;
  std::uint32_t wave = 0;               ///< comings of the server's wave table started so far (0: none yet)
  std::vector<PlayerState> players;     ///< <= kMaxSnapshotPlayers, positions in world units

  friend bool operator==(const SnapshotHeader&, const SnapshotHeader&) = default;
};

/// The precision shift for a view `extent_cells` cells across (its larger side): the largest s
/// <= kMaxPrecisionShift with 2^s position units (2^s / 64 cell) at most extent / 2048 cells,
/// i.e. steps of half a pixel when the view fills 1024 pixels (a position within a quarter
/// pixel of the truth): 0 below 64 cells (exact), 1 for 64..128 (a follow camera with its
/// margin: 1/32 cell), 3 for a whole 256-cell map (1/8 cell), 4 from 512 cells (1/4 cell).
/// Non-finite or non-positive extents give 0.
[[nodiscard]] std::uint8_t view_precision_shift(float extent_cells) noexcept;

/// One agent the server wants the client to have after this snapshot: quantized values
/// (agent_frame.hpp) and a send flag: 1 = send its current values (update or add), 0 = leave it
/// as the baseline has it (or, if the baseline lacks it, do not add it yet).
struct AgentCandidate {
  std::uint32_t id = 0;
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint8_t heading = 0;
  std::uint8_t kind = 0;
  std::uint8_t send = 1;

  friend bool operator==(const AgentCandidate&, const AgentCandidate&) = default;
};
/// The candidates of one snapshot, sorted by id (strictly increasing). Baseline agents missing
/// here are removed.
using AgentCandidates = std::vector<AgentCandidate>;

/// Candidates and their send flags apart (SnapshotSelector::choose): the list, sorted by id
/// (its own send fields are ignored), and one flag per candidate (non-zero: send). So a list
/// shared by several clients (a view's tracked agents) is encoded for each without a copy.
struct CandidateSelection {
  std::span<const AgentCandidate> candidates;
  std::span<const std::uint8_t> send;
  /// The candidates are known to pass candidates_valid() (a view's tracked list is checked once
  /// when computed, not once per client): the encoder skips its own check.
  bool checked = false;
};

/// Whether candidates are strictly increasing by id with coordinates <= kPositionMax (what
/// SnapshotEncoder::encode requires of them).
[[nodiscard]] bool candidates_valid(std::span<const AgentCandidate> candidates) noexcept;

/// Counts of what one encode did (for budgets, summaries and benchmarks).
struct SnapshotEncodeStats {
  std::size_t removed = 0;
  std::size_t died = 0;      ///< removed agents flagged as deaths
  std::size_t updated = 0;   ///< kept agents sent with new values
  std::size_t stale = 0;     ///< kept agents left as the baseline had them
  std::size_t added = 0;
  std::size_t moving = 0;    ///< updated agents whose position or heading changed
  std::size_t header_bytes = 0;
  std::size_t bit_bytes = 0;   ///< structure, tables, escapes, grid
  std::size_t rans_bytes = 0;  ///< residual symbols
  std::size_t grid_bits = 0;
  std::size_t added_bits = 0;   ///< the added agents' section of the bit section
  std::size_t escape_bits = 0;  ///< escaped residuals (part of the updated agents' cost)
};

/// Encodes snapshots; holds scratch memory reused across calls (one per thread).
class SnapshotEncoder {
 public:
  /// Encodes `header` and the step from `baseline` (AgentFrameView::empty() for a full snapshot;
  /// otherwise its sequence must be header.sequence - header.baseline_distance) to the frame
  /// described by `candidates` and `grid` (the untracked agents' density; empty = none).
  /// Writes the payload into `payload` and the resulting frame (what the client will hold) into
  /// `frame`. Candidates must be sorted by id with coordinates <= kPositionMax and at most
  /// kMaxFrameAgents agents may result; players beyond kMaxSnapshotPlayers are dropped.
  /// Returns false (nothing usable written) if the inputs break these rules.
  bool encode(const SnapshotHeader& header, const AgentFrameView& baseline, const AgentCandidates& candidates,
              const DensityGrid& grid, std::vector<std::uint8_t>& payload, AgentFrame& frame);
  /// The same, writing the resulting frame's agents to `frame_agents` and their count to
  /// `frame_size` (the frame's sequence and tick are the header's, its grid is `grid`): so a
  /// sender can encode straight into its history (SnapshotHistory::reserve) instead of copying
  /// each frame there. `frame_agents` needs room for baseline.size() + candidates.size()
  /// entries (false otherwise); only entries [0, frame_size) are written, in order.
  bool encode(const SnapshotHeader& header, const AgentFrameView& baseline, const AgentCandidates& candidates,
              const DensityGrid& grid, std::vector<std::uint8_t>& payload, std::span<AgentState> frame_agents,
              std::size_t& frame_size);
  /// The same with the send flags apart from the candidates (same payload and frame as the
  /// candidates with those flags). False also if the two spans differ in length.
  bool encode(const SnapshotHeader& header, const AgentFrameView& baseline, const CandidateSelection& selection,
              const DensityGrid& grid, std::vector<std::uint8_t>& payload, std::span<AgentState> frame_agents,
              std::size_t& frame_size);
  /// The same into an AgentFrame.
  bool encode(const SnapshotHeader& header, const AgentFrameView& baseline, const CandidateSelection& selection,
              const DensityGrid& grid, std::vector<std::uint8_t>& payload, AgentFrame& frame);
  [[nodiscard]] const SnapshotEncodeStats& stats() const noexcept { return stats_; }
  /// Ids of agents that died (were killed) recently, sorted strictly increasing; a superset is
  /// fine. Each later encode() flags the removed agents whose id is in it as deaths, so the
  /// client can tell a death from an agent leaving its view. The span must stay valid until
  /// the last encode() that uses it; an empty span (the default) flags nothing. Because ids
  /// are never reused and a snapshot is a delta against a frame the client holds, a death
  /// reaches the client once per lineage of frames: a lost snapshot's deaths are flagged again
  /// in the next one, which removes them from an older baseline (events with acks, for free).
  void set_recent_deaths(std::span<const std::uint32_t> sorted_ids) noexcept { recent_deaths_ = sorted_ids; }

 private:
  struct Escape {
    std::uint32_t value;
    std::uint8_t kind;  // 0: signed EG2 residual, 1: raw 8-bit heading
  };
  // encode()'s steps (snapshot_encoder.cpp), one per section of protocol/SNAPSHOTS.md.
  struct Merged {
    std::size_t written = 0;  // frame entries
    std::size_t updated = 0;  // kept agents sent with new values (one residual symbol each)
    std::size_t kept = 0;     // in both the baseline and the candidates
    std::size_t moving = 0;   // updated agents whose position or heading changed
    std::size_t stale = 0;    // kept agents not sent
  };
  // The encode into an AgentFrame, for either kind of candidates (`count` of them).
  template <class Candidates>
  bool encode_into_frame(const SnapshotHeader& header, const AgentFrameView& baseline, const Candidates& candidates,
                         std::size_t count, const DensityGrid& grid, std::vector<std::uint8_t>& payload,
                         AgentFrame& frame);
  // Send flags: in the candidates (Stride = sizeof(AgentCandidate)) or apart (Stride = 1).
  template <std::size_t Stride>
  bool encode_impl(const SnapshotHeader& header, const AgentFrameView& baseline,
                   std::span<const AgentCandidate> candidates, const std::uint8_t* send, bool checked,
                   const DensityGrid& grid,
                   std::vector<std::uint8_t>& payload, std::span<AgentState> frame_agents, std::size_t& frame_size);
  template <std::size_t Stride>
  Merged merge(const AgentFrameView& baseline, std::span<const AgentCandidate> candidates, const std::uint8_t* send,
               std::uint32_t tick, bool predicted, unsigned shift, AgentState* out);
  void write_header(const SnapshotHeader& header, bool has_grid, std::vector<std::uint8_t>& payload);
  void write_removed(const AgentFrameView& baseline);
  void write_kept_runs(std::size_t kept);
  void write_added(std::span<const AgentCandidate> candidates);
  void write_kind_changes();
  bool write_tables(std::size_t updated);  // false if a table cannot be built
  void write_escapes();
  void write_residual_streams(std::size_t updated, std::vector<std::uint8_t>& payload);
  SnapshotEncodeStats stats_;
  BitWriter bits_;
  RansEncoder rans_;       // position symbols
  RansEncoder rans_head_;  // heading symbols
  std::vector<std::uint32_t> removed_;    // baseline indices
  std::vector<std::uint32_t> died_;       // positions in removed_ of agents in recent_deaths_
  std::span<const std::uint32_t> recent_deaths_;
  std::vector<std::uint32_t> runs_;       // alternating updated / stale runs over kept agents
  std::vector<std::uint8_t> kept_key_;    // per kept agent (id order): run_order_key
  std::vector<std::uint8_t> kept_flag_;   // per kept agent (id order): 1 = updated
  std::vector<std::uint8_t> aged_flag_;   // the flags in section 3's order
  std::vector<std::uint32_t> added_;      // candidate indices
  std::vector<std::uint32_t> kind_changes_;  // updated-agent index
  std::vector<std::uint8_t> kind_values_;
  std::vector<std::uint32_t> symbols_;   // per updated agent: position | heading << 8 | context << 16
  std::vector<Escape> escapes_;
  std::array<RansTable, kSpeedClasses> pos_tables_, head_tables_;
};

/// Fields read from a payload before decoding it, to find its baseline.
struct SnapshotPrelude {
  std::uint32_t sequence = 0;
  std::uint32_t tick = 0;
  std::uint32_t baseline_distance = 0;
};

/// Reads the fixed first bytes of a payload. False if it is too short or not a format-1
/// snapshot, or the baseline distance exceeds kSnapshotHistorySize.
[[nodiscard]] bool read_snapshot_prelude(std::span<const std::uint8_t> payload, SnapshotPrelude& out) noexcept;

/// Rewrites the echoed client time in an encoded payload (the header's fixed bytes), so that one
/// encoding can be sent to several clients each with its own echo (a shared spectator stream).
/// False, payload untouched, if it is not a snapshot (read_snapshot_prelude).
bool set_snapshot_echo(std::span<std::uint8_t> payload, std::uint64_t echo_client_time_us) noexcept;

/// Decodes snapshots; holds scratch memory reused across calls.
class SnapshotDecoder {
 public:
  /// Decodes `payload` against `baseline` (the frame of sequence - baseline_distance; the empty
  /// view for a full snapshot) into `header` and `frame`. Every field is range-checked: false
  /// with `error` (a short sentence) on a wrong baseline, counts or indices out of range, ids
  /// not increasing or colliding with the baseline's, positions outside [0, kPositionMax],
  /// more than kMaxFrameAgents agents, invalid tables, non-finite player positions, truncated
  /// or trailing data. `frame` is unspecified after a failure.
  bool decode(std::span<const std::uint8_t> payload, const AgentFrameView& baseline, SnapshotHeader& header,
              AgentFrame& frame, std::string* error = nullptr);
  /// The agents the last successful decode() removed as deaths, as the baseline held them (their
  /// last position, heading and kind), in id order. Unspecified after a failed decode.
  [[nodiscard]] const std::vector<AgentState>& deaths() const noexcept { return deaths_; }

 private:
  // decode()'s steps (snapshot_decoder.cpp), one per section of protocol/SNAPSHOTS.md: each
  // checks what it reads, false with `error` set on the first fault.
  bool read_header(std::span<const std::uint8_t> payload, const SnapshotPrelude& prelude, std::uint8_t flags,
                   SnapshotHeader& header, std::size_t& at, std::string* error);
  bool read_removed(BitReader& in, const AgentFrameView& baseline, std::string* error);
  bool read_kept_runs(BitReader& in, const AgentFrameView& baseline, std::uint32_t tick, std::size_t kept,
                      std::size_t& updated, std::string* error);
  bool read_added(BitReader& in, std::size_t kept, std::uint32_t tick, std::string* error);
  bool read_kind_changes(BitReader& in, std::size_t updated, std::string* error);
  bool read_tables(BitReader& in, std::string* error);
  bool merge(BitReader& in, RansDecoder& rans, RansDecoder& rans_head, const AgentFrameView& baseline,
             const SnapshotHeader& header, AgentFrame& frame, std::string* error);

  std::vector<std::uint32_t> removed_;
  std::vector<std::uint32_t> died_;  // positions in removed_ of the deaths
  std::vector<AgentState> deaths_;
  std::vector<std::uint8_t> kept_updated_;  // per kept agent, id order
  std::vector<std::uint8_t> aged_updated_;  // the same in section 3's order (run_order_key)
  std::vector<std::uint8_t> kept_key_;      // per kept agent, id order: run_order_key
  std::vector<AgentState> added_;
  std::vector<std::uint32_t> kind_changes_;
  std::vector<std::uint8_t> kind_values_;
  std::array<RansTable, kSpeedClasses> pos_tables_, head_tables_;
  std::array<bool, kSpeedClasses> have_table_{};
};

}  // namespace swarmfield::protocol
