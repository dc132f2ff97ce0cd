#pragma once
// The client's side of its snapshot stream: decodes each payload against the frame it names as
// baseline (kept in a SnapshotHistory), keeps the newest decoded frame, and builds the
// acknowledgement the client sends back. A snapshot older than or equal to the newest decoded one
// is dropped (reordered or duplicated on the way); one whose baseline is not held (lost, or
// evicted) cannot be decoded and is dropped too: the server will use an older acknowledged
// baseline or a full snapshot.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "swarmfield/protocol/transport/snapshot_ack.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

namespace swarmfield::protocol {

class SnapshotReceiver {
 public:
  enum class Result { kDecoded, kStale, kNoBaseline, kMalformed };

  /// `history_agents`: agent entries held over the remembered frames; at least the server's.
  explicit SnapshotReceiver(std::size_t history_agents = 32 * 16384);

  /// Decodes one payload. On kDecoded, frame() and header() hold the new state and ack()
  /// includes its sequence. `error` describes kMalformed and kNoBaseline.
  Result receive(std::span<const std::uint8_t> payload, std::string* error = nullptr);

  [[nodiscard]] const AgentFrame& frame() const noexcept { return frame_; }
  [[nodiscard]] const SnapshotHeader& header() const noexcept { return header_; }
  [[nodiscard]] const SnapshotAck& ack() const noexcept { return ack_; }
  /// Agents the last decoded snapshot removed as deaths, where the client last had them
  /// (SnapshotDecoder::deaths). Each death is reported by one decoded snapshot only.
  [[nodiscard]] const std::vector<AgentState>& deaths() const noexcept { return deaths_; }
  /// Forgets everything (a new connection).
  void reset() noexcept;

 private:
  SnapshotHistory history_;
  SnapshotDecoder decoder_;
  AgentFrame frame_;
  AgentFrame scratch_;
  SnapshotHeader header_;
  SnapshotHeader scratch_header_;
  std::vector<AgentState> deaths_;
  SnapshotAck ack_;
};

}  // namespace swarmfield::protocol
