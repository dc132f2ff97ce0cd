// Frames of the last snapshots in a fixed circular pool (see snapshot_history.hpp).
#include "swarmfield/protocol/snapshot_history.hpp"

#include <algorithm>
#include <functional>

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
  record(f.sequence, f.tick, n, f.grid);
  return true;
}

void SnapshotHistory::record(std::uint32_t sequence, std::uint32_t tick, std::size_t size, const DensityGrid& grid) {
  Slot& slot = slots_[sequence % kSnapshotHistorySize];
  slot.used = true;
  slot.sequence = sequence;
  slot.tick = tick;
  slot.begin = head_;
  slot.size = size;
  slot.grid = grid;  // reuses the slot's level buffer once warm
  head_ += size;
}

void SnapshotHistory::grow_for(std::size_t max_agents) {
  if (max_agents == 0 || max_agents > capacity_ || pool_.size() == capacity_) return;
  std::size_t at = static_cast<std::size_t>(head_ % capacity_);
  if (at + max_agents > capacity_) at = 0;
  // The same doubling as store(), so the pool still follows what the client is sent.
  if (pool_.size() < at + max_agents) pool_.resize(std::min(capacity_, std::max(at + max_agents, 2 * pool_.size())));
}

std::span<AgentState> SnapshotHistory::reserve(std::size_t max_agents, const AgentFrameView& keep) noexcept {
  if (max_agents == 0 || max_agents > capacity_) return {};
  // Where store() would put a frame of max_agents (contiguous, skipping the pool's tail).
  std::uint64_t begin = head_;
  std::size_t at = static_cast<std::size_t>(begin % capacity_);
  if (at + max_agents > capacity_) {
    begin += capacity_ - at;
    at = 0;
  }
  if (pool_.size() < at + max_agents) return {};  // would grow (and move every view)
  AgentState* room = pool_.data() + at;
  const AgentState* keep_begin = keep.agents.data();
  const AgentState* keep_end = keep_begin + keep.agents.size();
  const std::less<const AgentState*> before;
  if (!keep.agents.empty() && before(keep_begin, room + max_agents) && before(room, keep_end)) return {};
  reserved_ = begin;
  return {room, max_agents};
}

void SnapshotHistory::commit(std::uint32_t sequence, std::uint32_t tick, std::size_t size, const DensityGrid& grid) {
  head_ = reserved_;  // past the skipped tail, if any
  record(sequence, tick, size, grid);
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
