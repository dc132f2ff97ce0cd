// Benchmark set-up helpers (see the header).
#include "bench_support.hpp"

#include <cmath>

#include <algorithm>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>

#include "swarmfield/io/map_file.hpp"

#ifndef SWARMFIELD_MAPS_DIR
#define SWARMFIELD_MAPS_DIR "../shared/data/maps"
#endif

namespace swarmfield::bench {

namespace {

std::string& maps_dir_override() {
  static std::string dir;
  return dir;
}

/// Value in kB of a "Key:   123 kB" line of /proc/self/status, as MiB; -1 when absent.
double status_mib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    const std::size_t digits = line.find_first_of("0123456789");
    if (digits == std::string::npos) return -1.0;
    return std::strtod(line.c_str() + digits, nullptr) / 1024.0;
  }
  return -1.0;
}

}  // namespace

std::string maps_dir() {
  if (!maps_dir_override().empty()) return maps_dir_override();
  if (const char* env = std::getenv("SWARMFIELD_MAPS_DIR"); env != nullptr && *env != '\0') return env;
  return SWARMFIELD_MAPS_DIR;
}

void set_maps_dir(std::string dir) { maps_dir_override() = std::move(dir); }

const sim::GridMap& load_map(const std::string& relative) {
  static std::map<std::string, std::unique_ptr<sim::GridMap>> cache;
  const std::string path = maps_dir() + "/" + relative;
  if (auto it = cache.find(path); it != cache.end()) return *it->second;
  auto map = std::make_unique<sim::GridMap>();
  sim::MapError error;
  if (!io::read_map_file(path, *map, error)) {
    throw std::runtime_error("cannot load map: " + error.to_string() +
                             " (set the maps folder with --maps-dir=DIR or SWARMFIELD_MAPS_DIR)");
  }
  return *cache.emplace(path, std::move(map)).first->second;
}

std::string map_label(const std::string& relative) {
  std::string name = relative.substr(relative.find_last_of('/') + 1);
  if (const std::size_t dot = name.rfind('.'); dot != std::string::npos) name.resize(dot);
  return name;
}

sim::CellCoord nearest_walkable(const sim::GridMap& map, sim::CellCoord target) {
  const std::int32_t limit = std::max(map.width(), map.height());
  for (std::int32_t r = 0; r <= limit; ++r) {
    for (std::int32_t y = target.y - r; y <= target.y + r; ++y) {
      for (std::int32_t x = target.x - r; x <= target.x + r; ++x) {
        const bool on_ring = std::abs(x - target.x) == r || std::abs(y - target.y) == r;
        if (on_ring && map.walkable(x, y)) return {x, y};
      }
    }
  }
  return target;
}

std::vector<sim::CellCoord> benchmark_goals(const sim::GridMap& map, int count) {
  const std::int32_t w = map.width(), h = map.height();
  if (count <= 1) return {nearest_walkable(map, {w / 2, h / 2})};
  return {nearest_walkable(map, {w / 4, h / 4}), nearest_walkable(map, {3 * w / 4, h / 4}),
          nearest_walkable(map, {w / 4, 3 * h / 4}), nearest_walkable(map, {3 * w / 4, 3 * h / 4})};
}

std::vector<sim::CellCoord> random_reachable_cells(const sim::IntegrationField& field, std::size_t count,
                                                   std::uint64_t seed) {
  std::vector<std::uint32_t> candidates;
  const std::vector<std::uint32_t> values = field.values();
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] != sim::kUnreachable) candidates.push_back(static_cast<std::uint32_t>(i));
  }
  std::vector<sim::CellCoord> out;
  if (candidates.empty()) return out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::size_t> pick(0, candidates.size() - 1);
  const auto w = static_cast<std::uint32_t>(field.width());
  out.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::uint32_t c = candidates[pick(rng)];
    out.push_back({static_cast<std::int32_t>(c % w), static_cast<std::int32_t>(c / w)});
  }
  return out;
}

std::vector<sim::CellCoord> nearest_reachable_cells(const sim::IntegrationField& field, std::size_t count) {
  const std::vector<std::uint32_t> values = field.values();
  std::vector<std::uint32_t> order;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] != sim::kUnreachable) order.push_back(static_cast<std::uint32_t>(i));
  }
  count = std::min(count, order.size());
  const auto by_value = [&](std::uint32_t a, std::uint32_t b) {
    return values[a] != values[b] ? values[a] < values[b] : a < b;
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(), by_value);
  const auto w = static_cast<std::uint32_t>(field.width());
  std::vector<sim::CellCoord> out;
  out.reserve(count);
  for (std::size_t k = 0; k < count; ++k) {
    out.push_back({static_cast<std::int32_t>(order[k] % w), static_cast<std::int32_t>(order[k] / w)});
  }
  return out;
}

double peak_rss_mib() { return status_mib("VmHWM"); }
double current_rss_mib() { return status_mib("VmRSS"); }

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    std::size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "unknown" : line.substr(start);
  }
  return "unknown";
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

WanderingPlayer::WanderingPlayer(sim::World& world, sim::CellCoord centre, float range, std::uint64_t seed)
    : world_(world),
      centre_(centre),
      range_(range),
      player_(world.add_player(world.map().cell_center(centre))),
      rng_(seed),
      target_(world.find_player(player_)->position) {}

void WanderingPlayer::step(int tick) {
  const sim::Vec2 p = world_.find_player(player_)->position;
  const sim::Vec2 d{target_.x - p.x, target_.y - p.y};
  const float len = std::sqrt(d.x * d.x + d.y * d.y);
  if (len < 2.0f || tick % 150 == 0) {
    for (int tries = 0; tries < 1000; ++tries) {
      std::uniform_real_distribution<float> u(-range_, range_);
      const sim::Vec2 c{static_cast<float>(centre_.x) + u(rng_), static_cast<float>(centre_.y) + u(rng_)};
      if (world_.map().walkable_at(c)) {
        target_ = c;
        break;
      }
    }
  } else {
    world_.set_player_intent(player_, {d.x / len, d.y / len});
  }
  world_.step(1.0f / 30.0f);
}

void shown_positions(const sim::Swarm& swarm, std::vector<float>& xs, std::vector<float>& ys) {
  if (swarm.shown_positions(xs, ys)) return;
  xs.assign(swarm.xs().begin(), swarm.xs().end());
  ys.assign(swarm.ys().begin(), swarm.ys().end());
}

}  // namespace swarmfield::bench
