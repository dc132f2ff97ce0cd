#pragma once
// Where a stack of agents on one point bursts to: per group size, a set of points in the unit
// disc whose smallest pairwise distance is as large as a short relaxation makes it (the swarm's
// separation phase uses it for agents stacked on the bit-identical same point; see
// burst_pattern.cpp for the method and figures).
#include <cstdint>
#include <vector>

#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Burst patterns by group size, computed on first use and kept. Deterministic (fixed float
/// operation order, no threads). Not thread-safe: call from one thread between parallel phases.
class BurstPatterns {
 public:
  /// Largest group with a relaxed pattern; bigger stacks use the Vogel spiral.
  static constexpr std::uint32_t kMaxGroup = 255;

  /// Reserves the storage of every pattern (about 260 KiB), so that no later call allocates.
  void reserve();
  /// Point of agent `rank` (0..group-1) of a stack of `group` agents, in the unit disc.
  [[nodiscard]] Vec2 point(std::uint32_t rank, std::uint32_t group);
  /// Smallest pairwise distance of the pattern of `group` (> 0 for group >= 2).
  [[nodiscard]] float spacing(std::uint32_t group);

 private:
  void compute(std::uint32_t group);
  std::vector<Vec2> points_;      // pattern g at offset g * (g - 1) / 2 - 1
  std::vector<float> spacing_;    // by group; 0 = not computed yet
  std::vector<Vec2> scratch_, moves_;
};

/// The golden-angle (Vogel 1979) spiral point `rank` of `group`: radius sqrt((rank + 0.5) /
/// group), angle rank * golden angle. Fills the unit disc evenly; smallest spacing about
/// 1.546 / sqrt(group) for group >= 4.
[[nodiscard]] Vec2 vogel_point(std::uint32_t rank, std::uint32_t group) noexcept;

}  // namespace swarmfield::sim
