// The Server's reconnects (server.hpp, --reconnect-grace): a client whose connection drops
// keeps its session and player for the grace period; a Hello with the session's resume secret
// gets them back with fresh keys (protocol/transport/resume.hpp).
#include <spdlog/spdlog.h>

#include <algorithm>

#include "server_clock.hpp"
#include "swarmfield/cli/control_chars.hpp"
#include "swarmfield/server/net/handshake.hpp"
#include "swarmfield/server/server.hpp"

namespace swarmfield::server {

using server_detail::seconds;

void Server::forbid_resume(ClientState& client) {
  client.resumable = false;
  resume_index_.erase(protocol::resume_index(protocol::resume_proof(client.resume)));
}

void Server::detach(ClientState& client) {
  client.detached_since = Clock::now();
  // The player stands still until its client is back (the rules decide the rest: the horde
  // may still reach it).
  if (client.player_id != 0) {
    client.pending_intent = std::make_pair(0.0f, 0.0f);
    client.pending_fire = {};
  }
  client.udp_endpoint.reset();
  ++sessions_detached_;
  if (session_lines_.take()) spdlog::info("client {} '{}' lost its connection; its session waits {:g} s for a resume (--reconnect-grace)",
               client.id, cli::printable_ascii(client.name), config_.reconnect_grace_s);
}

void Server::expire_detached(Clock::time_point now) {
  std::vector<std::uint32_t> expired;
  for (const auto& [id, c] : clients_.clients()) {
    if (c.detached_since && now - *c.detached_since > seconds(config_.reconnect_grace_s)) expired.push_back(id);
  }
  for (const std::uint32_t id : expired) {
    ++sessions_expired_;
    remove_client(id);
  }
}

void Server::resume_session(TcpSession& session, const protocol::Hello& hello) {
  if (auto error = check_hello(hello, false)) {  // the version; a resumed session has its slot
    tcp_.send_error_and_close(session, error->code, error->reason);
    return;
  }
  protocol::ResumeProof proof{};
  std::copy(hello.resume.begin(), hello.resume.end(), proof.begin());
  const auto it = config_.reconnect_grace_s > 0.0 ? resume_index_.find(protocol::resume_index(proof)) : resume_index_.end();
  ClientState* client = it == resume_index_.end() ? nullptr : clients_.find(it->second);
  if (client != nullptr && !client->resumable) client = nullptr;  // said Bye, or closed by the server
  if (client == nullptr) {
    ++resumes_refused_;
    const std::string why =
        "resume refused: no session waits for this secret (it was used, the client left, or --reconnect-grace "
        "passed): join again";
    tcp_.log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() + ") " + why);
    tcp_.send_error_and_close(session, protocol::ErrorCode::kBadMessage, why);
    return;
  }
  // A session resumed from another address moves there: that address's share holds as for a
  // join (else sessions joined from one address and resumed from a second took every slot). The
  // session is left as it was, to resume from where there is room.
  if (counted_address(session.remote_address()) != counted_address(client->address) &&
      refuse_over_address_share(session, client_share_per_address(), static_cast<std::size_t>(config_.max_clients),
                                "resume refused")) {
    return;
  }
  // The secret proves the session: if its old connection is still open (the server has not
  // seen it drop yet), the new one takes over.
  if (const auto sit = session_of_client_.find(client->id); sit != session_of_client_.end()) {
    if (TcpSession* old = tcp_.find(sit->second)) old->close();
    session_of_client_.erase(sit);
    snapshot_routes_.erase(client->id);
  }
  resume_index_.erase(it);
  clients_per_address_.remove(client->address);
  // Fresh keys and the next secret, derived from this one: both ends know them, none travels.
  const protocol::ResumedKeys keys = protocol::derive_resumed_keys(client->resume);
  clients_.rekey(*client, keys.client_to_server, keys.server_to_client);
  client->resume = keys.next;
  resume_index_[protocol::resume_index(protocol::resume_proof(client->resume))] = client->id;
  client->detached_since.reset();
  // The silence clock restarts (the Hello was valid), but the trickle window does not: a
  // client that drops and resumes instead of sending must still send one message per 2 s on
  // average, or it is closed for good (and can not resume).
  client->last_activity = Clock::now();
  client->has_input = false;  // a new connection numbers its inputs afresh
  if (client->sealed) session.seal_from_now(keys.client_to_server, keys.server_to_client);
  ++resumes_;
  if (!attach_session(session, *client)) return;
  if (session_lines_.take()) spdlog::info("client {} '{}' resumed its session from {} (player {})", client->id,
               cli::printable_ascii(client->name), session.remote(), client->player_id);
}

}  // namespace swarmfield::server
