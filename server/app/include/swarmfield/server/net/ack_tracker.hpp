#pragma once
// Is a UDP client still receiving what we stream to it? The server records when each snapshot's
// first packet went out and the client's acks (the newest packet sequence it received, carried
// in every packet it sends); a client whose oldest unacknowledged snapshot is older than the
// ack timeout has stopped acknowledging, and the server stops streaming to its address (a
// client that left, or an address that never wanted the stream). Pure: time comes in.
//
// Hook: today the ack is the packet header's (PacketChannel::peer_ack); snapshot acks (latest
// snapshot sequence + bitfield) can call on_ack() with the packet sequence they cover.
#include <chrono>
#include <cstdint>
#include <deque>

namespace swarmfield::server {

class AckTracker {
 public:
  using Clock = std::chrono::steady_clock;
  /// Sends remembered while unacknowledged; more are not recorded (the oldest decides).
  static constexpr std::size_t kMaxTracked = 256;

  /// Forgets every send (e.g. when an address is confirmed: streaming starts afresh).
  void reset() noexcept { sends_.clear(); }
  /// A send whose first packet has 64-bit sequence `sequence`, at `now`.
  void on_sent(std::uint64_t sequence, Clock::time_point now);
  /// The client received our packet `sequence` (and, for the purpose here, everything before).
  void on_ack(std::uint64_t sequence) noexcept;
  /// True when a send older than `timeout` is still unacknowledged.
  [[nodiscard]] bool stalled(Clock::time_point now, Clock::duration timeout) const noexcept {
    return !sends_.empty() && now - sends_.front().at > timeout;
  }
  [[nodiscard]] std::size_t unacknowledged() const noexcept { return sends_.size(); }

 private:
  struct Send {
    std::uint64_t sequence;
    Clock::time_point at;
  };
  std::deque<Send> sends_;  // oldest first
};

}  // namespace swarmfield::server
