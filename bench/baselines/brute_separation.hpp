#pragma once
// Baseline for the swarm benchmark: the separation gather without a spatial hash.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::bench {

/// The per-pair separation kernel of sim::Swarm::step's gather phase (see swarm.hpp and
/// server/sim/src/crowd/swarm.cpp), restated here so the brute-force baseline and the hashed gather
/// compute the same thing: over neighbours closer than R = separation_radius, the mean of
/// away_unit * (1 - d / R) times overlap_stiffness, plus, for discs that overlap (d < 2 * radius),
/// the sum of away_unit * (2 * radius - d) / 2 times contact_stiffness. Neighbours at the same
/// point (d^2 < 1e-12) count towards the mean but add no direction (the swarm spreads those by
/// id; not modelled here). Output in world units per tick.
struct SeparationKernel {
  float radius_sq = 0.81f;      ///< R^2
  float inv_radius = 1.0f / 0.9f;
  float contact_d = 0.7f;       ///< 2 * agent radius
  float stiffness = 0.25f;
  float contact_stiffness = 1.0f;

  [[nodiscard]] static SeparationKernel from(const sim::SwarmParams& p) noexcept {
    return {p.separation_radius * p.separation_radius, 1.0f / p.separation_radius, 2.0f * p.radius,
            p.overlap_stiffness, p.contact_stiffness};
  }

  /// Accumulator for one agent's neighbours.
  struct Sum {
    float sx = 0.0f, sy = 0.0f, kx = 0.0f, ky = 0.0f;
    std::uint32_t count = 0;
  };
  /// Adds neighbour offset (dx, dy) = self - neighbour. Inline: it is the inner loop of both
  /// the brute-force and the hashed gather, and must compile the same in both.
  void add(Sum& s, float dx, float dy) const noexcept {
    const float d2 = dx * dx + dy * dy;
    if (d2 >= radius_sq) return;
    ++s.count;
    if (d2 < 1e-12f) return;  // coincident: no direction
    const float d = std::sqrt(d2);
    const float inv_d = 1.0f / d;
    const float w = (1.0f - d * inv_radius) * inv_d;
    s.sx += dx * w;
    s.sy += dy * w;
    if (d < contact_d) {
      const float c = (contact_d - d) * 0.5f * inv_d;
      s.kx += dx * c;
      s.ky += dy * c;
    }
  }
  /// Correction of the agent (world units).
  void finish(const Sum& s, float& out_x, float& out_y) const noexcept {
    const float mean = s.count > 0 ? 1.0f / static_cast<float>(s.count) : 0.0f;
    out_x = s.sx * mean * stiffness + s.kx * contact_stiffness;
    out_y = s.sy * mean * stiffness + s.ky * contact_stiffness;
  }
};

/// Separation of every agent by testing all N^2 ordered pairs (no spatial structure): the cost
/// a swarm would pay without the hash. `out_x/out_y` are resized to xs.size(), index i = agent i.
void brute_force_separation(const SeparationKernel& kernel, std::span<const float> xs, std::span<const float> ys,
                            std::vector<float>& out_x, std::vector<float>& out_y);

}  // namespace swarmfield::bench
