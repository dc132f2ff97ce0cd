// Reassembly of fragmented snapshots from UDP, with bounded memory (rules in datagram.hpp).
#include <algorithm>

#include "swarmfield/protocol/datagram.hpp"

namespace swarmfield::protocol {

void SnapshotReassembler::reset() noexcept {
  pending_.clear();
  pending_bytes_ = 0;
  newest_complete_ = 0;
  have_complete_ = false;
}

void SnapshotReassembler::erase_pending(std::size_t i) {
  pending_bytes_ -= pending_[i].bytes;
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
}

std::optional<Snapshot> SnapshotReassembler::add(const DecodedDatagram& d) {
  // Re-check everything: the datagram may have been built by hand rather than decoded.
  if (d.input || d.fragment_count == 0 || d.fragment_count > kMaxSnapshotFragments ||
      d.fragment_index >= d.fragment_count || d.fragment.empty() || d.fragment.size() > kMaxPacketBodyBytes) {
    ++dropped_;
    return std::nullopt;
  }
  const std::uint32_t tick = d.snapshot_tick;
  if (have_complete_ && tick <= newest_complete_) {  // stale: a newer snapshot is already out
    ++dropped_;
    return std::nullopt;
  }

  auto oldest_other = [&](std::uint32_t except_tick) {
    std::size_t best = pending_.size();
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (pending_[i].tick == except_tick) continue;
      if (best == pending_.size() || pending_[i].tick < pending_[best].tick) best = i;
    }
    return best;
  };

  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.tick == tick; });
  if (it != pending_.end()) {
    if (it->count != d.fragment_count) {
      ++dropped_;
      return std::nullopt;
    }
    if (!it->parts[d.fragment_index].empty()) {
      ++duplicates_;
      return std::nullopt;
    }
  } else {
    while (pending_.size() >= kMaxPendingSnapshots) {
      const std::size_t oldest = oldest_other(tick);
      if (pending_[oldest].tick > tick) {  // everything held is newer: this one loses
        ++dropped_;
        return std::nullopt;
      }
      erase_pending(oldest);
      ++abandoned_;
    }
    Pending fresh;
    fresh.tick = tick;
    fresh.count = d.fragment_count;
    fresh.parts.resize(d.fragment_count);
    pending_.push_back(std::move(fresh));
    it = pending_.end() - 1;
  }

  // Byte budget: make room by abandoning older partial snapshots, never newer ones.
  while (pending_bytes_ + d.fragment.size() > kMaxPendingSnapshotBytes) {
    const std::size_t oldest = oldest_other(tick);
    if (oldest == pending_.size() || pending_[oldest].tick > tick) {
      ++dropped_;
      if (it->received == 0) erase_pending(static_cast<std::size_t>(it - pending_.begin()));
      return std::nullopt;
    }
    const std::uint32_t keep_tick = tick;
    erase_pending(oldest);
    ++abandoned_;
    it = std::find_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.tick == keep_tick; });
  }

  it->parts[d.fragment_index] = d.fragment;
  it->bytes += d.fragment.size();
  pending_bytes_ += d.fragment.size();
  if (++it->received < it->count) return std::nullopt;

  // Complete: join, then decompress + verify. The pending entry goes either way.
  std::vector<std::uint8_t> joined;
  joined.reserve(it->bytes);
  for (const auto& part : it->parts) joined.insert(joined.end(), part.begin(), part.end());
  erase_pending(static_cast<std::size_t>(it - pending_.begin()));

  std::optional<Snapshot> snapshot = decompress_snapshot(joined);
  if (!snapshot || snapshot->tick != tick) {
    ++dropped_;
    return std::nullopt;
  }
  newest_complete_ = tick;
  have_complete_ = true;
  // Older partial snapshots can never be delivered now.
  for (std::size_t i = pending_.size(); i-- > 0;) {
    if (pending_[i].tick < tick) {
      erase_pending(i);
      ++abandoned_;
    }
  }
  return snapshot;
}

}  // namespace swarmfield::protocol
