#pragma once
// TCP side: the acceptor and the set of sessions. Verifies every frame (decode_tcp_message);
// a bad frame is answered with Error kBadMessage and the connection closed, a too-large frame
// with Error kFrameTooLarge. Valid messages go to the listener (the server's handshake and
// input handling). Counts accepted connections, bad frames, evictions and bytes sent.
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <asio/ip/tcp.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/server/net/forwarded_peers.hpp"
#include "swarmfield/server/net/per_address_count.hpp"
#include "swarmfield/server/net/rate_limited_log.hpp"
#include "swarmfield/server/net/tcp_session.hpp"

namespace swarmfield::server {

/// Encodes and frames one message; nullptr if it does not fit in a frame.
[[nodiscard]] Frame make_frame(const protocol::TcpMessage& message);

class TcpListener {
 public:
  virtual ~TcpListener() = default;
  /// A verified message from `session`.
  virtual void on_message(TcpSession& session, protocol::TcpMessage& message) = 0;
  /// `session` is gone (any reason); called once.
  virtual void on_disconnected(TcpSession& session) = 0;
};

struct TcpCounters {
  std::uint64_t accepted = 0;        ///< connections accepted
  std::uint64_t refused_per_address = 0;  ///< closed at once: too many from the same IP address
  std::uint64_t hello_timeouts = 0;  ///< closed: no Hello in time
  std::uint64_t frame_timeouts = 0;  ///< closed: a frame begun but not finished in time (trickle)
  std::uint64_t frame_budget_stops = 0;  ///< a session's reading stopped for the tick: TcpSession::kFramesPerTick handled
  std::uint64_t bad_frames = 0;      ///< frames failing verification + unexpected messages
  std::uint64_t unsealed_frames = 0;  ///< frames of a token session's sealed stream that did not open (also bad_frames)
  std::uint64_t too_large = 0;       ///< frames announced above the limit
  std::uint64_t evicted = 0;         ///< slow clients dropped because their queue overflowed
  std::uint64_t refused_full = 0;    ///< connections refused for lack of room
  std::uint64_t accept_errors = 0;   ///< accept() failures (EMFILE at the fd limit, ...), retried with back-off
  std::uint64_t evicted_no_hello = 0;  ///< oldest pre-Hello connections dropped for newer ones
  std::uint64_t bytes_sent = 0;
  std::uint64_t frames_received = 0;  ///< complete frames read (before verification)
  std::uint64_t bytes_received = 0;   ///< their bytes, length prefix included
};

class TcpServer final : public TcpSessionHandler {
 public:
  /// `max_connections`: open sessions (handshaken or not) above which new connections get
  /// Error kServerFull and are closed. `max_queue_bytes`: per-session write queue bound.
  /// `max_unauthenticated`: open sessions that have not completed the Hello (client_id 0);
  /// above it the OLDEST of them is closed at once (not the new one), so idle or hostile connections
  /// can not lock real clients out: a real client sends Hello at once and is never the oldest.
  /// Refusals and evictions are logged at info, at most one line per second (with a count).
  /// `max_per_address`: open sessions from one IP address above which a new one from it is
  /// answered Error kServerFull and closed. `max_frame_bytes`: largest frame a peer may send.
  TcpServer(asio::io_context& io, TcpListener& listener, std::size_t max_connections, std::size_t max_queue_bytes,
            std::size_t max_unauthenticated = kDefaultMaxUnauthenticated,
            std::size_t max_per_address = kDefaultMaxPerAddress,
            std::size_t max_frame_bytes = protocol::kMaxClientFrameBytes);

  /// Default cap on connections that have not sent Hello yet.
  static constexpr std::size_t kDefaultMaxUnauthenticated = 128;
  /// Default cap on sessions from one IP address (ServerConfig::max_connections_per_address).
  static constexpr std::size_t kDefaultMaxPerAddress = 16;

  /// What sweep() enforces.
  struct Timeouts {
    std::chrono::steady_clock::duration hello;    ///< accepted, no Hello yet
    std::chrono::steady_clock::duration frame;    ///< a frame begun and not finished
    std::chrono::steady_clock::duration closing;  ///< stuck closing (peer not reading)
  };

  /// Back-off after a failed accept (e.g. EMFILE at the process's fd limit, where the pending
  /// connection stays in the backlog and an immediate retry fails again at once): the first
  /// retry after kAcceptRetryFirst, doubling up to kAcceptRetryMax; reset by a success.
  static constexpr std::chrono::milliseconds kAcceptRetryFirst{10};
  static constexpr std::chrono::milliseconds kAcceptRetryMax{1000};

  /// Connections registered in `peers` (by the server's own gateways) are counted against the
  /// address they serve (forwarded_peers.hpp). Null = none; must outlive this.
  void set_forwarded_peers(const ForwardedPeers* peers) noexcept { forwarded_peers_ = peers; }

  /// Binds and listens on address:port (port 0 = any free port). False + `error` on failure.
  bool open(const std::string& address, std::uint16_t port, std::string& error);
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// Stops accepting new connections.
  void stop_accepting();

  /// Sends a frame; a session whose queue overflows is evicted (counted).
  TcpSession::SendResult send(TcpSession& session, Frame frame);
  /// TcpSession::send_latest() (snapshots: a newer one replaces an older one still waiting),
  /// with the same eviction counting and log as send().
  TcpSession::SendResult send_latest(TcpSession& session, Frame frame);
  /// TcpSession::skip_latest(), with the same eviction counting and log.
  TcpSession::SendResult skip_latest(TcpSession& session, std::size_t bytes);
  /// Answers with an Error frame and closes after it is written. Counts nothing.
  void send_error_and_close(TcpSession& session, protocol::ErrorCode code, std::string reason);
  /// Counts a bad frame, answers Error kBadMessage with `reason` and closes. Logged as a warning
  /// for a client that joined, through log_rate_limited() before Hello.
  void reject_bad_message(TcpSession& session, std::string reason);

  /// Logs `what` (a refused or dropped connection) at info, at most one line a second; the
  /// ones held back meanwhile are counted and reported with the next line or by sweep().
  void log_rate_limited(const std::string& what);
  /// Closes sessions that never sent Hello within `timeouts.hello`, sessions with a frame begun
  /// more than `timeouts.frame` ago and still incomplete (a trickling peer: closed at once, the
  /// memory it held released), and sessions stuck closing (peer not reading) for more than
  /// `timeouts.closing`; reports the refusals log_rate_limited() held back for a second or more.
  void sweep(std::chrono::steady_clock::time_point now, const Timeouts& timeouts);
  /// Sessions accepted from now on hand over at most `frames` frames per tick (TcpSession::
  /// limit_frames_per_tick; 0: no bound, the default); refill_frame_budgets() starts each tick.
  void set_frames_per_tick(std::size_t frames) noexcept { frames_per_tick_ = frames; }
  /// A new tick: every session may hand over its frames per tick again (sessions that stopped
  /// reading at the bound read on). Counts the sessions that had stopped (frame_budget_stops).
  void refill_frame_budgets();
  /// Queues `frame` to every open session and closes each once it is written.
  void close_all_after(const Frame& frame);
  /// Closes every session now.
  void close_all();

  [[nodiscard]] std::size_t session_count() const noexcept { return sessions_.size(); }
  /// Sessions open from `address` (closing ones included: they still hold a socket).
  [[nodiscard]] std::size_t sessions_from(const asio::ip::address& address) const noexcept;
  /// Bytes every session's frame decoder holds, summed (memory a peer can make us hold).
  [[nodiscard]] std::size_t read_buffer_bytes() const noexcept;
  [[nodiscard]] const TcpCounters& counters() const noexcept { return counters_; }
  /// Lookup by session id (nullptr if gone).
  [[nodiscard]] TcpSession* find(std::uint64_t session_id) noexcept;

  // TcpSessionHandler
  void on_frame(TcpSession& session, std::vector<std::uint8_t>& payload) override;
  void on_frame_too_large(TcpSession& session) override;
  void on_bytes_sent(TcpSession& session, std::size_t bytes) override;
  void on_closed(TcpSession& session) override;

 private:
  /// Counts and logs an eviction; returns `result`.
  TcpSession::SendResult note_send_result(TcpSession& session, TcpSession::SendResult result);
  void do_accept();
  /// Drops the oldest open pre-Hello session when there are more than max_unauthenticated_.
  void evict_oldest_unauthenticated();
  // Writes an Error (kServerFull, `reason`) without waiting and closes `socket` at once.
  void refuse_at_once(asio::ip::tcp::socket& socket, std::string reason);

  TcpListener& listener_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_;
  std::chrono::milliseconds accept_backoff_{0};  // 0: the last accept succeeded
  std::size_t max_connections_;
  std::size_t max_queue_bytes_;
  std::size_t max_unauthenticated_;
  std::size_t max_per_address_;
  std::size_t max_frame_bytes_;
  std::size_t frames_per_tick_ = 0;
  PerAddressCount<asio::ip::address> per_address_;
  const ForwardedPeers* forwarded_peers_ = nullptr;
  /// The address a registered loopback connection serves; nullopt for any other connection.
  [[nodiscard]] std::optional<asio::ip::address> forwarded_address(const asio::ip::tcp::endpoint& peer) const;
  RateLimitedLog refusal_log_;
  // Bad messages of joined clients: one line per session, within a budget (with --auth open a
  // connect, Hello, junk loop wrote 0.84 MB of log a second).
  LineBudget joined_bad_lines_{16.0, 256.0, "joined clients' bad message"};
  std::uint16_t port_ = 0;
  bool accepting_ = false;
  std::uint64_t next_session_id_ = 1;
  std::map<std::uint64_t, std::shared_ptr<TcpSession>> sessions_;
  TcpCounters counters_;
  std::vector<std::uint8_t> opened_;  // a sealed frame opened (on_frame), reused
};

}  // namespace swarmfield::server
