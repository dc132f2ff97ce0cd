// Quantization of headings: error bounds, wrapping, NaN safety. (Positions: snapshot_codec_test.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "swarmfield/protocol/transport/messages.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;

TEST_CASE("heading quantization: wraps any angle, circular error <= pi/256") {
  constexpr double kStep = 2.0 * std::numbers::pi / 256.0;
  std::mt19937_64 rng(sp::test::test_seed() + 1);
  std::uniform_real_distribution<float> dist(-50.0f, 50.0f);
  double worst = 0.0;
  for (int i = 0; i < 200000; ++i) {
    const float a = dist(rng);
    const float back = sp::dequantize_heading(sp::quantize_heading(a));
    CHECK_MESSAGE((back >= 0.0f && back < 2.0f * std::numbers::pi_v<float>), a);
    double d = std::fmod(static_cast<double>(back) - a, 2.0 * std::numbers::pi);
    if (d < -std::numbers::pi) d += 2.0 * std::numbers::pi;
    if (d > std::numbers::pi) d -= 2.0 * std::numbers::pi;
    worst = std::max(worst, std::fabs(d));
  }
  MESSAGE("worst heading error " << worst << " rad (bound " << kStep / 2 << ")");
  CHECK(worst <= kStep / 2 + 1e-5);
  CHECK(sp::quantize_heading(0.0f) == 0);
  CHECK(sp::quantize_heading(std::numbers::pi_v<float> / 2) == 64);
  CHECK(sp::quantize_heading(std::numbers::pi_v<float>) == 128);
  CHECK(sp::quantize_heading(-std::numbers::pi_v<float> / 2) == 192);
  CHECK(sp::quantize_heading(2 * std::numbers::pi_v<float> - 0.001f) == 0);  // rounds up to a full turn
  CHECK(sp::quantize_heading(std::numeric_limits<float>::quiet_NaN()) == 0);
  CHECK(sp::quantize_heading(std::numeric_limits<float>::infinity()) == 0);
  CHECK(sp::quantize_heading(1e30f) < 256);  // huge but finite: wrapped, no UB
}

TEST_CASE("heading quantization equals round(fmod(a, 2 pi) / 2 pi * 256) mod 256 exactly") {
  // The fast path (no fmod inside one turn, no lround) must give the textbook formula's byte
  // for every angle: random ones, both signs, every step boundary and its neighbours.
  auto reference = [](float a) {
    constexpr double kTwoPi = 2.0 * std::numbers::pi;
    double turns = std::fmod(static_cast<double>(a), kTwoPi) / kTwoPi;
    if (turns < 0.0) turns += 1.0;
    return static_cast<std::uint8_t>(static_cast<unsigned>(std::lround(turns * 256.0)) & 0xFFu);
  };
  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> any(-20.0f, 20.0f);
  for (int i = 0; i < 200000; ++i) {
    const float a = any(rng);
    REQUIRE(sp::quantize_heading(a) == reference(a));
  }
  for (int step = -600; step <= 600; ++step) {
    // Halfway between two steps and the floats around it, where rounding decides.
    const float mid = static_cast<float>((step + 0.5) * 2.0 * std::numbers::pi / 256.0);
    float a = mid;
    for (int k = 0; k < 4; ++k) a = std::nextafter(a, -100.0f);
    for (int k = 0; k < 9; ++k, a = std::nextafter(a, 100.0f)) REQUIRE(sp::quantize_heading(a) == reference(a));
  }
  for (const float a : {0.0f, -0.0f, 6.2831855f, -6.2831855f, 6.283185f, -6.283185f, 3.1415927f, -3.1415927f, 1e-30f}) {
    CHECK(sp::quantize_heading(a) == reference(a));
  }
}
