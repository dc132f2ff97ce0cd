// Connection (connection.hpp) over UDP: the socket opened after Welcome, the address
// confirmation (ConnectRequest -> Challenge -> ChallengeResponse), the pacer (requests and
// keep-alives), sealed datagrams in (snapshot fragments) and out.
#include <algorithm>

#include "connection_impl.hpp"

namespace swarmfield::client {

namespace {
using connection_detail::Clock;

// The pacer: connect requests 10 times a second (netcode.io's rate) for the first seconds, then
// once a second (a server that never answers must not cost 12 KB/s forever); a keep-alive when
// no UDP packet left for kUdpKeepAlive (it carries our ack: the server stops streaming to a
// client whose acks stop), or no TCP frame for kTcpKeepAlive while UDP is not in use (the
// server closes clients idle for --idle-timeout, 15 s by default).
constexpr auto kPacerInterval = std::chrono::milliseconds(100);
constexpr auto kRequestInterval = std::chrono::milliseconds(100);
constexpr auto kSlowRequestInterval = std::chrono::seconds(1);
constexpr auto kFastRequestPeriod = std::chrono::seconds(5);
constexpr auto kUdpKeepAlive = std::chrono::milliseconds(100);
constexpr auto kTcpKeepAlive = std::chrono::seconds(1);
// Confirmed, but no UDP packet from the server for this long (it sends snapshots at least once a
// second): the server may have dropped our address; confirm one again (TCP carries meanwhile).
constexpr auto kUdpSilence = std::chrono::seconds(3);
}  // namespace

void Connection::open_udp() {
  asio::error_code ec;
  const auto remote = impl_->tcp.remote_endpoint(ec);
  if (ec) return;  // the TCP read will report the failure
  const asio::ip::udp::endpoint server(remote.address(), welcome_.udp_port);
  impl_->udp.open(server.protocol(), ec);
  if (!ec) impl_->udp.connect(server, ec);
  if (ec) {
    // Not fatal: snapshots keep coming over TCP and inputs go over TCP.
    asio::error_code ignored;
    impl_->udp.close(ignored);
    return;
  }
  impl_->channel.emplace(protocol::PacketChannel::Side::kClient, welcome_.udp);
  start_udp_read();
  request_udp_address();
  on_pacer();  // the first request now, not a pacer interval later
}

void Connection::request_udp_address() {
  udp_state_ = UdpState::kRequesting;
  newest_udp_tick_ = 0;
  impl_->requesting_since = Clock::now();
  impl_->last_request = {};
}

void Connection::send_udp(std::vector<std::uint8_t> packet) {
  if (packet.empty() || !impl_->udp.is_open()) return;
  auto datagram = std::make_shared<std::vector<std::uint8_t>>(std::move(packet));
  stats_.bytes_sent += datagram->size();
  impl_->last_udp_send = Clock::now();
  impl_->udp.async_send(asio::buffer(*datagram), [datagram](const asio::error_code&, std::size_t) {
    // Fire and forget: a lost packet is replaced by the next one.
  });
}

void Connection::arm_pacer() {
  if (finished()) return;
  impl_->pacer.expires_after(kPacerInterval);
  auto alive = impl_->alive;
  impl_->pacer.async_wait([this, alive](const asio::error_code& ec) {
    if (!*alive || ec || finished()) return;
    on_pacer();
    arm_pacer();
  });
}

void Connection::on_pacer() {
  const auto now = Clock::now();
  if (udp_state_ == UdpState::kConfirmed && now - impl_->last_udp_receive > kUdpSilence) request_udp_address();
  if (udp_state_ == UdpState::kRequesting && impl_->channel) {
    const auto interval = now - impl_->requesting_since < kFastRequestPeriod ? kRequestInterval : kSlowRequestInterval;
    if (now - impl_->last_request >= interval) {
      send_udp(impl_->channel->seal(protocol::PacketType::kConnectRequest, {}));
      impl_->last_request = now;
    }
  }
  if (udp_state_ == UdpState::kConfirmed && now - impl_->last_udp_send >= kUdpKeepAlive) {
    send_udp(impl_->channel->seal(protocol::PacketType::kData, {}));
    ++stats_.keepalives_sent;
  }
  if (udp_state_ != UdpState::kConfirmed && now - impl_->last_tcp_send >= kTcpKeepAlive) {
    send_tcp_input(last_input_);
    ++stats_.keepalives_sent;
  }
}

void Connection::on_udp_datagram(std::size_t n) {
  note_data();
  stats_.bytes_received += n;
  impl_->window_bytes += n;
  if (!impl_->channel) return;
  protocol::PacketHeader header;
  const auto datagram = std::span<const std::uint8_t>(impl_->udp_buffer.data(), std::min(n, impl_->udp_buffer.size()));
  if (impl_->channel->open(datagram, header, impl_->body) != protocol::PacketChannel::OpenResult::kOk) {
    ++stats_.bad_datagrams;  // forged, replayed, corrupted or not ours
    return;
  }
  impl_->last_udp_receive = Clock::now();
  if (header.type == protocol::PacketType::kChallenge) {
    // Proves we receive at this address: echo the challenge, sealed with our key.
    if (udp_state_ == UdpState::kRequesting) send_udp(impl_->channel->seal(protocol::PacketType::kChallengeResponse, impl_->body));
    return;
  }
  // Data is only ever sent to a confirmed address.
  if (udp_state_ != UdpState::kConfirmed) {
    udp_state_ = UdpState::kConfirmed;
    ++stats_.udp_confirmations;
  }
  if (impl_->body.empty()) return;  // keep-alive
  // Every other data packet from the server is one snapshot fragment.
  const std::uint64_t malformed_before = impl_->assembler.malformed();
  const auto whole = impl_->assembler.add(impl_->body);
  stats_.bad_datagrams += impl_->assembler.malformed() - malformed_before;
  if (whole) on_snapshot_payload(*whole, false);
}

void Connection::start_udp_read() {
  auto alive = impl_->alive;
  impl_->udp.async_receive(
      asio::buffer(impl_->udp_buffer), [this, alive](const asio::error_code& ec, std::size_t n) {
        if (!*alive || finished()) return;
        if (ec == asio::error::operation_aborted || !impl_->udp.is_open()) return;
        if (!ec) on_udp_datagram(n);
        // Other errors (e.g. ICMP port unreachable on a connected UDP socket) are transient.
        if (!finished()) start_udp_read();
      });
}

}  // namespace swarmfield::client
