// Map transfer: make_map_chunks + MapAssembler, and the MapInfo they produce passes decode.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "swarmfield/protocol/transport/map_transfer.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;

namespace {

std::vector<std::uint8_t> noisy_costs(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> costs(n);
  for (auto& c : costs) c = static_cast<std::uint8_t>(rng() % 4 == 0 ? 255 : 1 + rng() % 254);
  return costs;
}

}  // namespace

TEST_CASE("map chunks round-trip in any order, through encode/decode, duplicates ignored") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("map seed " << seed);
  sp::MapInfo info;
  info.width = 300;
  info.height = 400;
  info.cell_size = 1.0f;
  info.name = "noise";
  const auto costs = noisy_costs(300 * 400, seed);
  auto chunks = sp::make_map_chunks(costs, info);
  REQUIRE(info.chunk_count >= 2);
  CHECK(info.raw_bytes == costs.size());
  CHECK(chunks.size() == info.chunk_count);

  // The Welcome carrying this info passes the decoder's consistency checks.
  sp::Welcome welcome;
  welcome.map = info;
  welcome.udp = sp::make_session_credentials();
  const auto decoded_welcome = sp::decode_tcp_message(sp::encode_tcp_message(welcome));
  REQUIRE(decoded_welcome);
  CHECK(std::get<sp::Welcome>(*decoded_welcome).map == info);

  std::mt19937_64 rng(seed);
  std::shuffle(chunks.begin(), chunks.end(), rng);
  chunks.push_back(chunks.front());
  sp::MapAssembler assembler(info);
  for (const auto& chunk : chunks) {
    const auto wire = sp::decode_tcp_message(sp::encode_tcp_message(chunk));
    REQUIRE(wire);
    std::string error;
    CHECK_MESSAGE(assembler.add(std::get<sp::MapChunk>(*wire), &error), error);
  }
  REQUIRE(assembler.complete());
  const auto raw = assembler.finish();
  REQUIRE(raw);
  CHECK(*raw == costs);
}

TEST_CASE("map assembler refuses chunks that do not fit and inconsistent infos") {
  sp::MapInfo info;
  info.width = 200;
  info.height = 300;
  const auto costs = noisy_costs(200 * 300, 5);
  const auto chunks = sp::make_map_chunks(costs, info);
  REQUIRE(chunks.size() == 2);
  sp::MapAssembler assembler(info);
  std::string error;
  sp::MapChunk wrong = chunks[0];
  wrong.index = 2;
  CHECK_FALSE(assembler.add(wrong, &error));
  CHECK(error == "map chunk 2 but the map has 2");
  wrong = chunks[0];
  wrong.bytes.pop_back();
  CHECK_FALSE(assembler.add(wrong, &error));
  wrong = chunks[1];
  wrong.count = 3;
  CHECK_FALSE(assembler.add(wrong, &error));
  CHECK_FALSE(assembler.complete());
  CHECK_FALSE(assembler.finish(&error));
  CHECK(error == "map incomplete: 0 of 2 chunks");

  // Corrupted content: all chunks present but they do not decompress.
  sp::MapChunk bad = chunks[1];
  bad.bytes.assign(bad.bytes.size(), 0x11);
  CHECK(assembler.add(chunks[0]));
  CHECK(assembler.add(bad));
  REQUIRE(assembler.complete());
  CHECK_FALSE(assembler.finish(&error));

  sp::MapInfo lying = info;
  lying.compressed_bytes = 4000000000u;
  lying.chunk_count = sp::map_chunk_count(lying.compressed_bytes);
  sp::MapAssembler refuses(lying);  // must not allocate 4 GB
  CHECK_FALSE(refuses.add(chunks[0], &error));
  CHECK_FALSE(refuses.complete());
}
