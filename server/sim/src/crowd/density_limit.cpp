// The density limit: walkable area over the area one disc takes in the hexagonal packing.
#include "swarmfield/sim/crowd/density_limit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>

namespace swarmfield::sim {

std::uint64_t density_limit(std::size_t walkable_cells, float cell_size, float radius) noexcept {
  constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
  if (!(std::isfinite(radius) && radius > 0.0f) || !(std::isfinite(cell_size) && cell_size > 0.0f)) return kNoLimit;
  const double cs = static_cast<double>(cell_size), r = static_cast<double>(radius);
  const double area = static_cast<double>(walkable_cells) * cs * cs;
  const double n = kDensityLimitSlack * area * kHexPackingDensity / (std::numbers::pi * r * r);
  // 2^64 as a double: anything at or above it saturates (the conversion would be undefined).
  if (!(n < 18446744073709551616.0)) return kNoLimit;
  return static_cast<std::uint64_t>(std::floor(n));
}

float smallest_spawned_radius(std::span<const AgentKind> kinds) noexcept {
  float spawned = std::numeric_limits<float>::infinity(), any = spawned;
  for (const AgentKind& k : kinds) {
    any = std::min(any, k.radius);
    if (k.spawn_weight > 0.0f) spawned = std::min(spawned, k.radius);
  }
  if (std::isfinite(spawned)) return spawned;
  return std::isfinite(any) ? any : 0.0f;
}

std::uint64_t density_limit(const GridMap& map, std::span<const AgentKind> kinds) noexcept {
  return density_limit(map.walkable_count(), map.cell_size(), smallest_spawned_radius(kinds));
}

std::string describe_density_limit(const GridMap& map, std::span<const AgentKind> kinds) {
  return describe_density_limit(map.walkable_count(), map.cell_size(), kinds, "the map's");
}

std::string describe_density_limit(std::size_t walkable_cells, float cell_size, std::span<const AgentKind> kinds,
                                   std::string_view whose) {
  const float radius = smallest_spawned_radius(kinds);
  const std::uint64_t limit = density_limit(walkable_cells, cell_size, radius);
  const AgentKind* smallest = nullptr;
  for (const AgentKind& k : kinds) {
    if (k.radius == radius && (smallest == nullptr || (k.spawn_weight > 0.0f && !(smallest->spawn_weight > 0.0f)))) {
      smallest = &k;
    }
  }
  char text[256];
  if (limit == std::numeric_limits<std::uint64_t>::max()) {
    std::snprintf(text, sizeof text, "%.*s %zu walkable cells set no limit (agent radius %g)",
                  static_cast<int>(whose.size()), whose.data(), walkable_cells, static_cast<double>(radius));
  } else {
    std::snprintf(text, sizeof text,
                  "%.*s %zu walkable cells hold at most %llu agents (hexagonal packing of the smallest kind "
                  "spawned, '%s', radius %g)",
                  static_cast<int>(whose.size()), whose.data(), walkable_cells, static_cast<unsigned long long>(limit),
                  smallest != nullptr ? smallest->name.c_str() : "?", static_cast<double>(radius));
  }
  return text;
}

}  // namespace swarmfield::sim
