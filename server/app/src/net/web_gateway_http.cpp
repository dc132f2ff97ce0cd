// The web gateway's HTTP side (web_gateway_impl.hpp): one request per connection, answered with a
// page file or handed to the WebSocket relay, and the list of connections still sending their
// request (the oldest of which gives way when the port is full).
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "web_gateway_impl.hpp"

namespace swarmfield::server {

namespace web_detail {

namespace websocket = beast::websocket;

namespace {

constexpr std::size_t kMaxRequestHeaderBytes = 8 * 1024;
// A connection still sending its request head may be closed for a new one once it is this old
// (a browser sends its request at once; one that trickles it only holds a place).
constexpr std::chrono::milliseconds kEvictableAfter{500};

}  // namespace

/// One HTTP request: a page file, or the upgrade to a relayed WebSocket at /ws.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(WebGateway::Impl& gateway, std::shared_ptr<Slot> slot, tcp::socket socket)
      : gateway_(gateway), slot_(std::move(slot)), stream_(std::move(socket)) {}

  void start() {
    parser_.emplace();
    parser_->header_limit(kMaxRequestHeaderBytes);
    parser_->body_limit(0);
    // The whole request within the handshake timeout: a byte now and then does not hold it.
    stream_.expires_after(gateway_.options.handshake_timeout);
    started_ = std::chrono::steady_clock::now();
    reading_ = true;
    gateway_.reading.push_back(weak_from_this());
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->reading_ = false;
      if (self->evicted_) return;  // closed for a newer connection: nothing to answer
      if (ec) {
        ++self->gateway_.bad_requests;
        // A slow or vanished peer gets nothing; a malformed request is told what was wrong.
        if (ec == beast::error::timeout || ec == http::error::end_of_stream || ec == net::error::eof ||
            ec == net::error::connection_reset) {
          beast::error_code ignored;
          self->stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
          return;
        }
        if (ec == http::error::header_limit) {
          return self->reply(11, http::status::request_header_fields_too_large, "request head too large\n");
        }
        if (ec == http::error::body_limit) {  // this port serves files: no request carries a body
          return self->reply(11, http::status::payload_too_large, "no request body is taken here (GET or HEAD only)\n");
        }
        return self->reply(11, http::status::bad_request, "bad request\n");
      }
      self->answer(self->parser_->release());
    });
  }

  /// Still reading its request head, for at least kEvictableAfter.
  [[nodiscard]] bool evictable(std::chrono::steady_clock::time_point now) const {
    return reading_ && !evicted_ && now - started_ >= kEvictableAfter;
  }
  [[nodiscard]] bool reading() const { return reading_ && !evicted_; }
  /// Closes the connection while its request is read (the read ends with an error, unanswered).
  void evict() {
    evicted_ = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

 private:
  void answer(http::request<http::empty_body> request) {
    head_ = request.method() == http::verb::head;
    std::string target(request.target());
    if (const auto query = target.find('?'); query != std::string::npos) target.resize(query);
    if (websocket::is_upgrade(request)) {
      if (target != "/ws") return refuse(request.version(), http::status::not_found, "the spectator stream is at /ws\n");
      const auto early = buffer_.cdata();
      std::string early_bytes(static_cast<const char*>(early.data()), early.size());
      start_relay(gateway_, slot_, stream_.release_socket(), std::move(request), std::move(early_bytes));
      return;
    }
    // Beast's is_upgrade also wants HTTP/1.1 and a GET: a WebSocket asked for over HTTP/1.0 was
    // answered 404 (no such page), which sent the user looking for the wrong fault.
    if (request.version() < 11 && http::token_list{request[http::field::upgrade]}.exists("websocket")) {
      return refuse(request.version(), http::status::upgrade_required,
                    "the WebSocket upgrade needs HTTP/1.1 (RFC 6455)\n",
                    {{http::field::upgrade, "websocket"}, {http::field::connection, "upgrade"}});
    }
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      return refuse(request.version(), http::status::method_not_allowed, "GET or HEAD only\n",
                    {{http::field::allow, "GET, HEAD"}});  // RFC 9110: a 405 names what is allowed
    }
    // The stream's address opened as a page (a browser's address bar, curl): not "not found".
    if (target == "/ws") {
      return refuse(request.version(), http::status::upgrade_required,
                    "/ws is the spectator stream: a WebSocket (the page at / opens it)\n",
                    {{http::field::upgrade, "websocket"}, {http::field::connection, "upgrade"}});
    }
    const auto it = gateway_.files.find(target == "/" ? std::string("/index.html") : target);
    if (it == gateway_.files.end()) return refuse(request.version(), http::status::not_found, "not found\n");
    ++gateway_.pages_served;
    auto response = std::make_shared<http::response<http::string_body>>(http::status::ok, request.version());
    response->set(http::field::content_type, it->second.content_type);
    response->set(http::field::cache_control, "no-cache");
    response->set("X-Content-Type-Options", "nosniff");
    if (request.method() == http::verb::get) response->body() = it->second.body;
    response->content_length(it->second.body.size());
    send(response);
  }

  using ExtraFields = std::initializer_list<std::pair<http::field, const char*>>;

  /// A 4xx answer to a request that parsed, counted as a bad request.
  void refuse(unsigned version, http::status status, const char* text, ExtraFields extra = {}) {
    ++gateway_.bad_requests;
    reply(version, status, text, extra);
  }

  void reply(unsigned version, http::status status, const char* text, ExtraFields extra = {}) {
    auto response = std::make_shared<http::response<http::string_body>>(status, version);
    response->set(http::field::content_type, "text/plain; charset=utf-8");
    for (const auto& [field, value] : extra) response->set(field, value);
    // The answer to a HEAD is the head alone, its Content-Length that of the body a GET gets.
    const std::string_view body(text);
    if (!head_) response->body() = body;
    response->content_length(body.size());
    send(response);
  }

  void send(const std::shared_ptr<http::response<http::string_body>>& response) {
    response->set(http::field::server, "swarmfield");
    response->keep_alive(false);  // one request per connection: nothing to pipeline
    stream_.expires_after(std::chrono::seconds(10));
    http::async_write(stream_, *response, [self = shared_from_this(), response](beast::error_code, std::size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  WebGateway::Impl& gateway_;
  std::shared_ptr<Slot> slot_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  std::chrono::steady_clock::time_point started_{};
  bool reading_ = false;
  bool evicted_ = false;
  bool head_ = false;  // the request is a HEAD: answers carry no body
};

void start_http_session(WebGateway::Impl& gateway, std::shared_ptr<Slot> slot, tcp::socket socket) {
  std::make_shared<HttpSession>(gateway, std::move(slot), std::move(socket))->start();
}

}  // namespace web_detail

std::shared_ptr<web_detail::HttpSession> WebGateway::Impl::first_reader() {
  while (!reading.empty()) {
    std::shared_ptr<web_detail::HttpSession> front = reading.front().lock();
    if (front != nullptr && front->reading()) return front;
    reading.pop_front();
  }
  return nullptr;
}

bool WebGateway::Impl::evict_oldest_reader() {
  const std::shared_ptr<web_detail::HttpSession> oldest = first_reader();
  // The oldest still young: so are the others.
  if (oldest == nullptr || !oldest->evictable(std::chrono::steady_clock::now())) return false;
  reading.pop_front();
  oldest->evict();
  ++evicted;
  log_refusal("the web port is full: closed the oldest connection still sending its request, for a new one");
  return true;
}

}  // namespace swarmfield::server
