// World's contacts and combat phase (CombatParams): contacts with the damage they do, the
// trigger, shots, agent deaths, player deaths and respawns. Runs after the swarm step, on the
// calling thread, in a fixed order (players in their order, agents in swarm order, each shot's
// hits nearest first), so a match replays bit for bit.
#include <algorithm>
#include <cmath>

#include "agent_blocks.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::sim {

bool World::set_player_fire(std::uint32_t player_id, bool fire, Vec2 aim) {
  auto it = std::find_if(players_.begin(), players_.end(), [&](const Player& pl) { return pl.id == player_id; });
  if (it == players_.end()) return false;
  if (!fire) {
    it->fire = false;
    return true;
  }
  const float len = length(aim);
  if (!finite(aim) || !std::isfinite(len) || !(len >= 1e-6f)) return false;
  it->fire = true;
  it->aim = aim * (1.0f / len);
  return true;
}

float World::agent_health(std::uint32_t id) const noexcept {
  const std::size_t i = swarm_.index_of(id);
  if (i == Swarm::kNoIndex) return -1.0f;
  const float full = swarm_.kind_table()[swarm_.kinds()[i]].health;
  const auto it = agent_damage_.find(id);
  return it == agent_damage_.end() ? full : full - it->second;
}

void World::collect_contacts(float dt) {
  contacts_.clear();
  const bool combat = params_.combat.enabled;
  player_damage_.assign(players_.size(), 0.0f);
  const std::span<const float> xs = swarm_.xs(), ys = swarm_.ys();
  const std::span<const std::uint32_t> ids = swarm_.ids();
  const std::span<const std::uint8_t> agent_kinds = swarm_.kinds();
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  float reach2[kMaxAgentKinds] = {};
  float attack2[kMaxAgentKinds] = {};  // combat: where the kind hurts a player (0 damage: nowhere)
  float hurt[kMaxAgentKinds] = {};     // combat: hit points it takes from a player this tick
  float max_reach2 = 0.0f;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const float reach = kinds[k].radius + params_.player_radius;
    reach2[k] = reach * reach;
    max_reach2 = std::max(max_reach2, reach2[k]);
    if (combat && kinds[k].damage > 0.0f) {
      const float attack = reach + kinds[k].attack_range;
      attack2[k] = attack * attack;
      hurt[k] = kinds[k].damage * dt;
      max_reach2 = std::max(max_reach2, attack2[k]);
    }
  }
  // Brute force per player over the SoA arrays (players are few; it also stays exact when an
  // agent was teleported this tick), a block scan (agent_blocks.hpp) with the largest reach.
  const std::size_t n = xs.size();
  for (std::size_t p = 0; p < players_.size(); ++p) {
    Player& pl = players_[p];
    if (!pl.alive) continue;
    const float px = pl.position.x, py = pl.position.y;
    float damage = 0.0f;  // summed in agent order: deterministic
    game_detail::scan_blocks_near(xs, ys, n, pl.position, max_reach2, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const float dx = xs[i] - px, dy = ys[i] - py;
        const float d2 = dx * dx + dy * dy;
        const std::uint8_t k = agent_kinds[i];
        if (d2 <= reach2[k]) {
          contacts_.push_back({ids[i], pl.id});
          ++pl.contacts;
        }
        if (d2 <= attack2[k]) damage += hurt[k];
      }
    });
    player_damage_[p] = damage;
  }
}

void World::resolve_combat(float dt) {
  resolve_shots();
  attack_barricades(dt);
  update_player_lives(dt);
}

void World::resolve_shots() {
  const CombatParams& c = params_.combat;
  dead_agents_.clear();
  dead_mask_.assign(swarm_.size(), 0);
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  const std::span<const std::uint32_t> ids = swarm_.ids();
  const std::span<const float> xs = swarm_.xs(), ys = swarm_.ys();
  const std::span<const std::uint8_t> agent_kinds = swarm_.kinds();
  for (Player& pl : players_) {
    if (!pl.alive || !pl.fire || pl.fire_cooldown > 0.0f) continue;
    // The remainder carries over, so the rate is 1 / fire_interval on average whatever the
    // tick length (at most one shot a tick).
    pl.fire_cooldown = std::max(0.0f, pl.fire_cooldown + c.fire_interval);
    ++shots_;
    ++pl.shots;
    // Agents killed by an earlier shot this tick are still in the arrays (removed below): the
    // mask hides them, so they neither take nor block this shot's hits.
    pick_shot_targets(path_map(), pl.position, pl.aim, c, xs, ys, agent_kinds, kinds, ids, shot_scratch_, shot_hits_,
                      dead_mask_);
    if (!(c.fire_damage > 0.0f)) continue;  // a harmless gun leaves no damage records
    for (const std::uint32_t i : shot_hits_) {
      const float health = kinds[agent_kinds[i]].health;
      float& taken = agent_damage_[ids[i]];
      taken += c.fire_damage;
      if (taken >= health) {
        agent_damage_.erase(ids[i]);
        dead_agents_.push_back(i);
        dead_mask_[i] = 1;
        agent_deaths_.push_back({ids[i], pl.id, agent_kinds[i], {xs[i], ys[i]}});
        ++pl.kills;
        ++kills_;
      }
    }
  }
  if (!dead_agents_.empty()) {
    std::sort(dead_agents_.begin(), dead_agents_.end());
    (void)swarm_.remove_agents(dead_agents_);
  }
}

void World::update_player_lives(float dt) {
  const CombatParams& c = params_.combat;
  for (std::size_t p = 0; p < players_.size(); ++p) {
    Player& pl = players_[p];
    pl.fire_cooldown -= dt;
    if (!(pl.fire && pl.alive) && pl.fire_cooldown < 0.0f) pl.fire_cooldown = 0.0f;  // no credit while idle
    if (pl.alive) {
      pl.health -= p < player_damage_.size() ? player_damage_[p] : 0.0f;
      if (pl.health <= 0.0f) {
        pl.health = 0.0f;
        pl.alive = false;
        pl.respawn_in = c.respawn_seconds;
        pl.velocity = {};
        ++pl.deaths;
        ++player_death_count_;
        player_deaths_.push_back({pl.id, pl.position});
      }
    } else {
      pl.respawn_in -= dt;
      if (pl.respawn_in <= 0.0f) {
        // Back at the spawn point (placed again: a barricade may stand there now); the fields
        // follow on the next tick as for any move to another cell.
        pl.position = place_player(pl.spawn_point);
        pl.velocity = {};
        pl.respawn_in = 0.0f;
        pl.health = c.player_health;
        pl.alive = true;
        pl.fire_cooldown = 0.0f;
      }
    }
  }
}

}  // namespace swarmfield::sim
