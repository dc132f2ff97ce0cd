#include "swarmfield/server/client_registry.hpp"

namespace swarmfield::server {

ClientRegistry::ClientRegistry(std::size_t max_clients, TokenGenerator tokens)
    : max_clients_(max_clients > 0 ? max_clients : 1), tokens_(std::move(tokens)) {}

ClientState* ClientRegistry::add(protocol::Role role, std::string name, std::uint32_t player_id) {
  if (full()) return nullptr;
  std::uint64_t token = tokens_.next();
  while (by_token_.count(token) != 0) token = tokens_.next();  // astronomically rare
  std::uint32_t id = next_id_++;
  if (next_id_ == 0) next_id_ = 1;  // 0 is never a client id
  ClientState state;
  state.id = id;
  state.role = role;
  state.name = std::move(name);
  state.token = token;
  state.player_id = player_id;
  auto [it, inserted] = clients_.emplace(id, std::move(state));
  if (!inserted) return nullptr;
  by_token_.emplace(token, id);
  ++total_added_;
  return &it->second;
}

bool ClientRegistry::remove(std::uint32_t client_id) {
  auto it = clients_.find(client_id);
  if (it == clients_.end()) return false;
  by_token_.erase(it->second.token);
  clients_.erase(it);
  return true;
}

ClientState* ClientRegistry::find(std::uint32_t client_id) noexcept {
  auto it = clients_.find(client_id);
  return it == clients_.end() ? nullptr : &it->second;
}

ClientState* ClientRegistry::find_by_token(std::uint64_t token) noexcept {
  if (token == 0) return nullptr;
  auto it = by_token_.find(token);
  return it == by_token_.end() ? nullptr : find(it->second);
}

ClientRegistry::UdpCheck ClientRegistry::check_udp(std::uint64_t token, const asio::ip::udp::endpoint& from,
                                                   ClientState*& client) noexcept {
  client = nullptr;
  ClientState* c = find_by_token(token);
  if (c == nullptr) return UdpCheck::kUnknownToken;
  if (!c->udp_endpoint) {
    c->udp_endpoint = from;
  } else if (*c->udp_endpoint != from) {
    return UdpCheck::kWrongEndpoint;
  }
  client = c;
  return UdpCheck::kAccepted;
}

}  // namespace swarmfield::server
