// swarmfield_bench: the field, A* and swarm benchmarks in one Google Benchmark program.
// Own flags (removed before Google Benchmark parses the rest):
//   --quick          fewer sizes and ticks (a smoke run; numbers are not meaningful)
//   --maps-dir=DIR   folder of the MovingAI maps (default: $SWARMFIELD_MAPS_DIR, else the build's)
// Every other flag is Google Benchmark's (--benchmark_filter, --benchmark_out, ...).
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "bench_registry.hpp"
#include "bench_support.hpp"

int main(int argc, char** argv) {
  using namespace swarmfield::bench;
  BenchOptions options;
  std::vector<char*> rest;
  rest.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      options.quick = true;
    } else if (arg.rfind("--maps-dir=", 0) == 0) {
      set_maps_dir(arg.substr(std::strlen("--maps-dir=")));
    } else {
      rest.push_back(argv[i]);
    }
  }
  int rest_count = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  benchmark::Initialize(&rest_count, rest.data());
  if (benchmark::ReportUnrecognizedArguments(rest_count, rest.data())) return 2;

  benchmark::AddCustomContext("cpu_model", cpu_model());
  benchmark::AddCustomContext("maps_dir", maps_dir());
#ifdef SWARMFIELD_BUILD_TYPE
  // Google Benchmark's own "library_build_type" describes libbenchmark (Debian ships it as
  // "debug"), not this program; this is the build type of swarmfield and the benchmarks.
  benchmark::AddCustomContext("swarmfield_build_type", SWARMFIELD_BUILD_TYPE);
#endif
  benchmark::AddCustomContext("quick", options.quick ? "true" : "false");
  register_field_benchmarks(options);
  register_astar_benchmarks(options);
  register_swarm_benchmarks(options);
  register_snapshot_benchmarks(options);
  register_snapshot_server_benchmarks(options);
  register_snapshot_scene_benchmarks(options);
  register_hier_benchmarks(options);
  register_map_change_benchmarks(options);
  register_world_tick_benchmarks(options);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
