// TCP framing: split and concatenated feeds, zero-length frames, too-large frames, bounded memory.
#include <doctest/doctest.h>

#include <random>

#include "swarmfield/protocol/transport/framing.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;

namespace {

std::vector<std::uint8_t> payload(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(seed + i * 7);
  return p;
}

}  // namespace

TEST_CASE("append_frame writes a little-endian length and refuses oversized payloads") {
  std::vector<std::uint8_t> out;
  REQUIRE(sp::append_frame(payload(0x0102, 1), out));
  REQUIRE(out.size() == 4 + 0x0102);
  CHECK(out[0] == 0x02);
  CHECK(out[1] == 0x01);
  CHECK(out[2] == 0);
  CHECK(out[3] == 0);
  const std::size_t before = out.size();
  CHECK_FALSE(sp::append_frame(std::vector<std::uint8_t>(sp::kMaxFrameBytes + 1), out));
  CHECK(out.size() == before);
  CHECK(sp::append_frame(std::vector<std::uint8_t>(sp::kMaxFrameBytes), out));
}

TEST_CASE("frames survive any split and concatenation of the stream") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("framing seed " << seed);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint8_t>> sent;
  std::vector<std::uint8_t> stream;
  for (int i = 0; i < 300; ++i) {
    const std::size_t n = i % 50 == 0 ? 0 : (i % 97 == 0 ? 70000 : rng() % 300);  // empty, big, small
    sent.push_back(payload(n, static_cast<std::uint8_t>(i)));
    REQUIRE(sp::append_frame(sent.back(), stream));
  }
  for (const std::size_t max_piece : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, stream.size()}) {
    CAPTURE(max_piece);
    sp::FrameDecoder decoder;
    std::vector<std::vector<std::uint8_t>> received;
    std::vector<std::uint8_t> frame;
    std::size_t peak = 0;
    for (std::size_t at = 0; at < stream.size();) {
      const std::size_t n = std::min(stream.size() - at, 1 + rng() % max_piece);
      decoder.feed(std::span(stream).subspan(at, n));
      at += n;
      peak = std::max(peak, decoder.buffered());
      for (;;) {
        const auto status = decoder.next(frame);
        REQUIRE(status != sp::FrameDecoder::Status::kTooLarge);
        if (status == sp::FrameDecoder::Status::kNeedMore) break;
        received.push_back(frame);
      }
    }
    CHECK(received == sent);
    CHECK(decoder.buffered() == 0);
    // Never more than one unfinished frame plus one feed kept.
    CHECK(peak <= 70000 + 4 + max_piece);
  }
}

TEST_CASE("a declared length above the limit is final, and memory is released") {
  sp::FrameDecoder decoder(1000);
  std::vector<std::uint8_t> stream;
  REQUIRE(sp::append_frame(payload(1000, 1), stream));  // exactly the limit: fine
  stream.insert(stream.end(), {0xE9, 0x03, 0x00, 0x00});  // 1001: too large
  stream.insert(stream.end(), 5000, 0x55);
  decoder.feed(stream);
  std::vector<std::uint8_t> frame;
  REQUIRE(decoder.next(frame) == sp::FrameDecoder::Status::kFrame);
  CHECK(frame.size() == 1000);
  CHECK(decoder.next(frame) == sp::FrameDecoder::Status::kTooLarge);
  CHECK(decoder.failed());
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.memory_bytes() == 0);
  decoder.feed(payload(100000, 2));  // ignored from now on
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.memory_bytes() == 0);
  CHECK(decoder.next(frame) == sp::FrameDecoder::Status::kTooLarge);
}

TEST_CASE("a too-large header is refused at feed time, before its body arrives") {
  sp::FrameDecoder decoder;  // 1 MiB
  const std::uint8_t header[] = {0xFF, 0xFF, 0xFF, 0xFF};
  decoder.feed(std::span(header, 2));
  std::vector<std::uint8_t> frame;
  CHECK(decoder.next(frame) == sp::FrameDecoder::Status::kNeedMore);
  decoder.feed(std::span(header + 2, 2));
  CHECK(decoder.failed());
  CHECK(decoder.buffered() == 0);
  CHECK(decoder.next(frame) == sp::FrameDecoder::Status::kTooLarge);
}

TEST_CASE("the buffer is compacted: a long stream of small frames keeps memory flat") {
  sp::FrameDecoder decoder;
  std::vector<std::uint8_t> chunk;
  for (int i = 0; i < 100; ++i) REQUIRE(sp::append_frame(payload(100, static_cast<std::uint8_t>(i)), chunk));
  std::vector<std::uint8_t> frame;
  std::size_t frames = 0;
  // 200 x 10 KB = 2 MB through the decoder, draining half-way through every other feed.
  for (int round = 0; round < 200; ++round) {
    decoder.feed(chunk);
    const int drain = round % 2 == 0 ? 50 : 1000;
    for (int k = 0; k < drain && decoder.next(frame) == sp::FrameDecoder::Status::kFrame; ++k) ++frames;
    CHECK(decoder.buffered() <= 2 * chunk.size());
    CHECK(decoder.memory_bytes() <= 4 * chunk.size());
  }
  CHECK(frames == 200 * 100);
}
