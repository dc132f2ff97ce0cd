#pragma once
// Client side of the swarmfield session protocol over Asio (standalone):
//   TCP connect -> Hello -> Welcome (UDP token + keys) + MapChunk* -> UDP address confirmation
//   (ConnectRequest -> Challenge -> ChallengeResponse, protocol/transport/packet.hpp) -> sealed UDP Input
//   packets out, sealed snapshot fragments in (delta snapshots, protocol/SNAPSHOTS.md: each one
//   decoded against a frame we acknowledged, and acknowledged at once). Until the server has
//   confirmed our UDP address
//   (or when UDP is off or blocked), inputs and snapshots travel over TCP. The server's MapDeltas
//   (TCP) change the client's copy of the map and its barricades (map_delta.hpp); build requests
//   ride in every Input (request_build()). Error/Bye end the session. Keep-alives (an empty UDP data packet, or a repeated Input over TCP) keep the
//   server's idle and ack timeouts from firing while the application sends nothing.
// Poll-style and single-threaded: every handler runs inside poll()/run_for() on the io_context
// passed in, so several connections (the bot's --count N) can share one context and one loop.
// Not thread-safe: use a connection only from the thread that drives its io_context.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "swarmfield/client/map_delta.hpp"
#include "swarmfield/client/snapshot_state.hpp"
#include "swarmfield/protocol/transport/connect_token.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/transport/resume.hpp"
#include "swarmfield/sim/map/grid_map.hpp"

namespace asio {
class io_context;
}

namespace swarmfield::client {

/// What a client needs to resume its session after the connection drops (the server's
/// --reconnect-grace): the Welcome's resume secret, and whether the session was a token
/// session (then the resumed stream is sealed with keys derived from the secret).
struct ResumeTicket {
  protocol::ResumeSecret secret{};
  bool sealed = false;
};

/// Tries of one resume (a lost link) before a client gives up, and the wait before each: the
/// first at once, then 0.5, 1, 2 and 4 s (7.5 s in all, inside the server's default 10 s
/// --reconnect-grace), so an outage of a few seconds (a proxy restarting, a Wi-Fi handover)
/// does not use every try up in a fraction of a second.
inline constexpr int kMaxResumeTries = 5;
[[nodiscard]] inline std::chrono::milliseconds resume_delay(int try_index) noexcept {
  return try_index <= 0 ? std::chrono::milliseconds(0) : std::chrono::milliseconds(250 << std::min(try_index, 4));
}

/// ConnectionOptions::max_map_cells by default: 4096 x 4096.
inline constexpr std::uint64_t kDefaultMaxMapCells = std::uint64_t{4096} * 4096;

struct ConnectionOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7777;
  protocol::Role role = protocol::Role::kViewer;
  std::string name = "client";  ///< cut to protocol::kMaxNameBytes
  /// Time allowed from start() until the TCP connection is up AND the server has answered the
  /// Hello (Welcome, Error or any byte): a server that accepts but never answers fails here.
  std::chrono::milliseconds connect_timeout{5000};
  /// Time allowed from start() until Welcome and every MapChunk have arrived.
  std::chrono::milliseconds handshake_timeout{15000};
  /// Once the server has answered: no TCP or UDP byte from it for this long fails the
  /// connection ("no data from the server for N s"); catches a hung (e.g. SIGSTOPped) server.
  /// 0 disables the check. The server sends snapshots many times a second, so 5 s is generous.
  std::chrono::milliseconds data_timeout{5000};
  /// Snapshots kept for interpolation (newest last).
  std::size_t snapshot_history = 8;
  /// Agent entries of the decoded frames kept as delta baselines (SnapshotReceiver); at least
  /// the server's history (8 x 16384), so every frame the server may encode against is held.
  std::size_t baseline_agents = 16 * 16384;
  /// Largest map (cells) this client takes: a server announcing more is refused before any of
  /// it is allocated (a rogue server's 2 KB Welcome for an 8192 x 8192 map made a viewer
  /// allocate 639 MiB). The default holds a 4096 x 4096 map; raise it for bigger worlds.
  std::uint64_t max_map_cells = kDefaultMaxMapCells;
  /// false: never open a UDP socket; inputs go over TCP and snapshots keep coming over TCP.
  bool use_udp = true;
  /// A connect token from the match's backend (protocol/transport/connect_token.hpp; a server
  /// with --auth tokens admits no one without one). Its sealed part rides in the Hello, the
  /// server takes role and name from it, and everything after the Hello, either way, is sealed
  /// with its keys. Empty: an open server.
  std::optional<protocol::ConnectToken> token;
  /// Resume a lost session instead of joining anew (Connection::resume_ticket() of the lost
  /// connection): the Hello carries the secret's proof, the server gives the player back (same
  /// client and player id) with fresh keys, or refuses (Error) once the grace has passed.
  std::optional<ResumeTicket> resume;
};

enum class ConnectionState : std::uint8_t {
  kIdle,        ///< start() not called yet
  kConnecting,  ///< resolving / TCP connect in progress
  kHandshake,   ///< Hello sent, waiting for Welcome and the map
  kConnected,   ///< map received; snapshots flow, send_input() works
  kClosed,      ///< ended by close() or by the server (see error())
  kFailed,      ///< could not connect or the handshake failed (see error())
};

/// Counters since start(). Rates are over the last completed ~1 s window.
struct ConnectionStats {
  std::uint64_t snapshots_received = 0;  ///< complete snapshots (UDP + TCP)
  std::uint64_t snapshots_tcp = 0;       ///< of which came over TCP
  std::uint64_t bytes_received = 0;      ///< TCP + UDP payload bytes
  std::uint64_t bytes_sent = 0;
  std::uint64_t inputs_sent = 0;
  std::uint64_t inputs_firing = 0;  ///< of inputs_sent, those sent with fire set (after clean_input)
  std::uint64_t build_requests = 0;  ///< build requests numbered by request_build()
  std::uint64_t map_deltas = 0;      ///< MapDeltas applied to the map
  std::uint64_t deaths_seen = 0;     ///< agents the snapshots removed as deaths (killed in view)
  std::uint64_t map_deltas_ignored = 0;  ///< MapDeltas whose revision was not newer than the last applied
  std::uint64_t map_cells_skipped = 0;   ///< cells of applied MapDeltas outside the map (skipped)
  std::uint64_t bad_datagrams = 0;  ///< failed authentication or verification, or malformed fragments / snapshots
  std::uint64_t snapshots_no_baseline = 0;  ///< complete, but encoded against a frame we do not hold
  std::uint64_t fragments_lost = 0;  ///< partial snapshots given up (a fragment lost or late)
  std::uint64_t acks_sent = 0;       ///< ack-only UDP packets
  std::uint64_t udp_confirmations = 0;  ///< times the server confirmed our UDP address
  std::uint64_t keepalives_sent = 0;
  double kbit_per_s = 0.0;          ///< received, kilobits (1000 bits) per second
  double rtt_ms = 0.0;              ///< exponentially smoothed round-trip time, 0 until measured
  double rtt_ms_last = 0.0;
  double rtt_ms_sum = 0.0;          ///< sum of every RTT sample (for averages)
  std::uint64_t rtt_samples = 0;
};

/// A snapshot and the local steady-clock time it was completed at.
struct ReceivedSnapshot {
  SnapshotState snapshot;
  std::chrono::steady_clock::time_point received_at;
};

class Connection {
 public:
  Connection(asio::io_context& io, ConnectionOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Starts resolving + connecting; returns at once. Drive the io_context (poll()/run_for())
  /// until state() is kConnected or kFailed.
  void start();

  /// Convenience: start() (if idle) and drive the io_context until the handshake ends or the
  /// options' handshake timeout passes. Returns true when connected; otherwise error() says why
  /// ("could not connect to HOST:PORT: ...", "server closed the connection during handshake",
  /// "server error: <reason>", "handshake timed out after N ms ...").
  bool connect_blocking();

  /// Sends a Bye (best effort) and closes both sockets. state() becomes kClosed.
  void close(const std::string& reason = "client quit");

  [[nodiscard]] ConnectionState state() const noexcept { return state_; }
  [[nodiscard]] bool connected() const noexcept { return state_ == ConnectionState::kConnected; }
  /// True once the session has ended (kClosed or kFailed).
  [[nodiscard]] bool finished() const noexcept {
    return state_ == ConnectionState::kClosed || state_ == ConnectionState::kFailed;
  }
  /// Why the connection failed or closed; empty while fine. Closing with close() leaves it empty.
  [[nodiscard]] const std::string& error() const noexcept { return error_; }
  /// True when a connected session was ended by the server's Bye (an orderly end, e.g. server
  /// shutdown), as opposed to an Error, a lost connection or a failed handshake.
  [[nodiscard]] bool ended_by_bye() const noexcept { return ended_by_bye_; }
  /// True when the server ended the session in its own words (a Bye or an Error: refused, full,
  /// shutting down), as opposed to a connection that was lost or timed out. Only a lost
  /// connection is worth resuming.
  [[nodiscard]] bool ended_by_server() const noexcept { return ended_by_server_; }
  /// After Welcome: what resumes this session if the connection drops (nullopt when the
  /// server keeps no lost sessions).
  [[nodiscard]] std::optional<ResumeTicket> resume_ticket() const;

  /// Valid once connected.
  [[nodiscard]] const protocol::Welcome& welcome() const noexcept { return welcome_; }
  /// The decompressed cost field as a map (valid once connected), with the server's MapDeltas
  /// applied since: its revision() moves whenever a cell's cost changes.
  [[nodiscard]] const sim::GridMap& map() const noexcept { return map_; }
  /// The barricades the server's MapDeltas reported, for drawing: cell index (y * map width + x,
  /// map cells) -> health as a fraction of full, 1..255 (255 = whole); destroyed ones removed.
  [[nodiscard]] const Barricades& barricades() const noexcept { return map_changes_.barricades; }
  /// Revision of the newest MapDelta applied (0 before any). Changes whenever the map's costs
  /// or the barricades do.
  [[nodiscard]] std::uint32_t map_delta_revision() const noexcept { return map_changes_.revision; }

  /// Snapshots received, oldest first, at most options.snapshot_history, ordered by tick
  /// (late or duplicate ticks are dropped).
  [[nodiscard]] const std::deque<ReceivedSnapshot>& snapshots() const noexcept { return snapshots_; }
  [[nodiscard]] const ReceivedSnapshot* latest() const noexcept {
    return snapshots_.empty() ? nullptr : &snapshots_.back();
  }
  /// True once the server has confirmed our UDP address (snapshots and inputs use UDP).
  [[nodiscard]] bool udp_confirmed() const noexcept { return udp_state_ == UdpState::kConfirmed; }

  /// Snapshots completed since the last call (lets a caller react to each exactly once).
  [[nodiscard]] std::uint64_t take_new_snapshot_count() noexcept {
    const auto n = new_snapshots_;
    new_snapshots_ = 0;
    return n;
  }

  /// Updates rate counters; call once per loop iteration (cheap).
  [[nodiscard]] const ConnectionStats& stats();

  /// Sends an Input (UDP when available, else TCP). Fills in sequence, snapshot_ack (the
  /// snapshots decoded) and client_time_us (steady clock, microseconds) itself; the caller sets move intent
  /// (|move| <= 1; longer vectors are scaled to 1) and view rectangle (world units; clamped to
  /// +-protocol::kMaxWireCoordinate), fire and aim (see clean_input). Non-finite values are sent
  /// as 0. The build fields are the connection's (request_build()), whatever the caller sets.
  /// Ignored unless connected.
  void send_input(const protocol::Input& input);

  /// Inputs that carry a build request before the next waiting request replaces it (a lost
  /// datagram does not lose the request; the server applies each id at most once).
  static constexpr std::uint32_t kBuildRepeats = 3;
  /// Build requests that may wait for an input at most (request_build() refuses more).
  static constexpr std::size_t kMaxPendingBuilds = 64;

  /// Asks the server to build a barricade at cell (x, y) (map cells, 0-based). Numbers the
  /// request (1, 2, 3, ... per connection) and returns its id; every later send_input() carries
  /// it (Input::build_id/x/y) until a newer request replaces it. Requests made faster than inputs
  /// are sent wait in order, each carried by kBuildRepeats inputs before the next replaces it.
  /// Returns 0 and changes nothing when not connected, when the cell lies outside the map, or
  /// when kMaxPendingBuilds requests wait already. Whether a barricade is built is the server's
  /// decision (a MapDelta says so).
  std::uint32_t request_build(std::int32_t x, std::int32_t y);

  /// Steady-clock microseconds, the clock used for client_time_us.
  [[nodiscard]] static std::uint64_t now_us() noexcept;

 private:
  struct Impl;
  void fail(const std::string& message);
  void on_tcp_message(protocol::TcpMessage&& message);
  /// A complete snapshot payload (a SnapshotData, or reassembled fragments): decoded, kept,
  /// acknowledged (over UDP at once).
  void on_snapshot_payload(std::span<const std::uint8_t> payload, bool via_tcp);
  void on_snapshot(bool via_tcp);
  void on_map_chunk(protocol::MapChunk&& chunk);
  void on_map_delta(const protocol::MapDelta& delta);
  /// Puts the current build request (the next waiting one once the current was carried
  /// kBuildRepeats times) into `input`.
  void attach_build(protocol::Input& input);
  void finish_map();
  /// Seals the TCP stream both ways from now on (client -> server key, server -> client key).
  void seal_stream(const std::pair<protocol::SessionKey, protocol::SessionKey>& keys);
  /// A token session's first frame from the server: its clear SessionSalt (then the stream is
  /// sealed with keys derived from it) or its refusal. False when the connection ended.
  bool take_salt(std::span<const std::uint8_t> frame);
  /// `message` as one frame, sealed once the Hello of a token session has gone. False if too large.
  bool frame_message(const protocol::TcpMessage& message, std::vector<std::uint8_t>& frame);
  void send_tcp(const protocol::TcpMessage& message);
  void start_tcp_read();
  void start_udp_read();
  void start_write();
  void open_udp();
  void note_data();
  void arm_data_timer();
  /// Every kPacerInterval from Welcome on: UDP connect requests until confirmed, keep-alives.
  void arm_pacer();
  void on_pacer();
  /// (Again) asks the server to confirm our UDP address; inputs go over TCP meanwhile.
  void request_udp_address();
  void on_udp_datagram(std::size_t size);
  void send_udp(std::vector<std::uint8_t> packet);
  void send_tcp_input(protocol::Input input);

  ConnectionOptions options_;
  std::unique_ptr<Impl> impl_;
  ConnectionState state_ = ConnectionState::kIdle;
  std::string error_;
  bool ended_by_bye_ = false;
  bool ended_by_server_ = false;
  protocol::Welcome welcome_;
  sim::GridMap map_;
  std::deque<ReceivedSnapshot> snapshots_;
  std::uint64_t new_snapshots_ = 0;
  ConnectionStats stats_;
  std::uint32_t input_sequence_ = 0;
  std::uint32_t newest_udp_tick_ = 0;  ///< newest UDP snapshot since the last confirmation (0: none)
  enum class UdpState : std::uint8_t { kOff, kRequesting, kConfirmed };
  UdpState udp_state_ = UdpState::kOff;
  protocol::Input last_input_;  ///< repeated over TCP as a keep-alive
  MapChangeState map_changes_;  ///< barricades and the newest MapDelta revision applied
  std::vector<protocol::MapDelta> early_deltas_;  ///< MapDeltas that came before the map was complete
  /// A numbered build request (map cells).
  struct BuildRequest {
    std::uint32_t id = 0;
    std::int32_t x = 0, y = 0;
  };
  std::uint32_t last_build_id_ = 0;
  BuildRequest current_build_;               ///< carried by every Input (id 0: none yet)
  std::uint32_t current_build_sends_ = 0;    ///< inputs that carried current_build_
  std::deque<BuildRequest> pending_builds_;  ///< waiting for current_build_ to be carried enough
};

/// An Input as send_input() sends it, every value one the server's decoder accepts:
/// non-finite values become 0; move longer than 1 is scaled to length 1; view coordinates are
/// clamped to +-protocol::kMaxWireCoordinate; an aim with a non-finite component becomes (0, 0),
/// one with a component beyond the limit is scaled (direction kept) so the larger is at the
/// limit; fire with a (0, 0) aim is sent as fire = false; a build cell outside
/// [0, protocol::kMaxMapSide) is sent as no request (build_id 0, cell 0, 0). Sequence, acks and
/// time untouched.
[[nodiscard]] protocol::Input clean_input(protocol::Input input) noexcept;

/// Human-readable state name ("connecting", ...).
[[nodiscard]] const char* to_string(ConnectionState state) noexcept;

}  // namespace swarmfield::client
