#pragma once
// Plain POSIX sockets on 127.0.0.1 for hostile-client tests: send exactly the bytes given
// (garbage included) and read with a deadline. Every call is bounded by poll() timeouts; no
// call blocks past its deadline. Not thread-safe.
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace swarmfield::testing {

/// A TCP connection to 127.0.0.1:port.
class RawTcp {
 public:
  RawTcp() = default;
  ~RawTcp();
  RawTcp(const RawTcp&) = delete;
  RawTcp& operator=(const RawTcp&) = delete;

  /// Connects within `timeout`. False + error() on failure.
  bool connect(std::uint16_t port, std::chrono::milliseconds timeout);
  /// Writes all bytes within `timeout` (false on error, timeout or peer reset).
  bool send_all(std::span<const std::uint8_t> bytes, std::chrono::milliseconds timeout);
  /// Reads what arrives until the peer closes (EOF or reset) or `timeout` passes, appending to
  /// `out` (at most `max_bytes` in total are kept). Returns true if the peer closed.
  bool read_until_closed(std::vector<std::uint8_t>& out, std::chrono::milliseconds timeout,
                         std::size_t max_bytes = 1u << 20);
  /// Shuts down our sending side (the peer reads EOF) but keeps reading possible.
  void shutdown_write() noexcept;
  void close() noexcept;
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

/// An unconnected UDP socket bound to 127.0.0.1:0.
class RawUdp {
 public:
  RawUdp() = default;
  ~RawUdp();
  RawUdp(const RawUdp&) = delete;
  RawUdp& operator=(const RawUdp&) = delete;

  bool open();
  /// Sends one datagram to 127.0.0.1:port. False on a send error (EAGAIN included).
  bool send_to(std::uint16_t port, std::span<const std::uint8_t> bytes);
  /// Next datagram received within `timeout`, or nullopt.
  std::optional<std::vector<std::uint8_t>> receive(std::chrono::milliseconds timeout);
  [[nodiscard]] const std::string& error() const noexcept { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

}  // namespace swarmfield::testing
