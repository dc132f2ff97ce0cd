#pragma once
// UDP side: one socket for every client. Every datagram is a sealed packet (protocol/transport/packet.hpp)
// naming its session by token; it is authenticated with the session's key and passes the
// session's replay window before anything else looks at it. A new address is confirmed by a
// challenge before it is sent anything but that challenge (after netcode.io):
//
//   client                                    server
//   ConnectRequest (1200 bytes, sealed)  ->   checks token, window, tag; rate limit
//                                        <-   Challenge (58 bytes: 16 random bytes, sealed)
//   ChallengeResponse (the 16 bytes)     ->   must come from the address the challenge went to,
//                                             within kChallengeTimeout: address confirmed
//                                        <-   Data (snapshot fragments) from now on
//
// So a forged source address earns its owner at most one 58-byte challenge per 1200-byte
// request (no amplification), and only a holder of the session keys (handed out over TCP) can
// confirm an address or send inputs. Every dropped datagram is counted by reason, the kernel's
// receive-buffer overflows included (SO_MEMINFO). Sends never block: a datagram the kernel will
// not take right now is dropped (counted).
//
// Receiving drains: one readiness event (or one drain() call from the tick) reads every
// datagram waiting in the kernel, not one, so the newest input per client wins under overload.
#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/server/net/client_registry.hpp"

namespace swarmfield::server {

/// Why a received datagram was dropped.
enum class UdpDrop : std::uint8_t {
  kMalformed,           ///< not a packet: size, type or version wrong
  kUnknownToken,        ///< no session has this token
  kDuplicate,           ///< a sequence already received (replay or network duplicate)
  kTooOld,              ///< behind the session's replay window
  kSequenceJump,        ///< too far ahead of the newest sequence received
  kBadAuth,             ///< authentication failed (forged or corrupted)
  kUnconfirmedAddress,  ///< data from an address the session has not confirmed
  kBadChallenge,        ///< a response that matches no pending challenge (bytes, address, age)
  kRateLimited,         ///< connect requests above kMaxChallengesPerSecond for the session
  kBadPayload,          ///< authenticated, but the body does not decode
  kUnexpected,          ///< authenticated and well-formed, but nothing a client sends
  kKernelOverflow,      ///< dropped by the kernel before we read it (receive buffer full; SO_MEMINFO)
  kCount
};
/// "malformed", "unknown_token", ... (the summary's drop_<name>= keys).
[[nodiscard]] const char* to_string(UdpDrop reason) noexcept;

struct UdpCounters {
  std::uint64_t received = 0;  ///< datagrams read
  std::uint64_t bytes_received = 0;  ///< their bytes (UDP payloads)
  std::array<std::uint64_t, static_cast<std::size_t>(UdpDrop::kCount)> dropped{};
  std::uint64_t challenges_sent = 0;
  std::uint64_t challenge_bytes_sent = 0;  ///< every byte we sent to an unconfirmed address
  std::uint64_t confirmed = 0;             ///< addresses confirmed (a session may confirm again)
  std::uint64_t inputs = 0;
  std::uint64_t acks = 0;  ///< ack-only packets (SnapshotAck)
  std::uint64_t keepalives = 0;
  std::uint64_t sent = 0;          ///< datagrams sent
  std::uint64_t send_dropped = 0;  ///< datagrams the kernel refused (would block / error)
  std::uint64_t bytes_sent = 0;
  std::uint64_t max_datagram = 0;  ///< largest datagram sent, bytes (UDP payload)
  std::uint64_t drains = 0;       ///< drain() calls that read at least one datagram
  std::uint64_t max_drained = 0;  ///< most datagrams one drain() read (a backlog indicator)

  [[nodiscard]] std::uint64_t drops(UdpDrop reason) const noexcept { return dropped[static_cast<std::size_t>(reason)]; }
  /// Every drop, kernel overflows included.
  [[nodiscard]] std::uint64_t total_dropped() const noexcept;
};

class UdpEndpoint {
 public:
  using Clock = std::chrono::steady_clock;
  /// Called with an authenticated Input from a confirmed address.
  using InputHandler = std::function<void(ClientState& client, const protocol::Input& input)>;
  /// Called with an authenticated snapshot acknowledgement (SnapshotAck) from a confirmed address.
  using AckHandler = std::function<void(ClientState& client, const protocol::SnapshotAck& ack)>;

  /// A challenge must be answered within this long.
  static constexpr auto kChallengeTimeout = std::chrono::seconds(5);
  /// Challenges per session per second at most (a client retries every 100 ms).
  static constexpr std::uint32_t kMaxChallengesPerSecond = 10;

  UdpEndpoint(asio::io_context& io, ClientRegistry& clients, InputHandler on_input, AckHandler on_ack = {});

  /// Binds address:port (0 = any free port), asks for a kernel receive buffer of
  /// `receive_buffer_bytes` (SO_RCVBUF, then SO_RCVBUFFORCE when the system cap is lower and we
  /// are allowed to) and starts receiving. False + `error` on failure.
  bool open(const std::string& address, std::uint16_t port, std::size_t receive_buffer_bytes, std::string& error);
  void close();
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// The kernel's receive buffer as it reports it (SO_RCVBUF), bytes: on Linux twice the value
  /// granted (half pays for per-datagram bookkeeping), so 2 x asked when nothing capped it.
  /// 0 before open().
  [[nodiscard]] std::size_t receive_buffer_bytes() const noexcept { return receive_buffer_bytes_; }

  /// Most datagrams one drain() reads by default: the cap keeps one call bounded in time (a few
  /// ms) even if clients flood.
  static constexpr std::size_t kMaxDatagramsPerDrain = 4096;

  /// Reads, without blocking, the datagrams waiting in the kernel (at most `max_datagrams`) and
  /// handles each in arrival order. The server calls it at the start of every tick; readiness
  /// events call it too. Returns the number of datagrams read (0 when closed or nothing waits).
  std::size_t drain(std::size_t max_datagrams = kMaxDatagramsPerDrain);

  /// Handles one received datagram from `from` at `now` (drain() calls it; public for tests).
  void handle(std::span<const std::uint8_t> datagram, const asio::ip::udp::endpoint& from, Clock::time_point now);

  /// Seals `body` as the client's next data packet and sends it to its confirmed address.
  /// False if the client has no confirmed address or the kernel refused it (counted).
  bool send_data(ClientState& client, std::span<const std::uint8_t> body);
  /// Sends one datagram to `to` without blocking; false (counted) if it could not be sent.
  bool send(const asio::ip::udp::endpoint& to, std::span<const std::uint8_t> bytes);

  [[nodiscard]] const UdpCounters& counters() const noexcept { return counters_; }
  /// Adds the datagrams the kernel dropped since the last look (receive buffer full) to the
  /// counters. drain() does it every call; call it before reading the counters at exit.
  void refresh_kernel_drops() noexcept;

 private:
  void wait_readable();
  void drop(UdpDrop reason) noexcept { ++counters_.dropped[static_cast<std::size_t>(reason)]; }
  void on_connect_request(ClientState& client, const asio::ip::udp::endpoint& from, Clock::time_point now);
  void on_challenge_response(ClientState& client, const asio::ip::udp::endpoint& from, Clock::time_point now);
  void on_data(ClientState& client);


  asio::ip::udp::socket socket_;
  ClientRegistry& clients_;
  InputHandler on_input_;
  AckHandler on_ack_;
  // One more byte than the protocol allows, so an oversized datagram is seen as oversized.
  std::array<std::uint8_t, protocol::kMaxDatagramBytes + 1> buffer_{};
  std::vector<std::uint8_t> body_;  // opened packet body (reused)
  std::uint16_t port_ = 0;
  std::size_t receive_buffer_bytes_ = 0;
  std::uint32_t kernel_drops_seen_ = 0;  // SO_MEMINFO's drop count is a running count per socket
  UdpCounters counters_;
};

}  // namespace swarmfield::server
