// swarmfield_bench_rss: resident memory of a whole sim::World with many agents on a map.
// Not a Google Benchmark: peak RSS is a property of the process, so it gets a process of its
// own. Loads the map, reads VmRSS, builds a World with one player at the map centre, spawns the
// agents, steps it, then prints one JSON object on stdout:
//   {"map":..., "agents":N, "ticks":T, "rss_before_world_mib":..., "rss_mib":...,
//    "peak_rss_mib":..., "world_step_ms":...}
// peak_rss_mib (VmHWM) is the figure compared with the memory target; it includes the program
// and libraries (a few MiB) and the map text read from disk.
// Usage: swarmfield_bench_rss [--maps-dir=DIR] [--map=street/Boston_0_1024.map | --city-size=N]
//                              [--agents=100000] [--ticks=10]
// --city-size=N uses the procedural city (seed 1) of N x N cells instead of a map file; the
// JSON then also carries "rss_after_spawn_mib" and "rss_after_first_step_mib" (what the world
// holds before its first tick, and what that tick's field build and hash add).
// Exit status 2 with a message on stderr for a bad flag or an unreadable map.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "bench_support.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/world.hpp"

namespace {

bool parse_count(const std::string& text, long max, long& out) {
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || v < 0 || v > max) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace swarmfield;
  std::string map_name = "street/Boston_0_1024.map";
  long agents = 100000, ticks = 10, city_size = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto value = [&](const char* flag) { return arg.substr(std::strlen(flag)); };
    bool ok = true;
    if (arg.rfind("--maps-dir=", 0) == 0) {
      bench::set_maps_dir(value("--maps-dir="));
    } else if (arg.rfind("--map=", 0) == 0) {
      map_name = value("--map=");
    } else if (arg.rfind("--city-size=", 0) == 0) {
      ok = parse_count(value("--city-size="), 16384, city_size) && city_size >= 32;
    } else if (arg.rfind("--agents=", 0) == 0) {
      ok = parse_count(value("--agents="), 10'000'000, agents);
    } else if (arg.rfind("--ticks=", 0) == 0) {
      ok = parse_count(value("--ticks="), 100'000, ticks);
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr,
                   "swarmfield_bench_rss: bad argument '%s'\nusage: %s [--maps-dir=DIR] [--map=REL_PATH] "
                   "[--city-size=N (32..16384)] [--agents=N (0..10000000)] [--ticks=T (0..100000)]\n",
                   arg.c_str(), argv[0]);
      return 2;
    }
  }
  sim::GridMap map;
  if (city_size > 0) {
    const auto side = static_cast<std::int32_t>(city_size);
    map = sim::generate_city({side, side, 1});
    map_name = "city:" + std::to_string(city_size);
  } else {
    try {
      map = bench::load_map(map_name);  // a copy: the World owns its map
    } catch (const std::exception& e) {
      std::fprintf(stderr, "swarmfield_bench_rss: %s\n", e.what());
      return 2;
    }
  }
  const double rss_before = bench::current_rss_mib();
  sim::WorldParams params;
  params.max_agents = static_cast<std::uint32_t>(agents);
  sim::World world(std::move(map), params);
  world.add_player(world.map().cell_center({world.map().width() / 2, world.map().height() / 2}));
  const std::size_t spawned = world.spawn_agents(static_cast<std::size_t>(agents));
  const double rss_spawned = bench::current_rss_mib();
  world.step(1.0f / 30.0f);  // builds the fields and the hash: not timed
  const double rss_first_step = bench::current_rss_mib();
  const auto start = std::chrono::steady_clock::now();
  for (long t = 0; t < ticks; ++t) world.step(1.0f / 30.0f);
  const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
  std::printf(
      "{\"map\":\"%s\",\"agents\":%zu,\"ticks\":%ld,\"rss_before_world_mib\":%.2f,\"rss_mib\":%.2f,"
      "\"peak_rss_mib\":%.2f,\"world_step_ms\":%.3f,\"rss_after_spawn_mib\":%.2f,\"rss_after_first_step_mib\":%.2f}\n",
      map_name.c_str(), spawned, ticks, rss_before, bench::current_rss_mib(), bench::peak_rss_mib(),
      ticks > 0 ? elapsed.count() / static_cast<double>(ticks) : 0.0, rss_spawned, rss_first_step);
  return spawned == static_cast<std::size_t>(agents) ? 0 : 1;
}
