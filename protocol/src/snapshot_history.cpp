// Frames of the last snapshots in a fixed circular pool (see snapshot_history.hpp).
#include "swarmfield/protocol/snapshot_history.hpp"

#include <algorithm>

namespace swarmfield::protocol {

SnapshotHistory::SnapshotHistory(std::size_t pool_agents) : capacity_(std::max<std::size_t>(pool_agents, 1)) {}

void SnapshotHistory::clear() noexcept {
  for (Slot& s : slots_) {
    s.used = false;
    s.grid.clear();
  }
}

bool SnapshotHistory::store(const AgentFrame& f) {
  const std::size_t n = f.agents.size();
  if (n > capacity_) return false;
  // Keep every frame contiguous: skip to the front of the pool when it would straddle the end.
  std::size_t at = static_cast<std::size_t>(head_ % capacity_);
  if (at + n > capacity_) {
    head_ += capacity_ - at;
    at = 0;
  }
  // The pool grows to its capacity only as frames fill it, so a client that is sent few agents
  // (or none: a server's idle sessions) costs little; once the head has wrapped it never grows.
  if (pool_.size() < at + n) pool_.resize(std::min(capacity_, std::max(at + n, 2 * pool_.size())));
  std::copy_n(f.agents.data(), n, pool_.data() + at);
  Slot& slot = slots_[f.sequence % kSnapshotHistorySize];
  slot.used = true;
  slot.sequence = f.sequence;
  slot.tick = f.tick;
  slot.begin = head_;
  slot.size = n;
  slot.grid = f.grid;  // reuses the slot's level buffer once warm
  head_ += n;
  return true;
}

std::optional<AgentFrameView> SnapshotHistory::find(std::uint32_t sequence) const noexcept {
  const Slot& slot = slots_[sequence % kSnapshotHistorySize];
  if (!slot.used || slot.sequence != sequence) return std::nullopt;
  // Entry at address a is overwritten once head_ passes a + capacity_.
  if (head_ > slot.begin + capacity_) return std::nullopt;
  const auto at = static_cast<std::size_t>(slot.begin % capacity_);
  AgentFrameView v;
  v.sequence = slot.sequence;
  v.tick = slot.tick;
  v.agents = std::span<const AgentState>(pool_.data() + at, slot.size);
  v.grid = &slot.grid;
  return v;
}

}  // namespace swarmfield::protocol
