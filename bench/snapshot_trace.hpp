#pragma once
// The recorded swarm motion the snapshot benchmarks encode (figure 5, snapshot_bench.cpp) and
// the server's snapshot phase replays (snapshot_server_bench.cpp, snapshot_scene_bench.cpp):
// a World on Boston_0_1024 steps 100k agents (20k with --quick) chasing a player who walks
// between waypoints within 60 cells of the centre; after a warm-up, 20 snapshots a second of a
// 30 Hz world are recorded. Recorded once per process (seconds of simulation), then shared.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench_registry.hpp"
#include "swarmfield/protocol/snapshot/snapshot_relevance.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::bench {

/// Snapshot ticks of the whole world kept for the server benchmarks (100k agents: 16 bytes each).
inline constexpr std::size_t kServerSnapshots = 30;

/// The world as the swarm holds it at one snapshot tick (for the server benchmarks).
struct WorldSample {
  std::uint32_t tick = 0;
  std::vector<std::uint32_t> ids;
  std::vector<float> xs, ys, headings;
  std::vector<sim::Player> players;
  std::vector<std::uint8_t> kinds;  // kind index per agent; empty = all kind 0 (the trace's)
};

struct SnapshotTrace {
  std::vector<std::uint32_t> ticks;
  std::vector<WorldSample> samples;  // the first kServerSnapshots snapshot ticks, whole world
  std::vector<protocol::AgentCandidates> views;  // agents in the view at each snapshot, all to send
  std::vector<std::vector<std::uint8_t>> old_format;  // the same agents as version 2's arrays (uncompressed)
  std::vector<std::size_t> old_agents;                // agents in each of them
  protocol::QuantizedAgents all;                      // every agent at the last snapshot
  std::vector<std::uint32_t> raw_ids;                 // ... and as the swarm holds them
  std::vector<float> raw_xs, raw_ys, raw_headings;
  protocol::QuantizedRect last_view;
  std::size_t world_agents = 0;
  double mean_in_view = 0;
  float view_side = 0;  // the square view around the player holding ~10k agents, cells
  std::int32_t map_width = 0, map_height = 0;  // cells
};

/// Records the trace once (a few seconds of simulation; less with --quick). Throws with a
/// readable message when the map is missing.
const SnapshotTrace& snapshot_trace(const BenchOptions& options);
/// The trace, or nullptr after marking the benchmark skipped with the reason (e.g. a missing map).
const SnapshotTrace* snapshot_trace_or_skip(benchmark::State& state, const BenchOptions& options);

}  // namespace swarmfield::bench
