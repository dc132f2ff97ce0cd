// Replay window (RFC 4303 3.4.3 style sliding bitmap over 64-bit packet counters).
#include "swarmfield/protocol/transport/sequence.hpp"

namespace swarmfield::protocol {

ReplayWindow::Verdict ReplayWindow::check(std::uint64_t sequence) const noexcept {
  if (sequence > newest_) return sequence - newest_ > max_jump_ ? Verdict::kTooFarAhead : Verdict::kFresh;
  if (sequence == 0 || newest_ - sequence >= kWindow) return Verdict::kTooOld;
  return seen(sequence) ? Verdict::kDuplicate : Verdict::kFresh;
}

void ReplayWindow::accept(std::uint64_t sequence) noexcept {
  if (sequence > newest_) {
    // The slots between the old and the new newest held values kWindow older: clear them.
    if (sequence - newest_ >= kWindow) {
      bits_.fill(0);
    } else {
      for (std::uint64_t s = newest_ + 1; s < sequence; ++s) bits_[(s / 64) % kWords] &= ~(std::uint64_t{1} << (s % 64));
    }
    newest_ = sequence;
  }
  bits_[(sequence / 64) % kWords] |= std::uint64_t{1} << (sequence % 64);
}

void ReplayWindow::reset() noexcept {
  newest_ = 0;
  bits_.fill(0);
}

}  // namespace swarmfield::protocol
