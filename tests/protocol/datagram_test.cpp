// Bodies of UDP data packets: input round trip, snapshot fragmentation and reassembly under
// loss, reordering and duplication; bounded reassembly; hostile bodies.
#include <doctest/doctest.h>

#include <zstd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <random>

#include "swarmfield/protocol/datagram.hpp"
#include "swarmfield/wire/swarmfield_generated.h"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
namespace wire = swarmfield::wire;
using sp::test::Layout;

namespace {

std::vector<sp::DecodedDatagram> decode_all(const std::vector<std::vector<std::uint8_t>>& datagrams) {
  std::vector<sp::DecodedDatagram> out;
  for (const auto& d : datagrams) {
    std::string error;
    auto decoded = sp::decode_datagram(d, &error);
    REQUIRE_MESSAGE(decoded.has_value(), error);
    out.push_back(std::move(*decoded));
  }
  return out;
}

sp::DecodedDatagram fragment(std::uint32_t tick, std::uint16_t index, std::uint16_t count, std::size_t size,
                             std::uint8_t fill = 0x5A) {
  sp::DecodedDatagram d;
  d.snapshot_tick = tick;
  d.fragment_index = index;
  d.fragment_count = count;
  d.fragment.assign(size, fill);
  return d;
}

}  // namespace

TEST_CASE("input datagram bodies round-trip") {
  const sp::Input input{7, 0.25f, -1.0f, 1.5f, 2.5f, 300.0f, 400.0f, 99, 1234567890123ull};
  const auto bytes = sp::encode_input_datagram(input);
  CHECK(bytes.size() <= 128);
  std::string error;
  const auto decoded = sp::decode_datagram(bytes, &error);
  REQUIRE_MESSAGE(decoded, error);
  REQUIRE(decoded->input);
  CHECK(*decoded->input == input);

  sp::Input bad = input;
  bad.move_x = std::numeric_limits<float>::quiet_NaN();
  CHECK_FALSE(sp::decode_datagram(sp::encode_input_datagram(bad), &error));
  CHECK(error == "Input move/view values must be finite and within +-1e6");
}

TEST_CASE("snapshot fragmentation round trip: 0, 1, 5,000 and 60,000 agents, every sealed datagram <= 1200 bytes") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5000}, std::size_t{60000}}) {
    CAPTURE(n);
    const sp::Snapshot snapshot = sp::test::make_snapshot(n, Layout::kSpread, 10 + n, 500);
    const auto datagrams = sp::encode_snapshot_datagrams(snapshot);
    REQUIRE_FALSE(datagrams.empty());
    std::size_t largest = 0;
    for (std::size_t i = 0; i < datagrams.size(); ++i) largest = std::max(largest, datagrams[i].size());
    CHECK(largest <= sp::kMaxPacketBodyBytes);
    CHECK(largest + sp::kPacketOverheadBytes <= sp::kMaxDatagramBytes);
    const auto decoded = decode_all(datagrams);
    for (std::size_t i = 0; i < decoded.size(); ++i) {
      CHECK(decoded[i].fragment_index == i);
      CHECK(decoded[i].fragment_count == datagrams.size());
      CHECK(decoded[i].snapshot_tick == 500);
    }
    sp::SnapshotReassembler reassembler;
    std::optional<sp::Snapshot> out;
    for (std::size_t i = 0; i < decoded.size(); ++i) {
      out = reassembler.add(decoded[i]);
      if (i + 1 < decoded.size()) REQUIRE_FALSE(out);
    }
    REQUIRE(out);
    CHECK(*out == snapshot);
    CHECK(reassembler.pending() == 0);
    CHECK(reassembler.pending_bytes() == 0);
    CHECK(reassembler.dropped() == 0);
    MESSAGE(n << " agents: " << datagrams.size() << " datagrams, largest " << largest << " bytes");
  }
}

TEST_CASE("out-of-order and duplicated fragments still give exactly one snapshot") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("reorder seed " << seed);
  std::mt19937_64 rng(seed);
  const sp::Snapshot snapshot = sp::test::make_snapshot(20000, Layout::kSpread, 5, 77);
  auto decoded = decode_all(sp::encode_snapshot_datagrams(snapshot));
  REQUIRE(decoded.size() > 10);
  // Every fragment twice, shuffled.
  std::vector<sp::DecodedDatagram> stream = decoded;
  stream.insert(stream.end(), decoded.begin(), decoded.end());
  std::shuffle(stream.begin(), stream.end(), rng);
  sp::SnapshotReassembler reassembler;
  int delivered = 0;
  for (const auto& d : stream) {
    if (auto out = reassembler.add(d)) {
      ++delivered;
      CHECK(*out == snapshot);
    }
  }
  CHECK(delivered == 1);
  // Duplicates before completion are "duplicates"; those after it are stale (tick delivered).
  CHECK(reassembler.duplicates() + reassembler.dropped() == decoded.size());
  CHECK(reassembler.pending() == 0);
}

TEST_CASE("lost fragments: no snapshot, bounded pending, newer complete snapshot clears older ones") {
  sp::SnapshotReassembler reassembler;
  // 50 snapshots, each missing one fragment.
  for (std::uint32_t tick = 1; tick <= 50; ++tick) {
    const auto decoded = decode_all(sp::encode_snapshot_datagrams(sp::test::make_snapshot(3000, Layout::kSpread, tick, tick)));
    REQUIRE(decoded.size() >= 2);
    for (std::size_t i = 1; i < decoded.size(); ++i) CHECK_FALSE(reassembler.add(decoded[i]));
    CHECK(reassembler.pending() <= sp::kMaxPendingSnapshots);
    CHECK(reassembler.pending_bytes() <= sp::kMaxPendingSnapshotBytes);
  }
  CHECK(reassembler.pending() == sp::kMaxPendingSnapshots);
  CHECK(reassembler.abandoned() == 50 - sp::kMaxPendingSnapshots);

  // A fragment of a tick older than everything held is refused (the newer ones win).
  const auto old = decode_all(sp::encode_snapshot_datagrams(sp::test::make_snapshot(3000, Layout::kSpread, 1, 1)));
  const auto dropped_before = reassembler.dropped();
  CHECK_FALSE(reassembler.add(old[0]));
  CHECK(reassembler.dropped() == dropped_before + 1);

  // Tick 60 arrives complete: all partial (older) snapshots go.
  const sp::Snapshot newest = sp::test::make_snapshot(100, Layout::kPacked, 60, 60);
  std::optional<sp::Snapshot> out;
  for (const auto& d : decode_all(sp::encode_snapshot_datagrams(newest))) out = reassembler.add(d);
  REQUIRE(out);
  CHECK(*out == newest);
  CHECK(reassembler.pending() == 0);
  CHECK(reassembler.pending_bytes() == 0);
  CHECK(reassembler.abandoned() == 50);

  // Late fragments of older or equal ticks are stale now.
  const auto stale = decode_all(sp::encode_snapshot_datagrams(sp::test::make_snapshot(10, Layout::kSpread, 1, 60)));
  CHECK_FALSE(reassembler.add(stale[0]));
  CHECK(reassembler.pending() == 0);

  reassembler.reset();
  std::optional<sp::Snapshot> again;
  for (const auto& d : stale) again = reassembler.add(d);
  CHECK(again.has_value());  // after reset, tick 60 is new again
}

TEST_CASE("byte budget: large partial snapshots never exceed the pending byte limit") {
  sp::SnapshotReassembler reassembler;
  // Snapshots of 4096 fragments x the largest body (4.7 MB each if complete), all left incomplete.
  for (std::uint32_t tick = 1; tick <= 6; ++tick) {
    for (std::size_t i = 0; i + 1 < sp::kMaxSnapshotFragments; ++i) {
      static_cast<void>(reassembler.add(fragment(tick, static_cast<std::uint16_t>(i), static_cast<std::uint16_t>(sp::kMaxSnapshotFragments), sp::kMaxPacketBodyBytes)));
      REQUIRE(reassembler.pending_bytes() <= sp::kMaxPendingSnapshotBytes);
    }
  }
  CHECK(reassembler.pending() >= 1);
  CHECK(reassembler.pending() <= sp::kMaxPendingSnapshots);
  CHECK(reassembler.abandoned() >= 4);
}

TEST_CASE("hand-made bad fragments are dropped, not trusted") {
  sp::SnapshotReassembler r;
  CHECK_FALSE(r.add(fragment(5, 0, 0, 10)));                         // count 0
  CHECK_FALSE(r.add(fragment(5, 3, 3, 10)));                         // index == count
  CHECK_FALSE(r.add(fragment(5, 0, 4097, 10)));                      // count above limit
  CHECK_FALSE(r.add(fragment(5, 0, 2, 0)));                          // empty
  CHECK_FALSE(r.add(fragment(5, 0, 2, sp::kMaxPacketBodyBytes + 1)));  // oversized
  sp::DecodedDatagram input_datagram;
  input_datagram.input = sp::Input{};
  CHECK_FALSE(r.add(input_datagram));
  CHECK(r.dropped() == 6);
  CHECK(r.pending() == 0);

  // Inconsistent count for one tick: the later fragment is dropped.
  CHECK_FALSE(r.add(fragment(9, 0, 3, 10)));
  CHECK_FALSE(r.add(fragment(9, 1, 4, 10)));
  CHECK(r.dropped() == 7);
  CHECK(r.pending() == 1);
  // Completing tick 9 with garbage bytes: no snapshot, counted, nothing left pending.
  CHECK_FALSE(r.add(fragment(9, 1, 3, 10)));
  CHECK_FALSE(r.add(fragment(9, 2, 3, 10)));
  CHECK(r.dropped() == 8);
  CHECK(r.pending() == 0);
  CHECK(r.pending_bytes() == 0);

  // Valid compressed content whose inner tick disagrees with the fragments' tick.
  const auto payload = sp::compress_snapshot(sp::test::make_snapshot(10, Layout::kSpread, 1, 41));
  sp::DecodedDatagram d = fragment(42, 0, 1, 1);
  d.fragment = payload;
  CHECK_FALSE(r.add(d));
  CHECK(r.dropped() == 9);
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

  const auto craft = [](std::uint16_t index, std::uint16_t count, std::size_t size) {
    flatbuffers::FlatBufferBuilder b;
    const auto bytes = b.CreateVector(std::vector<std::uint8_t>(size, 1));
    const auto f = wire::CreateSnapshotFragment(b, 1, index, count, bytes);
    b.Finish(wire::CreateDatagram(b, wire::DatagramPayload::SnapshotFragment, f.Union()), "SWFD");
    return std::vector<std::uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  };
  CHECK(sp::decode_datagram(craft(0, 1, 10), &error));
  CHECK_FALSE(sp::decode_datagram(craft(1, 1, 10), &error));
  CHECK(error == "snapshot fragment 1 of 1 out of range");
  CHECK_FALSE(sp::decode_datagram(craft(0, 0, 10), &error));
  CHECK_FALSE(sp::decode_datagram(craft(0, 5000, 10), &error));
  CHECK(error == "snapshot fragment 0 of 5000 out of range");
  CHECK_FALSE(sp::decode_datagram(craft(0, 1, 0), &error));
  CHECK(error == "empty snapshot fragment");

  flatbuffers::FlatBufferBuilder b;
  b.Finish(wire::CreateDatagram(b), "SWFD");
  CHECK_FALSE(sp::decode_datagram({b.GetBufferPointer(), b.GetSize()}, &error));
  CHECK(error == "datagram holds no payload");
}

TEST_CASE("seeded datagram mutations never crash and never yield out-of-range fields") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("datagram mutation seed " << seed);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<std::uint8_t>> originals =
      sp::encode_snapshot_datagrams(sp::test::make_snapshot(2000, Layout::kSpread, 3, 9));
  originals.resize(3);
  originals.push_back(sp::encode_input_datagram(sp::Input{1, 0.5f, 0.5f, 0, 0, 10, 10, 3, 4}));
  sp::SnapshotReassembler reassembler;
  int cases = 0;
  int accepted = 0;
  for (const auto& original : originals) {
    for (int round = 0; round < 2500; ++round, ++cases) {
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
      if (decoded->input) {
        CHECK(std::isfinite(decoded->input->move_x));
        CHECK(std::isfinite(decoded->input->view_y1));
      } else {
        CHECK(decoded->fragment_count >= 1);
        CHECK(decoded->fragment_count <= sp::kMaxSnapshotFragments);
        CHECK(decoded->fragment_index < decoded->fragment_count);
        CHECK_FALSE(decoded->fragment.empty());
      }
      static_cast<void>(reassembler.add(*decoded));
      CHECK(reassembler.pending() <= sp::kMaxPendingSnapshots);
    }
  }
  MESSAGE(cases << " mutated datagrams, " << accepted << " still well-formed");
}

TEST_CASE("decompress_snapshot refuses frames without or above a stated size, trailing bytes, corruption") {
  const sp::Snapshot snapshot = sp::test::make_snapshot(500, Layout::kSpread, 8);
  const auto good = sp::compress_snapshot(snapshot);
  std::string error;
  auto out = sp::decompress_snapshot(good, &error);
  REQUIRE_MESSAGE(out, error);
  CHECK(*out == snapshot);

  // The same content as a frame that does not state its size.
  const auto raw = sp::zstd_decompress(good, sp::kMaxSnapshotBytes);
  REQUIRE(raw);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  std::vector<std::uint8_t> unsized(ZSTD_compressBound(raw->size()));
  unsized.resize(ZSTD_compress2(cctx, unsized.data(), unsized.size(), raw->data(), raw->size()));
  ZSTD_freeCCtx(cctx);
  CHECK_FALSE(sp::decompress_snapshot(unsized, &error));
  CHECK(error == "snapshot zstd frame does not state its size");

  // 9 MiB of zeros: compresses to a few hundred bytes but states more than the limit.
  const std::vector<std::uint8_t> zeros(9u << 20, 0);
  CHECK_FALSE(sp::decompress_snapshot(sp::zstd_compress(zeros), &error));
  CHECK(error == "snapshot states 9437184 bytes, limit 8388608");

  auto trailing = good;
  trailing.push_back(0);
  CHECK_FALSE(sp::decompress_snapshot(trailing, &error));
  CHECK(error == "snapshot payload is not exactly one complete zstd frame");

  // Any single flipped byte of the compressed payload is caught (checksum, or zstd itself).
  for (std::size_t i = 0; i < good.size(); ++i) {
    auto corrupt = good;
    corrupt[i] ^= 0x21;
    CAPTURE(i);
    CHECK_FALSE(sp::decompress_snapshot(corrupt, &error));
  }

  CHECK_FALSE(sp::decompress_snapshot(std::vector<std::uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}, &error));
  CHECK(error == "snapshot payload is not a zstd frame");

  // A valid zstd frame of something that is not a Snapshot buffer.
  CHECK_FALSE(sp::decompress_snapshot(sp::zstd_compress(std::vector<std::uint8_t>(100, 7)), &error));
  CHECK(error == "snapshot payload failed FlatBuffers verification");
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

TEST_CASE("snapshot sizes and encode time (report)") {
  for (const std::size_t n : {std::size_t{1000}, std::size_t{5000}}) {
    for (const Layout layout : {Layout::kSpread, Layout::kPacked}) {
      const sp::Snapshot s = sp::test::make_snapshot(n, layout, 99);
      const auto compressed = sp::compress_snapshot(s);
      const std::size_t raw = n * 9;
      MESSAGE(n << " agents " << (layout == Layout::kSpread ? "spread over 512x512" : "packed near a point")
                << ": " << compressed.size() << " bytes compressed (" << raw << " raw arrays, "
                << (compressed.size() * 1000 / raw) / 10.0 << "%), "
                << (compressed.size() + sp::kSnapshotFragmentBytes - 1) / sp::kSnapshotFragmentBytes << " datagrams");
      CHECK(compressed.size() < raw);
    }
  }
  // Hot path: 5,000 agents, compress + fragment, averaged.
  const sp::Snapshot s = sp::test::make_snapshot(5000, Layout::kSpread, 7);
  constexpr int kRounds = 50;
  std::size_t datagrams = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRounds; ++i) datagrams += sp::encode_snapshot_datagrams(s).size();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / kRounds;
  MESSAGE("encode_snapshot_datagrams(5,000 agents): " << ms << " ms per snapshot, " << datagrams / kRounds << " datagrams");
  CHECK(ms < 20.0);  // generous: a shared 2-core machine; typical is well under 1 ms

  // Receive side: decode every datagram and reassemble (decompress + verify + range checks).
  const auto datagrams_5000 = sp::encode_snapshot_datagrams(s);
  std::size_t delivered = 0;
  const auto start_rx = std::chrono::steady_clock::now();
  for (int i = 0; i < kRounds; ++i) {
    sp::SnapshotReassembler reassembler;
    for (const auto& d : datagrams_5000) {
      if (reassembler.add(*sp::decode_datagram(d))) ++delivered;
    }
  }
  const double rx_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_rx).count() / kRounds;
  MESSAGE("decode + reassemble (5,000 agents): " << rx_ms << " ms per snapshot");
  CHECK(delivered == kRounds);
  CHECK(rx_ms < 20.0);
}
