#include "swarmfield/server/tcp_server.hpp"

#include <spdlog/spdlog.h>

#include "swarmfield/protocol/framing.hpp"

namespace swarmfield::server {

Frame make_frame(const protocol::TcpMessage& message) {
  const std::vector<std::uint8_t> payload = protocol::encode_tcp_message(message);
  auto frame = std::make_shared<std::vector<std::uint8_t>>();
  frame->reserve(payload.size() + 4);
  if (payload.empty() || !protocol::append_frame(payload, *frame)) return nullptr;
  return frame;
}

TcpServer::TcpServer(asio::io_context& io, TcpListener& listener, std::size_t max_connections,
                     std::size_t max_queue_bytes)
    : listener_(listener),
      acceptor_(io),
      max_connections_(max_connections),
      max_queue_bytes_(max_queue_bytes) {}

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
  std::error_code ec;
  acceptor_.close(ec);
}

void TcpServer::do_accept() {
  acceptor_.async_accept([this](std::error_code ec, asio::ip::tcp::socket socket) {
    if (!accepting_) return;
    if (ec) {
      // Transient failures (e.g. EMFILE) must not end the accept loop.
      spdlog::warn("accept failed: {}", ec.message());
    } else {
      const std::uint64_t id = next_session_id_++;
      auto session = std::make_shared<TcpSession>(std::move(socket), *this, id, max_queue_bytes_);
      sessions_.emplace(id, session);
      ++counters_.accepted;
      session->start();
      if (sessions_.size() > max_connections_) {
        ++counters_.refused_full;
        send_error_and_close(*session, protocol::ErrorCode::kServerFull, "server full: too many connections");
      } else {
        spdlog::debug("connection {} from {}", id, session->remote());
      }
    }
    do_accept();
  });
}

TcpSession::SendResult TcpServer::send(TcpSession& session, Frame frame) {
  const auto result = session.send(std::move(frame));
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
  spdlog::warn("connection {} ({}): {}; closing", session.id(), session.remote(), reason);
  send_error_and_close(session, protocol::ErrorCode::kBadMessage, std::move(reason));
}

void TcpServer::sweep(std::chrono::steady_clock::time_point now, std::chrono::steady_clock::duration handshake_timeout,
                      std::chrono::steady_clock::duration closing_timeout) {
  for (auto& [id, session] : sessions_) {
    if (session->closed()) continue;
    if (session->closing()) {
      if (now - session->closing_since() > closing_timeout) session->close();
    } else if (session->client_id == 0 && now - session->connected_at() > handshake_timeout) {
      spdlog::info("connection {} ({}) sent no Hello in time; closing", id, session->remote());
      send_error_and_close(*session, protocol::ErrorCode::kBadMessage, "no Hello received in time");
    }
  }
}

void TcpServer::close_all_after(const Frame& frame) {
  for (auto& [id, session] : sessions_) session->send_and_close(frame);
}

void TcpServer::close_all() {
  for (auto& [id, session] : sessions_) session->close();
}

TcpSession* TcpServer::find(std::uint64_t session_id) noexcept {
  auto it = sessions_.find(session_id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

void TcpServer::on_frame(TcpSession& session, std::vector<std::uint8_t>& payload) {
  std::string error;
  auto message = protocol::decode_tcp_message(payload, &error);
  if (!message) {
    reject_bad_message(session, "bad message: " + (error.empty() ? std::string("failed verification") : error));
    return;
  }
  listener_.on_message(session, *message);
}

void TcpServer::on_frame_too_large(TcpSession& session) {
  ++counters_.too_large;
  ++counters_.bad_frames;
  spdlog::warn("connection {} ({}): frame above {} bytes; closing", session.id(), session.remote(),
               protocol::kMaxFrameBytes);
  send_error_and_close(session, protocol::ErrorCode::kFrameTooLarge,
                       "frame larger than " + std::to_string(protocol::kMaxFrameBytes) + " bytes");
}

void TcpServer::on_bytes_sent(TcpSession&, std::size_t bytes) { counters_.bytes_sent += bytes; }

void TcpServer::on_closed(TcpSession& session) {
  auto it = sessions_.find(session.id());
  if (it == sessions_.end()) return;
  const std::shared_ptr<TcpSession> keep = it->second;  // alive through the listener call
  sessions_.erase(it);
  listener_.on_disconnected(*keep);
}

}  // namespace swarmfield::server
