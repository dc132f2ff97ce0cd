#pragma once
// The separation gather through sim::SpatialHash, isolated from the rest of Swarm::step, so it
// can be timed like-for-like against the brute-force baseline.
#include <span>
#include <vector>

#include "baselines/brute_separation.hpp"
#include "swarmfield/sim/crowd/spatial_hash.hpp"

namespace swarmfield::bench {

/// Rebuilds `hash` (already configured with cell size >= R) from the positions, then gathers
/// every agent's separation over the 3x3 hash block, reading neighbours in cell-sorted order as
/// Swarm::step does. Output index i = agent i (same layout as brute_force_separation).
void hashed_separation(const SeparationKernel& kernel, sim::SpatialHash& hash, std::span<const float> xs,
                       std::span<const float> ys, std::vector<float>& out_x, std::vector<float>& out_y);

}  // namespace swarmfield::bench
