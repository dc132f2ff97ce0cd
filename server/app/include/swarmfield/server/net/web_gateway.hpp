#pragma once
// The browser spectator's door (issue 23): one port that serves the built page (index.html,
// app.js) over HTTP and, at /ws, carries a spectator's session over a WebSocket. Each WebSocket
// message is one TCP frame payload of the game protocol (protocol/README.md, without the length
// prefix), so the page speaks exactly what a TCP viewer speaks and the server treats it as one:
// the gateway opens a connection to the game port for each WebSocket and relays frames both ways
// (a relay tier, as Counter-Strike's GOTV and Lichess's lila-ws put one between spectators and
// the game). The game port counts that connection against the browser's address
// (forwarded_peers.hpp), and its limits, timeouts, budget and snapshot rules apply as to any
// viewer. What the gateway adds is what only it can see:
//  - HTTP: GET/HEAD of the page's files only (read into memory at start, no path from the
//    request ever touches the file system), headers <= 8 KiB, no body, one request per
//    connection, the request within `handshake_timeout`;
//  - WebSocket: messages <= protocol::kMaxClientFrameBytes (a browser sends Hello, Input and Bye;
//    binary only; no compression extension), the first a Hello with the Viewer role (the page is
//    a spectator), pings when the browser is silent and a close when it stays so;
//  - connections: at most `max_connections`, at most `max_per_address` from one address (both
//    answered 503 with the reason), at most `max_spectators` relayed at once; when the port is
//    full, a connection still sending its request head after 0.5 s is closed for the new one
//    (connections from many addresses trickling their requests would otherwise hold every place);
//  - a bad request (a body, headers over 8 KiB, not HTTP) gets 400/413/431, another method
//    than GET or HEAD 405 with `Allow: GET, HEAD`, a WebSocket asked for over HTTP/1.0 426
//    (`Upgrade: websocket`; RFC 6455 needs HTTP/1.1), a slow one nothing;
//  - refusals are logged at most once a second (with a count), never a line per connection;
//  - a browser that reads slowly: at most two messages (and `max_queue_bytes`) wait for it,
//    with small kernel buffers on both sockets; past that the gateway stops reading the game port, so the
//    server's own rule for a slow TCP viewer applies at once (newer snapshots in place of older
//    ones, eviction when nothing is read): what the browser reads next is fresh, and memory
//    stays bounded.
// Runs on its own thread with its own io_context (Boost.Beast over Boost.Asio); thread-safe
// counters. Beast: https://www.boost.org/doc/libs/1_74_0/libs/beast/
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "swarmfield/server/net/forwarded_peers.hpp"

namespace swarmfield::server {

struct WebGatewayOptions {
  std::string bind = "0.0.0.0";  ///< listen address (IP literal)
  std::uint16_t port = 0;        ///< 0 = a free port (port() tells which)
  /// Folder of the built page (index.html and app.js at least): every regular file directly in
  /// it (not below) of a web type (.html .js .css .json .map .png .svg .ico .wasm .txt) is
  /// served by name, dotfiles never; "/" is index.html. At most kMaxPageFiles files of at most
  /// kMaxPageBytes in all.
  std::string web_root;
  /// The game port (TCP) to relay to, and the address to reach it at: the game port's bind
  /// address, or loopback when it listens on every address.
  std::string game_address = "127.0.0.1";
  std::uint16_t game_port = 0;
  std::size_t max_connections = 256;
  std::size_t max_per_address = 16;
  /// WebSockets relayed at once; past it a spectator is told so (Error kServerFull) and closed
  /// before the game port sees it, so spectators can not take the players' slots.
  std::size_t max_spectators = 32;
  std::chrono::milliseconds handshake_timeout{3000};
  /// A WebSocket whose browser sends nothing (not even a pong to the gateway's ping) this long
  /// is closed.
  std::chrono::milliseconds idle_timeout{20000};
  std::size_t max_queue_bytes = 64u * 1024;
  /// Kernel buffers: the browser's socket's send buffer and the relay's receive buffer. Small, so
  /// that a slow browser's backlog is the server's to replace, not stale bytes in the kernel.
  int browser_send_buffer = 64 * 1024;
  int game_receive_buffer = 16 * 1024;
};

class WebGateway {
 public:
  static constexpr std::size_t kMaxPageFiles = 64;
  static constexpr std::size_t kMaxPageBytes = 32u << 20;

  /// `peers` is where the gateway registers its connections to the game port; it must outlive
  /// the gateway (the game port's TcpServer reads it).
  WebGateway(WebGatewayOptions options, ForwardedPeers& peers);
  ~WebGateway();
  WebGateway(const WebGateway&) = delete;
  WebGateway& operator=(const WebGateway&) = delete;

  /// "" when `web_root` holds a built page (index.html and app.js), else the sentence start()
  /// fails with. The server asks before it opens any port, so that a wrong --web-root is told
  /// before the game port is announced as listening.
  [[nodiscard]] static std::string check_page_folder(const std::string& web_root);
  /// Reads the page, binds, listens and starts the thread. False + `error` (a sentence naming
  /// what to fix: a missing index.html says how to build the page) on failure; nothing runs then.
  bool start(std::string& error);
  /// Closes every connection and joins the thread. Idempotent; the destructor calls it.
  void stop();
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }

  struct Counters {
    std::uint64_t accepted = 0;
    std::uint64_t refused = 0;       ///< over max_connections or max_per_address
    std::uint64_t pages_served = 0;  ///< HTTP answers 200
    std::uint64_t bad_requests = 0;  ///< 4xx answers, timeouts, refused WebSockets
    std::uint64_t spectators_full = 0;  ///< WebSockets refused: max_spectators relayed already
    std::uint64_t evicted = 0;  ///< connections closed, still sending their request head, for a new one (port full)
    std::uint64_t websockets = 0;    ///< WebSockets relayed to the game port
    std::uint64_t open_now = 0;      ///< connections open (HTTP or WebSocket)
  };
  [[nodiscard]] Counters counters() const noexcept;

  struct Impl;  // public for the gateway's sessions; defined in src/net/web_gateway_impl.hpp

 private:
  WebGatewayOptions options_;
  ForwardedPeers& peers_;
  std::uint16_t port_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swarmfield::server
