// Bodies of client UDP data packets: input and ack round trips; hostile bodies; the capped zstd
// decompression of the map transfer. (Snapshot fragments: snapshot_fragments_test.cpp.)
#include <doctest/doctest.h>

#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "swarmfield/protocol/transport/compression.hpp"
#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/wire/swarmfield_generated.h"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
namespace wire = swarmfield::wire;

TEST_CASE("input datagram bodies round-trip") {
  const sp::Input input{7, 0.25f, -1.0f, 1.5f, 2.5f, 300.0f, 400.0f, sp::SnapshotAck{99, 0x80000001u}, 1234567890123ull};
  const auto bytes = sp::encode_input_datagram(input);
  CHECK(bytes.size() <= 128);
  std::string error;
  const auto decoded = sp::decode_datagram(bytes, &error);
  REQUIRE_MESSAGE(decoded, error);
  REQUIRE(decoded->input);
  CHECK_FALSE(decoded->ack);
  CHECK(*decoded->input == input);

  sp::Input bad = input;
  bad.move_x = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(sp::decode_datagram(sp::encode_input_datagram(bad), &error));
  CHECK(error == "Input move/view values must be finite and within +-1e6");
}

TEST_CASE("input datagrams carry fire and aim; a hostile aim is refused") {
  sp::Input input{8, 0.0f, 0.0f, 0.0f, 0.0f, 32.0f, 32.0f, sp::SnapshotAck{4, 0x7u}, 55, true, 0.75f, -2.0f};
  std::string error;
  auto decoded = sp::decode_datagram(sp::encode_input_datagram(input), &error);
  REQUIRE_MESSAGE(decoded, error);
  REQUIRE(decoded->input);
  CHECK(*decoded->input == input);

  input.fire = false;  // a trigger let go keeps its last aim on the wire
  decoded = sp::decode_datagram(sp::encode_input_datagram(input), &error);
  REQUIRE_MESSAGE(decoded, error);
  REQUIRE(decoded->input);
  CHECK_FALSE(decoded->input->fire);
  CHECK(decoded->input->aim_y == -2.0f);

  for (const float hostile : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), 1.0e7f}) {
    for (const bool on_x : {true, false}) {
      sp::Input bad = input;
      bad.fire = true;
      (on_x ? bad.aim_x : bad.aim_y) = hostile;
      CAPTURE(hostile);
      CHECK_FALSE(sp::decode_datagram(sp::encode_input_datagram(bad), &error));
      CHECK(error == "Input aim values must be finite and within +-1e6");
    }
  }
}

TEST_CASE("input datagrams carry the build request; a cell outside the largest map is refused") {
  sp::Input input{9, 0.0f, 0.0f, 0.0f, 0.0f, 32.0f, 32.0f, sp::SnapshotAck{4, 0x7u}, 55, false, 0.0f, 0.0f, 12, 31, 8190};
  std::string error;
  auto decoded = sp::decode_datagram(sp::encode_input_datagram(input), &error);
  REQUIRE_MESSAGE(decoded, error);
  REQUIRE(decoded->input);
  CHECK(*decoded->input == input);
  for (const auto& [x, y] : {std::pair{-1, 0}, std::pair{0, 8192}, std::pair{100000, 5}}) {
    sp::Input bad = input;
    bad.build_x = x;
    bad.build_y = y;
    CAPTURE(x);
    CAPTURE(y);
    CHECK_FALSE(sp::decode_datagram(sp::encode_input_datagram(bad), &error));
    CHECK(error.rfind("Input build cell (", 0) == 0);
  }
}

TEST_CASE("ack datagram bodies round-trip; ack bits naming sequences before 1 are refused") {
  std::string error;
  for (const sp::SnapshotAck ack : {sp::SnapshotAck{1, 0}, sp::SnapshotAck{33, 0xFFFFFFFFu}, sp::SnapshotAck{5, 0xFu},
                                    sp::SnapshotAck{0, 0}}) {
    const auto bytes = sp::encode_ack_datagram(ack);
    CHECK(bytes.size() <= 64);
    const auto decoded = sp::decode_datagram(bytes, &error);
    REQUIRE_MESSAGE(decoded, error);
    REQUIRE(decoded->ack);
    CHECK_FALSE(decoded->input);
    CHECK(*decoded->ack == ack);
  }
  // Sequence 5 with bit 4 set names sequence 0; 32 with bit 31 set names 0 too.
  for (const sp::SnapshotAck ack : {sp::SnapshotAck{5, 0x10u}, sp::SnapshotAck{32, 0x80000000u}, sp::SnapshotAck{0, 1u}}) {
    CHECK_FALSE(sp::decode_datagram(sp::encode_ack_datagram(ack), &error));
    CHECK(error == "snapshot ack bits name sequences before 1");
    sp::Input input;
    input.snapshot_ack = ack;
    CHECK_FALSE(sp::decode_datagram(sp::encode_input_datagram(input), &error));
  }
}

TEST_CASE("decode_datagram refuses oversized, foreign and malformed datagrams") {
  std::string error;
  CHECK_FALSE(sp::decode_datagram({}, &error));
  CHECK(error == "empty datagram");
  CHECK_FALSE(sp::decode_datagram(std::vector<std::uint8_t>(sp::kMaxPacketBodyBytes + 1, 0), &error));
  CHECK(error == "datagram body of 1159 bytes exceeds 1158");
  // A TCP envelope is not a datagram (identifier differs).
  CHECK_FALSE(sp::decode_datagram(sp::encode_tcp_message(sp::Bye{"x"}), &error));
  CHECK(error == "not a valid swarmfield datagram (FlatBuffers verification failed)");

  flatbuffers::FlatBufferBuilder b;
  b.Finish(wire::CreateDatagram(b), "SWFD");
  CHECK_FALSE(sp::decode_datagram({b.GetBufferPointer(), b.GetSize()}, &error));
  CHECK(error == "datagram holds no payload");
}

TEST_CASE("seeded datagram mutations never crash and never yield out-of-range fields") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("datagram mutation seed " << seed);
  std::mt19937_64 rng(seed);
  const std::vector<std::vector<std::uint8_t>> originals = {
      sp::encode_input_datagram(sp::Input{1, 0.5f, 0.5f, 0, 0, 10, 10, sp::SnapshotAck{40, 0x0F0F0F0Fu}, 4, true, 1.5f, -2.5f}),
      sp::encode_ack_datagram(sp::SnapshotAck{7, 0x3Fu})};
  int cases = 0;
  int accepted = 0;
  for (const auto& original : originals) {
    for (int round = 0; round < 5000; ++round, ++cases) {
      std::vector<std::uint8_t> mutant = original;
      if (round % 10 == 0) {
        mutant.resize(rng() % mutant.size());
      } else {
        for (int f = 0, n = 1 + static_cast<int>(rng() % 4); f < n; ++f) {
          mutant[rng() % mutant.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        }
      }
      const auto decoded = sp::decode_datagram(mutant);
      if (!decoded) continue;
      ++accepted;
      REQUIRE(decoded->input.has_value() != decoded->ack.has_value());
      if (decoded->input) {
        CHECK(sp::test::satisfies_limits(sp::TcpMessage{*decoded->input}));
      } else {
        sp::Input carrier;
        carrier.snapshot_ack = *decoded->ack;
        CHECK(sp::test::satisfies_limits(sp::TcpMessage{carrier}));
      }
    }
  }
  MESSAGE(cases << " mutated datagrams, " << accepted << " still well-formed");
  CHECK(accepted > 0);
}

TEST_CASE("zstd_decompress refuses a frame whose window is larger than its output may be") {
  std::vector<std::uint8_t> data(100000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 >> 2);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);  // unsized: the window is not shrunk to fit
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 24);       // a 16 MiB window to allocate before any byte
  // Streamed (ZSTD_e_continue first), so zstd can not shrink the window to the input's size.
  std::vector<std::uint8_t> wide(ZSTD_compressBound(data.size()) + 64);
  ZSTD_inBuffer in{data.data(), data.size(), 0};
  ZSTD_outBuffer out{wide.data(), wide.size(), 0};
  REQUIRE_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_continue)));
  std::size_t left = 1;
  while (left != 0) {
    left = ZSTD_compressStream2(cctx, &out, &in, ZSTD_e_end);
    REQUIRE_FALSE(ZSTD_isError(left));
  }
  wide.resize(out.pos);
  ZSTD_freeCCtx(cctx);
  CHECK_FALSE(sp::zstd_decompress(wide, data.size()));            // at most ~128 KiB wanted: refused
  CHECK(sp::zstd_decompress(wide, std::size_t{1} << 24) == data);  // room for the window: fine
  CHECK(sp::zstd_decompress(sp::zstd_compress(data), data.size()) == data);
}

TEST_CASE("zstd_decompress caps its output even when the frame does not state its size") {
  std::vector<std::uint8_t> data(100000);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * i >> 3);
  const auto packed = sp::zstd_compress(data);
  CHECK(sp::zstd_decompress(packed, data.size()) == data);
  CHECK_FALSE(sp::zstd_decompress(packed, data.size() - 1));

  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::vector<std::uint8_t> unsized(ZSTD_compressBound(data.size()));
  unsized.resize(ZSTD_compress2(cctx, unsized.data(), unsized.size(), data.data(), data.size()));
  ZSTD_freeCCtx(cctx);
  REQUIRE(ZSTD_getFrameContentSize(unsized.data(), unsized.size()) == ZSTD_CONTENTSIZE_UNKNOWN);
  CHECK(sp::zstd_decompress(unsized, data.size()) == data);
  CHECK_FALSE(sp::zstd_decompress(unsized, 50000));

  CHECK_FALSE(sp::zstd_decompress(std::span(packed).first(packed.size() - 3), data.size()));  // truncated
  auto trailing = packed;
  trailing.push_back(0x42);
  CHECK_FALSE(sp::zstd_decompress(trailing, data.size()));
  CHECK_FALSE(sp::zstd_decompress({}, 100));
  // Two frames back to back are one valid stream.
  auto twice = packed;
  twice.insert(twice.end(), packed.begin(), packed.end());
  const auto both = sp::zstd_decompress(twice, 2 * data.size());
  REQUIRE(both);
  CHECK(both->size() == 2 * data.size());
}
