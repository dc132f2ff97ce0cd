// Quantization of headings: error bounds, wrapping, NaN safety. (Positions: snapshot_codec_test.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>

#include "swarmfield/protocol/messages.hpp"
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
