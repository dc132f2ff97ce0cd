// Quantization of positions and headings: error bounds, clamping, NaN safety.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "swarmfield/protocol/messages.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;

TEST_CASE("position quantization error <= 1/64 world unit inside the range") {
  const float max_world = 65535.0f / sp::kPositionScale;
  std::mt19937_64 rng(sp::test::test_seed());
  std::uniform_real_distribution<float> dist(0.0f, max_world);
  float worst = 0.0f;
  for (int i = 0; i < 200000; ++i) {
    const float x = i < 1000 ? static_cast<float>(i) / 64.0f : dist(rng);  // include exact half steps
    const float back = sp::dequantize_position(sp::quantize_position(x));
    worst = std::max(worst, std::fabs(back - x));
  }
  MESSAGE("worst position error " << worst << " world units");
  CHECK(worst <= 1.0f / 64.0f + 1e-6f);
  CHECK(sp::quantize_position(0.0f) == 0);
  CHECK(sp::quantize_position(1.0f) == 32);
  CHECK(sp::quantize_position(100.5f) == 3216);
  CHECK(sp::dequantize_position(3216) == doctest::Approx(100.5f));
  CHECK(sp::quantize_position(max_world) == 65535);
}

TEST_CASE("position quantization clamps and is NaN-safe") {
  CHECK(sp::quantize_position(-0.001f) == 0);
  CHECK(sp::quantize_position(-1e30f) == 0);
  CHECK(sp::quantize_position(2048.0f) == 65535);
  CHECK(sp::quantize_position(1e30f) == 65535);
  CHECK(sp::quantize_position(std::numeric_limits<float>::infinity()) == 65535);
  CHECK(sp::quantize_position(-std::numeric_limits<float>::infinity()) == 0);
  CHECK(sp::quantize_position(std::numeric_limits<float>::quiet_NaN()) == 0);
  CHECK(sp::quantize_position(std::numeric_limits<float>::denorm_min()) == 0);
}

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
