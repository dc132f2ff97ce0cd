#include "swarmfield/server/operations_http.hpp"

#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>

namespace swarmfield::server {
namespace {

using SteadyClock = std::chrono::steady_clock;

// One connection's socket under a byte budget and a deadline for the whole request. httplib 0.11
// (Debian 12, built as a shared library, so its limits can not be configured) times out each
// read, not the request, and keeps every header line: a header line every second held a worker
// thread for ever (kThreads of them took /healthz down), and endless header lines grew the
// process without bound. Past the budget or the deadline, reads fail and httplib drops the request.
class BoundedSocketStream final : public httplib::Stream {
 public:
  BoundedSocketStream(socket_t sock, SteadyClock::time_point read_deadline, std::size_t read_budget)
      : sock_(sock), read_deadline_(read_deadline), read_budget_(read_budget) {}

  bool is_readable() const override { return wait(POLLIN, read_deadline_); }
  bool is_writable() const override { return wait(POLLOUT, SteadyClock::now() + OperationsHttp::kIoTimeout); }

  ssize_t read(char* ptr, size_t size) override {
    if (buffered_ == used_) {  // refill: httplib reads a request line by line, byte by byte
      if (read_budget_ == 0 || !is_readable()) return -1;
      ssize_t n = 0;
      do {
        n = ::recv(sock_, buffer_, std::min(sizeof buffer_, read_budget_), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      read_budget_ -= static_cast<std::size_t>(n);
      buffered_ = static_cast<std::size_t>(n);
      used_ = 0;
    }
    const std::size_t n = std::min(size, buffered_ - used_);
    std::copy_n(buffer_ + used_, n, ptr);
    used_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n = 0;
    do {
      n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  bool wait(short events, SteadyClock::time_point deadline) const {
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now());
      if (left.count() <= 0) return false;
      pollfd p{sock_, events, 0};
      const int r = ::poll(&p, 1, static_cast<int>(left.count()));
      if (r < 0 && errno == EINTR) continue;
      return r > 0;  // POLLHUP / POLLERR too: the next read or write reports it
    }
  }

  void address(bool remote, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    ip.clear();
    port = 0;
    auto* a = reinterpret_cast<sockaddr*>(&addr);
    if ((remote ? ::getpeername(sock_, a, &len) : ::getsockname(sock_, a, &len)) != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (addr.ss_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(&addr);
      if (::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text) != nullptr) ip = text;
      port = ntohs(v4->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&addr);
      if (::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text) != nullptr) ip = text;
      port = ntohs(v6->sin6_port);
    }
  }

  socket_t sock_;
  SteadyClock::time_point read_deadline_;
  std::size_t read_budget_;
  char buffer_[4096];
  std::size_t buffered_ = 0;
  std::size_t used_ = 0;
};

// httplib's server with each connection read through a BoundedSocketStream: one request per
// connection (no keep-alive: a probe or a scrape opens a connection anyway).
class BoundedServer final : public httplib::Server {
 private:
  bool process_and_close_socket(socket_t sock) override {
    BoundedSocketStream stream(sock, SteadyClock::now() + OperationsHttp::kRequestDeadline,
                               OperationsHttp::kMaxRequestBytes);
    bool connection_closed = false;
    const bool ok = process_request(stream, /*close_connection=*/true, connection_closed, {});
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }
};

}  // namespace

OperationsHttp::OperationsHttp(const OperationsState& state) : state_(state) {}

OperationsHttp::~OperationsHttp() { stop(); }

bool OperationsHttp::start(const std::string& bind, std::uint16_t port, std::string& error) {
  server_ = std::make_unique<BoundedServer>();
  httplib::Server& s = *server_;
  s.new_task_queue = [] { return new httplib::ThreadPool(kThreads); };
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second server bind the
  // same port and take part of the probes.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  s.set_payload_max_length(1024);
  // Reads and writes go through BoundedSocketStream (kRequestDeadline, kMaxRequestBytes, kIoTimeout).
  s.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    const auto age = state_.tick_age(OperationsState::Clock::now());
    if (age <= OperationsState::kStallLimit) {
      res.set_content("ok\n", "text/plain");
      return;
    }
    res.status = 503;
    if (age == OperationsState::Clock::duration::max()) {
      res.set_content("tick loop not started\n", "text/plain");
    } else {
      char text[64];
      std::snprintf(text, sizeof text, "tick loop stalled for %.1f s\n", std::chrono::duration<double>(age).count());
      res.set_content(text, "text/plain");
    }
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    if (state_.ready()) {
      res.set_content("ready\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content(state_.draining() ? "draining\n" : "not listening yet\n", "text/plain");
    }
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(state_.metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
  });
  int bound = port;
  if (port == 0) {
    bound = s.bind_to_any_port(bind);
  } else if (!s.bind_to_port(bind, port)) {
    bound = -1;
  }
  if (bound <= 0) {
    error = "can not listen for HTTP on " + bind + ":" + std::to_string(port) + " (--http-port, --http-bind)";
    server_.reset();
    return false;
  }
  port_ = static_cast<std::uint16_t>(bound);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the loop runs would not stop it: wait until it does (a few ms at most).
  for (int i = 0; i < 1000 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return true;
}

void OperationsHttp::stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

}  // namespace swarmfield::server
