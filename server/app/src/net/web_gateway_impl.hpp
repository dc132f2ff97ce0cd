#pragma once
// Internal to the web gateway (swarmfield/server/net/web_gateway.hpp), shared by its files:
//  - web_gateway.cpp: the gateway itself (the page's files read at start, the acceptor and its
//    connection limits, start and stop, the counters);
//  - web_gateway_http.cpp: one HTTP request per connection (a page file, or the upgrade at /ws)
//    and the list of connections still sending their request;
//  - web_gateway_relay.cpp: a WebSocket relayed to the game port.
// Boost.Asio (under Boost.Beast): include this from those files only. The rest of the server is
// standalone Asio, and the two can not share a translation unit.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "swarmfield/server/net/forwarded_peers.hpp"
#include "swarmfield/server/net/per_address_count.hpp"
#include "swarmfield/server/net/rate_limited_log.hpp"
#include "swarmfield/server/net/web_gateway.hpp"

namespace swarmfield::server {

namespace web_detail {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

struct PageFile {
  std::string content_type;
  std::string body;
};

class HttpSession;  // web_gateway_http.cpp

}  // namespace web_detail

struct WebGateway::Impl {
  explicit Impl(const WebGatewayOptions& o, ForwardedPeers& p) : options(o), peers(p), acceptor(io) {}

  // Declared before the io_context: sessions its destructor drops release their slots here.
  const WebGatewayOptions& options;
  ForwardedPeers& peers;
  std::map<std::string, web_detail::PageFile> files;  // "/name" -> file; "/" -> index.html
  PerAddressCount<web_detail::net::ip::address> per_address;  // io thread only
  std::size_t open = 0;                                       // io thread only
  std::size_t relays = 0;                                     // io thread only: WebSockets relayed now
  // io thread only: connections still reading their request, oldest first (entries whose
  // session is gone or past its request are dropped as they come to the front).
  std::deque<std::weak_ptr<web_detail::HttpSession>> reading;
  std::atomic<std::uint64_t> evicted{0};
  /// Drops the readers' list's front entries whose session is gone or past its request; returns
  /// the first still reading (nullptr when none is).
  std::shared_ptr<web_detail::HttpSession> first_reader();  // web_gateway_http.cpp
  bool evict_oldest_reader();  // web_gateway_http.cpp
  std::atomic<std::uint64_t> accepted{0}, refused{0}, pages_served{0}, bad_requests{0}, websockets{0}, open_now{0},
      spectators_full{0};
  RateLimitedLog refusal_log;  // io thread only
  void log_refusal(const std::string& line) { refusal_log.log("web: " + line); }
  web_detail::net::io_context io;
  web_detail::tcp::acceptor acceptor;
  std::thread thread;

  void do_accept();
  void connection_closed(const web_detail::net::ip::address& address) {
    per_address.remove(address);
    --open;
    open_now.store(open, std::memory_order_relaxed);
  }
};

namespace web_detail {

/// Holds one connection's slot (per-address count) until the last session object using it goes.
struct Slot {
  Slot(WebGateway::Impl& owner, net::ip::address peer) : gateway(owner), address(std::move(peer)) {}
  ~Slot() { gateway.connection_closed(address); }
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;
  WebGateway::Impl& gateway;
  net::ip::address address;
};

/// Takes up an accepted connection (web_gateway_http.cpp): reads its one request and answers it
/// with a page file, or hands it to start_relay() when it asks for the WebSocket at /ws.
void start_http_session(WebGateway::Impl& gateway, std::shared_ptr<Slot> slot, tcp::socket socket);

/// Relays the WebSocket that `request` asked for (web_gateway_relay.cpp): accepts it, then opens a
/// connection to the game port and relays frames both ways. `early`: bytes the browser sent after
/// its request head, read with it (WebSocket frames sent before the 101 answer, against RFC 6455
/// but harmless): they are the stream's first frames.
void start_relay(WebGateway::Impl& gateway, std::shared_ptr<Slot> slot, tcp::socket socket,
                 http::request<http::empty_body> request, std::string early);

}  // namespace web_detail

}  // namespace swarmfield::server
