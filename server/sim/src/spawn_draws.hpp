#pragma once
// The spawner's random draws (world_spawner.cpp, game/world_waves.cpp): integers and floats from
// the world's generator's 64-bit output, the same on every standard library so a seed replays.
// Internal to server/sim/src.
#include <cstddef>
#include <cstdint>
#include <span>

#include "swarmfield/sim/crowd/agent_kind.hpp"

namespace swarmfield::sim::spawn_draws {

// Integer in [0, n) from 64 random bits: the top 32 bits scaled by n (Lemire's multiply-shift;
// bias <= n / 2^32, irrelevant here). std::uniform_int_distribution is avoided on purpose: its
// algorithm is implementation-defined, so seeds would not replay across standard libraries.
inline std::uint32_t bits_to_index(std::uint64_t bits, std::uint32_t n) noexcept {
  return static_cast<std::uint32_t>(((bits >> 32) * static_cast<std::uint64_t>(n)) >> 32);
}
// Float in [0, 1) from 24 bits.
inline float bits_to_unit(std::uint64_t bits24) noexcept {
  return static_cast<float>(bits24 & 0xFFFFFFu) * (1.0f / 16777216.0f);
}

// The kind a spawner gives agents when only one kind may be spawned.
inline std::uint8_t first_spawnable_kind(std::span<const AgentKind> kinds) noexcept {
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    if (kinds[k].spawn_weight > 0.0f) return static_cast<std::uint8_t>(k);
  }
  return 0;
}

}  // namespace swarmfield::sim::spawn_draws
