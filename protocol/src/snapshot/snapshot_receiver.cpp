// Client side of the snapshot stream (see snapshot_receiver.hpp).
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"

#include <algorithm>
#include <utility>

namespace swarmfield::protocol {

SnapshotReceiver::SnapshotReceiver(std::size_t history_agents) : history_(history_agents) {}

void SnapshotReceiver::reset() noexcept {
  history_.clear();
  frame_.clear();
  frame_.sequence = 0;
  frame_.tick = 0;
  header_ = {};
  deaths_.clear();
  ack_ = {};
}

SnapshotReceiver::Result SnapshotReceiver::receive(std::span<const std::uint8_t> payload, std::string* error) {
  SnapshotPrelude prelude;
  if (!read_snapshot_prelude(payload, prelude)) {
    if (error) *error = "not a snapshot, or baseline distance out of range";
    return Result::kMalformed;
  }
  if (prelude.sequence == 0) {
    if (error) *error = "snapshot sequence 0";
    return Result::kMalformed;
  }
  if (ack_.latest != 0 && prelude.sequence <= ack_.latest) return Result::kStale;
  AgentFrameView baseline = AgentFrameView::empty();
  if (prelude.baseline_distance != 0) {
    const auto found = history_.find(prelude.sequence - prelude.baseline_distance);
    if (!found) {
      if (error) *error = "baseline not held";
      return Result::kNoBaseline;
    }
    baseline = *found;
  }
  if (!decoder_.decode(payload, baseline, scratch_header_, scratch_, error)) return Result::kMalformed;
  // The baseline may be older than the frame held now (the server had not yet seen our ack), so
  // a death may be flagged again: report only agents the frame held now still has alive.
  deaths_.clear();
  for (const AgentState& dead : decoder_.deaths()) {
    const auto it = std::lower_bound(frame_.agents.begin(), frame_.agents.end(), dead.id,
                                     [](const AgentState& a, std::uint32_t id) { return a.id < id; });
    if (it != frame_.agents.end() && it->id == dead.id) deaths_.push_back(dead);
  }
  std::swap(frame_, scratch_);
  std::swap(header_, scratch_header_);
  history_.store(frame_);
  ack_.add(header_.sequence);
  return Result::kDecoded;
}

}  // namespace swarmfield::protocol
