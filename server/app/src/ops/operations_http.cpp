#include "swarmfield/server/ops/operations_http.hpp"

#include <httplib.h>

#include <asio/ip/address.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "http_request_rules.hpp"
#include "swarmfield/server/net/per_address_count.hpp"

namespace swarmfield::server {
namespace {

using namespace http_rules;

using SteadyClock = std::chrono::steady_clock;

// The remote (or local) address of `sock` as text and its port ("" and 0 if unknown).
void socket_address(socket_t sock, bool remote, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ip.clear();
  port = 0;
  auto* a = reinterpret_cast<sockaddr*>(&addr);
  if ((remote ? ::getpeername(sock, a, &len) : ::getsockname(sock, a, &len)) != 0) return;
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

// One connection's socket under a byte budget and a deadline for the whole request. httplib 0.11
// (Debian 12, built as a shared library, so its limits can not be configured) times out each
// read, not the request, and keeps every header line: a header line every second held a worker
// thread for ever (kThreads of them took /healthz down), and endless header lines grew the
// process without bound. Past the budget or the deadline, reads fail and httplib drops the request.
class BoundedSocketStream final : public httplib::Stream {
 public:
  /// `head`: bytes the waiting room already read from the socket (served first, and counted
  /// against `read_budget`).
  BoundedSocketStream(socket_t sock, SteadyClock::time_point read_deadline, std::size_t read_budget, std::string head)
      : sock_(sock), read_deadline_(read_deadline), read_budget_(read_budget - std::min(read_budget, head.size())),
        head_(std::move(head)) {}

  bool is_readable() const override { return wait(POLLIN, read_deadline_); }
  bool is_writable() const override { return wait(POLLOUT, SteadyClock::now() + OperationsHttp::kIoTimeout); }

  ssize_t read(char* ptr, size_t size) override {
    if (head_used_ < head_.size()) {
      const std::size_t n = std::min(size, head_.size() - head_used_);
      std::copy_n(head_.data() + head_used_, n, ptr);
      head_used_ += n;
      return static_cast<ssize_t>(n);
    }
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

  void get_remote_ip_and_port(std::string& ip, int& port) const override { socket_address(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { socket_address(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  bool wait(short events, SteadyClock::time_point deadline) const {
    for (;;) {
      // Past the deadline, only what has already arrived is read (a worker may take up a
      // connection late, behind others: its request is in the socket already).
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - SteadyClock::now());
      pollfd p{sock_, events, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
      if (r < 0 && errno == EINTR) continue;
      return r > 0;  // POLLHUP / POLLERR too: the next read or write reports it
    }
  }

  socket_t sock_;
  SteadyClock::time_point read_deadline_;
  std::size_t read_budget_;
  std::string head_;
  std::size_t head_used_ = 0;
  char buffer_[4096];
  std::size_t buffered_ = 0;
  std::size_t used_ = 0;
};

// The peer's address without the port (the unspecified address if unknown), counted by the
// per-address limits as the game ports count it (counted_address: an IPv6 address as its /64).
// It was the address's text, counted whole: one host got kMaxPerAddress connections from each
// address of its /64.
asio::ip::address peer_address(socket_t sock) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return {};
  if (addr.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&addr);
    return asio::ip::address_v4(ntohl(v4->sin_addr.s_addr));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    asio::ip::address_v6::bytes_type bytes;
    std::copy_n(v6->sin6_addr.s6_addr, bytes.size(), bytes.begin());
    return asio::ip::address_v6(bytes);
  }
  return {};
}

void close_socket(socket_t sock) {
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

// Reads away (without waiting) what of the request has arrived and was not read: closing with
// unread bytes sends a reset, which may reach the peer before it reads the answer.
void drain_arrived(socket_t sock) {
  char drain[4096];
  for (int i = 0; i < 4 && ::recv(sock, drain, sizeof drain, MSG_DONTWAIT) > 0; ++i) {
  }
}

// Sends a whole short answer (`status` as "431 Request Header Fields Too Large", a text body,
// `extra_headers` as "Retry-After: 1\r\n") without waiting, from a thread that must never block
// on a peer (the listener, the waiting room): a connection's send buffer is empty before its
// answer, so it takes it whole.
void answer_without_waiting(socket_t sock, std::string_view status, std::string_view body,
                            std::string_view extra_headers = {}) {
  const std::string head = "HTTP/1.1 " + std::string(status) + "\r\nContent-Type: text/plain\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n" + std::string(extra_headers) +
                           "Connection: close\r\n\r\n";
  [[maybe_unused]] ssize_t sent = ::send(sock, head.data(), head.size(), MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE);
  sent = ::send(sock, body.data(), body.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  drain_arrived(sock);
}

// The paths served, each to GET and HEAD only (httplib answers a HEAD as the GET without its body).
constexpr std::array<const char*, 3> kPaths = {"/healthz", "/readyz", "/metrics"};

// Another method than GET or HEAD on a path served: 405, naming the two (RFC 9110 wants the Allow).
void method_not_allowed(httplib::Response& res) {
  res.status = 405;
  res.set_header("Allow", "GET, HEAD");
  res.set_content("GET or HEAD only\n", "text/plain");
}

// Any method on a path not served: 404.
void not_found(httplib::Response& res) {
  res.status = 404;
  res.set_content("not found: the paths are /healthz, /readyz and /metrics\n", "text/plain");
}

bool is_path_served(std::string_view path) { return std::find(kPaths.begin(), kPaths.end(), path) != kPaths.end(); }

// 404 for a path not served, else 405 (for a request not to serve by its method).
void refuse_by_path(std::string_view path, httplib::Response& res) {
  if (!is_path_served(path)) return not_found(res);
  method_not_allowed(res);
}

// httplib runs a connection's task on the listener thread: the task only hands the socket to the
// waiting room (BoundedServer::process_and_close_socket), which never blocks.
class InlineTaskQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

// httplib's server with a waiting room in front of its workers. httplib 0.11 hands each accepted
// connection to a worker at once, and a worker then waits for the request: connections that send
// nothing held every worker (40 idle connections took /healthz down for ~20 s; a few more every
// 2 s kept it down, and a liveness probe failing restarts the pod). Here one thread polls the
// accepted connections and a worker only gets a connection that has sent something:
// - a connection that sends nothing is closed the request deadline after it was accepted;
// - at most kMaxWaiting connections wait (the oldest is closed to admit a new one), at most
//   kMaxPerAddress are open per peer address (beyond that a new one is told 429 and closed at once);
// - the room reads each request's head (request line and headers) and the body it declares
//   (at most 1 KiB) itself, without blocking, and a worker only gets a connection whose request
//   has arrived whole: connections trickling bytes, from any number of addresses, hold no
//   worker (they wait in the room, bounded as above);
// - at most kMaxBusyPerAddress workers serve one address, so one address sending many
//   requests can not hold every worker;
// - each request must arrive whole within kMaxRequestBytes and the deadline of its accept
//   (BoundedSocketStream), one request per connection (no keep-alive: probes and scrapes open a
//   connection anyway).
class BoundedServer final : public httplib::Server {
 public:
  explicit BoundedServer(SteadyClock::duration request_deadline) : request_deadline_(request_deadline) {
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    room_thread_ = std::thread([this] { room_loop(); });
    for (int i = 0; i < OperationsHttp::kThreads; ++i) workers_.emplace_back([this] { worker_loop(); });
    new_task_queue = [] { return new InlineTaskQueue(); };
  }
  ~BoundedServer() override { stop_room(); }
  BoundedServer(const BoundedServer&) = delete;
  BoundedServer& operator=(const BoundedServer&) = delete;

  // Closes every waiting connection and joins the room and the workers (after stop()).
  void stop_room() {
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    wake_room();
    work_cv_.notify_all();
    if (room_thread_.joinable()) room_thread_.join();
    for (auto& w : workers_) w.join();
    for (const Pending& p : incoming_) close_socket(p.sock);
    for (const Pending& p : ready_) close_socket(p.sock);
    incoming_.clear();
    ready_.clear();
    if (wake_fd_ >= 0) ::close(wake_fd_);
    wake_fd_ = -1;
  }

 private:
  struct Pending {
    socket_t sock;
    SteadyClock::time_point accepted;
    asio::ip::address address;
    std::string head;  // bytes read so far by the room
    std::size_t whole = 0;  // once the head has ended: the bytes of the whole request (head + body)
  };

  enum class HeadState : std::uint8_t { kPartial, kComplete, kClosed, kTooLarge };

  // Reads what has arrived on `p` without blocking (at most kMaxRequestBytes in all). kComplete
  // once the head ends (a blank line) and the body it declares (declared_body_bytes) has arrived
  // too, kClosed if the peer closed or failed, kTooLarge if it sent kMaxRequestBytes without
  // ending the head. A worker then reads what is already here: a body trickled a byte at a time
  // held a worker up to the request deadline, and a few addresses held them all.
  static HeadState read_head(Pending& p) {
    char buffer[4096];
    for (;;) {
      if (p.whole != 0 && p.head.size() >= p.whole) return HeadState::kComplete;
      const std::size_t room = OperationsHttp::kMaxRequestBytes - p.head.size();
      if (room == 0) return HeadState::kTooLarge;
      const std::size_t wanted = p.whole != 0 ? std::min(room, p.whole - p.head.size()) : room;
      const ssize_t n = ::recv(p.sock, buffer, std::min(sizeof buffer, wanted), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return HeadState::kClosed;
      // Search from a little before the new bytes: the blank line may straddle two reads.
      const std::size_t from = p.head.size() >= 3 ? p.head.size() - 3 : 0;
      p.head.append(buffer, static_cast<std::size_t>(n));
      if (p.whole != 0) continue;
      // The head ends at the first blank line of either kind (its body may hold the other).
      const std::size_t crlf = p.head.find("\r\n\r\n", from);
      const std::size_t lf = p.head.find("\n\n", from);
      const std::size_t end = std::min(crlf == std::string::npos ? crlf : crlf + 4, lf == std::string::npos ? lf : lf + 2);
      if (end != std::string::npos) p.whole = end + declared_body_bytes(std::string_view(p.head).substr(0, end));
    }
    return HeadState::kPartial;
  }

  // Listener thread: admit the connection to the waiting room (or refuse it).
  bool process_and_close_socket(socket_t sock) override {
    Pending p{sock, SteadyClock::now(), peer_address(sock), {}};
    {
      const std::lock_guard lock(mutex_);
      if (stopping_ || !open_per_address_.add_below(p.address, OperationsHttp::kMaxPerAddress)) {
        // Over its address's limit: told why (once, without waiting: a new socket's send buffer
        // is empty, and the listener thread must never block on a peer), then closed. 429, not
        // 503: /healthz answers 503 for a stalled tick loop, and a liveness probe sharing an
        // address with a client over the share (SNAT, a hostPort) read a healthy server as stalled.
        if (!stopping_) {
          answer_without_waiting(sock, "429 Too Many Requests", "too many connections from your address: close some\n",
                                 "Retry-After: 1\r\n");
        }
        close_socket(sock);
        return false;
      }
      incoming_.push_back(std::move(p));
    }
    wake_room();
    return true;
  }

  void wake_room() const {
    const std::uint64_t one = 1;
    if (wake_fd_ >= 0) [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof one);
  }

  // Closes a connection that leaves the room or a worker, under mutex_.
  void release_locked(const Pending& p) {
    close_socket(p.sock);
    open_per_address_.remove(p.address);
  }

  void room_loop() {
    std::vector<Pending> waiting;  // accept order: the oldest first
    std::vector<pollfd> polls;
    for (;;) {
      {
        const std::lock_guard lock(mutex_);
        if (stopping_) break;
        for (Pending& p : incoming_) waiting.push_back(std::move(p));
        incoming_.clear();
        while (waiting.size() > OperationsHttp::kMaxWaiting) {
          release_locked(waiting.front());
          waiting.erase(waiting.begin());
        }
      }
      polls.assign(1, pollfd{wake_fd_, POLLIN, 0});
      auto first_deadline = SteadyClock::time_point::max();
      for (const Pending& p : waiting) {
        polls.push_back(pollfd{p.sock, POLLIN, 0});
        first_deadline = std::min(first_deadline, p.accepted + request_deadline_);
      }
      int timeout_ms = -1;
      if (first_deadline != SteadyClock::time_point::max()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(first_deadline - SteadyClock::now());
        timeout_ms = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 60'000));
      }
      const int r = ::poll(polls.data(), polls.size(), timeout_ms);
      if (r < 0 && errno != EINTR) break;
      if (polls[0].revents != 0) {
        std::uint64_t count = 0;
        [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof count);
      }
      const auto now = SteadyClock::now();
      bool handed = false;
      {
        const std::lock_guard lock(mutex_);
        std::size_t kept = 0;
        for (std::size_t i = 0; i < waiting.size(); ++i) {
          Pending& p = waiting[i];
          const short ev = r > 0 ? polls[i + 1].revents : 0;
          const HeadState head = (ev & (POLLIN | POLLHUP | POLLERR)) != 0 ? read_head(p) : HeadState::kPartial;
          if (head == HeadState::kComplete) {
            ready_.push_back(std::move(p));
            handed = true;
          } else if (head == HeadState::kTooLarge) {
            // Told why, as the web port does (it was closed with no answer, which a client reports
            // as a dropped connection, not as headers to cut down).
            answer_without_waiting(p.sock, "431 Request Header Fields Too Large", "request head too large\n");
            release_locked(p);
          } else if (head == HeadState::kClosed || (ev & POLLNVAL) != 0 || now >= p.accepted + request_deadline_) {
            release_locked(p);
          } else {
            if (kept != i) waiting[kept] = std::move(p);
            ++kept;
          }
        }
        waiting.resize(kept);
      }
      if (handed) work_cv_.notify_all();
    }
    const std::lock_guard lock(mutex_);
    for (const Pending& p : waiting) release_locked(p);
  }

  void worker_loop() {
    for (;;) {
      Pending p;
      {
        std::unique_lock lock(mutex_);
        std::deque<Pending>::iterator pick;
        work_cv_.wait(lock, [&] {
          if (stopping_) return true;
          pick = std::find_if(ready_.begin(), ready_.end(), [&](const Pending& q) {
            return busy_per_address_.count(q.address) < OperationsHttp::kMaxBusyPerAddress;
          });
          return pick != ready_.end();
        });
        if (stopping_) return;
        p = std::move(*pick);
        ready_.erase(pick);
        busy_per_address_.add(p.address);
      }
      BoundedSocketStream stream(p.sock, p.accepted + request_deadline_, OperationsHttp::kMaxRequestBytes,
                                 std::move(p.head));
      bool connection_closed = false;
      process_request(stream, /*close_connection=*/true, connection_closed, {});
      drain_arrived(p.sock);  // a body refused unread (413) may be arriving: see drain_arrived
      {
        const std::lock_guard lock(mutex_);
        busy_per_address_.remove(p.address);
        release_locked(p);
      }
      work_cv_.notify_all();  // a request of this address may be waiting for a worker
    }
  }

  const SteadyClock::duration request_deadline_;
  int wake_fd_ = -1;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  bool stopping_ = false;
  std::vector<Pending> incoming_;  // accepted, not yet seen by the room thread
  std::deque<Pending> ready_;      // sent something: for the workers
  PerAddressCount<asio::ip::address> open_per_address_;  // in the waiting room or a worker
  PerAddressCount<asio::ip::address> busy_per_address_;  // in a worker
  std::thread room_thread_;
  std::vector<std::thread> workers_;
};

}  // namespace

OperationsHttp::OperationsHttp(const OperationsState& state, std::chrono::milliseconds request_deadline)
    : state_(state), request_deadline_(request_deadline) {}

OperationsHttp::~OperationsHttp() { stop(); }

bool OperationsHttp::start(const std::string& bind, std::uint16_t port, std::string& error) {
  server_ = std::make_unique<BoundedServer>(request_deadline_);
  httplib::Server& s = *server_;
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a second server bind the
  // same port and take part of the probes. The socket is remembered for the backlog below.
  auto listening = std::make_shared<socket_t>(INVALID_SOCKET);
  s.set_socket_options([listening](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    *listening = sock;
  });
  s.set_payload_max_length(kMaxBodyBytes);
  // Range requests are not served. httplib answers a Range header of many ranges with a multipart
  // body holding one copy of the answer per range: 1,000 ranges in a 3 KB request got 10.7 MB of
  // /metrics back, and 64 such requests never read kept /healthz from answering for ~10 s (a
  // liveness probe restarting a healthy match). The answers are small and whole: the ranges are
  // dropped and the answer is the plain 200.
  // Requests this port does not serve: 404 for any method on another path, 405 (naming GET and
  // HEAD) for another method on these (alone, httplib answered 404 to a GET of an unknown path
  // and 400 to anything else, whatever the path). Where each is answered:
  //  - a POST, PUT, PATCH or DELETE that declares a body by its Content-Length: by the handlers
  //    below, which httplib calls once it has read the body (at most 1 KiB, already in the
  //    room's hands), so that no unread bytes turn the close into a reset that can take the
  //    answer with it; elsewhere than these paths by httplib's own 404; one whose Content-Length
  //    is over 1 KiB: 413 here, before routing, body unread; one whose Content-Length is not a
  //    number or with a Transfer-Encoding: 400 here, body unread (body_refused_unread);
  //  - any other: here, before routing (httplib reads the body of a POST that declares none to
  //    the end of the stream: it answered 400 after the request deadline);
  //  - a method httplib does not know: by the error handler further down.
  s.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    // httplib passes its own (non-const) Request object as const: clearing it is defined.
    if (!req.ranges.empty()) const_cast<httplib::Request&>(req).ranges.clear();
    const bool served = (req.method == "GET" || req.method == "HEAD") && is_path_served(req.path);
    // Answered at once, whatever the path: the body is never read.
    if (const int status = body_refused_unread(req); status == 413) {
      res.status = 413;
      res.set_content("request body too large: at most " + std::to_string(kMaxBodyBytes) + " bytes\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    } else if (status == 400) {
      res.status = 400;
      res.set_content("a request body needs a Content-Length of at most " + std::to_string(kMaxBodyBytes) +
                          " bytes (no Transfer-Encoding)\n",
                      "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (served || has_body_to_read(req)) return httplib::Server::HandlerResponse::Unhandled;
    refuse_by_path(req.path, res);
    return httplib::Server::HandlerResponse::Handled;
  });
  for (const char* path : kPaths) {
    const auto refuse = [](const httplib::Request&, httplib::Response& res) { method_not_allowed(res); };
    s.Post(path, refuse);
    s.Put(path, refuse);
    s.Patch(path, refuse);
    s.Delete(path, refuse);
  }
  s.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) {  // httplib's own: no handler for the path
      not_found(res);
      return httplib::Server::HandlerResponse::Handled;
    }
    // httplib 0.11 refuses a method outside its list (GET HEAD POST PUT DELETE CONNECT OPTIONS
    // TRACE PATCH PRI) with a bare 400 before any handler runs, the request line split already
    // but the path not yet set. A line of three parts with a good version failed for its method
    // only; any other 400 (a malformed line, bad headers) stays one.
    // A method httplib knows failed for something else ("GET /healthz HTTP/1.1 junk"): a 400.
    static constexpr std::array<std::string_view, 10> kKnown = {"GET",     "HEAD",    "POST",  "PUT",   "DELETE",
                                                                "CONNECT", "OPTIONS", "TRACE", "PATCH", "PRI"};
    const bool known = std::find(kKnown.begin(), kKnown.end(), std::string_view(req.method)) != kKnown.end();
    if (res.status != 400 || !req.path.empty() || (req.version != "HTTP/1.1" && req.version != "HTTP/1.0") ||
        known || !is_method_token(req.method) || req.target.empty() || req.target.front() != '/') {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    const std::string_view target(req.target);
    refuse_by_path(target.substr(0, target.find('?')), res);
    return httplib::Server::HandlerResponse::Handled;
  }));
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
  errno = 0;  // the bind's reason, if it fails (httplib keeps it from us otherwise)
  if (port == 0) {
    bound = s.bind_to_any_port(bind);
  } else if (!s.bind_to_port(bind, port)) {
    bound = -1;
  }
  int reason = bound <= 0 ? errno : 0;
  // httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, compiled into Debian 12's
  // shared library, so the macro can not raise it from here): with more than 5 connections not
  // yet accepted, the kernel drops further SYNs and those clients retry after ~1 s. Linux takes a
  // second listen() on a listening socket as a new backlog (capped by net.core.somaxconn).
  // httplib creates one socket per address it tries and keeps the one that bound, the last.
  if (bound > 0 && ::listen(*listening, kListenBacklog) != 0) {
    // httplib 0.11 closes its socket only from a running loop: close it here, or the port stays
    // bound with nobody accepting.
    reason = errno;
    if (*listening != INVALID_SOCKET) ::close(*listening);
    bound = -1;
  }
  if (bound <= 0) {
    error = "can not listen for HTTP on " + bind + ":" + std::to_string(port) +
            (reason != 0 ? std::string(": ") + std::strerror(reason) : std::string()) + " (--http-port, --http-bind)";
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
  if (server_) static_cast<BoundedServer&>(*server_).stop_room();
  server_.reset();
}

}  // namespace swarmfield::server
