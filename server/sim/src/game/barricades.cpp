// Barricades: the result names and the path-cost rule (see barricades.hpp).
#include "swarmfield/sim/game/barricades.hpp"

#include <algorithm>
#include <cmath>

namespace swarmfield::sim {

std::string_view build_result_name(BuildResult r) noexcept {
  switch (r) {
    case BuildResult::kBuilt: return "built";
    case BuildResult::kNoCombat: return "no combat";
    case BuildResult::kUnknownPlayer: return "unknown player";
    case BuildResult::kDeadPlayer: return "dead player";
    case BuildResult::kOffMap: return "off the map";
    case BuildResult::kOutOfReach: return "out of reach";
    case BuildResult::kNotWalkable: return "not walkable";
    case BuildResult::kOccupied: return "occupied";
    case BuildResult::kOverBudget: return "over budget";
  }
  return "unknown";
}

HordeReference horde_reference(std::span<const AgentKind> kinds) noexcept {
  double weight = 0.0;
  for (const AgentKind& k : kinds) weight += std::max(0.0f, k.spawn_weight);
  const bool equal = !(weight > 0.0);
  if (equal) weight = static_cast<double>(kinds.size());
  if (!(weight > 0.0)) return {};
  double damage = 0.0, speed = 0.0;
  for (const AgentKind& k : kinds) {
    const double w = equal ? 1.0 : std::max(0.0f, k.spawn_weight);
    damage += w * k.damage;
    speed += w * k.max_speed;
  }
  return {static_cast<float>(damage / weight), static_cast<float>(speed / weight)};
}

std::uint8_t barricade_path_cost(float health, float attackers, HordeReference ref, float cell_size) noexcept {
  constexpr double kLow = 2.0, kHigh = 254.0;
  const double dps = static_cast<double>(attackers) * ref.damage;
  if (!(dps > 0.0) || !(cell_size > 0.0f)) return static_cast<std::uint8_t>(kHigh);
  const double seconds = std::max(0.0, static_cast<double>(health)) / dps;
  const double cells = 1.0 + seconds * std::max(0.0f, ref.speed) / cell_size;
  if (!std::isfinite(cells)) return static_cast<std::uint8_t>(kHigh);
  return static_cast<std::uint8_t>(std::clamp(std::round(cells), kLow, kHigh));
}

float barricade_cost_health(float health, float full) noexcept {
  if (!(full > 0.0f) || !(health > 0.0f)) return 0.0f;
  const float step = full / static_cast<float>(kBarricadeCostSteps);
  const float steps = std::ceil(std::min(health, full) / step);
  return std::min(full, steps * step);
}

}  // namespace swarmfield::sim
