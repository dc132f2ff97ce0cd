// The web gateway's WebSocket relay (web_gateway_impl.hpp): a browser's WebSocket, accepted by
// Beast, and the connection to the game port it is relayed to.
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "web_gateway_impl.hpp"

namespace swarmfield::server::web_detail {

namespace websocket = beast::websocket;

namespace {

constexpr std::size_t kGameReadBytes = 16 * 1024;
/// Bytes waiting for the game port above which a browser is closed: what it sends is a Hello,
/// ~10 Inputs a second and a Bye, so only a peer that floods reaches it.
constexpr std::size_t kMaxGameQueueBytes = 64 * 1024;

/// A WebSocket relayed to the game port: browser messages become length-prefixed frames, the
/// game port's frames become binary messages. One write in flight each way (Beast allows one
/// outstanding read and one write per stream).
class RelaySession : public std::enable_shared_from_this<RelaySession> {
 public:
  RelaySession(WebGateway::Impl& gateway, std::shared_ptr<Slot> slot, tcp::socket socket)
      : gateway_(gateway), slot_(std::move(slot)), ws_(std::move(socket)), game_(gateway.io) {}

  ~RelaySession() {
    if (registered_port_ != 0) gateway_.peers.remove(registered_address_, registered_port_);
    if (counted_) --gateway_.relays;
  }

  /// `early`: bytes the browser sent after its request head, read with it (WebSocket frames sent
  /// before the 101 answer, against RFC 6455 but harmless): they are the stream's first frames.
  void start(http::request<http::empty_body> request, std::string early) {
    beast::get_lowest_layer(ws_).expires_never();  // the WebSocket keeps its own time
    beast::error_code option_ec;
    beast::get_lowest_layer(ws_).socket().set_option(
        net::socket_base::send_buffer_size(gateway_.options.browser_send_buffer), option_ec);
    beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay(true), option_ec);
    websocket::stream_base::timeout timeout{};
    timeout.handshake_timeout = gateway_.options.handshake_timeout;
    timeout.idle_timeout = gateway_.options.idle_timeout;
    timeout.keep_alive_pings = true;
    ws_.set_option(timeout);
    ws_.read_message_max(protocol::kMaxClientFrameBytes);
    ws_.binary(true);
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "swarmfield"); }));
    auto accepted = [self = shared_from_this()](beast::error_code ec) {
      if (ec) {
        ++self->gateway_.bad_requests;
        return;
      }
      if (self->gateway_.relays >= self->gateway_.options.max_spectators) {
        ++self->gateway_.spectators_full;
        return self->refuse("spectators full: " + std::to_string(self->gateway_.options.max_spectators) +
                                " watch already (--max-web-spectators)",
                            protocol::ErrorCode::kServerFull);
      }
      ++self->gateway_.relays;
      self->counted_ = true;
      self->connect_game();
    };
    if (early.empty()) {
      ws_.async_accept(request, std::move(accepted));
    } else {
      // Beast takes early frames only with the request's own bytes: the request written out
      // again, then what followed it (before, they were dropped and the browser was told after
      // 3 s that it sent no Hello).
      std::ostringstream head;
      head << request;
      handshake_bytes_ = head.str() + early;
      ws_.async_accept(net::buffer(handshake_bytes_), std::move(accepted));
    }
  }

 private:
  void connect_game() {
    beast::error_code ec;
    const net::ip::address game_address = net::ip::make_address(gateway_.options.game_address, ec);
    if (ec) return close();
    game_.open(game_address.is_v4() ? tcp::v4() : tcp::v6(), ec);
    if (!ec) game_.set_option(net::socket_base::receive_buffer_size(gateway_.options.game_receive_buffer), ec);
    if (!ec) game_.bind(tcp::endpoint(game_address, 0), ec);
    if (ec) {
      spdlog::warn("web: can not open a connection to the game port: {}", ec.message());
      return close();
    }
    const tcp::endpoint local = game_.local_endpoint(ec);
    if (ec) return close();
    // Registered before the connect: the game port looks it up when it accepts.
    registered_address_ = local.address().to_string();
    registered_port_ = local.port();
    gateway_.peers.add(registered_address_, registered_port_, slot_->address.to_string());
    game_.async_connect(tcp::endpoint(game_address, gateway_.options.game_port),
                        [self = shared_from_this()](beast::error_code connect_ec) {
                          if (connect_ec) {
                            spdlog::warn("web: the game port refused the relay: {}", connect_ec.message());
                            return self->close();
                          }
                          beast::error_code option_ec;
                          self->game_.set_option(tcp::no_delay(true), option_ec);
                          ++self->gateway_.websockets;
                          self->read_browser();
                          self->read_game();
                        });
  }

  void read_browser() {
    ws_.async_read(browser_buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      if (self->game_done_) {  // the session is over: what is still said is dropped
        self->browser_buffer_.consume(self->browser_buffer_.size());
        return self->read_browser();
      }
      if (!self->ws_.got_binary()) return self->refuse("text messages are not part of the protocol");
      const auto data = self->browser_buffer_.cdata();
      const std::span<const std::uint8_t> payload(static_cast<const std::uint8_t*>(data.data()), data.size());
      if (!self->hello_seen_) {
        // The page is a spectator: its first message must be a viewer's Hello. Anything else is
        // refused here, before the game port sees it (the server checks the rest of the stream).
        std::string error;
        const auto message = protocol::decode_tcp_message(payload, &error, protocol::MessageSet::kFromClient);
        const auto* hello = message ? std::get_if<protocol::Hello>(&*message) : nullptr;
        if (hello == nullptr) return self->refuse("the first message must be a Hello" + (error.empty() ? "" : ": " + error));
        if (hello->role != protocol::Role::kViewer) return self->refuse("the browser page is a spectator: Hello must have the Viewer role");
        self->hello_seen_ = true;
      }
      auto frame = std::make_shared<std::vector<std::uint8_t>>();
      frame->reserve(payload.size() + 4);
      if (!protocol::append_frame(payload, *frame)) return self->close();
      self->browser_buffer_.consume(self->browser_buffer_.size());
      self->game_queued_ += frame->size();
      if (self->game_queued_ > kMaxGameQueueBytes) return self->close();
      self->to_game_.push_back(std::move(frame));
      if (self->to_game_.size() == 1) self->write_game();
      self->read_browser();
    });
  }

  void write_game() {
    net::async_write(game_, net::buffer(*to_game_.front()), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      if (ec) return self->close();
      self->game_queued_ -= n;
      self->to_game_.pop_front();
      if (!self->to_game_.empty()) self->write_game();
    });
  }

  void read_game() {
    if (game_reading_ || closed_) return;
    game_reading_ = true;
    game_.async_read_some(net::buffer(game_read_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->game_reading_ = false;
      if (ec) return self->game_ended();  // the server closed (Error, Bye, eviction) or failed
      self->frames_.feed(std::span<const std::uint8_t>(self->game_read_.data(), n));
      for (;;) {
        std::vector<std::uint8_t> frame;
        const auto status = self->frames_.next(frame);
        if (status == protocol::FrameDecoder::Status::kNeedMore) break;
        if (status == protocol::FrameDecoder::Status::kTooLarge) return self->close();
        self->browser_queued_ += frame.size();
        self->to_browser_.push_back(std::move(frame));
        if (self->to_browser_.size() == 1) self->write_browser();
      }
      // Back-pressure: while the browser has not taken what waits, the game port's queue fills
      // instead, where the server's rule for a slow viewer sends fewer, fresher snapshots (a
      // delta chain can not be thinned here: each snapshot is the next one's baseline).
      if (!self->browser_backlogged()) self->read_game();
    });
  }

  /// More waits for the browser than the write in flight and one message behind it, or more
  /// than the byte bound: stop reading the game port.
  [[nodiscard]] bool browser_backlogged() const noexcept {
    return to_browser_.size() > 2 || browser_queued_ > gateway_.options.max_queue_bytes;
  }

  void write_browser() {
    ws_.async_write(net::buffer(to_browser_.front()), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->close();
      self->browser_queued_ -= self->to_browser_.front().size();
      self->to_browser_.pop_front();
      if (!self->to_browser_.empty()) return self->write_browser();
      if (self->game_done_) return self->close_browser();
      if (!self->browser_backlogged()) self->read_game();
    });
  }

  /// Tells the browser why (an Error message, then a close) and drops the relay.
  void refuse(const std::string& reason, protocol::ErrorCode code = protocol::ErrorCode::kBadMessage) {
    if (code == protocol::ErrorCode::kBadMessage) ++gateway_.bad_requests;
    gateway_.log_refusal("refused a WebSocket from " + slot_->address.to_string() + ": " + reason);
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    game_.close(ec);
    std::string text = reason.substr(0, protocol::kMaxReasonBytes);
    auto message = std::make_shared<std::vector<std::uint8_t>>(
        protocol::encode_tcp_message(protocol::Error{code, std::move(text)}));
    // Only when no write is in flight (Beast allows one); otherwise the close alone.
    if (to_browser_.empty()) {
      ws_.async_write(net::buffer(*message), [self = shared_from_this(), message](beast::error_code, std::size_t) {
        self->ws_.async_close(websocket::close_code::policy_error, [self](beast::error_code) {});
      });
    } else {
      beast::get_lowest_layer(ws_).close();
    }
  }

  /// The game port closed its end: what it sent last (an Error or a Bye saying why) still goes
  /// to the browser, then a normal close.
  void game_ended() {
    if (closed_) return;
    game_done_ = true;
    beast::error_code ec;
    game_.close(ec);
    if (to_browser_.empty()) close_browser();
  }

  void close_browser() {
    if (closed_) return;
    closed_ = true;
    ws_.async_close(websocket::close_code::normal, [self = shared_from_this()](beast::error_code) {
      beast::get_lowest_layer(self->ws_).close();
    });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    game_.close(ec);
    beast::get_lowest_layer(ws_).close();
  }

  WebGateway::Impl& gateway_;
  std::shared_ptr<Slot> slot_;
  websocket::stream<beast::tcp_stream> ws_;
  tcp::socket game_;
  std::string registered_address_;
  std::uint16_t registered_port_ = 0;
  std::string handshake_bytes_;  // the request and early frames, when the browser sent frames early
  beast::flat_buffer browser_buffer_;
  std::deque<std::shared_ptr<std::vector<std::uint8_t>>> to_game_;
  std::size_t game_queued_ = 0;
  std::array<std::uint8_t, kGameReadBytes> game_read_{};
  protocol::FrameDecoder frames_{protocol::kMaxFrameBytes};
  std::deque<std::vector<std::uint8_t>> to_browser_;
  std::size_t browser_queued_ = 0;
  bool game_reading_ = false;
  bool hello_seen_ = false;
  bool game_done_ = false;
  bool counted_ = false;  // holds one of max_spectators
  bool closed_ = false;
};

}  // namespace

void start_relay(WebGateway::Impl& gateway, std::shared_ptr<Slot> slot, tcp::socket socket,
                 http::request<http::empty_body> request, std::string early) {
  std::make_shared<RelaySession>(gateway, std::move(slot), std::move(socket))->start(std::move(request), std::move(early));
}

}  // namespace swarmfield::server::web_detail
