#pragma once
// The server's side of one client's snapshot stream: sequence numbers, the history of frames
// sent, the client's acknowledgements, and the choice of baseline (the newest acknowledged frame
// still held; a full snapshot when there is none), as in Quake III's SV_WriteSnapshotToClient.
// Over a reliable transport (TCP) every snapshot counts as acknowledged when sent, so the
// baseline is simply the previous snapshot.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "swarmfield/protocol/transport/snapshot_ack.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

namespace swarmfield::protocol {

class SnapshotSender {
 public:
  /// `history_agents`: agent entries of the frame history (SnapshotHistory); `reliable`: the
  /// transport delivers every snapshot in order (TCP); `pool`: the history's memory on demand or
  /// all of it now (see HistoryPool).
  explicit SnapshotSender(std::size_t history_agents = 8 * 16384, bool reliable = false,
                          HistoryPool pool = HistoryPool::kOnDemand);

  /// Applies an acknowledgement. Ignored (returns false) when it names a sequence not sent yet.
  /// Only sequences still in the history matter; older ones are dropped silently.
  bool on_ack(const SnapshotAck& ack) noexcept;
  /// Replaces every acknowledgement so far by `acks` (sequences not sent yet are dropped). For a
  /// stream that several clients decode (server/app's shared spectator streams over UDP): the
  /// sequences all of them acknowledged (common_acks), so each can decode the next snapshot.
  void set_acks(const SnapshotAck& acks) noexcept;
  /// The frame the next snapshot will be encoded against (the empty view when it will be full).
  [[nodiscard]] AgentFrameView next_baseline() const noexcept;
  /// Encodes the next snapshot: fills header.sequence, baseline_distance and the payload, and
  /// stores the frame the client will hold. `header.tick` must increase from call to call.
  /// False if the codec refused the input (see SnapshotEncoder::encode); the sequence is not
  /// consumed then.
  bool encode(SnapshotHeader& header, const AgentCandidates& candidates, const DensityGrid& grid,
              std::vector<std::uint8_t>& payload);
  /// The same with the send flags apart from the candidates (SnapshotSelector::choose).
  bool encode(SnapshotHeader& header, const CandidateSelection& selection, const DensityGrid& grid,
              std::vector<std::uint8_t>& payload);

  /// The frame of the last encoded snapshot (what the client holds once it decodes it). A copy
  /// made on the first call after encode() (frames are encoded straight into the history), for
  /// tests and tools; valid until the next encode().
  [[nodiscard]] const AgentFrame& last_frame() const;
  [[nodiscard]] const SnapshotEncodeStats& last_stats() const noexcept { return encoder_.stats(); }
  /// Newest acknowledged sequence (0 = none).
  [[nodiscard]] std::uint32_t newest_acked() const noexcept { return newest_acked_; }
  /// Next sequence to be sent (1 before the first snapshot).
  [[nodiscard]] std::uint32_t next_sequence() const noexcept { return next_sequence_; }
  /// Switches the transport: reliable (TCP: every snapshot counts as acknowledged once encoded,
  /// so the next one is encoded against it) or not (UDP: only the client's acks count). Frames
  /// acknowledged so far stay acknowledged either way.
  void set_reliable(bool reliable) noexcept { reliable_ = reliable; }
  [[nodiscard]] bool reliable() const noexcept { return reliable_; }
  /// Starts the stream over: the history and the acknowledgements are forgotten, so the next
  /// snapshot is full (no baseline), numbered `next_sequence` (> 0; pick one above every
  /// sequence the client has decoded, or its receiver drops the snapshot as stale). For a client
  /// that decoded another stream meanwhile (a shared spectator stream, server/app).
  void restart(std::uint32_t next_sequence) noexcept;
  /// Agent entries the frame history holds in memory (SnapshotHistory::pool_allocated()).
  [[nodiscard]] std::size_t history_allocated() const noexcept { return history_.pool_allocated(); }
  /// Ids of recently killed agents for the next encodes (SnapshotEncoder::set_recent_deaths).
  void set_recent_deaths(std::span<const std::uint32_t> sorted_ids) noexcept { encoder_.set_recent_deaths(sorted_ids); }
  /// Prediction on (default) or off (for measurements; the flag travels in the header).
  void set_prediction(bool on) noexcept { predict_ = on; }

 private:
  template <class Candidates>
  bool encode_any(SnapshotHeader& header, const Candidates& candidates, std::size_t count, const DensityGrid& grid,
                  std::vector<std::uint8_t>& payload);

  SnapshotHistory history_;
  SnapshotEncoder encoder_;
  mutable AgentFrame frame_;               // the last frame when it was not encoded into history_
  mutable bool frame_in_history_ = false;  // ... else last_frame() copies it here on demand
  std::uint32_t next_sequence_ = 1;
  std::uint32_t newest_acked_ = 0;
  std::uint32_t last_tick_ = 0;
  SnapshotAck acked_;  // every sequence acknowledged so far, relative to its latest
  bool reliable_;
  bool predict_ = true;
};

}  // namespace swarmfield::protocol
