// Wire quantization of agent headings (see messages.hpp for the format; positions: agent_frame.hpp).
#include <cmath>
#include <numbers>

#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/transport/messages.hpp"

namespace swarmfield::protocol {

std::uint8_t quantize_heading(float radians) noexcept {
  if (!std::isfinite(radians)) return 0;
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  // Called for every agent once per snapshot tick, so the library calls are skipped where
  // their result is known exactly: fmod(r, 2 pi) is r itself for |r| < 2 pi (the swarm's
  // headings are atan2 results), and for x >= 0 lround(x) = trunc(x) + (fraction >= 0.5), the
  // fraction x - trunc(x) being exact in doubles.
  const auto r = static_cast<double>(radians);
  double turns = (std::fabs(r) < kTwoPi ? r : std::fmod(r, kTwoPi)) / kTwoPi;  // (-1, 1)
  if (turns < 0.0) turns += 1.0;
  const double x = turns * 256.0;  // 0..256
  const auto whole = static_cast<unsigned>(x);
  const unsigned steps = whole + (x - static_cast<double>(whole) >= 0.5 ? 1u : 0u);
  return static_cast<std::uint8_t>(steps & 0xFFu);  // 256 steps = a full turn = 0
}

std::uint8_t view_precision_shift(float extent_cells) noexcept {
  // 2^s units (2^s / 64 cell) <= extent / 2048 cells  <=>  2^s <= extent / 32.
  if (!(extent_cells > 0.0f) || !std::isfinite(extent_cells)) return 0;
  std::uint8_t s = 0;
  while (s < kMaxPrecisionShift && static_cast<double>(1u << (s + 1)) * 32.0 <= static_cast<double>(extent_cells)) ++s;
  return s;
}

float dequantize_heading(std::uint8_t q) noexcept {
  return static_cast<float>(static_cast<double>(q) * (2.0 * std::numbers::pi / 256.0));
}

}  // namespace swarmfield::protocol
