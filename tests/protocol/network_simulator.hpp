#pragma once
// A simulated lossy network between two endpoints, without sockets, after yojimbo's
// NetworkSimulator: each packet sent is dropped with probability loss, else delivered after
// latency + uniform(-jitter, +jitter) ms (never before it was sent), and with probability
// duplicate a second copy follows with its own delay. Jitter reorders packets. Time is passed in
// (milliseconds); randomness from a seed, so a failing run replays exactly.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "swarmfield/protocol/transport/snapshot_ack.hpp"

namespace swarmfield::protocol::test {

struct NetworkConditions {
  double latency_ms = 50.0;
  double jitter_ms = 0.0;
  double loss = 0.0;       ///< 0..1
  double duplicate = 0.0;  ///< 0..1
};

class NetworkSimulator {
 public:
  NetworkSimulator(const NetworkConditions& conditions, std::uint64_t seed) : c_(conditions), rng_(seed) {}

  /// Sends `bytes` to endpoint `to` (0 or 1) at time `now_ms`.
  void send(int to, double now_ms, std::vector<std::uint8_t> bytes) {
    ++sent_;
    if (chance(c_.loss)) {
      ++lost_;
      return;
    }
    const bool dup = chance(c_.duplicate);
    if (dup) {
      ++duplicated_;
      queue_.push_back({to, deliver_at(now_ms), order_++, bytes});
    }
    queue_.push_back({to, deliver_at(now_ms), order_++, std::move(bytes)});
  }

  /// Packets for endpoint `to` due by `now_ms`, in delivery-time order.
  std::vector<std::vector<std::uint8_t>> receive(int to, double now_ms) {
    std::vector<Packet> due;
    for (std::size_t i = 0; i < queue_.size();) {
      if (queue_[i].to == to && queue_[i].at <= now_ms) {
        due.push_back(std::move(queue_[i]));
        queue_[i] = std::move(queue_.back());
        queue_.pop_back();
      } else {
        ++i;
      }
    }
    std::sort(due.begin(), due.end(), [](const Packet& a, const Packet& b) { return a.at != b.at ? a.at < b.at : a.order < b.order; });
    std::vector<std::vector<std::uint8_t>> out;
    for (Packet& p : due) out.push_back(std::move(p.bytes));
    return out;
  }

  [[nodiscard]] std::uint64_t sent() const noexcept { return sent_; }
  [[nodiscard]] std::uint64_t lost() const noexcept { return lost_; }
  [[nodiscard]] std::uint64_t duplicated() const noexcept { return duplicated_; }

 private:
  struct Packet {
    int to;
    double at;
    std::uint64_t order;
    std::vector<std::uint8_t> bytes;
  };
  bool chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
  double deliver_at(double now_ms) {
    const double j = c_.jitter_ms > 0 ? std::uniform_real_distribution<double>(-c_.jitter_ms, c_.jitter_ms)(rng_) : 0.0;
    return now_ms + std::max(0.0, c_.latency_ms + j);
  }
  NetworkConditions c_;
  std::mt19937_64 rng_;
  std::vector<Packet> queue_;
  std::uint64_t order_ = 0, sent_ = 0, lost_ = 0, duplicated_ = 0;
};

/// A snapshot ack as 8 bytes (latest, received; little-endian) for the simulated uplink.
inline std::vector<std::uint8_t> ack_bytes(const SnapshotAck& a) {
  std::vector<std::uint8_t> b(8);
  for (std::size_t i = 0; i < 4; ++i) {
    b[i] = static_cast<std::uint8_t>(a.latest >> (8 * i));
    b[4 + i] = static_cast<std::uint8_t>(a.received >> (8 * i));
  }
  return b;
}
inline SnapshotAck parse_ack(const std::vector<std::uint8_t>& b) {
  SnapshotAck a;
  for (std::size_t i = 0; i < 4 && b.size() == 8; ++i) {
    a.latest |= std::uint32_t{b[i]} << (8 * i);
    a.received |= std::uint32_t{b[4 + i]} << (8 * i);
  }
  return a;
}

}  // namespace swarmfield::protocol::test
