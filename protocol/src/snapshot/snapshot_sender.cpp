// Server side of a client's snapshot stream (see snapshot_sender.hpp).
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"

namespace swarmfield::protocol {

SnapshotSender::SnapshotSender(std::size_t history_agents, bool reliable, HistoryPool pool)
    : history_(history_agents, pool), reliable_(reliable) {}

bool SnapshotSender::on_ack(const SnapshotAck& ack) noexcept {
  if (ack.latest == 0) return true;
  if (ack.latest >= next_sequence_) return false;  // never sent: a confused or hostile client
  acked_.merge(ack);  // into what we know; older acks only add bits
  if (acked_.latest > newest_acked_) newest_acked_ = acked_.latest;
  return true;
}

void SnapshotSender::set_acks(const SnapshotAck& acks) noexcept {
  acked_ = SnapshotAck{};
  acked_.merge(acks, 1, next_sequence_);
  newest_acked_ = acked_.latest;
}

void SnapshotSender::restart(std::uint32_t next_sequence) noexcept {
  history_.clear();
  acked_ = SnapshotAck{};
  newest_acked_ = 0;
  next_sequence_ = next_sequence == 0 ? 1 : next_sequence;
  frame_.clear();
  frame_in_history_ = false;
}

const AgentFrame& SnapshotSender::last_frame() const {
  if (frame_in_history_) {
    if (const auto v = history_.find(next_sequence_ - 1)) v->copy_to(frame_);
    frame_in_history_ = false;
  }
  return frame_;
}

AgentFrameView SnapshotSender::next_baseline() const noexcept {
  // Newest acknowledged frame still held and within the wire's baseline distance.
  for (std::uint32_t back = 0; back < kSnapshotHistorySize && back < acked_.latest; ++back) {
    const std::uint32_t s = acked_.latest - back;
    if (next_sequence_ - s > kSnapshotHistorySize) break;
    if (!acked_.has(s)) continue;
    if (auto v = history_.find(s)) return *v;
  }
  return AgentFrameView::empty();
}

bool SnapshotSender::encode(SnapshotHeader& header, const AgentCandidates& candidates, const DensityGrid& grid,
                            std::vector<std::uint8_t>& payload) {
  return encode_any(header, candidates, candidates.size(), grid, payload);
}

bool SnapshotSender::encode(SnapshotHeader& header, const CandidateSelection& selection, const DensityGrid& grid,
                            std::vector<std::uint8_t>& payload) {
  return encode_any(header, selection, selection.candidates.size(), grid, payload);
}

template <class Candidates>
bool SnapshotSender::encode_any(SnapshotHeader& header, const Candidates& candidates, std::size_t count,
                                const DensityGrid& grid, std::vector<std::uint8_t>& payload) {
  if (next_sequence_ > 1 && header.tick <= last_tick_) return false;
  // Room in the history for the frame before the baseline is looked up there (growing moves it).
  history_.grow_for(next_baseline().size() + count);
  const AgentFrameView baseline = next_baseline();
  header.sequence = next_sequence_;
  header.baseline_distance = baseline.sequence == 0 ? 0 : next_sequence_ - baseline.sequence;
  header.predicted = predict_;
  // Straight into the history when it has room that does not overlap the baseline (once warm,
  // always): no copy of the frame per snapshot. Else through frame_ and a copy.
  const std::size_t nb = header.baseline_distance == 0 ? 0 : baseline.size();
  const std::span<AgentState> room = history_.reserve(nb + count, baseline);
  frame_in_history_ = !room.empty();
  if (frame_in_history_) {
    std::size_t size = 0;
    if (!encoder_.encode(header, baseline, candidates, grid, payload, room, size)) {
      history_.clear();  // the room may be half written: no frame it overlapped is trustworthy
      return false;
    }
    history_.commit(header.sequence, header.tick, size, grid);
  } else {
    if (!encoder_.encode(header, baseline, candidates, grid, payload, frame_)) return false;
    if (!history_.store(frame_)) {
      // Too big to remember: send it, but it can never be a baseline.
    }
  }
  ++next_sequence_;
  last_tick_ = header.tick;
  if (reliable_) {
    acked_.add(header.sequence);
    newest_acked_ = header.sequence;
  }
  return true;
}

}  // namespace swarmfield::protocol
