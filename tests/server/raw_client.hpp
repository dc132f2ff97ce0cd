#pragma once
// Test helper: a client that speaks the raw protocol over Asio on 127.0.0.1 (or another 127/8
// address standing in for another host), with every read bounded by a timeout (async
// operation + io_context::run_for). UDP: the address confirmation handshake and sealed packets.
#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ip/udp.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/protocol/transport/frame_seal.hpp"
#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"

namespace swarmfield::test {

/// A decoded delta snapshot: its header (tick, echo time, players, counts) and the frame the
/// client holds after it.
struct RawSnapshot : protocol::SnapshotHeader {
  protocol::AgentFrame frame;
};

class RawClient {
 public:
  using Clock = std::chrono::steady_clock;

  /// `receive_buffer_bytes` > 0 shrinks the kernel receive buffer (a slow-reader test).
  /// `from`: the local address (another 127/8 address stands in for another host).
  bool connect(std::uint16_t port, int receive_buffer_bytes = 0, const char* from = "127.0.0.1") {
    std::error_code ec;
    tcp_.open(asio::ip::tcp::v4(), ec);
    if (!ec && receive_buffer_bytes > 0) tcp_.set_option(asio::socket_base::receive_buffer_size(receive_buffer_bytes), ec);
    if (!ec) tcp_.bind({asio::ip::make_address(from), 0}, ec);
    if (!ec) tcp_.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    return !ec;
  }
  void close_tcp() {
    std::error_code ec;
    tcp_.close(ec);
  }
  bool send(const protocol::TcpMessage& message) {
    std::vector<std::uint8_t> frame;
    const auto payload = protocol::encode_tcp_message(message);
    if (send_seal_ ? !send_seal_->seal(payload, frame) : !protocol::append_frame(payload, frame)) return false;
    return send_raw(frame);
  }
  bool send_raw(std::span<const std::uint8_t> bytes) {
    std::error_code ec;
    asio::write(tcp_, asio::buffer(bytes.data(), bytes.size()), ec);
    sent_.insert(sent_.end(), bytes.begin(), bytes.end());
    return !ec;
  }
  /// Writes `frame` (one whole frame, as sent on the wire) over and over without blocking until
  /// `duration` has passed, sleeping a millisecond whenever the socket takes nothing (a flood;
  /// not kept in sent_bytes()). Ends on a frame boundary. Returns the frames written whole.
  std::size_t flood(std::span<const std::uint8_t> frame, std::chrono::milliseconds duration) {
    if (frame.empty()) return 0;
    std::vector<std::uint8_t> batch;
    for (int i = 0; i < 256; ++i) batch.insert(batch.end(), frame.begin(), frame.end());
    std::error_code ec;
    tcp_.non_blocking(true, ec);
    std::size_t written = 0, at = 0;
    const auto end = std::chrono::steady_clock::now() + duration;
    while (!ec && std::chrono::steady_clock::now() < end) {
      const std::size_t n = tcp_.write_some(asio::buffer(batch.data() + at, batch.size() - at), ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) {
        ec.clear();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      written += n;
      at = (at + n) % batch.size();
    }
    // The rest of the frame in progress, so the stream stays whole for what follows.
    tcp_.non_blocking(false, ec);
    const std::size_t rest = (frame.size() - at % frame.size()) % frame.size();
    if (!ec && rest > 0) {
      asio::write(tcp_, asio::buffer(batch.data() + at, rest), ec);
      written += rest;
    }
    return written / frame.size();
  }
  /// A token session (frame_seal.hpp): from now on send() seals and read() opens.
  void seal_stream(const protocol::SessionKey& client_to_server, const protocol::SessionKey& server_to_client) {
    send_seal_.emplace(client_to_server, protocol::Direction::kTcpClientToServer);
    receive_seal_.emplace(server_to_client, protocol::Direction::kTcpServerToClient);
  }
  /// Every byte of the TCP stream both ways so far: what an on-path reader sees.
  [[nodiscard]] const std::vector<std::uint8_t>& sent_bytes() const noexcept { return sent_; }
  [[nodiscard]] const std::vector<std::uint8_t>& received_bytes() const noexcept { return received_; }

  /// The next TCP message, or nullopt on timeout, on close (closed() then true) or on a frame
  /// that does not decode (bad_frame() then true).
  std::optional<protocol::TcpMessage> read(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      std::vector<std::uint8_t> frame;
      const auto status = decoder_.next(frame);
      if (status == protocol::FrameDecoder::Status::kFrame) {
        if (receive_seal_) {
          std::vector<std::uint8_t> plain;
          if (!receive_seal_->open(frame, plain)) {
            bad_frame_ = true;
            return std::nullopt;
          }
          frame.swap(plain);
        }
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
        received_.insert(received_.end(), buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(n));
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
  /// Reads until a SnapshotData arrives that decodes (against the frames this client decoded
  /// before: over TCP every snapshot is a delta against the previous one), or the timeout.
  std::optional<RawSnapshot> read_snapshot(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      auto data = read_until<protocol::SnapshotData>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      if (!data) return std::nullopt;
      if (auto s = decode(data->payload)) return s;
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
  bool udp_open(const char* address = "127.0.0.1") {
    std::error_code ec;
    udp_.open(asio::ip::udp::v4(), ec);
    if (!ec) udp_.bind({asio::ip::make_address(address), 0}, ec);
    return !ec;
  }
  [[nodiscard]] asio::ip::udp::endpoint udp_endpoint() const { return udp_.local_endpoint(); }

  /// The session's packet channel (from Welcome.udp); required by the sealed-packet helpers.
  void udp_session(const protocol::SessionCredentials& credentials) {
    channel_.emplace(protocol::PacketChannel::Side::kClient, credentials);
  }
  [[nodiscard]] protocol::PacketChannel& channel() { return *channel_; }

  /// The address confirmation: ConnectRequest -> Challenge -> ChallengeResponse -> the server's
  /// empty data packet. Retries every 200 ms; true once confirmed within `timeout`.
  bool udp_confirm(std::uint16_t port, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      if (!udp_send(port, channel_->seal(protocol::PacketType::kConnectRequest, {}))) return false;
      const auto round_end = std::min(deadline, Clock::now() + std::chrono::milliseconds(200));
      while (Clock::now() < round_end) {
        auto d = udp_receive(std::chrono::duration_cast<std::chrono::milliseconds>(round_end - Clock::now()));
        if (!d) break;
        protocol::PacketHeader h;
        std::vector<std::uint8_t> body;
        if (channel_->open(*d, h, body) != protocol::PacketChannel::OpenResult::kOk) continue;
        if (h.type == protocol::PacketType::kChallenge) {
          udp_send(port, channel_->seal(protocol::PacketType::kChallengeResponse, body));
        } else if (h.type == protocol::PacketType::kData) {
          if (!body.empty()) feed_fragment(body);
          return true;
        }
      }
    }
    return false;
  }
  /// Seals an Input (or, without one, a keep-alive) as the next data packet and sends it.
  bool udp_send_input(std::uint16_t port, const std::optional<protocol::Input>& input) {
    const auto body = input ? protocol::encode_input_datagram(*input) : std::vector<std::uint8_t>{};
    return udp_send(port, channel_->seal(protocol::PacketType::kData, body));
  }
  /// Acknowledges every snapshot decoded so far (a SnapshotAck data packet).
  bool udp_send_ack(std::uint16_t port) {
    return udp_send(port, channel_->seal(protocol::PacketType::kData, protocol::encode_ack_datagram(receiver_.ack())));
  }
  [[nodiscard]] const protocol::SnapshotAck& snapshot_ack() const noexcept { return receiver_.ack(); }
  /// Snapshots that arrived whole but named a baseline this client does not hold.
  [[nodiscard]] std::uint64_t no_baseline() const noexcept { return no_baseline_; }
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
  /// The next snapshot received over UDP (packets opened, fragments reassembled, decoded), or
  /// nullopt.
  std::optional<RawSnapshot> udp_snapshot(std::chrono::milliseconds timeout) {
    if (pending_snapshot_) {
      auto s = std::move(pending_snapshot_);
      pending_snapshot_.reset();
      return s;
    }
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      auto d = udp_receive(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
      if (!d) return std::nullopt;
      protocol::PacketHeader h;
      std::vector<std::uint8_t> body;
      if (channel_->open(*d, h, body) != protocol::PacketChannel::OpenResult::kOk || body.empty()) continue;
      feed_fragment(body);
      if (pending_snapshot_) {
        auto s = std::move(pending_snapshot_);
        pending_snapshot_.reset();
        return s;
      }
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

  void feed_fragment(const std::vector<std::uint8_t>& body) {
    if (const auto whole = assembler_.add(body)) {
      if (auto snap = decode(*whole)) pending_snapshot_ = std::move(snap);
    }
  }
  std::optional<RawSnapshot> decode(std::span<const std::uint8_t> payload) {
    const auto result = receiver_.receive(payload);
    if (result == protocol::SnapshotReceiver::Result::kNoBaseline) ++no_baseline_;
    if (result != protocol::SnapshotReceiver::Result::kDecoded) return std::nullopt;
    RawSnapshot s;
    static_cast<protocol::SnapshotHeader&>(s) = receiver_.header();
    s.frame = receiver_.frame();
    return s;
  }

  asio::io_context io_;
  std::optional<protocol::PacketChannel> channel_;
  std::optional<RawSnapshot> pending_snapshot_;
  asio::ip::tcp::socket tcp_{io_};
  asio::ip::udp::socket udp_{io_};
  protocol::FrameDecoder decoder_;
  std::optional<protocol::FrameSeal> send_seal_;
  std::optional<protocol::FrameSeal> receive_seal_;
  std::vector<std::uint8_t> sent_;
  std::vector<std::uint8_t> received_;
  protocol::FragmentAssembler assembler_;
  protocol::SnapshotReceiver receiver_{1u << 18};
  std::uint64_t no_baseline_ = 0;
  std::array<std::uint8_t, 64 * 1024> buffer_{};
  bool closed_ = false;
  bool bad_frame_ = false;
};

}  // namespace swarmfield::test
