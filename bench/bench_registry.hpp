#pragma once
// Registration of the benchmark groups of swarmfield_bench (one function per figure).

namespace swarmfield::bench {

/// Command-line choices of swarmfield_bench that change which cases run (see bench_main.cpp).
struct BenchOptions {
  bool quick = false;  ///< fewer sizes and ticks: a smoke run, not a measurement
};

/// Figure 1: field rebuild (ours) vs textbook heap Dijkstra vs plain BFS, 1024 street maps.
void register_field_benchmarks(const BenchOptions& options);
/// Figure 2: per-agent A* queries for N agents, to compare with one field rebuild.
void register_astar_benchmarks(const BenchOptions& options);
/// Figure 3: Swarm::step at 1k/10k/100k agents, spread and packed; brute-force separation.
void register_swarm_benchmarks(const BenchOptions& options);
/// Figure 5: snapshot bytes per agent and encode time on real swarm motion (snapshot_bench.cpp).
void register_snapshot_benchmarks(const BenchOptions& options);
/// Figure 5, the server's snapshot phase on the recorded trace: whole-map viewers, a player's
/// view, rectangles one cell apart (snapshot_server_bench.cpp).
void register_snapshot_server_benchmarks(const BenchOptions& options);
/// Issue 22's scenes: a crowded whole-map view, a follow camera in a 100k horde, the cost of an
/// extra whole-map viewer (snapshot_scene_bench.cpp).
void register_snapshot_scene_benchmarks(const BenchOptions& options);
/// Figure 6: hierarchical fields vs map size: goal change on the portal graph vs a whole-map
/// rebuild, and the graph's path quality (hier_bench.cpp).
void register_hier_benchmarks(const BenchOptions& options);
/// Figure 7: a one-cell map change in hierarchical mode (local graph update) vs the whole graph
/// build, 1024 to 8192 (map_change_bench.cpp).
void register_map_change_benchmarks(const BenchOptions& options);
/// Figure 8: one World tick (fields, swarm) with 100k agents vs map size: Boston_0_1024 and
/// the same tiled to 4096 and 8192 (world_tick_bench.cpp).
void register_world_tick_benchmarks(const BenchOptions& options);

}  // namespace swarmfield::bench
