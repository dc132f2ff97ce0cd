#pragma once
// UDP side: one socket for every client. Received datagrams are verified (decode_datagram;
// bad ones are counted and dropped) and accepted only with a token handed out over TCP, from
// the first endpoint that presented it. Nothing is ever sent to an unknown sender. Sends are
// non-blocking: a datagram the kernel will not take right now is dropped (counted), never
// waited for, so the tick is never blocked.
//
// Receiving drains: one readiness event (or one drain() call from the tick) reads every
// datagram waiting in the kernel, not one. Under overload the tick timer is always due, and
// a loop that read one datagram per io_context pass fell behind the clients' input rate: inputs
// piled up in the kernel buffer and were applied seconds late, oldest first. Handing all of
// them to the handler at once lets the newest input per client win (the handler keeps the
// newest by sequence).
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
  std::uint64_t drains = 0;          ///< drain() calls that read at least one datagram
  std::uint64_t max_drained = 0;     ///< most datagrams one drain() read (a backlog indicator)
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

  /// Most datagrams one drain() reads by default: more than the kernel's default receive buffer
  /// holds (about 250 small datagrams), so one call empties it; the cap keeps one call bounded
  /// in time (a few ms) even if clients flood.
  static constexpr std::size_t kMaxDatagramsPerDrain = 1024;

  /// Reads, without blocking, the datagrams waiting in the kernel (at most `max_datagrams`) and
  /// handles each in arrival order (verification, token check, input handler), so the newest
  /// input of each client is the last one the handler sees. The server calls it at the start of
  /// every tick; readiness events call it too. Returns the number of datagrams read (0 when the
  /// socket is closed or nothing waits).
  std::size_t drain(std::size_t max_datagrams = kMaxDatagramsPerDrain);

  /// Sends one datagram to `to` without blocking; false (counted) if it could not be sent.
  bool send(const asio::ip::udp::endpoint& to, std::span<const std::uint8_t> bytes);

  [[nodiscard]] const UdpCounters& counters() const noexcept { return counters_; }

 private:
  void wait_readable();
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
