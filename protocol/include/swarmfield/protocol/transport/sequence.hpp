#pragma once
// Sequence numbers on a wrapping 32-bit counter (inputs, datagram headers), their extension to
// the 64-bit packet counters behind them, and the replay window that authenticated datagrams
// pass through. Used by both ends. No sockets, no clocks.
//
// Comparison follows RFC 1982 (serial number arithmetic); the 32 -> 64 bit extension is the
// one QUIC uses for packet numbers (RFC 9000, appendix A.3); the replay window is the sliding
// bitmap of IPsec (RFC 4303, section 3.4.3) and netcode.io.
#include <array>
#include <cstdint>

namespace swarmfield::protocol {

/// True if `a` is newer than `b` on a wrapping 32-bit counter (RFC 1982): a != b and a is less
/// than 2^31 steps ahead of b. Not a total order: 2^31 apart is neither newer nor older.
[[nodiscard]] constexpr bool sequence_newer(std::uint32_t a, std::uint32_t b) noexcept {
  return a != b && static_cast<std::uint32_t>(a - b) < 0x80000000u;
}

/// Largest step a sequence may advance in one go and still be accepted (inputs: 65,536 inputs,
/// about 18 minutes at 60 Hz of inputs all lost). A peer whose counter jumps further is either
/// hostile or broken; accepting the jump would make every later genuine value look old (one
/// input 2^31 ahead froze a player's real inputs for good).
inline constexpr std::uint32_t kMaxSequenceJump = 1u << 16;

/// True if `next` moves the counter forward from `newest` by 1..max_jump steps (mod 2^32).
[[nodiscard]] constexpr bool sequence_advances(std::uint32_t next, std::uint32_t newest,
                                               std::uint32_t max_jump = kMaxSequenceJump) noexcept {
  const std::uint32_t step = next - newest;
  return step != 0 && step <= max_jump;
}

/// The 64-bit value whose low 32 bits are `wire` and which lies closest to `reference` (the
/// newest 64-bit value known), so a counter that wrapped its 32 bits keeps counting up.
/// Correct while the true value is within 2^31 of `reference`; values below 0 clamp to the
/// first epoch.
[[nodiscard]] constexpr std::uint64_t extend_sequence(std::uint32_t wire, std::uint64_t reference) noexcept {
  constexpr std::uint64_t kEpoch = std::uint64_t{1} << 32;
  constexpr std::uint64_t kHalf = kEpoch / 2;
  const std::uint64_t candidate = (reference & ~(kEpoch - 1)) | wire;
  if (candidate + kHalf <= reference && candidate + kEpoch > candidate) return candidate + kEpoch;
  if (candidate > reference + kHalf && candidate >= kEpoch) return candidate - kEpoch;
  return candidate;
}

/// Receive-side replay protection for one sender's 64-bit packet counter (which starts at 1).
/// check() before authenticating, accept() only after the packet authenticated, so a forged
/// packet can never move the window. Accepts each value once; rejects values more than
/// kWindow behind the newest accepted one and values more than `max_jump` ahead of it.
class ReplayWindow {
 public:
  static constexpr std::uint64_t kWindow = 1024;  ///< values remembered behind the newest
  /// Default forward bound: 2^20 packets, minutes of snapshot fragments at the highest rates.
  static constexpr std::uint64_t kDefaultMaxJump = std::uint64_t{1} << 20;

  enum class Verdict : std::uint8_t { kFresh, kDuplicate, kTooOld, kTooFarAhead };

  explicit ReplayWindow(std::uint64_t max_jump = kDefaultMaxJump) noexcept : max_jump_(max_jump) {}

  /// The 64-bit value of a received 32-bit wire sequence (see extend_sequence).
  [[nodiscard]] std::uint64_t extend(std::uint32_t wire) const noexcept { return extend_sequence(wire, newest_); }
  [[nodiscard]] Verdict check(std::uint64_t sequence) const noexcept;
  /// Records `sequence` (must have passed check() and authentication).
  void accept(std::uint64_t sequence) noexcept;
  /// Newest accepted value; 0 before the first.
  [[nodiscard]] std::uint64_t newest() const noexcept { return newest_; }
  /// Forgets everything (a new session).
  void reset() noexcept;

 private:
  [[nodiscard]] bool seen(std::uint64_t sequence) const noexcept {
    return (bits_[(sequence / 64) % kWords] >> (sequence % 64)) & 1u;
  }
  static constexpr std::size_t kWords = kWindow / 64;
  std::uint64_t max_jump_;
  std::uint64_t newest_ = 0;  // 0 is never sent: senders count from 1
  std::array<std::uint64_t, kWords> bits_{};
};

}  // namespace swarmfield::protocol
