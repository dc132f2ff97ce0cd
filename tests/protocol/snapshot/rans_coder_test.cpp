// rANS coder: random tables and symbol streams round-trip; the size is close to the entropy;
// hostile tables and streams are refused without reading out of bounds.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "swarmfield/protocol/snapshot/rans_coder.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;

namespace {

struct Coded {
  std::vector<std::uint8_t> table_bits;
  std::vector<std::uint8_t> stream;
};

Coded encode(const std::vector<std::size_t>& symbols, std::size_t alphabet, sp::RansTable& table) {
  std::vector<std::uint32_t> counts(alphabet, 0);
  for (std::size_t s : symbols) ++counts[s];
  REQUIRE(table.build(counts));
  sp::BitWriter w;
  table.write(w);
  const auto tb = w.finish();
  sp::RansEncoder enc;
  enc.reset(symbols.size());
  for (std::size_t k = symbols.size(); k-- > 0;) enc.put(table, symbols[k]);
  const auto s = enc.finish();
  return {{tb.begin(), tb.end()}, {s.begin(), s.end()}};
}

}  // namespace

TEST_CASE("random alphabets and skewed distributions round-trip through table and stream") {
  const std::uint64_t seed = sp::test::test_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 200; ++round) {
    const std::size_t alphabet = 1 + rng() % sp::kRansMaxSymbols;
    const std::size_t n = 1 + rng() % 5000;
    std::geometric_distribution<int> geo(0.05 + 0.9 * static_cast<double>(rng() % 1000) / 1000.0);
    std::vector<std::size_t> symbols(n);
    for (auto& s : symbols) s = static_cast<std::size_t>(geo(rng)) % alphabet;
    sp::RansTable table;
    const Coded c = encode(symbols, alphabet, table);
    sp::BitReader r(c.table_bits);
    sp::RansTable read;
    REQUIRE(read.read(r, alphabet));
    for (std::size_t s = 0; s < alphabet; ++s) REQUIRE(read.frequency(s) == table.frequency(s));
    sp::RansDecoder dec;
    REQUIRE(dec.init(c.stream));
    for (std::size_t k = 0; k < n; ++k) REQUIRE(dec.get(read) == symbols[k]);
    CHECK(dec.finished_cleanly());
  }
}

TEST_CASE("several tables interleave in one stream") {
  std::mt19937_64 rng(sp::test::test_seed());
  std::vector<std::uint32_t> ca{10, 1, 1, 0, 5}, cb{1, 1};
  sp::RansTable ta, tb;
  REQUIRE(ta.build(ca));
  REQUIRE(tb.build(cb));
  std::vector<std::size_t> a(1000), b(1000);
  for (auto& s : a) s = std::vector<std::size_t>{0, 1, 2, 4}[rng() % 4];
  for (auto& s : b) s = rng() % 2;
  sp::RansEncoder enc;
  enc.reset(2 * a.size());
  for (std::size_t k = a.size(); k-- > 0;) {
    enc.put(tb, b[k]);
    enc.put(ta, a[k]);
  }
  const auto bytes = enc.finish();
  std::vector<std::uint8_t> stream(bytes.begin(), bytes.end());
  sp::RansDecoder dec;
  REQUIRE(dec.init(stream));
  for (std::size_t k = 0; k < a.size(); ++k) {
    REQUIRE(dec.get(ta) == a[k]);
    REQUIRE(dec.get(tb) == b[k]);
  }
  CHECK(dec.finished_cleanly());
}

TEST_CASE("a likely symbol costs well under one bit (what a prefix code cannot do)") {
  std::vector<std::size_t> symbols(10000, 0);
  for (std::size_t k = 0; k < symbols.size(); k += 20) symbols[k] = 1;  // p(0) = 0.95
  sp::RansTable table;
  const Coded c = encode(symbols, 2, table);
  const double entropy = -(0.95 * std::log2(0.95) + 0.05 * std::log2(0.05)) * static_cast<double>(symbols.size()) / 8;
  INFO("bytes " << c.stream.size() << " entropy " << entropy);
  CHECK(static_cast<double>(c.stream.size()) < entropy * 1.02 + 8);
  CHECK(c.stream.size() < symbols.size() / 8 / 2);  // < 0.5 bit per symbol
}

TEST_CASE("tables whose frequencies do not sum to the scale are refused") {
  sp::BitWriter w;
  w.write_bits(0, 3);  // scale bits 6: sum must be 64
  w.write_bits(0, 3);  // order 0
  w.write_exp_golomb(30, 0);
  w.write_exp_golomb(30, 0);
  const auto bytes = w.finish();
  sp::BitReader r(bytes);
  sp::RansTable t;
  CHECK_FALSE(t.read(r, 2));
}

TEST_CASE("a scale above the maximum, a truncated table and a bad alphabet are refused") {
  sp::BitWriter w;
  w.write_bits(7, 3);  // 6 + 7 = 13 > 12
  w.write_bits(0, 3);
  const auto bytes = w.finish();
  sp::BitReader r(bytes);
  sp::RansTable t;
  CHECK_FALSE(t.read(r, 2));
  const std::vector<std::uint8_t> short_bytes{0x00};
  sp::BitReader r2(short_bytes);
  CHECK_FALSE(t.read(r2, 4));
  sp::BitReader r3(short_bytes);
  CHECK_FALSE(t.read(r3, 0));
  CHECK_FALSE(t.read(r3, sp::kRansMaxSymbols + 1));
}

TEST_CASE("decoder: short streams, out-of-range states and exhausted input fail without overrun") {
  sp::RansDecoder dec;
  CHECK_FALSE(dec.init(std::vector<std::uint8_t>{1, 2, 3}));
  CHECK_FALSE(dec.init(std::vector<std::uint8_t>{0, 0, 0, 0}));        // below 2^23
  CHECK_FALSE(dec.init(std::vector<std::uint8_t>{0, 0, 0, 0x80}));     // >= 2^31
  std::vector<std::uint32_t> counts{1, 1, 1, 1};
  sp::RansTable t;
  REQUIRE(t.build(counts));
  const std::vector<std::uint8_t> state_only{0x00, 0x00, 0x80, 0x00};  // exactly 2^23
  REQUIRE(dec.init(state_only));
  for (int k = 0; k < 100; ++k) CHECK(dec.get(t) < 4);
  CHECK(dec.failed());
  CHECK_FALSE(dec.finished_cleanly());
}

TEST_CASE("build refuses all-zero counts and oversize alphabets") {
  sp::RansTable t;
  CHECK_FALSE(t.build(std::vector<std::uint32_t>(4, 0)));
  CHECK_FALSE(t.build(std::vector<std::uint32_t>(sp::kRansMaxSymbols + 1, 1)));
  CHECK_FALSE(t.build(std::vector<std::uint32_t>{}));
}
