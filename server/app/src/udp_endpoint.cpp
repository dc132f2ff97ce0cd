#include "swarmfield/server/udp_endpoint.hpp"

#include <spdlog/spdlog.h>

namespace swarmfield::server {

UdpEndpoint::UdpEndpoint(asio::io_context& io, ClientRegistry& clients, InputHandler on_input)
    : socket_(io), clients_(clients), on_input_(std::move(on_input)) {}

bool UdpEndpoint::open(const std::string& address, std::uint16_t port, std::string& error) {
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
  // too, so no async operation owns buffer_/sender_ while the tick reads into them.
  socket_.async_wait(asio::ip::udp::socket::wait_read, [this](std::error_code ec) {
    if (ec == asio::error::operation_aborted || !socket_.is_open()) return;
    drain();
    wait_readable();
  });
}

std::size_t UdpEndpoint::drain(std::size_t max_datagrams) {
  std::size_t read = 0;
  for (std::size_t attempt = 0; attempt < max_datagrams && socket_.is_open(); ++attempt) {
    std::error_code ec;
    const std::size_t n = socket_.receive_from(asio::buffer(buffer_), sender_, 0, ec);
    if (ec == asio::error::would_block || ec == asio::error::try_again) break;
    if (ec == asio::error::bad_descriptor || ec == asio::error::operation_aborted) break;
    // Other errors (e.g. ICMP port unreachable reported on Linux for an earlier send) are
    // per-datagram: keep reading.
    if (ec) continue;
    ++read;
    handle(n);
  }
  if (read > 0) {
    ++counters_.drains;
    if (read > counters_.max_drained) counters_.max_drained = read;
  }
  return read;
}

void UdpEndpoint::handle(std::size_t size) {
  ++counters_.received;
  if (size > protocol::kMaxDatagramBytes) {
    ++counters_.bad_datagrams;
    return;
  }
  std::string error;
  const auto datagram = protocol::decode_datagram(std::span<const std::uint8_t>(buffer_.data(), size), &error);
  if (!datagram) {
    ++counters_.bad_datagrams;
    spdlog::trace("bad datagram from {}: {}", sender_.address().to_string(), error);
    return;
  }
  ClientState* client = nullptr;
  switch (clients_.check_udp(datagram->header.session_token, sender_, client)) {
    case ClientRegistry::UdpCheck::kUnknownToken:
      ++counters_.unknown_token;
      return;
    case ClientRegistry::UdpCheck::kWrongEndpoint:
      ++counters_.wrong_endpoint;
      return;
    case ClientRegistry::UdpCheck::kAccepted:
      break;
  }
  if (!datagram->input) {
    ++counters_.unexpected;
    return;
  }
  if (!client->has_udp_sequence || sequence_newer(datagram->header.sequence, client->last_udp_sequence)) {
    client->last_udp_sequence = datagram->header.sequence;
    client->has_udp_sequence = true;
  }
  on_input_(*client, *datagram);
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
  return true;
}

}  // namespace swarmfield::server
