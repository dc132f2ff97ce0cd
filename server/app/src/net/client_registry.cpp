#include "swarmfield/server/net/client_registry.hpp"

namespace swarmfield::server {

ClientRegistry::ClientRegistry(std::size_t max_clients) : max_clients_(max_clients > 0 ? max_clients : 1) {}

ClientState* ClientRegistry::add(protocol::Role role, std::string name, std::uint32_t player_id,
                                 const std::optional<std::pair<protocol::SessionKey, protocol::SessionKey>>& token_keys) {
  if (full()) return nullptr;
  protocol::SessionCredentials credentials = protocol::make_session_credentials();
  while (by_token_.count(credentials.token) != 0) credentials = protocol::make_session_credentials();  // 2^-128
  if (token_keys) {
    credentials.client_to_server = token_keys->first;
    credentials.server_to_client = token_keys->second;
  }
  std::uint32_t id = next_id_++;
  if (next_id_ == 0) next_id_ = 1;  // 0 is never a client id
  auto [it, inserted] = clients_.try_emplace(id, id, credentials);
  if (!inserted) return nullptr;
  ClientState& state = it->second;
  state.role = role;
  state.name = std::move(name);
  state.player_id = player_id;
  state.last_activity = ClientState::Clock::now();
  state.activity_since = state.last_activity;
  by_token_.emplace(credentials.token, id);
  ++total_added_;
  return &state;
}

void ClientRegistry::rekey(ClientState& client, const protocol::SessionKey& client_to_server,
                           const protocol::SessionKey& server_to_client) {
  protocol::SessionCredentials credentials = protocol::make_session_credentials();
  while (by_token_.count(credentials.token) != 0) credentials = protocol::make_session_credentials();  // 2^-128
  credentials.client_to_server = client_to_server;
  credentials.server_to_client = server_to_client;
  by_token_.erase(client.token());
  client.credentials = credentials;
  client.channel = protocol::PacketChannel(protocol::PacketChannel::Side::kServer, credentials);
  client.udp_endpoint.reset();
  client.challenges = {};
  client.challenges_in_window = 0;
  client.acks = AckTracker{};
  by_token_.emplace(credentials.token, client.id);
}

bool ClientRegistry::remove(std::uint32_t client_id) {
  auto it = clients_.find(client_id);
  if (it == clients_.end()) return false;
  by_token_.erase(it->second.token());
  clients_.erase(it);
  return true;
}

ClientState* ClientRegistry::find(std::uint32_t client_id) noexcept {
  auto it = clients_.find(client_id);
  return it == clients_.end() ? nullptr : &it->second;
}

ClientState* ClientRegistry::find_by_token(const protocol::SessionToken& token) noexcept {
  auto it = by_token_.find(token);
  return it == by_token_.end() ? nullptr : find(it->second);
}

}  // namespace swarmfield::server
