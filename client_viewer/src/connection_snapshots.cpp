// Connection (connection.hpp): complete snapshot payloads (a SnapshotData over TCP, or
// reassembled UDP fragments) decoded against acknowledged baselines, acknowledged, kept for
// interpolation; the round-trip time from the echoed input time.
#include <algorithm>

#include "connection_impl.hpp"
#include "swarmfield/protocol/transport/datagram.hpp"

namespace swarmfield::client {

namespace {
using connection_detail::Clock;

constexpr double kRttSmoothing = 0.1;
}  // namespace

void Connection::on_snapshot_payload(std::span<const std::uint8_t> payload, bool via_tcp) {
  using Result = protocol::SnapshotReceiver::Result;
  const Result result = impl_->receiver.receive(payload);
  if (result == Result::kMalformed) {
    ++stats_.bad_datagrams;
    return;
  }
  if (result == Result::kNoBaseline) {
    // Encoded against a frame we never decoded (lost, or still in flight on the other
    // transport): not acknowledged, so the server falls back to one we did.
    ++stats_.snapshots_no_baseline;
    return;
  }
  if (result != Result::kDecoded) return;  // stale: reordered or duplicated on the way
  const protocol::SnapshotHeader& header = impl_->receiver.header();
  if (via_tcp) {
    // A snapshot over TCP newer than the UDP ones since confirmation: the server stopped
    // streaming to our address (its ack timeout); confirm an address again. (TCP snapshots
    // still in flight from before the confirmation are older than the first UDP one.)
    if (udp_state_ == UdpState::kConfirmed && newest_udp_tick_ != 0 && header.tick > newest_udp_tick_) {
      request_udp_address();
    }
  } else {
    newest_udp_tick_ = std::max(newest_udp_tick_, header.tick);
    // Acknowledge at once: the sooner the server knows, the newer the baseline of the next
    // snapshot (smaller deltas). Inputs carry the same ack; this covers clients that send few.
    if (udp_state_ == UdpState::kConfirmed && impl_->channel) {
      send_udp(impl_->channel->seal(protocol::PacketType::kData, protocol::encode_ack_datagram(impl_->receiver.ack())));
      ++stats_.acks_sent;
    }
  }
  unpack_frame(header, impl_->receiver.frame(), welcome_.map.cell_size, impl_->decoded, impl_->receiver.deaths());
  stats_.deaths_seen += impl_->decoded.deaths.size();
  on_snapshot(via_tcp);
}

void Connection::on_snapshot(bool via_tcp) {
  ++stats_.snapshots_received;
  if (via_tcp) ++stats_.snapshots_tcp;
  const auto now_clock = Clock::now();
  const std::uint64_t now = now_us();
  const SnapshotState& snapshot = impl_->decoded;
  const std::uint64_t echo = snapshot.echo_client_time_us;
  // One RTT sample per distinct echoed input time (a snapshot can echo the same input twice).
  if (echo != 0 && echo > impl_->last_echo_us && echo <= now) {
    impl_->last_echo_us = echo;
    const double sample = static_cast<double>(now - echo) / 1000.0;
    stats_.rtt_ms = stats_.rtt_samples == 0 ? sample : stats_.rtt_ms + kRttSmoothing * (sample - stats_.rtt_ms);
    stats_.rtt_ms_last = sample;
    stats_.rtt_ms_sum += sample;
    ++stats_.rtt_samples;
  }
  if (!snapshots_.empty() && snapshot.tick <= snapshots_.back().snapshot.tick) return;  // not newer
  // Reuse the oldest entry's buffers once the history is full.
  if (snapshots_.size() >= options_.snapshot_history) {
    ReceivedSnapshot recycled = std::move(snapshots_.front());
    snapshots_.pop_front();
    recycled.snapshot = snapshot;
    recycled.received_at = now_clock;
    snapshots_.push_back(std::move(recycled));
  } else {
    snapshots_.push_back(ReceivedSnapshot{snapshot, now_clock});
  }
  ++new_snapshots_;
}

}  // namespace swarmfield::client
