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

// True when an agent at `p` heading `heading` (radians) faces cell `c`: the direction to the
// cell's nearest point is within ~70 degrees of the heading. An agent the barricade blocks
// presses into it; one walking round it (tangent to it) or pushed along it by the crowd does not
// attack it.
bool faces_cell(const GridMap& map, CellCoord c, Vec2 p, float heading) noexcept {
  const float cs = map.cell_size();
  const float x0 = static_cast<float>(c.x) * cs, y0 = static_cast<float>(c.y) * cs;
  const float dx = std::clamp(p.x, x0, x0 + cs) - p.x, dy = std::clamp(p.y, y0, y0 + cs) - p.y;
  const float d = std::sqrt(dx * dx + dy * dy);
  if (!(d > 1e-6f)) return true;
  return (std::cos(heading) * dx + std::sin(heading) * dy) >= 0.35f * d;
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
  const std::span<const float> xs = swarm_.xs(), ys = swarm_.ys(), headings = swarm_.headings();
  const std::span<const std::uint8_t> agent_kinds = swarm_.kinds();
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  float max_reach = 0.0f;
  for (const AgentKind& k : kinds) max_reach = std::max(max_reach, k.radius + k.attack_range);
  const float cs = map_.cell_size();
  // Tiles of kBarricadeTile x kBarricadeTile cells that some barricade's reach touches, as bits:
  // one pass over the agents tests one bit each, and only agents on a marked tile are measured
  // against the barricades (O(agents + near agents x barricades), not O(agents x barricades)).
  constexpr std::int32_t kTile = 8;
  const std::int32_t tiles_w = (map_.width() + kTile - 1) / kTile, tiles_h = (map_.height() + kTile - 1) / kTile;
  const std::size_t tile_count = static_cast<std::size_t>(tiles_w) * static_cast<std::size_t>(tiles_h);
  barricade_tiles_.assign((tile_count + 63) / 64, 0);
  const auto reach_cells = static_cast<std::int32_t>(std::ceil(max_reach / cs)) + 1;
  for (const Barricade& b : barricades_) {
    const std::int32_t tx0 = std::max(0, b.cell.x - reach_cells) / kTile, tx1 = std::min(map_.width() - 1, b.cell.x + reach_cells) / kTile;
    const std::int32_t ty0 = std::max(0, b.cell.y - reach_cells) / kTile, ty1 = std::min(map_.height() - 1, b.cell.y + reach_cells) / kTile;
    for (std::int32_t ty = ty0; ty <= ty1; ++ty) {
      for (std::int32_t tx = tx0; tx <= tx1; ++tx) {
        const std::size_t t = static_cast<std::size_t>(ty) * static_cast<std::size_t>(tiles_w) + static_cast<std::size_t>(tx);
        barricade_tiles_[t / 64] |= std::uint64_t{1} << (t % 64);
      }
    }
  }
  barricade_damage_.assign(barricades_.size(), 0.0f);
  const float inv = 1.0f / (cs * static_cast<float>(kTile));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    // Agents are on the map (the swarm keeps them there); a stray one is clamped, never indexed out.
    const std::int32_t tx = std::clamp(static_cast<std::int32_t>(xs[i] * inv), 0, tiles_w - 1);
    const std::int32_t ty = std::clamp(static_cast<std::int32_t>(ys[i] * inv), 0, tiles_h - 1);
    const std::size_t t = static_cast<std::size_t>(ty) * static_cast<std::size_t>(tiles_w) + static_cast<std::size_t>(tx);
    if ((barricade_tiles_[t / 64] >> (t % 64) & 1u) == 0) continue;
    const AgentKind& k = kinds[agent_kinds[i]];
    if (!(k.damage > 0.0f)) continue;
    const float r = k.radius + k.attack_range;
    for (std::size_t bi = 0; bi < barricades_.size(); ++bi) {
      // Summed per barricade in agent order: deterministic.
      const Vec2 p{xs[i], ys[i]};
      if (distance2_to_cell(map_, barricades_[bi].cell, p) <= r * r && faces_cell(map_, barricades_[bi].cell, p, headings[i])) {
        barricade_damage_[bi] += k.damage * dt;
      }
    }
  }
  const BarricadeParams& bp = params_.combat.barricade;
  const HordeReference ref = horde_reference(kinds);
  // Falls are taken from the back so the damage list keeps matching the barricades left.
  for (std::size_t bi = barricades_.size(); bi-- > 0;) {
    const float damage = barricade_damage_[bi];
    if (!(damage > 0.0f)) continue;
    Barricade& b = barricades_[bi];
    const float before = b.health;
    b.health -= damage;
    if (b.health <= 0.0f) {
      ++barricades_fallen_;
      fallen_scratch_.push_back(bi);
      continue;
    }
    // The path cost follows the health in kBarricadeCostSteps steps (a few field rebuilds per
    // barricade, not one per tick of attack).
    const std::uint8_t cost = std::max(
        b.under_cost, barricade_path_cost(barricade_cost_health(b.health, b.full_health), bp.attackers, ref, cs));
    if (cost != b.path_cost) {
      b.path_cost = cost;
      path_map_.set_cost(b.cell.x, b.cell.y, cost);
    }
    if (report_step(b.health, b.full_health) != report_step(before, b.full_health)) {
      barricade_changes_.push_back({b.cell, kBlockedCost, health_byte(b.health, b.full_health)});
    }
  }
  // Fallen ones in cell order (the order the changes are reported in).
  std::size_t removed = 0;
  for (auto it = fallen_scratch_.rbegin(); it != fallen_scratch_.rend(); ++it, ++removed) remove_barricade_at(*it - removed, true);
  fallen_scratch_.clear();
}

}  // namespace swarmfield::sim
