#include "swarmfield/server/net/web_gateway.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>
#include <spdlog/spdlog.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <mutex>
#include <span>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/server/net/per_address_count.hpp"
#include "swarmfield/server/net/rate_limited_log.hpp"

namespace swarmfield::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

constexpr std::size_t kMaxRequestHeaderBytes = 8 * 1024;
constexpr std::size_t kGameReadBytes = 16 * 1024;
/// Bytes waiting for the game port above which a browser is closed: what it sends is a Hello,
/// ~10 Inputs a second and a Bye, so only a peer that floods reaches it.
constexpr std::size_t kMaxGameQueueBytes = 64 * 1024;

struct PageFile {
  std::string content_type;
  std::string body;
};

/// The type a page file is served as; empty for a file the gateway does not serve.
std::string content_type_of(const std::filesystem::path& path) {
  static const std::map<std::string, std::string> kTypes = {
      {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},   {".json", "application/json"},
      {".map", "application/json"},          {".png", "image/png"},
      {".svg", "image/svg+xml"},             {".ico", "image/x-icon"},
      {".wasm", "application/wasm"},         {".txt", "text/plain; charset=utf-8"},
  };
  const auto it = kTypes.find(path.extension().string());
  return it == kTypes.end() ? std::string() : it->second;
}

}  // namespace

namespace {
class HttpSession;
// A connection still sending its request head may be closed for a new one once it is this old
// (a browser sends its request at once; one that trickles it only holds a place).
constexpr std::chrono::milliseconds kEvictableAfter{500};
}  // namespace

struct WebGateway::Impl {
  explicit Impl(const WebGatewayOptions& o, ForwardedPeers& p) : options(o), peers(p), acceptor(io) {}

  // Declared before the io_context: sessions its destructor drops release their slots here.
  const WebGatewayOptions& options;
  ForwardedPeers& peers;
  std::map<std::string, PageFile> files;  // "/name" -> file; "/" -> index.html
  PerAddressCount<net::ip::address> per_address;  // io thread only
  std::size_t open = 0;                           // io thread only
  std::size_t relays = 0;                         // io thread only: WebSockets relayed now
  // io thread only: connections still reading their request, oldest first (entries whose
  // session is gone or past its request are dropped as they come to the front).
  std::deque<std::weak_ptr<HttpSession>> reading;
  std::atomic<std::uint64_t> evicted{0};
  /// Drops the readers' list's front entries whose session is gone or past its request; returns
  /// the first still reading (nullptr when none is).
  std::shared_ptr<HttpSession> first_reader();
  bool evict_oldest_reader();
  std::atomic<std::uint64_t> accepted{0}, refused{0}, pages_served{0}, bad_requests{0}, websockets{0}, open_now{0},
      spectators_full{0};
  RateLimitedLog refusal_log;  // io thread only
  void log_refusal(const std::string& line) { refusal_log.log("web: " + line); }
  net::io_context io;
  tcp::acceptor acceptor;
  std::thread thread;

  void do_accept();
  void connection_closed(const net::ip::address& address) {
    per_address.remove(address);
    --open;
    open_now.store(open, std::memory_order_relaxed);
  }
};

namespace {

/// Holds one connection's slot (per-address count) until the last session object using it goes.
struct Slot {
  Slot(WebGateway::Impl& owner, net::ip::address peer) : gateway(owner), address(std::move(peer)) {}
  ~Slot() { gateway.connection_closed(address); }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  WebGateway::Impl& gateway;
  net::ip::address address;
};

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
        const http::status status = ec == http::error::header_limit ? http::status::request_header_fields_too_large
                                    : ec == http::error::body_limit ? http::status::payload_too_large
                                                                    : http::status::bad_request;
        return self->reply(11, status, "bad request\n");
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
    std::string target(request.target());
    if (const auto query = target.find('?'); query != std::string::npos) target.resize(query);
    if (websocket::is_upgrade(request)) {
      if (target != "/ws") return refuse(request.version(), http::status::not_found, "the spectator stream is at /ws\n");
      const auto early = buffer_.cdata();
      std::string early_bytes(static_cast<const char*>(early.data()), early.size());
      std::make_shared<RelaySession>(gateway_, slot_, stream_.release_socket())
          ->start(std::move(request), std::move(early_bytes));
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
    response->body() = text;
    response->prepare_payload();
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
};

}  // namespace

std::shared_ptr<HttpSession> WebGateway::Impl::first_reader() {
  while (!reading.empty()) {
    std::shared_ptr<HttpSession> front = reading.front().lock();
    if (front != nullptr && front->reading()) return front;
    reading.pop_front();
  }
  return nullptr;
}

bool WebGateway::Impl::evict_oldest_reader() {
  const std::shared_ptr<HttpSession> oldest = first_reader();
  // The oldest still young: so are the others.
  if (oldest == nullptr || !oldest->evictable(std::chrono::steady_clock::now())) return false;
  reading.pop_front();
  oldest->evict();
  ++evicted;
  log_refusal("the web port is full: closed the oldest connection still sending its request, for a new one");
  return true;
}

void WebGateway::Impl::do_accept() {
  acceptor.async_accept(io, [this](beast::error_code ec, tcp::socket socket) {
    if (!acceptor.is_open()) return;
    if (ec) {
      // e.g. EMFILE: the pending connection stays in the backlog; retry a little later.
      auto timer = std::make_shared<net::steady_timer>(io, std::chrono::milliseconds(100));
      timer->async_wait([this, timer](beast::error_code) { do_accept(); });
      return;
    }
    ++accepted;
    beast::error_code ep_ec;
    const tcp::endpoint peer = socket.remote_endpoint(ep_ec);
    if (!ep_ec) {
      // Trimmed from the front (finished sessions), so the readers' list stays as long as the
      // connections accepted within a handshake timeout.
      static_cast<void>(first_reader());
      bool full = open >= options.max_connections;
      const bool address_full = per_address.count(peer.address()) >= options.max_per_address;
      // Full of connections that only trickle their request (many addresses, a byte now and
      // then: 100 addresses x 10 held the 192 places and every browser got 503): the oldest of
      // them gives its place to the new one.
      if (full && !address_full && evict_oldest_reader()) full = false;
      if (full || address_full) {
        ++refused;
        const std::string why = full ? "the web port is full (" + std::to_string(open) + " connections)"
                                     : "too many connections from your address (limit " +
                                           std::to_string(options.max_per_address) + ")";
        log_refusal("refused a connection from " + peer.address().to_string() + ": " + why);
        // The answer is small and a new socket's buffer empty: written whole or not at all,
        // never waited for (a refused peer holds nothing).
        const std::string answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: "
                                   "close\r\nContent-Length: " +
                                   std::to_string(why.size() + 1) + "\r\n\r\n" + why + "\n";
        beast::error_code ignored;
        socket.non_blocking(true, ignored);
        socket.write_some(net::buffer(answer), ignored);
        socket.shutdown(tcp::socket::shutdown_send, ignored);
        socket.close(ignored);
      } else {
        per_address.add(peer.address());
        ++open;
        open_now.store(open, std::memory_order_relaxed);
        auto slot = std::make_shared<Slot>(*this, peer.address());
        std::make_shared<HttpSession>(*this, std::move(slot), std::move(socket))->start();
      }
    }
    do_accept();
  });
}

WebGateway::WebGateway(WebGatewayOptions options, ForwardedPeers& peers)
    : options_(std::move(options)), peers_(peers), impl_(std::make_unique<Impl>(options_, peers_)) {}

WebGateway::~WebGateway() { stop(); }

std::string WebGateway::check_page_folder(const std::string& web_root) {
  namespace fs = std::filesystem;
  std::error_code fs_ec;
  const fs::path root(web_root);
  if (!fs::is_regular_file(root / "index.html", fs_ec) || !fs::is_regular_file(root / "app.js", fs_ec)) {
    return "the browser page is not built: no index.html and app.js in '" + root.string() +
           "' (build it with ./swarmfield.sh build into build/web, or name its folder with --web-root)";
  }
  return {};
}

bool WebGateway::start(std::string& error) {
  namespace fs = std::filesystem;
  std::error_code fs_ec;
  const fs::path root(options_.web_root);
  if (error = check_page_folder(options_.web_root); !error.empty()) return false;
  std::size_t total = 0;
  const fs::path real_root = fs::canonical(root, fs_ec);
  for (const auto& entry : fs::directory_iterator(root, fs_ec)) {
    if (!entry.is_regular_file(fs_ec)) continue;
    const std::string name = entry.path().filename().string();
    const std::string type = content_type_of(entry.path());
    if (name.empty() || name.front() == '.' || type.empty()) continue;  // not a page file
    // A link to a file outside the folder is not served (a folder others can write to must not
    // publish the server's own files, such as its key).
    std::error_code link_ec;
    if (entry.is_symlink(link_ec) && fs::canonical(entry.path(), link_ec).parent_path() != real_root) {
      spdlog::warn("web: not serving '{}': a link to a file outside the page folder", entry.path().string());
      continue;
    }
    if (impl_->files.size() >= kMaxPageFiles) {
      error = "the page folder '" + root.string() + "' holds more than " + std::to_string(kMaxPageFiles) + " files";
      return false;
    }
    std::ifstream in(entry.path(), std::ios::binary);
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.good() && !in.eof()) {
      error = "can not read '" + entry.path().string() + "'";
      return false;
    }
    total += body.size();
    if (total > kMaxPageBytes) {
      error = "the page folder '" + root.string() + "' holds more than " + std::to_string(kMaxPageBytes >> 20) + " MiB";
      return false;
    }
    impl_->files["/" + name] = PageFile{type, std::move(body)};
  }
  if (fs_ec) {
    error = "can not list '" + root.string() + "': " + fs_ec.message();
    return false;
  }
  if (!impl_->files.contains("/index.html") || !impl_->files.contains("/app.js")) {
    error = "the page folder '" + root.string() +
            "' links index.html or app.js to a file outside it: copy the page's files into the folder";
    return false;
  }

  beast::error_code ec;
  const net::ip::address address = net::ip::make_address(options_.bind, ec);
  if (ec) {
    error = "bad --web-bind address '" + options_.bind + "': " + ec.message();
    return false;
  }
  const tcp::endpoint endpoint(address, options_.port);
  impl_->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(endpoint, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    error = "can not listen on web " + options_.bind + ":" + std::to_string(options_.port) + ": " + ec.message();
    return false;
  }
  port_ = impl_->acceptor.local_endpoint().port();
  impl_->do_accept();
  impl_->thread = std::thread([this] { impl_->io.run(); });
  return true;
}

void WebGateway::stop() {
  if (!impl_ || !impl_->thread.joinable()) return;
  net::post(impl_->io, [this] {
    beast::error_code ec;
    impl_->acceptor.close(ec);
  });
  impl_->io.stop();
  impl_->thread.join();
  // Sessions still queued in the io_context are destroyed with it (their sockets closed, their
  // relays' registrations removed) by the Impl's destructor.
}

WebGateway::Counters WebGateway::counters() const noexcept {
  Counters c;
  c.accepted = impl_->accepted.load(std::memory_order_relaxed);
  c.refused = impl_->refused.load(std::memory_order_relaxed);
  c.pages_served = impl_->pages_served.load(std::memory_order_relaxed);
  c.bad_requests = impl_->bad_requests.load(std::memory_order_relaxed);
  c.websockets = impl_->websockets.load(std::memory_order_relaxed);
  c.open_now = impl_->open_now.load(std::memory_order_relaxed);
  c.spectators_full = impl_->spectators_full.load(std::memory_order_relaxed);
  c.evicted = impl_->evicted.load(std::memory_order_relaxed);
  return c;
}

}  // namespace swarmfield::server
