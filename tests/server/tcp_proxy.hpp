#pragma once
// Test helper: a TCP proxy on 127.0.0.1 in front of a server port, whose connections the test
// can drop (both ways at once), like a link that goes away: the client sees its connection end
// without a Bye, the server sees the peer close. POSIX sockets and threads, every wait bounded
// by poll timeouts; the destructor stops and joins everything.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace swarmfield::test {

class TcpProxy {
 public:
  explicit TcpProxy(std::uint16_t target) : target_(target) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(0);
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener_, 16) != 0) {
      return;
    }
    socklen_t len = sizeof a;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    accepter_ = std::thread([this] { accept_loop(); });
  }
  ~TcpProxy() {
    stop_ = true;
    drop_all();
    if (accepter_.joinable()) accepter_.join();  // no new pumps after this
    std::vector<std::thread> pumps;
    {
      std::lock_guard lock(mutex_);
      pumps.swap(pumps_);
    }
    for (auto& t : pumps) t.join();  // not under the lock: a pump takes it to close its pair
    if (listener_ >= 0) ::close(listener_);
  }
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  /// 0 if the proxy could not listen.
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  /// Connections accepted so far.
  [[nodiscard]] int accepted() const noexcept { return accepted_; }
  /// While set, a new connection is accepted and closed at once (a link that is down).
  void set_refusing(bool refusing) noexcept { refusing_ = refusing; }
  /// Connections closed at once while refusing.
  [[nodiscard]] int refused() const noexcept { return refused_; }
  /// Ends every proxied connection now (both sides see it close).
  void drop_all() {
    std::lock_guard lock(mutex_);
    for (const auto& pair : pairs_) {
      if (pair->client < 0) continue;  // closed by its pump (the number may belong to another socket now)
      ::shutdown(pair->client, SHUT_RDWR);
      ::shutdown(pair->server, SHUT_RDWR);
    }
  }

 private:
  struct Pair {
    int client = -1;
    int server = -1;
  };

  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }

  void accept_loop() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int client = ::accept(listener_, nullptr, nullptr);
      if (client < 0) continue;
      if (refusing_) {
        ::close(client);
        ++refused_;
        continue;
      }
      const int server = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a = loopback(target_);
      if (server < 0 || ::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(client);
        if (server >= 0) ::close(server);
        continue;
      }
      ++accepted_;
      auto pair = std::make_shared<Pair>(Pair{client, server});
      std::lock_guard lock(mutex_);
      pairs_.push_back(pair);
      pumps_.emplace_back([this, pair] { pump(*pair); });
    }
  }

  // Copies both ways until either side ends or the pair is dropped; then closes both.
  void pump(Pair& pair) {
    char buffer[16384];
    bool open = true;
    while (open && !stop_) {
      pollfd fds[2] = {{pair.client, POLLIN, 0}, {pair.server, POLLIN, 0}};
      if (::poll(fds, 2, 50) <= 0) continue;
      for (int i = 0; i < 2 && open; ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const int from = i == 0 ? pair.client : pair.server;
        const int to = i == 0 ? pair.server : pair.client;
        const ssize_t n = ::recv(from, buffer, sizeof buffer, 0);
        if (n <= 0) {
          open = false;
          break;
        }
        for (ssize_t sent = 0; sent < n && open;) {
          const ssize_t k = ::send(to, buffer + sent, static_cast<std::size_t>(n - sent), MSG_NOSIGNAL);
          if (k <= 0) open = false;
          sent += k > 0 ? k : 0;
        }
      }
    }
    std::lock_guard lock(mutex_);
    ::shutdown(pair.client, SHUT_RDWR);
    ::shutdown(pair.server, SHUT_RDWR);
    ::close(pair.client);
    ::close(pair.server);
    pair.client = pair.server = -1;
  }

  std::uint16_t target_;
  std::atomic<bool> refusing_{false};
  std::atomic<int> refused_{0};
  int listener_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::mutex mutex_;
  std::vector<std::shared_ptr<Pair>> pairs_;
  std::vector<std::thread> pumps_;
  std::thread accepter_;
};

}  // namespace swarmfield::test
