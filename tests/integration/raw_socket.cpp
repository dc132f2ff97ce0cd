#include "raw_socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace swarmfield::testing {
namespace {

using Clock = std::chrono::steady_clock;

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

/// Milliseconds left until `deadline` for poll() (0 when past).
int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

bool set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL, 0);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

RawTcp::~RawTcp() { close(); }

void RawTcp::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void RawTcp::shutdown_write() noexcept {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

bool RawTcp::connect(std::uint16_t port, std::chrono::milliseconds timeout) {
  close();
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0 || !set_nonblocking(fd_)) {
    error_ = errno_text("socket");
    return false;
  }
  const sockaddr_in addr = loopback(port);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return true;
  if (errno != EINPROGRESS) {
    error_ = errno_text("connect");
    return false;
  }
  pollfd p{fd_, POLLOUT, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) {
    error_ = "connect timed out after " + std::to_string(timeout.count()) + " ms";
    return false;
  }
  int err = 0;
  socklen_t len = sizeof err;
  ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    error_ = std::string("connect: ") + std::strerror(err);
    return false;
  }
  return true;
}

bool RawTcp::send_all(std::span<const std::uint8_t> bytes, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      error_ = errno_text("send");
      return false;
    }
    pollfd p{fd_, POLLOUT, 0};
    if (ms_left(deadline) == 0 || ::poll(&p, 1, ms_left(deadline)) <= 0) {
      error_ = "send timed out after " + std::to_string(sent) + " of " + std::to_string(bytes.size()) + " bytes";
      return false;
    }
  }
  return true;
}

bool RawTcp::read_until_closed(std::vector<std::uint8_t>& out, std::chrono::milliseconds timeout,
                               std::size_t max_bytes) {
  const auto deadline = Clock::now() + timeout;
  std::uint8_t buffer[16384];
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n == 0) return true;  // orderly EOF
    if (n > 0) {
      const std::size_t keep = std::min<std::size_t>(static_cast<std::size_t>(n), max_bytes - std::min(max_bytes, out.size()));
      out.insert(out.end(), buffer, buffer + keep);
      continue;
    }
    if (errno == ECONNRESET || errno == EPIPE) return true;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      error_ = errno_text("recv");
      return true;  // any other error also ends the stream
    }
    pollfd p{fd_, POLLIN, 0};
    if (ms_left(deadline) == 0 || ::poll(&p, 1, ms_left(deadline)) < 0) return false;
  }
}

RawUdp::~RawUdp() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawUdp::open() {
  fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd_ < 0 || !set_nonblocking(fd_)) {
    error_ = errno_text("socket");
    return false;
  }
  const sockaddr_in addr = loopback(0);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    error_ = errno_text("bind");
    return false;
  }
  return true;
}

bool RawUdp::send_to(std::uint16_t port, std::span<const std::uint8_t> bytes) {
  const sockaddr_in addr = loopback(port);
  const ssize_t n = ::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  if (n != static_cast<ssize_t>(bytes.size())) {
    error_ = errno_text("sendto");
    return false;
  }
  return true;
}

std::optional<std::vector<std::uint8_t>> RawUdp::receive(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  std::vector<std::uint8_t> buffer(65536);
  for (;;) {
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n >= 0) {
      buffer.resize(static_cast<std::size_t>(n));
      return buffer;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      // ECONNREFUSED (an ICMP port-unreachable) is not a reply from the server; keep waiting.
      if (errno != ECONNREFUSED) {
        error_ = errno_text("recv");
        return std::nullopt;
      }
    }
    pollfd p{fd_, POLLIN, 0};
    if (ms_left(deadline) == 0) return std::nullopt;
    if (::poll(&p, 1, ms_left(deadline)) <= 0) return std::nullopt;
  }
}

}  // namespace swarmfield::testing
