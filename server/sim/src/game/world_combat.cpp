// World's combat phase (CombatParams): shots, agent deaths, player deaths and respawns. Runs
// after the swarm step and the contacts, on the calling thread, in a fixed order (players in
// their order, each shot's hits nearest first), so a match replays bit for bit.
#include <algorithm>
#include <cmath>

#include "swarmfield/sim/world.hpp"

namespace swarmfield::sim {

void World::resolve_combat(float dt) {
  resolve_shots();
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
    // Agents killed by an earlier shot this tick are still in the arrays (removed below): the
    // mask hides them, so they neither take nor block this shot's hits.
    pick_shot_targets(map_, pl.position, pl.aim, c, xs, ys, agent_kinds, kinds, ids, shot_scratch_, shot_hits_,
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
