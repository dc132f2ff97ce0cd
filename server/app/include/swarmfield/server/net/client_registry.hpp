#pragma once
// Connected clients: id, role, UDP session (token, keys, packet channel, confirmed address,
// pending challenges, acks) and the per-client state the tick reads (latest move intent, view
// rectangle, RTT echo). No sockets: the TCP session that owns a client is tracked by the server,
// keyed by client id.
#include <asio/ip/udp.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/transport/resume.hpp"
#include "swarmfield/server/net/ack_tracker.hpp"
#include "swarmfield/server/view_rect.hpp"

namespace swarmfield::server {

/// A challenge sent to an address that asked to carry a session (see udp_endpoint.hpp).
struct PendingChallenge {
  protocol::Challenge bytes{};
  asio::ip::udp::endpoint to;
  std::chrono::steady_clock::time_point sent_at{};
  bool used = false;
};

struct ClientState {
  using Clock = std::chrono::steady_clock;
  /// Challenges outstanding at once per session (the oldest is replaced), so a replayed
  /// request from elsewhere can not cancel the genuine client's challenge.
  static constexpr std::size_t kMaxPendingChallenges = 4;

  ClientState(std::uint32_t client_id, const protocol::SessionCredentials& session)
      : id(client_id), credentials(session), channel(protocol::PacketChannel::Side::kServer, session) {}

  std::uint32_t id = 0;
  protocol::Role role = protocol::Role::kViewer;
  std::string name;
  std::uint32_t player_id = 0;  ///< world player id (players only), 0 for viewers
  /// From the client's connect token (--auth tokens): the backend's id of the player, and the
  /// idle timeout it asked for (seconds, 0 = the server's --idle-timeout).
  std::uint64_t user_id = 0;
  double idle_timeout_s = 0.0;
  /// The IP address the client's TCP connection came from (the per-address share of slots).
  asio::ip::address address;
  /// Valid messages (TCP frames after the Hello, authenticated datagrams) since
  /// activity_since: the idle rule wants one per 2 s on average, not only one per timeout.
  std::uint32_t activity = 0;
  Clock::time_point activity_since{};
  /// Reconnects (--reconnect-grace): the secret a Hello resumes this session with, whether the
  /// session's TCP stream is sealed (a token session), whether a lost connection may be
  /// resumed (false once the client said Bye or the server closed it), and since when the
  /// session has had no connection (nullopt while it has one).
  protocol::ResumeSecret resume{};
  bool sealed = false;
  bool resumable = true;
  std::optional<Clock::time_point> detached_since;

  // UDP: credentials handed out in Welcome; snapshots go to udp_endpoint only once that address
  // answered a challenge.
  protocol::SessionCredentials credentials;
  protocol::PacketChannel channel;
  std::optional<asio::ip::udp::endpoint> udp_endpoint;  ///< confirmed address, if any
  std::array<PendingChallenge, kMaxPendingChallenges> challenges{};
  Clock::time_point challenge_window_start{};  ///< rate limit of challenges (per second)
  std::uint32_t challenges_in_window = 0;
  AckTracker acks;

  // Written by socket handlers, read by the tick.
  bool has_input = false;
  std::uint32_t last_input_sequence = 0;
  std::optional<std::pair<float, float>> pending_intent;  ///< applied (and cleared) by the tick
  /// The trigger as the client last sent it (held + aim, world units); the tick hands it to
  /// the World when it differs from `applied_fire` (so a replay records only changes).
  struct Trigger {
    bool held = false;
    float aim_x = 0.0f, aim_y = 0.0f;
    bool operator==(const Trigger&) const = default;
  };
  Trigger pending_fire;
  Trigger applied_fire;
  /// Build requests (Input build_id): the newest id taken (each id is handed to the World once,
  /// however many inputs repeat it) and the cells of the requests the next tick hands on (at
  /// most kMaxPendingBuilds: more in one tick are refused).
  static constexpr std::size_t kMaxPendingBuilds = 4;
  std::uint32_t last_build_id = 0;
  /// A viewer holding a trigger it does not have: refused once per press (actions_refused), not
  /// once per Input that repeats it.
  bool viewer_fire_refused = false;
  std::vector<sim::CellCoord> pending_builds;
  ViewRect view;                         ///< world units; empty = no agents
  std::uint64_t echo_client_time_us = 0;
  /// Last valid TCP message or authenticated UDP packet from the client (idle timeout).
  Clock::time_point last_activity{};

  std::uint64_t snapshots_sent = 0;
  std::uint64_t bytes_sent = 0;
  /// Its snapshots' payload bytes and agent entries (updated + added): its own share of the
  /// summary's bytes_per_agent, logged when it leaves (a player's exact follow view and a
  /// whole-map viewer's coarse one cost very different bytes per entry).
  std::uint64_t snapshot_payload_bytes = 0;
  std::uint64_t snapshot_entries = 0;
  /// Where those bytes went (protocol::SnapshotEncodeStats): the residual symbols (rANS), the
  /// escaped residuals and the added agents (bits), the rest being structure, tables and header.
  std::uint64_t snapshot_residual_bytes = 0;
  std::uint64_t snapshot_escape_bits = 0;
  std::uint64_t snapshot_added_bits = 0;
  /// When its first and its newest snapshot were sent: the summary's per-viewer rate (issue 22
  /// wants each of 64 viewers at >= 19 snapshots/s, which a total over all viewers hides).
  Clock::time_point first_snapshot_at{};
  Clock::time_point last_snapshot_at{};

  [[nodiscard]] const protocol::SessionToken& token() const noexcept { return credentials.token; }
};

class ClientRegistry {
 public:
  /// `max_clients` (>= 1): add() fails beyond it.
  explicit ClientRegistry(std::size_t max_clients);

  /// Registers a client with fresh credentials (protocol::make_session_credentials: token and
  /// keys from libsodium) and a fresh id. nullptr when full.
  /// `token_keys`: a token session's keys (client -> server, server -> client; derived from the
  /// connect token's and the server's salt), used in place of fresh ones.
  ClientState* add(protocol::Role role, std::string name, std::uint32_t player_id = 0,
                   const std::optional<std::pair<protocol::SessionKey, protocol::SessionKey>>& token_keys = std::nullopt);
  /// Gives `client` a fresh session token and these keys (a resumed session): packets sealed
  /// with the old keys or naming the old token stop working, the UDP address must be confirmed
  /// again, acks start over.
  void rekey(ClientState& client, const protocol::SessionKey& client_to_server, const protocol::SessionKey& server_to_client);
  /// Forgets a client (its token stops working at once). False if unknown.
  bool remove(std::uint32_t client_id);

  [[nodiscard]] ClientState* find(std::uint32_t client_id) noexcept;
  [[nodiscard]] ClientState* find_by_token(const protocol::SessionToken& token) noexcept;

  [[nodiscard]] std::size_t size() const noexcept { return clients_.size(); }
  [[nodiscard]] bool full() const noexcept { return clients_.size() >= max_clients_; }
  [[nodiscard]] std::size_t max_clients() const noexcept { return max_clients_; }
  /// Clients ever added.
  [[nodiscard]] std::uint64_t total_added() const noexcept { return total_added_; }
  /// Clients in id order.
  [[nodiscard]] std::map<std::uint32_t, ClientState>& clients() noexcept { return clients_; }
  [[nodiscard]] const std::map<std::uint32_t, ClientState>& clients() const noexcept { return clients_; }

 private:
  // Tokens are uniformly random (chosen by us, never by a peer), so their first 8 bytes are a
  // good hash and an attacker can not aim lookups at one bucket of stored tokens.
  struct TokenHash {
    std::size_t operator()(const protocol::SessionToken& t) const noexcept {
      std::uint64_t h = 0;
      std::memcpy(&h, t.data(), sizeof h);
      return static_cast<std::size_t>(h);
    }
  };
  std::size_t max_clients_;
  std::map<std::uint32_t, ClientState> clients_;
  std::unordered_map<protocol::SessionToken, std::uint32_t, TokenHash> by_token_;
  std::uint32_t next_id_ = 1;
  std::uint64_t total_added_ = 0;
};

}  // namespace swarmfield::server
