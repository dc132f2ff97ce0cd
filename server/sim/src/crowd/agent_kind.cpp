// Enemy kinds: the default set, validation, and the spawner's weighted choice.
#include "swarmfield/sim/crowd/agent_kind.hpp"

#include "../number_text.hpp"

#include <cmath>
#include <cstdio>

namespace swarmfield::sim {

std::vector<AgentKind> default_agent_kinds() {
  std::vector<AgentKind> kinds(3);
  kinds[0] = {"runner", 0.25f, 4.5f, 0.8f, 12.0f, 0xF2A33A, 3.0f, 20.0f, 4.0f, 0.25f};
  kinds[1] = {"walker", 0.35f, 3.0f, 1.0f, 8.0f, 0xE04848, 6.0f, 40.0f, 5.0f, 0.25f};
  kinds[2] = {"brute", 0.8f, 2.0f, 1.5f, 4.0f, 0x9A5BD6, 1.0f, 200.0f, 15.0f, 0.25f};
  return kinds;
}

namespace {

using sim_detail::number_text;

bool name_ok(const std::string& name) {
  if (name.empty() || name.size() > kMaxKindNameBytes) return false;
  for (const char ch : name) {
    if (ch < 0x21 || ch > 0x7E || ch == ':' || ch == ',') return false;
  }
  return true;
}

}  // namespace

std::string check_agent_kinds(std::span<const AgentKind> kinds, float cell_size) {
  if (kinds.empty()) return "no kinds: at least one is needed";
  if (kinds.size() > kMaxAgentKinds) {
    return "too many kinds: " + std::to_string(kinds.size()) + " (at most " + std::to_string(kMaxAgentKinds) + ")";
  }
  if (!(std::isfinite(cell_size) && cell_size > 0.0f)) return "cell size must be > 0";
  bool any_weight = false;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const AgentKind& k = kinds[i];
    const std::string who = "kinds[" + std::to_string(i) + "] '" + k.name + "': ";
    if (!name_ok(k.name)) {
      return "kinds[" + std::to_string(i) + "]: name must be 1.." + std::to_string(kMaxKindNameBytes) +
             " printable ASCII characters without spaces, ':' or ','";
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (kinds[j].name == k.name) return who + "name is used twice (also kinds[" + std::to_string(j) + "])";
    }
    const float r_cells = k.radius / cell_size;
    if (!(std::isfinite(k.radius) && r_cells >= kMinKindRadiusCells && r_cells <= kMaxKindRadiusCells)) {
      return who + "radius " + number_text(k.radius) + " is outside " + number_text(kMinKindRadiusCells) + ".." +
             number_text(kMaxKindRadiusCells) + " cells";
    }
    if (!(std::isfinite(k.max_speed) && k.max_speed > 0.0f && k.max_speed <= kMaxKindSpeed)) {
      return who + "speed " + number_text(k.max_speed) + " must be in (0, " + number_text(kMaxKindSpeed) + "]";
    }
    if (!(std::isfinite(k.separation_weight) && k.separation_weight >= 0.0f &&
          k.separation_weight <= kMaxKindSeparationWeight)) {
      return who + "separation_weight " + number_text(k.separation_weight) + " must be in 0.." +
             number_text(kMaxKindSeparationWeight);
    }
    if (!(std::isfinite(k.max_turn_rate) && k.max_turn_rate > 0.0f && k.max_turn_rate <= kMaxKindTurnRate)) {
      return who + "turn_rate " + number_text(k.max_turn_rate) + " must be in (0, " + number_text(kMaxKindTurnRate) + "]";
    }
    if (k.colour > 0xFFFFFFu) return who + "colour must be 0xRRGGBB";
    if (!(std::isfinite(k.spawn_weight) && k.spawn_weight >= 0.0f)) {
      return who + "weight " + number_text(k.spawn_weight) + " must be >= 0";
    }
    if (!(std::isfinite(k.health) && k.health > 0.0f && k.health <= kMaxKindHealth)) {
      return who + "health " + number_text(k.health) + " must be in (0, " + number_text(kMaxKindHealth) + "]";
    }
    if (!(std::isfinite(k.damage) && k.damage >= 0.0f && k.damage <= kMaxKindDamage)) {
      return who + "damage " + number_text(k.damage) + " must be in 0.." + number_text(kMaxKindDamage);
    }
    const float range_cells = k.attack_range / cell_size;
    if (!(std::isfinite(k.attack_range) && range_cells >= 0.0f && range_cells <= kMaxKindAttackRangeCells)) {
      return who + "attack_range " + number_text(k.attack_range) + " is outside 0.." + number_text(kMaxKindAttackRangeCells) +
             " cells";
    }
    if (k.spawn_weight > 0.0f) any_weight = true;
  }
  if (!any_weight) return "every kind has weight 0: nothing could be spawned";
  return {};
}

std::uint8_t pick_agent_kind(std::span<const AgentKind> kinds, std::uint64_t bits) noexcept {
  double total = 0.0;
  for (const AgentKind& k : kinds) {
    if (k.spawn_weight > 0.0f) total += static_cast<double>(k.spawn_weight);
  }
  if (!(total > 0.0)) return 0;
  const double target = static_cast<double>(bits >> 11) * 0x1.0p-53 * total;
  double cumulative = 0.0;
  std::size_t last = 0;
  for (std::size_t i = 0; i < kinds.size() && i < kMaxAgentKinds; ++i) {
    if (!(kinds[i].spawn_weight > 0.0f)) continue;
    cumulative += static_cast<double>(kinds[i].spawn_weight);
    last = i;
    if (cumulative > target) return static_cast<std::uint8_t>(i);
  }
  return static_cast<std::uint8_t>(last);  // rounding left target at the very top
}

std::size_t spawnable_kind_count(std::span<const AgentKind> kinds) noexcept {
  std::size_t n = 0;
  for (const AgentKind& k : kinds) n += k.spawn_weight > 0.0f ? 1 : 0;
  return n;
}

int find_agent_kind(std::span<const AgentKind> kinds, const std::string& name) noexcept {
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace swarmfield::sim
