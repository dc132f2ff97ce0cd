// The Server's clients (server.hpp): their TCP messages (Hello and the Welcome with the map,
// inputs, Bye), inputs from either transport, idle clients closed, departures.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "server_clock.hpp"
#include "swarmfield/protocol/transport/sequence.hpp"
#include "swarmfield/cli/control_chars.hpp"
#include "swarmfield/server/net/handshake.hpp"
#include "swarmfield/server/ops/agones_client.hpp"
#include "swarmfield/server/server.hpp"
#include "swarmfield/server/spawn_point.hpp"

namespace swarmfield::server {
namespace {

using cli::printable_ascii;
using server_detail::seconds;
using protocol::unix_seconds;

const char* message_name(const protocol::TcpMessage& m) {
  static constexpr const char* kNames[] = {"Hello", "Welcome", "MapChunk", "Error", "Bye", "Input", "SnapshotData", "MapDelta", "SessionSalt"};
  return m.index() < std::size(kNames) ? kNames[m.index()] : "?";
}

}  // namespace

void Server::on_message(TcpSession& session, protocol::TcpMessage& message) {
  if (stopping_) return;
  if (const auto* hello = std::get_if<protocol::Hello>(&message)) {
    if (session.client_id != 0) {
      tcp_.reject_bad_message(session, "unexpected Hello: the handshake is already done");
      return;
    }
    handle_hello(session, *hello);
    return;
  }
  if (session.client_id == 0) {
    tcp_.reject_bad_message(session, std::string("expected Hello first, got ") + message_name(message));
    return;
  }
  ClientState* client = clients_.find(session.client_id);
  if (client == nullptr) return;  // being removed
  client->last_activity = Clock::now();
  ++client->activity;
  if (const auto* input = std::get_if<protocol::Input>(&message)) {
    ++tcp_inputs_;
    apply_input(*client, *input, false);
  } else if (const auto* bye = std::get_if<protocol::Bye>(&message)) {
    if (session_lines_.take()) spdlog::info("client {} says bye: reason='{}'", client->id, cli::quotable_ascii(bye->reason));
    forbid_resume(*client);  // it left on purpose: its player leaves now
    session.close();
  } else {
    tcp_.reject_bad_message(session, std::string("unexpected message ") + message_name(message) + " from a client");
  }
}

void Server::handle_hello(TcpSession& session, const protocol::Hello& hello) {
  if (!hello.resume.empty() && !hello.connect_token.empty()) {
    tcp_.send_error_and_close(session, protocol::ErrorCode::kBadMessage,
                              "a Hello carries a connect token or a resume proof, not both");
    return;
  }
  if (!hello.resume.empty()) {
    resume_session(session, hello);
    return;
  }
  if (auto error = check_hello(hello, clients_.full())) {
    tcp_.log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() + ") refused: " + error->reason);
    tcp_.send_error_and_close(session, error->code, error->reason);
    return;
  }
  // A browser spectator behind the web gateway with --web-spectators-open watches without a
  // token (the gateway admits only viewers); its stream is not sealed.
  const bool open_spectator = token_key_ && config_.web_spectators_open && session.forwarded() &&
                              hello.connect_token.empty() && hello.role == protocol::Role::kViewer;
  // Refusals that do not need the token come first: a token is used up once it is taken. With
  // tokens the backend decides who comes, except for open spectators, whom nobody vouches for:
  // they get open mode's share of the spectator slots (else two addresses at the gateway's 16
  // connections each took all 32 of a 64-slot server's).
  std::size_t share = client_share_per_address();
  const std::size_t slots = share == 0 && open_spectator ? web_spectator_slots() : static_cast<std::size_t>(config_.max_clients);
  if (share == 0 && open_spectator) share = std::max<std::size_t>(1, slots / 8);
  if (refuse_over_address_share(session, share, slots, "refused")) return;
  std::optional<protocol::OpenedToken> token;
  if ((token_key_ || !hello.connect_token.empty()) && !open_spectator) {
    token = admit_token(session, hello);
    if (!token) return;
  }
  // With a token the backend decided the role and name; the Hello's are not the client's to set.
  const protocol::Role role = token ? token->grant.role : hello.role;
  std::string name = token ? token->grant.name : hello.name;
  if (role == protocol::Role::kPlayer && refuse_player_in_playback(session, hello)) return;
  std::uint32_t player_id = 0;
  if (role == protocol::Role::kPlayer) {
    // Apart from the players already there: at the map's spawn cells, else round the centre.
    std::vector<sim::Vec2> players;
    for (const sim::Player& p : world_.players()) players.push_back(p.position);
    const sim::Vec2 at = player_spawn_point(world_.map(), spawn_cells_, spawn_, players);
    player_id = world_.add_player(at);
    record_input({ReplayEvent::Kind::kAddPlayer, player_id, at});
  }
  // A token session's keys: the token's hashed with a fresh salt (sent in the clear below), so a
  // replayed Hello never gets keys another session had.
  protocol::SessionSalt salt;
  std::optional<std::pair<protocol::SessionKey, protocol::SessionKey>> session_keys;
  if (token) {
    protocol::random_bytes(salt.salt);
    const protocol::TokenSessionKeys keys =
        protocol::derive_token_session_keys(token->client_to_server, token->server_to_client, salt.salt);
    session_keys.emplace(keys.client_to_server, keys.server_to_client);
  }
  ClientState* client = clients_.add(role, std::move(name), player_id, session_keys);
  if (client == nullptr) {  // check_hello saw room, so this is only defensive
    if (player_id != 0) {
      world_.remove_player(player_id);
      record_input({ReplayEvent::Kind::kRemovePlayer, player_id, {}});
    }
    tcp_.send_error_and_close(session, protocol::ErrorCode::kServerFull, "server full");
    return;
  }
  if (token) {
    ++tokens_accepted_;
    client->user_id = token->grant.client_id;
    client->idle_timeout_s = token->grant.timeout_s == 0 ? 0.0 : std::clamp(double(token->grant.timeout_s), 1.0, 3600.0);
    // The salt in the clear, then everything else (the Welcome first) sealed both ways.
    if (tcp_.send(session, make_frame(salt)) != TcpSession::SendResult::kQueued) return;
    session.seal_from_now(session_keys->first, session_keys->second);
  }
  // A browser behind the web gateway never resumes (the page starts a new session): its slot is
  // freed when its stream ends, not held for the grace.
  if (session.forwarded()) client->resumable = false;
  if (config_.reconnect_grace_s > 0.0 && client->resumable) {
    client->resume = protocol::make_resume_secret();
    resume_index_[protocol::resume_index(protocol::resume_proof(client->resume))] = client->id;
  }
  client->sealed = token.has_value();
  if (!attach_session(session, *client)) return;
  if (player_id != 0) {
    had_player_ = true;  // the match has begun (--shutdown-when-empty), even if it leaves before a tick
    operations_player_joined(*client);
  }
  if (!session_lines_.take()) return;  // the line is held back (a join-and-leave loop)
  // A viewer has no player: its line names none (it said "player 0 at 0.0,0.0", a place nobody was).
  const sim::Player* player = world_.find_player(player_id);
  const std::string where =
      player ? fmt::format(" (player {} at {:.1f},{:.1f})", player_id, player->position.x, player->position.y)
             : std::string();
  spdlog::info("client {} '{}' joined as {} from {}{}{}; {} clients", client->id, cli::quotable_ascii(client->name),
               role == protocol::Role::kPlayer ? "player" : "viewer", session.remote(), where,
               token ? fmt::format(" with a connect token for user {}", client->user_id) : std::string(), clients_.size());
}

bool Server::refuse_over_address_share(TcpSession& session, std::size_t share, std::size_t slots,
                                       std::string_view what) {
  if (share == 0 || clients_per_address_.count(session.remote_address()) < share) return false;
  ++refused_address_share_;
  const std::string why = "server full for your address: it holds " + std::to_string(share) + " of " +
                          std::to_string(slots) + " slots already (--max-clients-per-address)";
  tcp_.log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() + ") " +
                        std::string(what) + ": " + why);
  tcp_.send_error_and_close(session, protocol::ErrorCode::kServerFull, why);
  return true;
}

bool Server::attach_session(TcpSession& session, ClientState& client) {
  client.address = session.remote_address();
  clients_per_address_.add(client.address);
  session.client_id = client.id;
  session_of_client_[client.id] = session.id();
  snapshot_routes_[client.id] = std::make_unique<SnapshotRoute>(snapshot_params());

  protocol::Welcome welcome;
  welcome.client_id = client.id;
  welcome.udp = client.credentials;
  welcome.tick_hz = static_cast<std::uint16_t>(config_.tick_hz);
  welcome.snapshot_hz = static_cast<std::uint16_t>(config_.snapshot_hz);
  welcome.udp_port = announced_udp_port();
  welcome.player_id = client.player_id;
  welcome.map = map_transfer_.info;
  welcome.kinds = kind_infos(world_.swarm().kind_table());
  if (config_.reconnect_grace_s > 0.0 && client.resumable) welcome.resume.assign(client.resume.begin(), client.resume.end());
  if (tcp_.send(session, make_frame(welcome)) != TcpSession::SendResult::kQueued) return false;
  for (const Frame& chunk : map_transfer_.chunks) {
    if (tcp_.send(session, chunk) != TcpSession::SendResult::kQueued) return false;
  }
  return send_barricades(session);
}

std::optional<protocol::OpenedToken> Server::admit_token(TcpSession& session, const protocol::Hello& hello) {
  const auto refuse = [&](const std::string& why) {
    tcp_.log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() + ") refused: " + why);
    tcp_.send_error_and_close(session, protocol::ErrorCode::kBadMessage, why);
    return std::nullopt;
  };
  if (!token_key_) {
    ++tokens_missing_;
    return refuse("this server runs --auth open and takes no connect tokens: connect without one");
  }
  if (hello.connect_token.empty()) {
    ++tokens_missing_;
    return refuse("this server admits only clients with a connect token (--auth tokens): ask the match's backend for one");
  }
  const std::uint64_t now = unix_seconds();
  protocol::TokenOpenResult opened = protocol::open_hello_token(hello.connect_token, *token_key_, now);
  auto refused = [&](protocol::TokenRefusal why, const std::string& words) {
    ++token_refusals_[static_cast<std::size_t>(why)];
    return refuse(std::string("connect token refused (") + protocol::token_refusal_name(why) + "): " + words);
  };
  if (!opened.token) return refused(opened.refusal, opened.error);
  if (!names_this_server(opened.token->grant.server_addresses)) {
    return refused(protocol::TokenRefusal::kWrongServer, "it is for another server");
  }
  switch (used_tokens_.take(opened.token->tag, opened.token->expire_unix_s, now)) {
    case UsedTokens::Take::kTaken: break;
    case UsedTokens::Take::kReplayed: return refused(protocol::TokenRefusal::kReplayed, "it was used before");
    case UsedTokens::Take::kFull:
      return refused(protocol::TokenRefusal::kReplayed, "too many unexpired tokens in use; try again later");
  }
  return std::move(opened.token);
}

std::size_t Server::web_spectator_slots() const noexcept {
  return config_.max_web_spectators > 0 ? static_cast<std::size_t>(config_.max_web_spectators)
                                        : std::max<std::size_t>(1, static_cast<std::size_t>(config_.max_clients) / 2);
}

std::size_t Server::client_share_per_address() const noexcept {
  if (config_.max_clients_per_address > 0) return static_cast<std::size_t>(config_.max_clients_per_address);
  if (token_key_) return 0;  // the backend decides who comes
  return static_cast<std::size_t>(std::max<std::int64_t>(1, config_.max_clients / 8));
}

bool Server::names_this_server(const std::vector<std::string>& addresses) const {
  for (const std::string& a : addresses) {
    if (!config_.public_address.empty()) {
      if (a == config_.public_address) return true;
      continue;
    }
    // A port of ours: the bound one, or on Agones the allocated host port (a TCPUDP port is one
    // HostPort for both protocols), which is what a matchmaker hands out; and on Agones, once the
    // sidecar told it, the host must be the GameServer's status.address (two GameServers on two
    // nodes may be given one host port: a token for the other would join here too). Elsewhere
    // any host (see --public-address).
    const std::size_t colon = a.rfind(':');
    if (colon == std::string::npos) continue;
    const std::string port = a.substr(colon + 1);
    const bool our_port = port == std::to_string(tcp_port()) ||
                          (agones_ && agones_->public_port() != 0 && port == std::to_string(agones_->public_port()));
    if (!our_port) continue;
    const std::string pinned = agones_ ? agones_->public_host() : std::string();
    if (pinned.empty()) return true;
    std::string host = a.substr(0, colon);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host == pinned) return true;
  }
  return false;
}

void Server::apply_input(ClientState& client, const protocol::Input& input, bool via_udp) {
  // A session whose connection dropped stands still until it is resumed (with fresh keys): its
  // old keys may still seal packets, but they move nothing.
  if (client.detached_since) return;
  // Acks are cumulative facts about what the client decoded: any input's count, late or not.
  on_snapshot_ack(client, input.snapshot_ack, via_udp);
  // Only an input that moves the sequence forward by a bounded step counts (equal is accepted:
  // idempotent). Older ones arrived out of order; one far ahead is hostile or broken, and
  // taking it would make every later genuine input look old (a jump of ~2^31 froze a player).
  if (client.has_input && input.sequence != client.last_input_sequence &&
      !protocol::sequence_advances(input.sequence, client.last_input_sequence)) {
    return;
  }
  client.has_input = true;
  client.last_input_sequence = input.sequence;
  if (client.player_id != 0) client.pending_intent = std::make_pair(input.move_x, input.move_y);
  if (input.fire && client.player_id == 0) {
    if (!client.viewer_fire_refused) ++actions_refused_;  // a viewer has no gun (counted per press)
    client.viewer_fire_refused = true;
  } else if (client.player_id != 0) {
    client.pending_fire = {input.fire, input.fire ? input.aim_x : 0.0f, input.fire ? input.aim_y : 0.0f};
  }
  if (!input.fire) client.viewer_fire_refused = false;
  if (input.build_id > client.last_build_id) {
    // A client repeats its newest request in every input until it makes another: only a new id
    // is a new request (old inputs were dropped above by sequence).
    client.last_build_id = input.build_id;
    if (client.player_id == 0 || client.pending_builds.size() >= ClientState::kMaxPendingBuilds) {
      ++actions_refused_;  // a viewer builds nothing; a flood of requests within one tick is cut
    } else {
      client.pending_builds.push_back({input.build_x, input.build_y});
    }
  }
  client.view = ViewRect::from_corners(input.view_x0, input.view_y0, input.view_x1, input.view_y1);
  client.echo_client_time_us = input.client_time_us;
}

void Server::close_idle_clients(Clock::time_point now) {
  for (auto& [id, c] : clients_.clients()) {
    const double timeout_s = c.idle_timeout_s > 0.0 ? c.idle_timeout_s : config_.idle_timeout_s;
    bool trickle = false;
    if (now - c.last_activity <= seconds(timeout_s)) {
      if (now - c.activity_since < seconds(timeout_s)) continue;
      // A whole timeout window has passed: it must have held one message per 2 s on average
      // (clients send keep-alives every 0.1 s over UDP, every 1 s over TCP).
      const auto wanted = static_cast<std::uint32_t>(std::max(1.0, std::floor(timeout_s / 2.0)));
      trickle = c.activity < wanted;
      c.activity = 0;
      c.activity_since = now;
      if (!trickle) continue;
    }
    const auto sit = session_of_client_.find(id);
    TcpSession* session = sit == session_of_client_.end() ? nullptr : tcp_.find(sit->second);
    if (session == nullptr || !session->is_open()) continue;
    ++idle_timeouts_;
    if (trickle) ++trickle_timeouts_;
    forbid_resume(c);  // the server closed it: the slot is free for someone else
    tcp_.log_rate_limited("client " + std::to_string(id) + " (" + session->remote() + ") sent " +
                          (trickle ? "less than one message per 2 s" : "nothing") + " for " +
                          fmt::format("{:g}", timeout_s) + " s; closing");
    // The slot is free for someone else now; a peer that does not read is cut by the closing timeout.
    tcp_.send_error_and_close(*session, protocol::ErrorCode::kBadMessage,
                              trickle ? fmt::format("less than one message per 2 s for {:g} s (--idle-timeout)", timeout_s)
                                      : fmt::format("idle for {:g} s (--idle-timeout)", timeout_s));
  }
}

void Server::on_disconnected(TcpSession& session) {
  if (session.client_id == 0) return;
  const std::uint32_t id = session.client_id;
  const auto sit = session_of_client_.find(id);
  if (sit == session_of_client_.end() || sit->second != session.id()) return;  // resumed on another connection
  session_of_client_.erase(sit);
  snapshot_routes_.erase(id);
  ClientState* c = clients_.find(id);
  if (c == nullptr) return;
  // A session the server ended with an Error (a bad message, an unsealed frame) is over: its
  // client does not resume one (README, Reconnects), so holding its slot and player for the
  // grace would only keep them from others, and its secret must not reopen it.
  if (config_.reconnect_grace_s > 0.0 && c->resumable && !session.ended_by_server() && !stopping_) {
    detach(*c);
    return;
  }
  remove_client(id);
}

void Server::remove_client(std::uint32_t id) {
  ClientState* c = clients_.find(id);
  if (c == nullptr) return;
  if (c->player_id != 0) {
    world_.remove_player(c->player_id);
    record_input({ReplayEvent::Kind::kRemovePlayer, c->player_id, {}});
    operations_player_left(*c);
  }
  if (!session_lines_.take()) {
    // (the line is held back; the client leaves all the same)
  } else if (c->snapshot_entries == 0) {
    // No agent entry was sent (an empty view, or it left at once): a per-entry split means nothing.
    spdlog::info("client {} '{}' left (snapshots sent {}, bytes {}; no agent entries); {} clients", id,
                 cli::quotable_ascii(c->name), c->snapshots_sent, c->bytes_sent, clients_.size() - 1);
  } else {
    const double entries = static_cast<double>(c->snapshot_entries);
    spdlog::info(
        "client {} '{}' left (snapshots sent {}, bytes {}; {:.3f} bytes per agent entry over {} entries: residuals "
        "{:.3f}, escapes {:.3f}, added {:.3f}, the rest {:.3f}); {} clients",
        id, cli::quotable_ascii(c->name), c->snapshots_sent, c->bytes_sent,
        static_cast<double>(c->snapshot_payload_bytes) / entries, c->snapshot_entries,
        static_cast<double>(c->snapshot_residual_bytes) / entries,
        static_cast<double>(c->snapshot_escape_bits) / 8.0 / entries, static_cast<double>(c->snapshot_added_bits) / 8.0 / entries,
        (static_cast<double>(c->snapshot_payload_bytes) - static_cast<double>(c->snapshot_residual_bytes) -
         static_cast<double>(c->snapshot_escape_bits + c->snapshot_added_bits) / 8.0) /
            entries,
        clients_.size() - 1);
  }
  if (const std::optional<double> rate = viewer_snapshot_rate(*c)) left_viewer_rates_.add(*rate);
  resume_index_.erase(protocol::resume_index(protocol::resume_proof(c->resume)));
  clients_per_address_.remove(c->address);
  clients_.remove(id);
}

}  // namespace swarmfield::server
