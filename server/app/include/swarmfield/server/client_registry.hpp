#pragma once
// Connected clients: id, role, session token, bound UDP endpoint and the per-client state the
// tick reads (latest move intent, view rectangle, RTT echo). No sockets: the TCP session that
// owns a client is tracked by the server, keyed by client id.
#include <asio/ip/udp.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "swarmfield/protocol/messages.hpp"
#include "swarmfield/server/session_token.hpp"
#include "swarmfield/server/view_rect.hpp"

namespace swarmfield::server {

/// True if sequence `a` is newer than `b` on a wrapping 32-bit counter (RFC 1982 style).
[[nodiscard]] constexpr bool sequence_newer(std::uint32_t a, std::uint32_t b) noexcept {
  return a != b && static_cast<std::uint32_t>(a - b) < 0x80000000u;
}

struct ClientState {
  std::uint32_t id = 0;
  protocol::Role role = protocol::Role::kViewer;
  std::string name;
  std::uint64_t token = 0;
  std::uint32_t player_id = 0;  ///< world player id (players only), 0 for viewers

  // UDP: bound to the first endpoint that presented the token.
  std::optional<asio::ip::udp::endpoint> udp_endpoint;
  bool has_udp_sequence = false;
  std::uint32_t last_udp_sequence = 0;   ///< newest datagram sequence received
  std::uint32_t next_send_sequence = 1;  ///< sequence of our next snapshot datagram

  // Written by socket handlers, read by the tick.
  bool has_input = false;
  std::uint32_t last_input_sequence = 0;
  std::optional<std::pair<float, float>> pending_intent;  ///< applied (and cleared) by the tick
  ViewRect view;                         ///< world units; empty = no agents
  std::uint64_t echo_client_time_us = 0;

  std::uint64_t snapshots_sent = 0;
  std::uint64_t bytes_sent = 0;
};

class ClientRegistry {
 public:
  /// `max_clients` (>= 1): add() fails beyond it. Tokens come from `tokens`.
  explicit ClientRegistry(std::size_t max_clients, TokenGenerator tokens = TokenGenerator());

  /// Registers a client with a fresh unique token and id. nullptr when full.
  ClientState* add(protocol::Role role, std::string name, std::uint32_t player_id = 0);
  /// Forgets a client (its token stops working at once). False if unknown.
  bool remove(std::uint32_t client_id);

  [[nodiscard]] ClientState* find(std::uint32_t client_id) noexcept;
  [[nodiscard]] ClientState* find_by_token(std::uint64_t token) noexcept;

  enum class UdpCheck : std::uint8_t { kAccepted, kUnknownToken, kWrongEndpoint };
  /// Checks a datagram's token and sender: an unknown token is refused; a known token binds to
  /// `from` the first time and afterwards only `from` is accepted. On kAccepted, `client` is set.
  UdpCheck check_udp(std::uint64_t token, const asio::ip::udp::endpoint& from, ClientState*& client) noexcept;

  [[nodiscard]] std::size_t size() const noexcept { return clients_.size(); }
  [[nodiscard]] bool full() const noexcept { return clients_.size() >= max_clients_; }
  [[nodiscard]] std::size_t max_clients() const noexcept { return max_clients_; }
  /// Clients ever added.
  [[nodiscard]] std::uint64_t total_added() const noexcept { return total_added_; }
  /// Clients in id order.
  [[nodiscard]] std::map<std::uint32_t, ClientState>& clients() noexcept { return clients_; }

 private:
  std::size_t max_clients_;
  TokenGenerator tokens_;
  std::map<std::uint32_t, ClientState> clients_;
  std::unordered_map<std::uint64_t, std::uint32_t> by_token_;
  std::uint32_t next_id_ = 1;
  std::uint64_t total_added_ = 0;
};

}  // namespace swarmfield::server
