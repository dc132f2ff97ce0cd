#pragma once
// One TCP connection: reads bytes into a FrameDecoder and hands complete frames to its
// handler; writes whole frames from a bounded queue with exactly one async write in flight
// (Asio chat-server pattern). A client that does not read fills the queue and is evicted.
// Snapshots are queued "latest only" (send_latest): a newer one replaces an older one still
// waiting, so a slow reader gets fresher, fewer snapshots instead of a growing backlog of stale
// ones (which, at the default 4 MiB bound, was seconds of latency before eviction).
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/protocol/transport/frame_seal.hpp"
#include "swarmfield/protocol/transport/framing.hpp"

namespace swarmfield::server {

class TcpSession;

/// A complete length-prefixed frame ready for the socket, shared between sessions (map chunks
/// are encoded once and queued to every client).
using Frame = std::shared_ptr<const std::vector<std::uint8_t>>;

/// Receives a session's events. Calls come from the io_context thread.
class TcpSessionHandler {
 public:
  virtual ~TcpSessionHandler() = default;
  /// One complete frame payload (not yet verified).
  virtual void on_frame(TcpSession& session, std::vector<std::uint8_t>& payload) = 0;
  /// The peer announced a frame above the size limit; the stream is unusable.
  virtual void on_frame_too_large(TcpSession& session) = 0;
  /// `bytes` were written to the socket.
  virtual void on_bytes_sent(TcpSession& session, std::size_t bytes) = 0;
  /// The session is closed (called exactly once, posted, never from inside close()).
  virtual void on_closed(TcpSession& session) = 0;
};

class TcpSession : public std::enable_shared_from_this<TcpSession> {
 public:
  using Clock = std::chrono::steady_clock;
  /// Kernel send buffer per connection: min(max_queue_bytes, this).
  static constexpr std::size_t kMaxKernelSendBuffer = 256 * 1024;
  /// Kernel send buffer of a connection from one of the server's gateways (forwarded_for()).
  static constexpr std::size_t kForwardedSendBuffer = 16 * 1024;

  /// `max_queue_bytes`: bytes queued but not yet written above which the client is evicted.
  /// Also caps the kernel send buffer (SO_SNDBUF) at min(max_queue_bytes, kMaxKernelSendBuffer).
  /// `max_frame_bytes`: largest frame payload the peer may send (FrameDecoder limit).
  TcpSession(asio::ip::tcp::socket socket, TcpSessionHandler& handler, std::uint64_t session_id,
             std::size_t max_queue_bytes, std::size_t max_frame_bytes = protocol::kMaxFrameBytes);

  /// Starts the read loop.
  void start();
  /// The game server's bound on the frames a session hands over per tick: a client that sends
  /// more waits, unread, until the next tick, and TCP's flow control slows it. Only the newest
  /// Input of a tick counts, and a peer that sent valid Inputs as fast as the socket took them
  /// (1.5-2.5 million a second from one connection) had the tick thread decode every one and
  /// skip up to 82 ticks in 20 s on a loaded machine.
  static constexpr std::size_t kFramesPerTick = 64;
  /// At most `frames` frames are handed to the handler until refill_frame_budget() (0: no
  /// bound, the default). Call before start().
  void limit_frames_per_tick(std::size_t frames);
  /// A new tick: the limit's frames may be handled again; a session that stopped reading at its
  /// bound handles the frames it holds and reads on. Nothing without a limit.
  void refill_frame_budget();
  /// True while the session reads nothing: this tick's budget is spent (a flooding peer).
  [[nodiscard]] bool read_paused() const noexcept { return read_paused_; }
  /// The connection serves a peer at `address` through one of the server's gateways (a browser
  /// behind the WebSocket gateway): remote_address() and remote() name it instead of the
  /// loopback end; its kernel send buffer is kForwardedSendBuffer. Call before start().
  void forwarded_for(const asio::ip::address& address);
  /// True once forwarded_for() was called: the peer is a browser behind the gateway.
  [[nodiscard]] bool forwarded() const noexcept { return forwarded_; }

  enum class SendResult : std::uint8_t { kQueued, kEvicted, kClosed };
  /// Queues a frame. If that would put more than max_queue_bytes in the queue the session is
  /// closed instead (kEvicted: a slow client). kClosed if already closed or closing.
  SendResult send(Frame frame);
  /// Queues a frame that supersedes any earlier send_latest() frame still waiting in the queue
  /// (not yet being written): those are dropped (counted in superseded_frames()), so at most one
  /// such frame waits behind the write in flight; frames queued with send() are never dropped
  /// and keep their order. Bytes dropped since the last completed write count against
  /// max_queue_bytes like queued bytes, so a client that reads nothing is still evicted
  /// (kEvicted) once that much would have piled up. kClosed if closed or closing.
  SendResult send_latest(Frame frame);
  /// Queues `frame` (ignoring the bound), stops reading and closes once it is written. The
  /// caller force-closes sessions that stay in this state too long (see closing_since()).
  void send_and_close(Frame frame);
  /// Closes at once (pending writes are dropped).
  void close();

  [[nodiscard]] bool is_open() const noexcept { return !closed_ && !closing_; }
  [[nodiscard]] bool closed() const noexcept { return closed_; }
  [[nodiscard]] bool closing() const noexcept { return closing_; }
  /// True once send_and_close() began the close: the server ended the session in its own words
  /// (an Error or a Bye), so its client is not held for a resume.
  [[nodiscard]] bool ended_by_server() const noexcept { return ended_by_server_; }
  [[nodiscard]] Clock::time_point closing_since() const noexcept { return closing_since_; }
  [[nodiscard]] Clock::time_point connected_at() const noexcept { return connected_at_; }
  /// When the frame now being received began (its first byte arrived); nullopt while no
  /// incomplete frame is buffered. A frame that stays incomplete too long is a trickling peer.
  [[nodiscard]] std::optional<Clock::time_point> partial_frame_since() const noexcept { return partial_since_; }
  /// The peer's IP address (per-address limits), unspecified if unknown.
  [[nodiscard]] const asio::ip::address& remote_address() const noexcept { return remote_address_; }
  /// Bytes the frame decoder holds (its buffer's capacity).
  [[nodiscard]] std::size_t read_buffer_bytes() const noexcept { return decoder_.memory_bytes(); }
  [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
  [[nodiscard]] const std::string& remote() const noexcept { return remote_; }
  [[nodiscard]] std::size_t queued_bytes() const noexcept { return queued_bytes_; }
  [[nodiscard]] std::uint64_t bytes_sent() const noexcept { return bytes_sent_; }
  /// send_latest() frames dropped because a newer one replaced them before they were written.
  [[nodiscard]] std::uint64_t superseded_frames() const noexcept { return superseded_frames_; }
  /// True while a send_latest() frame waits in the queue, not yet being written (the next
  /// send_latest() would replace it). Delta snapshots over TCP wait instead of replacing one:
  /// the next snapshot is encoded against the previous, so none may go missing.
  [[nodiscard]] bool latest_waiting() const noexcept;
  /// A latest-only frame of about `bytes` not queued because one was still waiting: counted
  /// against max_queue_bytes like a superseded one, so a client that reads nothing is still
  /// evicted (kEvicted, closed). kQueued (nothing queued) otherwise; kClosed if closed.
  SendResult skip_latest(std::size_t bytes);
  /// Frames waiting, the one being written included.
  [[nodiscard]] std::size_t queued_frames() const noexcept { return queue_.size(); }

  /// From now on every frame queued (after this call; those queued before go out clear) is
  /// sealed with `send_key` as it is written, and every frame read must open with `receive_key`
  /// (open_frame; frame_seal.hpp): a token session's stream after the Hello and the salt.
  void seal_from_now(const protocol::SessionKey& receive_key, const protocol::SessionKey& send_key);
  [[nodiscard]] bool sealed() const noexcept { return receive_seal_.has_value(); }
  /// Opens a frame read from a sealed stream into `plain`. False when it does not open as the
  /// next frame (forged, injected, replayed): the stream is dead, close it.
  [[nodiscard]] bool open_frame(std::span<const std::uint8_t> sealed_payload, std::vector<std::uint8_t>& plain) {
    return receive_seal_ && receive_seal_->open(sealed_payload, plain);
  }

  /// Client id assigned by the server after the handshake (0 before).
  std::uint32_t client_id = 0;

 private:
  void do_read();
  /// Hands complete frames to the handler while the tick's budget lasts; false when the session
  /// closed or began closing meanwhile.
  bool handle_frames();
  /// After handle_frames() (`open`: its result): stops reading when the tick's budget is spent
  /// (true), else runs the clock of an incomplete frame (the frame timeout's).
  bool pause_or_track_partial(bool open);
  void do_write();
  void finish_close();
  /// Queues an entry (bound already checked) and starts writing if idle.
  void enqueue(Frame frame, bool latest_only);

  struct Queued {
    Frame frame;
    bool latest_only = false;  ///< may be replaced by a newer send_latest() frame
    bool sealed = false;       ///< queued after seal_from_now(): sealed as it is written
  };

  asio::ip::tcp::socket socket_;
  TcpSessionHandler& handler_;
  std::uint64_t id_;
  std::size_t max_queue_bytes_;
  std::string remote_;
  asio::ip::address remote_address_;
  std::size_t max_frame_bytes_;
  protocol::FrameDecoder decoder_;
  std::optional<Clock::time_point> partial_since_;
  std::array<std::uint8_t, 16 * 1024> read_buffer_{};
  std::vector<std::uint8_t> frame_;
  std::deque<Queued> queue_;  // front is being written while writing_
  std::size_t queued_bytes_ = 0;
  std::size_t superseded_bytes_ = 0;  // dropped by send_latest since the last completed write
  std::uint64_t superseded_frames_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::size_t frames_per_tick_ = 0;  // limit_frames_per_tick; 0: no limit
  std::size_t frames_left_ = 0;      // this tick's budget (refill_frame_budget)
  bool read_paused_ = false;         // no read armed: the tick's budget is spent
  bool writing_ = false;
  bool forwarded_ = false;
  bool closing_ = false;
  bool closed_ = false;
  bool ended_by_server_ = false;
  std::optional<protocol::FrameSeal> receive_seal_;
  std::optional<protocol::FrameSeal> send_seal_;
  std::vector<std::uint8_t> sealed_write_;  // the sealed copy of the frame being written
  Clock::time_point connected_at_;
  Clock::time_point closing_since_{};
};

}  // namespace swarmfield::server
