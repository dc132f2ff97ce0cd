#pragma once
// UDP side: one socket for every client. Received datagrams are verified (decode_datagram;
// bad ones are counted and dropped) and accepted only with a token handed out over TCP, from
// the first endpoint that presented it. Nothing is ever sent to an unknown sender. Sends are
// non-blocking: a datagram the kernel will not take right now is dropped (counted), never
// waited for, so the tick is never blocked.
#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "swarmfield/protocol/datagram.hpp"
#include "swarmfield/server/client_registry.hpp"

namespace swarmfield::server {

struct UdpCounters {
  std::uint64_t received = 0;        ///< datagrams received
  std::uint64_t bad_datagrams = 0;   ///< failed verification or size checks
  std::uint64_t unknown_token = 0;   ///< valid but with a token no client holds
  std::uint64_t wrong_endpoint = 0;  ///< valid token from an endpoint other than the bound one
  std::uint64_t unexpected = 0;      ///< valid but not an Input (clients send no snapshots)
  std::uint64_t sent = 0;            ///< datagrams sent
  std::uint64_t send_dropped = 0;    ///< datagrams the kernel refused (would block / error)
  std::uint64_t bytes_sent = 0;
};

class UdpEndpoint {
 public:
  /// Called with an accepted Input datagram and its (now UDP-bound) client.
  using InputHandler = std::function<void(ClientState& client, const protocol::DecodedDatagram& datagram)>;

  UdpEndpoint(asio::io_context& io, ClientRegistry& clients, InputHandler on_input);

  /// Binds address:port (0 = any free port) and starts receiving. False + `error` on failure.
  bool open(const std::string& address, std::uint16_t port, std::string& error);
  void close();
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

  /// Sends one datagram to `to` without blocking; false (counted) if it could not be sent.
  bool send(const asio::ip::udp::endpoint& to, std::span<const std::uint8_t> bytes);

  [[nodiscard]] const UdpCounters& counters() const noexcept { return counters_; }

 private:
  void do_receive();
  void handle(std::size_t size);

  asio::ip::udp::socket socket_;
  ClientRegistry& clients_;
  InputHandler on_input_;
  asio::ip::udp::endpoint sender_;
  // One more byte than the protocol allows, so an oversized datagram is seen as oversized.
  std::array<std::uint8_t, protocol::kMaxDatagramBytes + 1> buffer_{};
  std::uint16_t port_ = 0;
  UdpCounters counters_;
};

}  // namespace swarmfield::server
