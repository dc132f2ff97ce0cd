#include "swarmfield/server/net/tcp_server.hpp"

#include <spdlog/spdlog.h>

#include "swarmfield/cli/control_chars.hpp"

#include <algorithm>
#include <array>

#include "swarmfield/protocol/transport/framing.hpp"

namespace swarmfield::server {

Frame make_frame(const protocol::TcpMessage& message) {
  const std::vector<std::uint8_t> payload = protocol::encode_tcp_message(message);
  auto frame = std::make_shared<std::vector<std::uint8_t>>();
  frame->reserve(payload.size() + 4);
  if (payload.empty() || !protocol::append_frame(payload, *frame)) return nullptr;
  return frame;
}

TcpServer::TcpServer(asio::io_context& io, TcpListener& listener, std::size_t max_connections,
                     std::size_t max_queue_bytes, std::size_t max_unauthenticated, std::size_t max_per_address,
                     std::size_t max_frame_bytes)
    : listener_(listener),
      acceptor_(io),
      accept_retry_(io),
      max_connections_(max_connections),
      max_queue_bytes_(max_queue_bytes),
      max_unauthenticated_(std::max<std::size_t>(1, max_unauthenticated)),
      max_per_address_(std::max<std::size_t>(1, max_per_address)),
      max_frame_bytes_(max_frame_bytes) {}

bool TcpServer::open(const std::string& address, std::uint16_t port, std::string& error) {
  std::error_code ec;
  const auto addr = asio::ip::make_address(address, ec);
  if (ec) {
    error = "bad --bind address '" + address + "': " + ec.message();
    return false;
  }
  const asio::ip::tcp::endpoint endpoint(addr, port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error = "can not listen on tcp " + address + ":" + std::to_string(port) + ": " + ec.message();
    std::error_code ignored;
    acceptor_.close(ignored);
    return false;
  }
  port_ = acceptor_.local_endpoint(ec).port();
  accepting_ = true;
  do_accept();
  return true;
}

void TcpServer::stop_accepting() {
  accepting_ = false;
  accept_retry_.cancel();
  std::error_code ec;
  acceptor_.close(ec);
}

void TcpServer::do_accept() {
  acceptor_.async_accept([this](std::error_code ec, asio::ip::tcp::socket socket) {
    if (!accepting_) return;
    if (ec) {
      // Transient failures (e.g. EMFILE) must not end the accept loop, nor spin it: the pending
      // connection is still in the backlog, so an immediate retry fails the same way (a busy loop
      // and a log line each time). Retry after a back-off instead.
      ++counters_.accept_errors;
      accept_backoff_ = accept_backoff_.count() == 0 ? kAcceptRetryFirst : std::min(accept_backoff_ * 2, kAcceptRetryMax);
      spdlog::warn("accept failed: {} ({} so far); next try in {} ms", ec.message(), counters_.accept_errors,
                   accept_backoff_.count());
      accept_retry_.expires_after(accept_backoff_);
      accept_retry_.async_wait([this](std::error_code wait_ec) {
        if (!wait_ec && accepting_) do_accept();
      });
      return;
    }
    accept_backoff_ = std::chrono::milliseconds{0};
    ++counters_.accepted;
    // Refusals are decided before a session exists: a refused connection takes no slot, is not
    // counted against its address, and does not linger in a graceful close (a flood of them
    // kept real players out while each waited out the closing timeout).
    std::error_code ep_ec;
    const asio::ip::tcp::endpoint peer = socket.remote_endpoint(ep_ec);
    if (ep_ec) {  // the peer is gone already
      do_accept();
      return;
    }
    const std::optional<asio::ip::address> forwarded = forwarded_address(peer);
    const asio::ip::address address = forwarded ? *forwarded : peer.address();
    const std::size_t from_address = per_address_.count(address);
    // Messages built by append: g++ 12 at -O3 reports a false -Wrestrict on "literal" +
    // std::string temporaries (GCC bug 105651), an error under -Werror.
    std::string refused = "refused connection from ";
    refused.append(address.to_string());
    if (forwarded) refused.append(" (web)");
    if (from_address >= max_per_address_) {
      // One host must not take every slot (the limit counts connections in any state).
      ++counters_.refused_per_address;
      refused.append(": ");
      refused.append(std::to_string(from_address));
      refused.append(" connections from that address already (--max-connections-per-address)");
      log_rate_limited(refused);
      std::string reason = "too many connections from your address (limit ";
      reason.append(std::to_string(max_per_address_));
      reason.append(")");
      refuse_at_once(socket, std::move(reason));
    } else if (sessions_.size() >= max_connections_) {
      ++counters_.refused_full;
      refused.append(": server full (");
      refused.append(std::to_string(sessions_.size()));
      refused.append(" connections open)");
      log_rate_limited(refused);
      refuse_at_once(socket, "server full: too many connections");
    } else {
      const std::uint64_t id = next_session_id_++;
      auto session = std::make_shared<TcpSession>(std::move(socket), *this, id, max_queue_bytes_, max_frame_bytes_);
      if (forwarded) session->forwarded_for(*forwarded);
      session->limit_frames_per_tick(frames_per_tick_);
      sessions_.emplace(id, session);
      per_address_.add(session->remote_address());
      session->start();
      spdlog::debug("connection {} from {}", id, session->remote());
      evict_oldest_unauthenticated();
    }
    do_accept();
  });
}

std::optional<asio::ip::address> TcpServer::forwarded_address(const asio::ip::tcp::endpoint& peer) const {
  if (forwarded_peers_ == nullptr) return std::nullopt;
  const std::optional<std::string> text = forwarded_peers_->find(peer.address().to_string(), peer.port());
  if (!text) return std::nullopt;
  std::error_code ec;
  const asio::ip::address address = asio::ip::make_address(*text, ec);
  if (ec) return std::nullopt;
  return address;
}

void TcpServer::refuse_at_once(asio::ip::tcp::socket& socket, std::string reason) {
  if (reason.size() > protocol::kMaxReasonBytes) reason.resize(protocol::kMaxReasonBytes);
  const Frame frame = make_frame(protocol::Error{protocol::ErrorCode::kServerFull, std::move(reason)});
  std::error_code ec;
  socket.non_blocking(true, ec);
  // A new connection's send buffer is empty: the small Error frame goes in whole or not at all
  // (never waited for). What the peer sent already is read and dropped, so the close is a FIN
  // after the Error, not a reset that could discard it.
  if (!ec && frame) static_cast<void>(socket.write_some(asio::buffer(*frame), ec));
  std::array<std::uint8_t, 512> sink;
  for (int i = 0; i < 8 && socket.available(ec) > 0 && !ec; ++i) static_cast<void>(socket.read_some(asio::buffer(sink), ec));
  socket.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  socket.close(ec);
}

void TcpServer::evict_oldest_unauthenticated() {
  std::size_t pending = 0;
  TcpSession* oldest = nullptr;
  for (auto& [id, session] : sessions_) {
    // Closing ones count too: a connection refused before Hello (a bad frame, a refused Hello)
    // that neither reads nor closes holds its place for the closing timeout.
    if (session->client_id != 0 || session->closed()) continue;
    ++pending;
    // Ids grow with accept order, so the first one met is the oldest.
    if (!oldest) oldest = session.get();
  }
  if (pending <= max_unauthenticated_ || !oldest) return;
  ++counters_.evicted_no_hello;
  log_rate_limited("dropped connection " + std::to_string(oldest->id()) + " (" + oldest->remote() +
                   "): more than " + std::to_string(max_unauthenticated_) +
                   " connections without Hello; the oldest goes");
  // Closed at once, no Error frame: a graceful close waits for the peer to close too, and an
  // idle peer never does, so the slot would stay taken (up to the closing timeout).
  oldest->close();
}

void TcpServer::log_rate_limited(const std::string& what) { refusal_log_.log(what); }

TcpSession::SendResult TcpServer::send(TcpSession& session, Frame frame) {
  return note_send_result(session, session.send(std::move(frame)));
}

TcpSession::SendResult TcpServer::send_latest(TcpSession& session, Frame frame) {
  return note_send_result(session, session.send_latest(std::move(frame)));
}

TcpSession::SendResult TcpServer::skip_latest(TcpSession& session, std::size_t bytes) {
  return note_send_result(session, session.skip_latest(bytes));
}

TcpSession::SendResult TcpServer::note_send_result(TcpSession& session, TcpSession::SendResult result) {
  if (result == TcpSession::SendResult::kEvicted) {
    ++counters_.evicted;
    spdlog::warn("client {} ({}) evicted: send queue above {} bytes (not reading fast enough)", session.client_id,
                 session.remote(), max_queue_bytes_);
  }
  return result;
}

void TcpServer::send_error_and_close(TcpSession& session, protocol::ErrorCode code, std::string reason) {
  if (reason.size() > protocol::kMaxReasonBytes) reason.resize(protocol::kMaxReasonBytes);
  session.send_and_close(make_frame(protocol::Error{code, std::move(reason)}));
}

void TcpServer::reject_bad_message(TcpSession& session, std::string reason) {
  ++counters_.bad_frames;
  if (session.client_id == 0) {
    // Before Hello anyone may send junk, as often as it connects: rate-limited like the other
    // refusals of a connection that never joined (a line each was ~7,700 lines a second).
    log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() + ") closed: reason='" +
                     cli::quotable_ascii(reason) + "'");
  } else if (joined_bad_lines_.take()) {
    spdlog::warn("connection {} ({}) closed: reason='{}'", session.id(), session.remote(), cli::quotable_ascii(reason));
  }
  send_error_and_close(session, protocol::ErrorCode::kBadMessage, std::move(reason));
}

void TcpServer::sweep(std::chrono::steady_clock::time_point now, const Timeouts& timeouts) {
  // Refusals held back by log_rate_limited() are reported even when no new one follows.
  refusal_log_.flush(now);
  joined_bad_lines_.flush(now);
  for (auto& [id, session] : sessions_) {
    if (session->closed()) continue;
    if (session->closing()) {
      if (now - session->closing_since() > timeouts.closing) session->close();
    } else if (const auto since = session->partial_frame_since(); since && now - *since > timeouts.frame) {
      // Closed at once, no Error: a peer that trickles would read it just as slowly, and the
      // buffered part of its frame is released now.
      ++counters_.frame_timeouts;
      log_rate_limited("connection " + std::to_string(id) + " (" + session->remote() + ") did not finish a frame in time; closing");
      session->close();
    } else if (session->client_id == 0 && now - session->connected_at() > timeouts.hello) {
      ++counters_.hello_timeouts;
      log_rate_limited("connection " + std::to_string(id) + " (" + session->remote() + ") sent no Hello in time; closing");
      send_error_and_close(*session, protocol::ErrorCode::kBadMessage, "no Hello received in time");
    }
  }
}

void TcpServer::refill_frame_budgets() {
  for (auto& [id, session] : sessions_) {
    if (session->read_paused()) ++counters_.frame_budget_stops;
    session->refill_frame_budget();
  }
}

void TcpServer::close_all_after(const Frame& frame) {
  for (auto& [id, session] : sessions_) session->send_and_close(frame);
}

void TcpServer::close_all() {
  for (auto& [id, session] : sessions_) session->close();
}

std::size_t TcpServer::sessions_from(const asio::ip::address& address) const noexcept {
  return per_address_.count(address);
}

std::size_t TcpServer::read_buffer_bytes() const noexcept {
  std::size_t total = 0;
  for (const auto& [id, session] : sessions_) total += session->read_buffer_bytes();
  return total;
}

TcpSession* TcpServer::find(std::uint64_t session_id) noexcept {
  auto it = sessions_.find(session_id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

void TcpServer::on_frame(TcpSession& session, std::vector<std::uint8_t>& payload) {
  ++counters_.frames_received;
  counters_.bytes_received += payload.size() + 4;  // + the u32 length prefix
  std::span<const std::uint8_t> bytes = payload;
  if (session.sealed()) {
    if (!session.open_frame(payload, opened_)) {
      ++counters_.unsealed_frames;
      ++counters_.bad_frames;
      log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() +
                       "): a frame of its sealed stream did not open (injected, replayed or forged); closing");
      send_error_and_close(session, protocol::ErrorCode::kBadMessage, "a frame did not open with the session key");
      return;
    }
    bytes = opened_;
  }
  std::string error;
  // Only what a client may send is decoded at all (a compressed snapshot is never inflated).
  auto message = protocol::decode_tcp_message(bytes, &error, protocol::MessageSet::kFromClient);
  if (!message) {
    reject_bad_message(session, "bad message: " + (error.empty() ? std::string("failed verification") : error));
    return;
  }
  listener_.on_message(session, *message);
}

void TcpServer::on_frame_too_large(TcpSession& session) {
  ++counters_.too_large;
  ++counters_.bad_frames;
  log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() + "): frame above " +
                   std::to_string(max_frame_bytes_) + " bytes; closing");
  send_error_and_close(session, protocol::ErrorCode::kFrameTooLarge,
                       "frame larger than " + std::to_string(max_frame_bytes_) + " bytes");
}

void TcpServer::on_bytes_sent(TcpSession&, std::size_t bytes) { counters_.bytes_sent += bytes; }

void TcpServer::on_closed(TcpSession& session) {
  auto it = sessions_.find(session.id());
  if (it == sessions_.end()) return;
  const std::shared_ptr<TcpSession> keep = it->second;  // alive through the listener call
  sessions_.erase(it);
  per_address_.remove(keep->remote_address());
  listener_.on_disconnected(*keep);
}

}  // namespace swarmfield::server
