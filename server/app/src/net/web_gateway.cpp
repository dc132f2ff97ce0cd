// The browser spectator's gateway (web_gateway.hpp): the page's files read at start, the acceptor
// and its connection limits, start and stop. Each connection's request is web_gateway_http.cpp's,
// each WebSocket's relay web_gateway_relay.cpp's (web_gateway_impl.hpp ties the three).
#include "swarmfield/server/net/web_gateway.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/error.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "web_gateway_impl.hpp"

namespace swarmfield::server {

namespace beast = boost::beast;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

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
        auto slot = std::make_shared<web_detail::Slot>(*this, peer.address());
        web_detail::start_http_session(*this, std::move(slot), std::move(socket));
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
    impl_->files["/" + name] = web_detail::PageFile{type, std::move(body)};
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
