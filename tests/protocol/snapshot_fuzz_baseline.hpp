#pragma once
// The baseline frame the delta snapshot fuzzer decodes against, and a delta snapshot against it
// for the seed corpus: both built the same way by the fuzzer and the corpus writer.
#include <cstdint>
#include <vector>

#include "snapshot_test_support.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"

namespace swarmfield::protocol::test {

inline constexpr std::uint32_t kFuzzBaselineTick = 1;

/// The full snapshot the fuzzer's baseline comes from: 300 synthetic agents (seed 1), a density
/// grid, sequence 1 at tick 1. Returns its payload; `frame` gets the frame and `crowd` is left
/// as it was encoded.
inline std::vector<std::uint8_t> fuzz_full_snapshot(SyntheticCrowd& crowd, DensityGrid& grid, AgentFrame& frame) {
  AgentCandidates c;
  crowd.candidates(c);
  SnapshotHeader h;
  h.sequence = 1;
  h.tick = kFuzzBaselineTick;
  h.players = {{1, 10.0f, 20.0f, 2}};
  set_density_grid_geometry(grid, 0, 0, 256, 256);
  for (std::size_t k = 0; k < grid.levels.size(); ++k) grid.levels[k] = static_cast<std::uint8_t>(k % 5);
  SnapshotEncoder enc;
  std::vector<std::uint8_t> payload;
  enc.encode(h, AgentFrameView::empty(), c, grid, payload, frame);
  return payload;
}

/// The fuzzer's baseline frame (sequence 1, tick 1).
inline AgentFrame fuzz_baseline_frame() {
  SyntheticCrowd crowd(300, 1);
  DensityGrid grid;
  AgentFrame frame;
  (void)fuzz_full_snapshot(crowd, grid, frame);
  return frame;
}

/// Payloads for the seed corpus: the full snapshot above and a delta against it (sequence 2,
/// tick 3, churn, partial sends, a kind change, a changed grid, deaths among the removed).
inline std::vector<std::vector<std::uint8_t>> fuzz_seed_payloads() {
  SyntheticCrowd crowd(300, 1);
  DensityGrid grid;
  AgentFrame base, next;
  std::vector<std::vector<std::uint8_t>> out;
  out.push_back(fuzz_full_snapshot(crowd, grid, base));
  crowd.step(2, 3, 10);
  crowd.set_kind(3, 9);
  AgentCandidates c;
  crowd.candidates(c, 80);
  grid.levels[7] = 15;
  SnapshotHeader h;
  h.sequence = 2;
  h.tick = 3;
  h.baseline_distance = 1;
  SnapshotEncoder enc;
  std::vector<std::uint32_t> dead;  // every third agent of the baseline: those removed are deaths
  for (const AgentState& a : base.agents) {
    if (a.id % 3 == 0) dead.push_back(a.id);
  }
  enc.set_recent_deaths(dead);
  out.emplace_back();
  enc.encode(h, AgentFrameView::of(base), c, grid, out.back(), next);
  return out;
}

}  // namespace swarmfield::protocol::test
