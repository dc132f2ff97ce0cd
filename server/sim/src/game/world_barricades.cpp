// World's barricades (barricades.hpp): building, the attack after the swarm step, falling, and
// the two maps they live in (the physical map: blocked; the path map: the attack-through cost).
// Runs on the calling thread in a fixed order (barricades by cell index, agents in swarm
// order), so a match replays bit for bit with any thread count.
#include <algorithm>
#include <cmath>

#include "agent_blocks.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::sim {

namespace {

// Distance squared from `p` to the square of cell `c` (0 inside it), world units.
float distance2_to_cell(const GridMap& map, CellCoord c, Vec2 p) noexcept {
  const float cs = map.cell_size();
  const float x0 = static_cast<float>(c.x) * cs, y0 = static_cast<float>(c.y) * cs;
  const float dx = std::max({x0 - p.x, 0.0f, p.x - (x0 + cs)});
  const float dy = std::max({y0 - p.y, 0.0f, p.y - (y0 + cs)});
  return dx * dx + dy * dy;
}

// Health as a fraction of full in 1..255, for clients (0 only for a fallen barricade).
std::uint8_t health_byte(float health, float full) noexcept {
  if (!(health > 0.0f) || !(full > 0.0f)) return 0;
  const float f = std::clamp(health / full, 0.0f, 1.0f);
  return static_cast<std::uint8_t>(std::clamp(std::ceil(f * 255.0f), 1.0f, 255.0f));
}

// The reporting step of a barricade's health (changes are reported when it moves): eighths.
int report_step(float health, float full) noexcept {
  return static_cast<int>(std::ceil(std::clamp(health / full, 0.0f, 1.0f) * 8.0f));
}

}  // namespace

const Barricade* World::find_barricade(CellCoord cell) const noexcept {
  const auto it = std::find_if(barricades_.begin(), barricades_.end(),
                               [&](const Barricade& b) { return b.cell.x == cell.x && b.cell.y == cell.y; });
  return it == barricades_.end() ? nullptr : &*it;
}

BuildResult World::build_barricade(std::uint32_t player_id, CellCoord cell) {
  const BarricadeParams& bp = params_.combat.barricade;
  if (!params_.combat.enabled) return BuildResult::kNoCombat;
  const Player* pl = find_player(player_id);
  if (pl == nullptr) return BuildResult::kUnknownPlayer;
  if (!pl->alive) return BuildResult::kDeadPlayer;
  if (!map_.in_bounds(cell.x, cell.y)) return BuildResult::kOffMap;
  const Vec2 centre = map_.cell_center(cell);
  const Vec2 off = centre - pl->position;
  if (!(off.x * off.x + off.y * off.y <= bp.build_range * bp.build_range)) return BuildResult::kOutOfReach;
  if (!map_.walkable(cell)) return BuildResult::kNotWalkable;  // a wall, or a barricade already
  // No disc may overlap the cell: nobody is walled in (agents pushed out of new walls would
  // jump; a player would be moved out of it).
  for (const Player& other : players_) {
    if (distance2_to_cell(map_, cell, other.position) < params_.player_radius * params_.player_radius) {
      return BuildResult::kOccupied;
    }
  }
  const std::span<const float> xs = swarm_.xs(), ys = swarm_.ys();
  const std::span<const std::uint8_t> agent_kinds = swarm_.kinds();
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  float max_radius = 0.0f;
  for (const AgentKind& k : kinds) max_radius = std::max(max_radius, k.radius);
  const float reach = map_.cell_size() * 0.70711f + max_radius;
  bool occupied = false;
  game_detail::scan_blocks_near(xs, ys, xs.size(), centre, reach * reach, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end && !occupied; ++i) {
      const float r = kinds[agent_kinds[i]].radius;
      occupied = distance2_to_cell(map_, cell, {xs[i], ys[i]}) < r * r;
    }
  });
  if (occupied) return BuildResult::kOccupied;
  const auto standing = std::count_if(barricades_.begin(), barricades_.end(),
                                      [&](const Barricade& b) { return b.owner == player_id; });
  if (static_cast<std::uint64_t>(standing) >= bp.per_player) return BuildResult::kOverBudget;

  if (!path_map_split_) {
    // The first barricade: from now on the fields plan on their own copy of the map (same
    // revision and change log, so they follow it without a full rebuild).
    path_map_ = map_;
    path_map_split_ = true;
  }
  Barricade b;
  b.cell = cell;
  b.owner = player_id;
  b.health = bp.health;
  b.full_health = bp.health;
  b.under_cost = map_.cost(cell.x, cell.y);
  b.path_cost = std::max(b.under_cost, barricade_path_cost(bp.health, bp.attackers, horde_reference(kinds), map_.cell_size()));
  map_.set_cost(cell.x, cell.y, kBlockedCost);
  path_map_.set_cost(cell.x, cell.y, b.path_cost);
  const auto at = std::lower_bound(barricades_.begin(), barricades_.end(), cell, [&](const Barricade& x, CellCoord c) {
    return map_.index(x.cell.x, x.cell.y) < map_.index(c.x, c.y);
  });
  barricades_.insert(at, b);
  barricade_changes_.push_back({cell, kBlockedCost, 255});
  ++barricades_built_;
  return BuildResult::kBuilt;
}

void World::remove_barricade_at(std::size_t index, bool report) {
  const Barricade b = barricades_[index];
  barricades_.erase(barricades_.begin() + static_cast<std::ptrdiff_t>(index));
  map_.set_cost(b.cell.x, b.cell.y, b.under_cost);
  path_map_.set_cost(b.cell.x, b.cell.y, b.under_cost);
  if (report) barricade_changes_.push_back({b.cell, b.under_cost, 0});
}

void World::attack_barricades(float dt) {
  if (barricades_.empty()) return;
  const std::span<const float> xs = swarm_.xs(), ys = swarm_.ys();
  const std::span<const std::uint8_t> agent_kinds = swarm_.kinds();
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  float max_reach = 0.0f;
  for (const AgentKind& k : kinds) max_reach = std::max(max_reach, k.radius + k.attack_range);
  const float reach = map_.cell_size() * 0.70711f + max_reach;
  const BarricadeParams& bp = params_.combat.barricade;
  const HordeReference ref = horde_reference(kinds);
  for (std::size_t bi = 0; bi < barricades_.size();) {
    Barricade& b = barricades_[bi];
    float damage = 0.0f;  // summed in agent order: deterministic
    game_detail::scan_blocks_near(xs, ys, xs.size(), map_.cell_center(b.cell), reach * reach,
                                  [&](std::size_t begin, std::size_t end) {
                                    for (std::size_t i = begin; i < end; ++i) {
                                      const AgentKind& k = kinds[agent_kinds[i]];
                                      if (!(k.damage > 0.0f)) continue;
                                      const float r = k.radius + k.attack_range;
                                      if (distance2_to_cell(map_, b.cell, {xs[i], ys[i]}) <= r * r) damage += k.damage * dt;
                                    }
                                  });
    if (!(damage > 0.0f)) {
      ++bi;
      continue;
    }
    const float before = b.health;
    b.health -= damage;
    if (b.health <= 0.0f) {
      ++barricades_fallen_;
      remove_barricade_at(bi, true);
      continue;  // the next barricade moved into slot bi
    }
    // The path cost follows the health in kBarricadeCostSteps steps (a few field rebuilds per
    // barricade, not one per tick of attack).
    const std::uint8_t cost = std::max(
        b.under_cost, barricade_path_cost(barricade_cost_health(b.health, b.full_health), bp.attackers, ref, map_.cell_size()));
    if (cost != b.path_cost) {
      b.path_cost = cost;
      path_map_.set_cost(b.cell.x, b.cell.y, cost);
    }
    if (report_step(b.health, b.full_health) != report_step(before, b.full_health)) {
      barricade_changes_.push_back({b.cell, kBlockedCost, health_byte(b.health, b.full_health)});
    }
    ++bi;
  }
}

}  // namespace swarmfield::sim
