// Wire quantization of agent headings (see messages.hpp for the format; positions: agent_frame.hpp).
#include <cmath>
#include <numbers>

#include "swarmfield/protocol/messages.hpp"

namespace swarmfield::protocol {

std::uint8_t quantize_heading(float radians) noexcept {
  if (!std::isfinite(radians)) return 0;
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  double turns = std::fmod(static_cast<double>(radians), kTwoPi) / kTwoPi;  // (-1, 1)
  if (turns < 0.0) turns += 1.0;
  const auto steps = static_cast<unsigned>(std::lround(turns * 256.0));  // 0..256
  return static_cast<std::uint8_t>(steps & 0xFFu);  // 256 steps = a full turn = 0
}

float dequantize_heading(std::uint8_t q) noexcept {
  return static_cast<float>(static_cast<double>(q) * (2.0 * std::numbers::pi / 256.0));
}

}  // namespace swarmfield::protocol
