// Frames of the last snapshots in a fixed circular pool (see snapshot_history.hpp).
#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

#include <algorithm>
#include <functional>

namespace swarmfield::protocol {

SnapshotHistory::SnapshotHistory(std::size_t pool_agents, HistoryPool pool)
    : capacity_(std::max<std::size_t>(pool_agents, 1)), fixed_(pool == HistoryPool::kFixed) {}

void SnapshotHistory::clear() noexcept {
  for (Slot& s : slots_) {
    s.used = false;
    s.grid.clear();
  }
}

std::uint64_t SnapshotHistory::ring_begin(std::size_t n) const noexcept {
  // Keep every frame contiguous in the ring: skip to its front when it would straddle the end.
  const std::size_t at = static_cast<std::size_t>(head_ % capacity_);
  return at + n > capacity_ ? head_ + (capacity_ - at) : head_;
}

bool SnapshotHistory::available(const Slot& slot) const noexcept {
  // In the ring, an entry at address a is overwritten once head_ passes a + capacity_.
  return slot.used && head_ <= slot.begin + capacity_;
}

std::size_t SnapshotHistory::place(std::size_t n, std::uint64_t head_after) const noexcept {
  // Frames still available once the ring's head is at head_after: the ones the new frame must
  // not overwrite. The others are overwritten in the ring too, so their memory is free.
  const auto live = [&](const Slot& s) { return s.used && s.size > 0 && head_after <= s.begin + capacity_; };
  std::size_t top = 0;  // past the last live frame in pool_
  const auto clear_at = [&](std::size_t at) {
    if (at + n > pool_.size()) return false;
    for (const Slot& s : slots_) {
      if (live(s) && at < s.at + s.size && s.at < at + n) return false;
    }
    return true;
  };
  for (const Slot& s : slots_) {
    if (live(s)) top = std::max(top, s.at + s.size);
  }
  if (clear_at(pool_head_)) return pool_head_;
  if (clear_at(0)) return 0;
  return top;  // clear of everything available; may need the pool to grow
}

std::size_t SnapshotHistory::slot_for(std::size_t n, std::uint64_t head_after) const noexcept {
  // Fixed pool: the ring itself. ring_begin() keeps the frame contiguous, and the entries it
  // overwrites are exactly those of frames that writing it makes unavailable (the rule of
  // available()), so no frame still available is touched. (reserve()'s room may reach past
  // what commit() records, but the encoder writes only the agents it commits.)
  if (fixed_) return static_cast<std::size_t>(ring_begin(n) % capacity_);
  return place(n, head_after);
}

bool SnapshotHistory::store(const AgentFrame& f) {
  const std::size_t n = f.agents.size();
  if (n > capacity_) return false;
  const std::size_t at = slot_for(n, ring_begin(n) + n);
  if (fixed_) {
    if (n > 0) grow_for(n);  // the whole pool with the first agents (then at + n <= its size)
  } else if (pool_.size() < at + n) {
    // Growing (doubling while below the capacity, then only as needed) keeps the pool near what
    // the available frames hold, so a client that is sent few agents costs little.
    pool_.resize(std::max(at + n, std::min(capacity_, 2 * pool_.size())));
  }
  std::copy_n(f.agents.data(), n, pool_.data() + at);
  head_ = ring_begin(n);
  record(f.sequence, f.tick, at, n, f.grid);
  return true;
}

void SnapshotHistory::record(std::uint32_t sequence, std::uint32_t tick, std::size_t at, std::size_t size,
                             const DensityGrid& grid) {
  Slot& slot = slots_[sequence % kSnapshotHistorySize];
  slot.used = true;
  slot.sequence = sequence;
  slot.tick = tick;
  slot.begin = head_;
  slot.at = at;
  slot.size = size;
  slot.grid = grid;  // reuses the slot's level buffer once warm
  head_ += size;
  pool_head_ = at + size;
}

void SnapshotHistory::grow_for(std::size_t max_agents) {
  if (max_agents == 0 || max_agents > capacity_) return;
  if (fixed_) {
    // All of it at once: resize() writes every entry, so the pages are resident from here on
    // and the process's memory does not creep up later as the client's view fills.
    if (pool_.empty()) pool_.resize(capacity_);
    return;
  }
  const std::size_t at = place(max_agents, ring_begin(max_agents));
  if (pool_.size() < at + max_agents) {
    pool_.resize(std::max(at + max_agents, std::min(capacity_, 2 * pool_.size())));
  }
}

std::span<AgentState> SnapshotHistory::reserve(std::size_t max_agents, const AgentFrameView& keep) noexcept {
  if (max_agents == 0 || max_agents > capacity_) return {};
  // The frame's size is not known yet (0..max_agents): keep clear of every frame that a frame
  // of 0 agents would leave available.
  const std::size_t at = slot_for(max_agents, ring_begin(max_agents));
  if (pool_.size() < at + max_agents) return {};  // would grow (and move every view)
  AgentState* room = pool_.data() + at;
  // place() keeps clear of every available frame; `keep` is one, checked again for safety. The
  // fixed ring keeps clear only of the frames still available after the commit, and the room
  // is written while `keep` is read: there this check is what protects the baseline.
  const AgentState* keep_begin = keep.agents.data();
  const AgentState* keep_end = keep_begin + keep.agents.size();
  const std::less<const AgentState*> before;
  if (!keep.agents.empty() && before(keep_begin, room + max_agents) && before(room, keep_end)) return {};
  reserved_ = ring_begin(max_agents);
  reserved_at_ = at;
  return {room, max_agents};
}

void SnapshotHistory::commit(std::uint32_t sequence, std::uint32_t tick, std::size_t size, const DensityGrid& grid) {
  head_ = reserved_;  // past the ring's skipped tail, if any
  record(sequence, tick, reserved_at_, size, grid);
}

std::optional<AgentFrameView> SnapshotHistory::find(std::uint32_t sequence) const noexcept {
  const Slot& slot = slots_[sequence % kSnapshotHistorySize];
  if (!available(slot) || slot.sequence != sequence) return std::nullopt;
  AgentFrameView v;
  v.sequence = slot.sequence;
  v.tick = slot.tick;
  v.agents = std::span<const AgentState>(pool_.data() + slot.at, slot.size);
  v.grid = &slot.grid;
  return v;
}

}  // namespace swarmfield::protocol
