// Frames of the last snapshots in a fixed circular pool (see snapshot_history.hpp).
#include "swarmfield/protocol/snapshot_history.hpp"

#include <algorithm>

namespace swarmfield::protocol {
SnapshotHistory::SnapshotHistory(std::size_t pool_agents) : capacity_(std::max<std::size_t>(pool_agents, 1)) {
  ids_.resize(capacity_);
  xs_.resize(capacity_);
  ys_.resize(capacity_);
  ticks_.resize(capacity_);
  headings_.resize(capacity_);
  kinds_.resize(capacity_);
  vxs_.resize(capacity_);
  vys_.resize(capacity_);
}

void SnapshotHistory::clear() noexcept {
  for (Slot& s : slots_) {
    s.used = false;
    s.grid.clear();
  }
}

bool SnapshotHistory::store(const AgentFrame& f) {
  const std::size_t n = f.ids.size();
  if (n > capacity_ || f.xs.size() != n || f.ys.size() != n || f.headings.size() != n || f.kinds.size() != n ||
      f.vxs.size() != n || f.vys.size() != n || f.ticks.size() != n) {
    return false;
  }
  // Keep every frame contiguous: skip to the front of the pool when it would straddle the end.
  std::size_t at = static_cast<std::size_t>(head_ % capacity_);
  if (at + n > capacity_) {
    head_ += capacity_ - at;
    at = 0;
  }
  std::copy_n(f.ids.data(), n, ids_.data() + at);
  std::copy_n(f.xs.data(), n, xs_.data() + at);
  std::copy_n(f.ys.data(), n, ys_.data() + at);
  std::copy_n(f.headings.data(), n, headings_.data() + at);
  std::copy_n(f.kinds.data(), n, kinds_.data() + at);
  std::copy_n(f.vxs.data(), n, vxs_.data() + at);
  std::copy_n(f.vys.data(), n, vys_.data() + at);
  std::copy_n(f.ticks.data(), n, ticks_.data() + at);
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
  v.size = slot.size;
  v.ids = ids_.data() + at;
  v.xs = xs_.data() + at;
  v.ys = ys_.data() + at;
  v.headings = headings_.data() + at;
  v.kinds = kinds_.data() + at;
  v.vxs = vxs_.data() + at;
  v.vys = vys_.data() + at;
  v.ticks = ticks_.data() + at;
  v.grid = &slot.grid;
  return v;
}

}  // namespace swarmfield::protocol
