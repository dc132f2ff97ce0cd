// Snapshot fragmentation and bounded reassembly (see snapshot_fragments.hpp).
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"

#include <algorithm>
#include <cstring>

#include "byte_order.hpp"

namespace swarmfield::protocol {

static_assert(kMaxFragmentsPerSnapshot <= 255, "fragment count travels in a byte");
static_assert(kMaxFragmentsPerSnapshot % 64 == 0);

std::size_t split_snapshot(std::span<const std::uint8_t> payload, std::uint32_t sequence,
                           std::vector<std::vector<std::uint8_t>>& out) {
  if (payload.empty() || payload.size() > kMaxFragmentedSnapshotBytes) return 0;
  const std::size_t count = (payload.size() + kFragmentPayloadBytes - 1) / kFragmentPayloadBytes;
  if (out.size() < count) out.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t begin = i * kFragmentPayloadBytes;
    const std::size_t n = std::min(kFragmentPayloadBytes, payload.size() - begin);
    std::vector<std::uint8_t>& f = out[i];
    f.resize(kFragmentHeaderBytes + n);
    detail::store_u32_le(f.data(), sequence);
    f[4] = static_cast<std::uint8_t>(i);
    f[5] = static_cast<std::uint8_t>(count);
    std::memcpy(f.data() + kFragmentHeaderBytes, payload.data() + begin, n);
  }
  return count;
}

FragmentAssembler::FragmentAssembler() {
  for (Slot& s : slots_) s.bytes.resize(kMaxFragmentedSnapshotBytes);
}

void FragmentAssembler::reset() noexcept {
  for (Slot& s : slots_) s.used = false;
  newest_complete_ = 0;
  newest_seen_ = 0;
}

std::size_t FragmentAssembler::assembling() const noexcept {
  std::size_t n = 0;
  for (const Slot& s : slots_) n += s.used ? 1 : 0;
  return n;
}

void FragmentAssembler::abandon_older_than(std::uint32_t sequence) noexcept {
  for (Slot& s : slots_) {
    if (s.used && s.sequence < sequence) {
      s.used = false;
      ++abandoned_;
    }
  }
}

std::optional<std::span<const std::uint8_t>> FragmentAssembler::add(std::span<const std::uint8_t> f) {
  if (f.size() <= kFragmentHeaderBytes) {
    ++malformed_;
    return std::nullopt;
  }
  const std::uint32_t sequence = detail::load_u32_le(f.data());
  const std::size_t index = f[4];
  const std::size_t count = f[5];
  const std::size_t n = f.size() - kFragmentHeaderBytes;
  const bool last = index + 1 == count;
  if (count == 0 || count > kMaxFragmentsPerSnapshot || index >= count || n > kFragmentPayloadBytes ||
      (!last && n != kFragmentPayloadBytes)) {
    ++malformed_;
    return std::nullopt;
  }
  if (sequence <= newest_complete_ ||
      (newest_seen_ > kMaxFragmentAgeSequences && sequence < newest_seen_ - kMaxFragmentAgeSequences)) {
    ++stale_;
    return std::nullopt;
  }
  if (sequence > newest_seen_) {
    newest_seen_ = sequence;
    // Partial snapshots too far behind can no longer be useful.
    if (newest_seen_ > kMaxFragmentAgeSequences) abandon_older_than(newest_seen_ - kMaxFragmentAgeSequences);
  }

  Slot* slot = nullptr;
  for (Slot& s : slots_) {
    if (s.used && s.sequence == sequence) slot = &s;
  }
  if (slot == nullptr) {
    for (Slot& s : slots_) {
      if (!s.used) {
        slot = &s;
        break;
      }
    }
    if (slot == nullptr) {
      Slot* oldest = &slots_[0];
      for (Slot& s : slots_) {
        if (s.sequence < oldest->sequence) oldest = &s;
      }
      if (oldest->sequence > sequence) {  // everything held is newer: this one loses
        ++stale_;
        return std::nullopt;
      }
      ++abandoned_;
      slot = oldest;
    }
    slot->used = true;
    slot->sequence = sequence;
    slot->count = static_cast<std::uint8_t>(count);
    slot->received = 0;
    slot->last_bytes = 0;
    slot->have.fill(0);
  } else if (slot->count != count) {
    ++malformed_;
    return std::nullopt;
  }
  std::uint64_t& word = slot->have[index / 64];
  const std::uint64_t bit = std::uint64_t{1} << (index % 64);
  if ((word & bit) != 0) {
    ++duplicates_;
    return std::nullopt;
  }
  word |= bit;
  std::memcpy(slot->bytes.data() + index * kFragmentPayloadBytes, f.data() + kFragmentHeaderBytes, n);
  if (last) slot->last_bytes = n;
  if (++slot->received < slot->count) return std::nullopt;

  slot->used = false;
  newest_complete_ = sequence;
  abandon_older_than(sequence);
  return std::span<const std::uint8_t>(slot->bytes.data(), (count - 1) * kFragmentPayloadBytes + slot->last_bytes);
}

}  // namespace swarmfield::protocol
