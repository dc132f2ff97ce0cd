#include "swarmfield/server/net/udp_endpoint.hpp"

#include <linux/sock_diag.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace swarmfield::server {
namespace {

UdpDrop drop_reason(protocol::PacketChannel::OpenResult r) noexcept {
  using R = protocol::PacketChannel::OpenResult;
  switch (r) {
    case R::kDuplicate: return UdpDrop::kDuplicate;
    case R::kTooOld: return UdpDrop::kTooOld;
    case R::kTooFarAhead: return UdpDrop::kSequenceJump;
    case R::kBadAuth: return UdpDrop::kBadAuth;
    case R::kWrongSession: return UdpDrop::kUnknownToken;
    case R::kOk:
    case R::kMalformed: break;
  }
  return UdpDrop::kMalformed;
}

// The kernel's receive buffer size (what getsockopt reports), or 0.
std::size_t current_receive_buffer(int fd) {
  int value = 0;
  socklen_t length = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &length) != 0 || value < 0) return 0;
  return static_cast<std::size_t>(value);
}

}  // namespace

const char* to_string(UdpDrop reason) noexcept {
  switch (reason) {
    case UdpDrop::kMalformed: return "malformed";
    case UdpDrop::kUnknownToken: return "unknown_token";
    case UdpDrop::kDuplicate: return "duplicate";
    case UdpDrop::kTooOld: return "too_old";
    case UdpDrop::kSequenceJump: return "sequence_jump";
    case UdpDrop::kBadAuth: return "bad_auth";
    case UdpDrop::kUnconfirmedAddress: return "unconfirmed_address";
    case UdpDrop::kBadChallenge: return "bad_challenge";
    case UdpDrop::kRateLimited: return "rate_limited";
    case UdpDrop::kBadPayload: return "bad_payload";
    case UdpDrop::kUnexpected: return "unexpected";
    case UdpDrop::kKernelOverflow: return "kernel_overflow";
    case UdpDrop::kCount: break;
  }
  return "?";
}

std::uint64_t UdpCounters::total_dropped() const noexcept {
  std::uint64_t total = 0;
  for (const std::uint64_t n : dropped) total += n;
  return total;
}

UdpEndpoint::UdpEndpoint(asio::io_context& io, ClientRegistry& clients, InputHandler on_input, AckHandler on_ack)
    : socket_(io), clients_(clients), on_input_(std::move(on_input)), on_ack_(std::move(on_ack)) {
  body_.reserve(protocol::kMaxPacketBodyBytes);
}

bool UdpEndpoint::open(const std::string& address, std::uint16_t port, std::size_t receive_buffer_bytes,
                       std::string& error) {
  std::error_code ec;
  const auto addr = asio::ip::make_address(address, ec);
  if (ec) {
    error = "bad --bind address '" + address + "': " + ec.message();
    return false;
  }
  const asio::ip::udp::endpoint endpoint(addr, port);
  socket_.open(endpoint.protocol(), ec);
  if (!ec) socket_.bind(endpoint, ec);
  if (!ec) socket_.non_blocking(true, ec);
  if (ec) {
    error = "can not bind udp " + address + ":" + std::to_string(port) + ": " + ec.message();
    std::error_code ignored;
    socket_.close(ignored);
    return false;
  }
  // Snapshots for many clients go out in bursts; a larger send buffer avoids drops.
  socket_.set_option(asio::socket_base::send_buffer_size(4 * 1024 * 1024), ec);
  // The kernel default (~208 KiB, a few hundred datagrams) overflowed in a flood and real inputs
  // were lost with the junk. SO_RCVBUF is capped by net.core.rmem_max; SO_RCVBUFFORCE (root or
  // CAP_NET_ADMIN) is not. Linux grants twice the value asked (the other half pays for its
  // bookkeeping of each datagram) and reports that.
  const int fd = socket_.native_handle();
  const int asked = static_cast<int>(std::min<std::size_t>(receive_buffer_bytes, 1u << 29));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &asked, sizeof asked);
  if (current_receive_buffer(fd) < 2 * static_cast<std::size_t>(asked)) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &asked, sizeof asked);
  }
  receive_buffer_bytes_ = current_receive_buffer(fd);
  port_ = socket_.local_endpoint(ec).port();
  wait_readable();
  return true;
}

void UdpEndpoint::close() {
  std::error_code ec;
  socket_.close(ec);
}

void UdpEndpoint::wait_readable() {
  // A readiness wait, not an async receive: every read happens in drain(), which the tick calls
  // too, so no async operation owns buffer_ while the tick reads into it.
  socket_.async_wait(asio::ip::udp::socket::wait_read, [this](std::error_code ec) {
    if (ec == asio::error::operation_aborted || !socket_.is_open()) return;
    drain();
    wait_readable();
  });
}

void UdpEndpoint::refresh_kernel_drops() noexcept {
  if (!socket_.is_open()) return;
  // SO_MEMINFO: the socket's memory counters, among them every datagram the kernel dropped for
  // it (receive buffer full). A running 32-bit count: add what is new since the last look.
  std::array<std::uint32_t, SK_MEMINFO_VARS> info{};
  socklen_t length = sizeof info;
  if (getsockopt(socket_.native_handle(), SOL_SOCKET, SO_MEMINFO, info.data(), &length) != 0 ||
      length < sizeof(std::uint32_t) * (SK_MEMINFO_DROPS + 1)) {
    return;
  }
  const std::uint32_t total = info[SK_MEMINFO_DROPS];
  counters_.dropped[static_cast<std::size_t>(UdpDrop::kKernelOverflow)] += total - kernel_drops_seen_;
  kernel_drops_seen_ = total;
}

std::size_t UdpEndpoint::drain(std::size_t max_datagrams) {
  std::size_t read = 0;
  const auto now = Clock::now();
  for (std::size_t attempt = 0; attempt < max_datagrams && socket_.is_open(); ++attempt) {
    // recvmsg with MSG_TRUNC: the datagram's real length even when it did not fit the buffer.
    sockaddr_storage address{};
    iovec iov{buffer_.data(), buffer_.size()};
    msghdr message{};
    message.msg_name = &address;
    message.msg_namelen = sizeof address;
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    const ssize_t n = ::recvmsg(socket_.native_handle(), &message, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EBADF) break;
      // Other errors (e.g. ICMP port unreachable reported on Linux for an earlier send) are
      // per-datagram: keep reading.
      continue;
    }
    ++read;
    asio::ip::udp::endpoint from;
    if (message.msg_namelen > from.capacity()) continue;
    std::memcpy(from.data(), &address, message.msg_namelen);
    from.resize(message.msg_namelen);
    const auto size = static_cast<std::size_t>(n);
    handle(std::span<const std::uint8_t>(buffer_.data(), std::min(size, buffer_.size())), from, now);
  }
  refresh_kernel_drops();
  if (read > 0) {
    ++counters_.drains;
    if (read > counters_.max_drained) counters_.max_drained = read;
  }
  return read;
}

void UdpEndpoint::handle(std::span<const std::uint8_t> datagram, const asio::ip::udp::endpoint& from,
                         Clock::time_point now) {
  ++counters_.received;
  counters_.bytes_received += datagram.size();
  // Cheapest checks first; nothing is decrypted for a datagram that can not belong to a session.
  const auto header = protocol::read_packet_header(datagram);
  if (!header) return drop(UdpDrop::kMalformed);
  ClientState* client = clients_.find_by_token(header->token);
  if (client == nullptr) return drop(UdpDrop::kUnknownToken);
  if (header->type == protocol::PacketType::kData && (!client->udp_endpoint || *client->udp_endpoint != from)) {
    return drop(UdpDrop::kUnconfirmedAddress);
  }
  protocol::PacketHeader opened;
  const auto result = client->channel.open(datagram, opened, body_);
  if (result != protocol::PacketChannel::OpenResult::kOk) return drop(drop_reason(result));
  // Authenticated: only the holder of the session keys gets here.
  client->last_activity = now;
  ++client->activity;
  // The header's ack says the sender receives our packets: evidence only from the confirmed
  // address (a connect request from elsewhere, even the key holder's, says nothing of it).
  if (client->udp_endpoint && *client->udp_endpoint == from) client->acks.on_ack(client->channel.peer_ack());
  switch (opened.type) {
    case protocol::PacketType::kConnectRequest: return on_connect_request(*client, from, now);
    case protocol::PacketType::kChallengeResponse: return on_challenge_response(*client, from, now);
    case protocol::PacketType::kData: return on_data(*client);
    case protocol::PacketType::kChallenge: break;  // refused by the channel already
  }
  drop(UdpDrop::kUnexpected);
}

void UdpEndpoint::on_connect_request(ClientState& client, const asio::ip::udp::endpoint& from, Clock::time_point now) {
  if (now - client.challenge_window_start >= std::chrono::seconds(1)) {
    client.challenge_window_start = now;
    client.challenges_in_window = 0;
  }
  if (client.challenges_in_window >= kMaxChallengesPerSecond) return drop(UdpDrop::kRateLimited);
  ++client.challenges_in_window;
  // A free or expired slot, else the oldest.
  PendingChallenge* slot = &client.challenges.front();
  for (PendingChallenge& c : client.challenges) {
    if (!c.used || now - c.sent_at > kChallengeTimeout) {
      slot = &c;
      break;
    }
    if (c.sent_at < slot->sent_at) slot = &c;
  }
  protocol::random_bytes(slot->bytes);
  slot->to = from;
  slot->sent_at = now;
  slot->used = true;
  const std::vector<std::uint8_t> packet = client.channel.seal(protocol::PacketType::kChallenge, slot->bytes);
  // read_packet_header let the request in only at kConnectRequestBytes: the reply is smaller.
  static_assert(protocol::kChallengePacketBytes <= protocol::kConnectRequestBytes);
  if (send(from, packet)) {
    ++counters_.challenges_sent;
    counters_.challenge_bytes_sent += packet.size();
  }
}

void UdpEndpoint::on_challenge_response(ClientState& client, const asio::ip::udp::endpoint& from,
                                        Clock::time_point now) {
  if (body_.size() != protocol::kChallengeBytes) return drop(UdpDrop::kBadChallenge);
  protocol::Challenge answer{};
  std::copy(body_.begin(), body_.end(), answer.begin());
  for (const PendingChallenge& c : client.challenges) {
    if (!c.used || c.to != from || now - c.sent_at > kChallengeTimeout || !protocol::same_challenge(c.bytes, answer)) {
      continue;
    }
    const bool moved = client.udp_endpoint && *client.udp_endpoint != from;
    client.udp_endpoint = from;
    for (PendingChallenge& p : client.challenges) p = PendingChallenge{};
    client.acks.reset();
    ++counters_.confirmed;
    // An empty data packet at once (42 bytes for a 58-byte response): the client knows it is
    // confirmed without waiting for the next snapshot.
    send_data(client, {});
    spdlog::debug("client {}: UDP address {}:{} confirmed{}", client.id, from.address().to_string(), from.port(),
                  moved ? " (moved)" : "");
    return;
  }
  drop(UdpDrop::kBadChallenge);
}

void UdpEndpoint::on_data(ClientState& client) {
  if (body_.empty()) {  // keep-alive: carries the ack, nothing else
    ++counters_.keepalives;
    return;
  }
  std::string error;
  const auto datagram = protocol::decode_datagram(body_, &error);
  if (!datagram) {
    spdlog::trace("client {}: bad datagram body: {}", client.id, error);
    return drop(UdpDrop::kBadPayload);
  }
  if (datagram->ack) {
    ++counters_.acks;
    if (on_ack_) on_ack_(client, *datagram->ack);
    return;
  }
  if (!datagram->input) return drop(UdpDrop::kUnexpected);
  ++counters_.inputs;
  on_input_(client, *datagram->input);
}

bool UdpEndpoint::send_data(ClientState& client, std::span<const std::uint8_t> body) {
  if (!client.udp_endpoint) return false;
  const std::vector<std::uint8_t> packet = client.channel.seal(protocol::PacketType::kData, body);
  if (packet.empty()) return false;
  return send(*client.udp_endpoint, packet);
}

bool UdpEndpoint::send(const asio::ip::udp::endpoint& to, std::span<const std::uint8_t> bytes) {
  std::error_code ec;
  const std::size_t n = socket_.send_to(asio::buffer(bytes.data(), bytes.size()), to, 0, ec);
  if (ec || n != bytes.size()) {
    ++counters_.send_dropped;
    return false;
  }
  ++counters_.sent;
  counters_.bytes_sent += n;
  counters_.max_datagram = std::max<std::uint64_t>(counters_.max_datagram, n);
  return true;
}

}  // namespace swarmfield::server
