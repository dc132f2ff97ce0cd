#pragma once
// Test helper: a client that speaks the raw protocol over Asio on 127.0.0.1, with every read
// bounded by a timeout (async operation + io_context::run_for).
#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/write.hpp>

#include <array>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/protocol/datagram.hpp"
#include "swarmfield/protocol/framing.hpp"
#include "swarmfield/protocol/messages.hpp"

namespace swarmfield::test {

class RawClient {
 public:
  using Clock = std::chrono::steady_clock;

  /// `receive_buffer_bytes` > 0 shrinks the kernel receive buffer (a slow-reader test).
  bool connect(std::uint16_t port, int receive_buffer_bytes = 0) {
    std::error_code ec;
    tcp_.open(asio::ip::tcp::v4(), ec);
    if (!ec && receive_buffer_bytes > 0) tcp_.set_option(asio::socket_base::receive_buffer_size(receive_buffer_bytes), ec);
    if (!ec) tcp_.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    return !ec;
  }
  bool send(const protocol::TcpMessage& message) {
    std::vector<std::uint8_t> frame;
    if (!protocol::append_frame(protocol::encode_tcp_message(message), frame)) return false;
    return send_raw(frame);
  }
  bool send_raw(std::span<const std::uint8_t> bytes) {
    std::error_code ec;
    asio::write(tcp_, asio::buffer(bytes.data(), bytes.size()), ec);
    return !ec;
  }

  /// The next TCP message, or nullopt on timeout, on close (closed() then true) or on a frame
  /// that does not decode (bad_frame() then true).
  std::optional<protocol::TcpMessage> read(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      std::vector<std::uint8_t> frame;
      const auto status = decoder_.next(frame);
      if (status == protocol::FrameDecoder::Status::kFrame) {
        auto m = protocol::decode_tcp_message(frame);
        if (!m) bad_frame_ = true;
        return m;
      }
      if (status == protocol::FrameDecoder::Status::kTooLarge) {
        bad_frame_ = true;
        return std::nullopt;
      }
      if (closed_ || Clock::now() >= deadline) return std::nullopt;
      std::size_t n = 0;
      std::error_code ec;
      if (!run_op(deadline, [&](auto done) {
            tcp_.async_read_some(asio::buffer(buffer_), [&, done](std::error_code e, std::size_t k) {
              ec = e;
              n = k;
              *done = true;
            });
          },
          [&] { tcp_.cancel(); }))
        continue;  // timed out: loop ends at the deadline check
      if (ec) {
        closed_ = true;  // EOF or reset
      } else {
        decoder_.feed(std::span<const std::uint8_t>(buffer_.data(), n));
      }
    }
  }
  /// Reads until a message of type T arrives (others are skipped) or the timeout.
  template <class T>
  std::optional<T> read_until(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      auto m = read(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      if (!m) return std::nullopt;
      if (auto* t = std::get_if<T>(&*m)) return *t;
    }
    return std::nullopt;
  }
  /// True once the server closed the connection (reads and discards until then).
  bool wait_closed(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!closed_ && Clock::now() < deadline) {
      (void)read(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    }
    return closed_;
  }
  [[nodiscard]] bool closed() const noexcept { return closed_; }
  [[nodiscard]] bool bad_frame() const noexcept { return bad_frame_; }

  // ---- UDP ----
  bool udp_open() {
    std::error_code ec;
    udp_.open(asio::ip::udp::v4(), ec);
    if (!ec) udp_.bind({asio::ip::make_address("127.0.0.1"), 0}, ec);
    return !ec;
  }
  bool udp_send(std::uint16_t port, std::span<const std::uint8_t> bytes) {
    std::error_code ec;
    udp_.send_to(asio::buffer(bytes.data(), bytes.size()), {asio::ip::make_address("127.0.0.1"), port}, 0, ec);
    return !ec;
  }
  /// One datagram, or nullopt after `timeout`.
  std::optional<std::vector<std::uint8_t>> udp_receive(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    std::size_t n = 0;
    std::error_code ec;
    asio::ip::udp::endpoint from;
    if (!run_op(deadline, [&](auto done) {
          udp_.async_receive_from(asio::buffer(buffer_), from, [&, done](std::error_code e, std::size_t k) {
            ec = e;
            n = k;
            *done = true;
          });
        },
        [&] { udp_.cancel(); }))
      return std::nullopt;
    if (ec) return std::nullopt;
    return std::vector<std::uint8_t>(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  /// The next complete snapshot received over UDP (fragments reassembled), or nullopt.
  std::optional<protocol::Snapshot> udp_snapshot(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      auto d = udp_receive(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      if (!d) return std::nullopt;
      auto decoded = protocol::decode_datagram(*d);
      if (!decoded || decoded->input) continue;
      if (auto snap = reassembler_.add(*decoded)) return snap;
    }
    return std::nullopt;
  }

 private:
  // Starts an async op, runs the io_context until it completes or `deadline`; on timeout
  // cancels it and lets its handler run. True if it completed in time.
  template <class Start, class Cancel>
  bool run_op(Clock::time_point deadline, Start start, Cancel cancel) {
    auto done = std::make_shared<bool>(false);
    start(done);
    io_.restart();
    const auto now = Clock::now();
    if (deadline > now) io_.run_for(deadline - now);
    if (*done) return true;
    cancel();
    io_.restart();
    io_.run_for(std::chrono::seconds(1));  // the cancelled handler runs at once
    return false;
  }

  asio::io_context io_;
  asio::ip::tcp::socket tcp_{io_};
  asio::ip::udp::socket udp_{io_};
  protocol::FrameDecoder decoder_;
  protocol::SnapshotReassembler reassembler_;
  std::array<std::uint8_t, 64 * 1024> buffer_{};
  bool closed_ = false;
  bool bad_frame_ = false;
};

}  // namespace swarmfield::test
