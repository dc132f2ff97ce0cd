#include <doctest/doctest.h>

#include <asio/connect.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/write.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/server/net/tcp_session.hpp"

using namespace swarmfield;
using asio::ip::tcp;

namespace {

struct RecordingHandler final : server::TcpSessionHandler {
  std::vector<std::vector<std::uint8_t>> frames;
  int too_large = 0;
  int closed = 0;
  std::size_t sent = 0;
  void on_frame(server::TcpSession&, std::vector<std::uint8_t>& payload) override { frames.push_back(payload); }
  void on_frame_too_large(server::TcpSession&) override { ++too_large; }
  void on_bytes_sent(server::TcpSession&, std::size_t bytes) override { sent += bytes; }
  void on_closed(server::TcpSession&) override { ++closed; }
};

// A connected pair on 127.0.0.1: `client` is a plain socket, `server_side` goes to the session.
struct Pair {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  tcp::socket client{io};
  tcp::socket server_side{io};
  Pair() {
    client.connect(acceptor.local_endpoint());
    acceptor.accept(server_side);
  }
  // Runs handlers until `done()` or 2 s.
  template <class F>
  bool run_until(F done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      io.restart();
      io.run_for(std::chrono::milliseconds(10));
    }
    return done();
  }
};

server::Frame frame_of(std::size_t payload_bytes, std::uint8_t fill) {
  std::vector<std::uint8_t> payload(payload_bytes, fill);
  auto f = std::make_shared<std::vector<std::uint8_t>>();
  REQUIRE(protocol::append_frame(payload, *f));
  return f;
}

}  // namespace

TEST_CASE("tcp_session: incoming bytes are split into frames, even when they arrive byte by byte") {
  Pair p;
  RecordingHandler h;
  auto session = std::make_shared<server::TcpSession>(std::move(p.server_side), h, 1, 1 << 20);
  session->start();
  std::vector<std::uint8_t> bytes;
  REQUIRE(protocol::append_frame(std::vector<std::uint8_t>{1, 2, 3}, bytes));
  REQUIRE(protocol::append_frame(std::vector<std::uint8_t>(5000, 9), bytes));
  for (std::size_t i = 0; i < 20; ++i) asio::write(p.client, asio::buffer(&bytes[i], 1));
  asio::write(p.client, asio::buffer(bytes.data() + 20, bytes.size() - 20));
  REQUIRE(p.run_until([&] { return h.frames.size() == 2; }));
  CHECK(h.frames[0] == std::vector<std::uint8_t>{1, 2, 3});
  CHECK(h.frames[1].size() == 5000);
}

TEST_CASE("tcp_session: frames are written whole and in order; close reports once") {
  Pair p;
  RecordingHandler h;
  auto session = std::make_shared<server::TcpSession>(std::move(p.server_side), h, 1, 1 << 20);
  session->start();
  for (std::uint8_t i = 0; i < 10; ++i) CHECK(session->send(frame_of(1000 + i, i)) == server::TcpSession::SendResult::kQueued);
  REQUIRE(p.run_until([&] { return session->queued_bytes() == 0; }));
  protocol::FrameDecoder decoder;
  std::vector<std::uint8_t> got;
  std::vector<std::uint8_t> buf(64 * 1024);
  std::size_t frames = 0;
  while (frames < 10) {
    const std::size_t n = p.client.read_some(asio::buffer(buf));
    decoder.feed(std::span<const std::uint8_t>(buf.data(), n));
    while (decoder.next(got) == protocol::FrameDecoder::Status::kFrame) {
      CHECK(got.size() == 1000 + frames);
      CHECK(got.front() == frames);
      ++frames;
    }
  }
  CHECK(h.sent == session->bytes_sent());
  session->close();
  session->close();
  REQUIRE(p.run_until([&] { return h.closed > 0; }));
  CHECK(h.closed == 1);
  CHECK(session->send(frame_of(10, 0)) == server::TcpSession::SendResult::kClosed);
}

TEST_CASE("tcp_session: a client that does not read is evicted when the queue bound is reached") {
  Pair p;
  RecordingHandler h;
  const std::size_t bound = 64 * 1024;
  auto session = std::make_shared<server::TcpSession>(std::move(p.server_side), h, 1, bound);
  session->start();
  int evicted_at = -1;
  for (int i = 0; i < 10000 && evicted_at < 0; ++i) {
    if (session->send(frame_of(16 * 1024, 1)) == server::TcpSession::SendResult::kEvicted) evicted_at = i;
    p.io.poll();  // the kernel takes some bytes; the client never reads
  }
  REQUIRE(evicted_at >= 0);
  CHECK(session->closed());
  REQUIRE(p.run_until([&] { return h.closed == 1; }));
}

TEST_CASE("tcp_session: a frame above the limit is reported and nothing after it is parsed") {
  Pair p;
  RecordingHandler h;
  auto session = std::make_shared<server::TcpSession>(std::move(p.server_side), h, 1, 1 << 20);
  session->start();
  const std::uint8_t huge[] = {0xFF, 0xFF, 0xFF, 0x7F, 1, 2, 3};
  asio::write(p.client, asio::buffer(huge));
  REQUIRE(p.run_until([&] { return h.too_large == 1; }));
  CHECK(h.frames.empty());
  REQUIRE(p.run_until([&] { return h.closed == 1; }));
}

TEST_CASE("tcp_session: send_latest replaces the frame still waiting; send() frames are kept, in order") {
  Pair p;
  RecordingHandler h;
  auto session = std::make_shared<server::TcpSession>(std::move(p.server_side), h, 1, 1 << 20);
  session->start();
  // Without running the io_context the first frame stays "being written", so everything after
  // it waits: what a slow client's queue looks like.
  REQUIRE(session->send_latest(frame_of(100, 0)) == server::TcpSession::SendResult::kQueued);
  REQUIRE(session->send(frame_of(200, 1)) == server::TcpSession::SendResult::kQueued);  // e.g. a map chunk
  for (std::uint8_t i = 2; i < 50; ++i) {
    REQUIRE(session->send_latest(frame_of(100, i)) == server::TcpSession::SendResult::kQueued);
    CHECK(session->queued_frames() <= 3);  // in flight + the send() frame + one latest
  }
  CHECK(session->superseded_frames() == 47);
  CHECK(session->queued_bytes() == 3 * 4 + 100 + 200 + 100);
  REQUIRE(p.run_until([&] { return session->queued_bytes() == 0; }));
  protocol::FrameDecoder decoder;
  std::vector<std::uint8_t> got;
  std::vector<std::uint8_t> fills;
  std::vector<std::uint8_t> buf(64 * 1024);
  for (int reads = 0; reads < 100 && fills.size() < 3; ++reads) {
    const std::size_t n = p.client.read_some(asio::buffer(buf));
    decoder.feed(std::span<const std::uint8_t>(buf.data(), n));
    while (decoder.next(got) == protocol::FrameDecoder::Status::kFrame) fills.push_back(got.front());
  }
  CHECK(fills == std::vector<std::uint8_t>{0, 1, 49});  // the newest snapshot, nothing stale
}

TEST_CASE("tcp_session: a client that reads nothing is evicted even though snapshots only replace each other") {
  Pair p;
  RecordingHandler h;
  const std::size_t bound = 64 * 1024;
  auto session = std::make_shared<server::TcpSession>(std::move(p.server_side), h, 1, bound);
  session->start();
  int evicted_at = -1;
  std::size_t most_frames = 0;
  for (int i = 0; i < 10000 && evicted_at < 0; ++i) {
    if (session->send_latest(frame_of(16 * 1024, 1)) == server::TcpSession::SendResult::kEvicted) evicted_at = i;
    most_frames = std::max(most_frames, session->queued_frames());
    p.io.poll();  // the kernel takes some bytes; the client never reads
  }
  REQUIRE(evicted_at >= 0);
  CHECK(most_frames <= 2);  // never a backlog: one being written, one waiting
  CHECK(session->closed());
  REQUIRE(p.run_until([&] { return h.closed == 1; }));
}
