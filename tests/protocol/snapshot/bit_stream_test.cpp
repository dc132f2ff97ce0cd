// Bit packing: fields and Exp-Golomb codes round-trip at every width; the reader fails instead of
// reading past its buffer and on codes too long for 32 bits.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "swarmfield/protocol/snapshot/bit_stream.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;

TEST_CASE("zigzag maps small signed values to small unsigned ones and back") {
  CHECK(sp::zigzag_encode(0) == 0);
  CHECK(sp::zigzag_encode(-1) == 1);
  CHECK(sp::zigzag_encode(1) == 2);
  CHECK(sp::zigzag_encode(-2) == 3);
  for (std::int32_t v : {0, 1, -1, 1000, -1000, 2147483647, -2147483647 - 1}) CHECK(sp::zigzag_decode(sp::zigzag_encode(v)) == v);
}

TEST_CASE("bit fields of every width round-trip, least significant bit first") {
  const std::uint64_t seed = sp::test::test_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  struct Field {
    std::uint32_t value;
    unsigned bits;
  };
  std::vector<Field> fields;
  sp::BitWriter w;
  for (int i = 0; i < 5000; ++i) {
    const unsigned bits = static_cast<unsigned>(rng() % 33);
    const std::uint32_t value = bits == 0 ? 0 : static_cast<std::uint32_t>(rng()) >> (32 - bits);
    fields.push_back({value, bits});
    w.write_bits(value, bits);
  }
  const std::size_t total = w.bit_count();
  const auto bytes = w.finish();
  CHECK(bytes.size() == (total + 7) / 8);
  sp::BitReader r(bytes);
  for (const Field& f : fields) REQUIRE(r.read_bits(f.bits) == f.value);
  CHECK_FALSE(r.failed());
  CHECK(r.bits_left() < 8);
}

TEST_CASE("the first bit written is bit 0 of byte 0") {
  sp::BitWriter w;
  w.write_bits(1, 1);
  w.write_bits(0, 2);
  w.write_bits(0x1F, 5);
  w.write_bits(0x3, 2);
  const auto bytes = w.finish();
  REQUIRE(bytes.size() == 2);
  CHECK(bytes[0] == 0xF9);
  CHECK(bytes[1] == 0x03);
}

TEST_CASE("Exp-Golomb codes round-trip for every order, including 0 and 2^32 - 1") {
  std::mt19937_64 rng(sp::test::test_seed());
  sp::BitWriter w;
  std::vector<std::pair<std::uint32_t, unsigned>> values;
  for (unsigned k = 0; k <= sp::kMaxExpGolombOrder; ++k) {
    for (std::uint32_t v : {0u, 1u, 2u, 3u, 255u, 0xFFFFFFFFu, 0x80000000u, static_cast<std::uint32_t>(rng())}) {
      values.emplace_back(v, k);
      w.write_exp_golomb(v, k);
    }
  }
  const auto bytes = w.finish();
  sp::BitReader r(bytes);
  for (const auto& [v, k] : values) REQUIRE(r.read_exp_golomb(k) == v);
  CHECK_FALSE(r.failed());
}

TEST_CASE("Exp-Golomb order 0 has the textbook lengths") {
  for (auto [v, len] : std::vector<std::pair<std::uint32_t, std::size_t>>{{0, 1}, {1, 3}, {2, 3}, {3, 5}, {6, 5}, {7, 7}}) {
    sp::BitWriter w;
    w.write_exp_golomb(v, 0);
    CHECK(w.bit_count() == len);
  }
}

TEST_CASE("signed Exp-Golomb round-trips negative values") {
  sp::BitWriter w;
  for (std::int32_t v = -300; v <= 300; ++v) w.write_signed_exp_golomb(v, 2);
  const auto bytes = w.finish();
  sp::BitReader r(bytes);
  for (std::int32_t v = -300; v <= 300; ++v) REQUIRE(r.read_signed_exp_golomb(2) == v);
}

TEST_CASE("the reader fails past the end and keeps returning 0") {
  const std::vector<std::uint8_t> bytes{0xFF, 0xFF};
  sp::BitReader r(bytes);
  CHECK(r.read_bits(12) == 0xFFF);
  CHECK_FALSE(r.failed());
  CHECK(r.read_bits(5) == 0);  // only 4 left
  CHECK(r.failed());
  CHECK(r.read_bits(1) == 0);
  CHECK(r.read_exp_golomb(0) == 0);
}

TEST_CASE("a run of zero bits longer than any uint32 code fails the Exp-Golomb reader") {
  const std::vector<std::uint8_t> zeros(16, 0);
  sp::BitReader r(zeros);
  CHECK(r.read_exp_golomb(0) == 0);
  CHECK(r.failed());
  // 32 zeros, a one and 32 more bits: w = 2^32 + low, v = w - 1 >= 2^32 - 1 for order 0 fits
  // only when low == 0; an all-ones tail overflows.
  std::vector<std::uint8_t> over(4, 0x00);
  over.push_back(0x01);  // the terminating one, then ones
  over.insert(over.end(), {0xFF, 0xFF, 0xFF, 0xFF, 0xFF});
  sp::BitReader r2(over);
  (void)r2.read_exp_golomb(0);
  CHECK(r2.failed());
}

TEST_CASE("an order above the limit fails") {
  const std::vector<std::uint8_t> bytes(8, 0xFF);
  sp::BitReader r(bytes);
  (void)r.read_exp_golomb(sp::kMaxExpGolombOrder + 1);
  CHECK(r.failed());
}
