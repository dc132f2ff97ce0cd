// World: players, fields, swarm and spawner stepped at a fixed dt; a 64-bit state hash per tick.
#include "swarmfield/sim/world.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

namespace swarmfield::sim {

namespace {

// The swarm stops agents where they touch a player's disc.
SwarmParams swarm_params(const WorldParams& p) noexcept {
  SwarmParams s = p.swarm;
  s.goal_radius = p.player_radius;
  return s;
}

WorldParams sanitize(WorldParams p) noexcept {
  const WorldParams d{};
  auto ok = [](float v) { return std::isfinite(v) && v >= 0.0f; };
  if (!ok(p.player_speed)) p.player_speed = d.player_speed;
  if (!ok(p.player_radius)) p.player_radius = d.player_radius;
  if (!ok(p.spawner.min_player_distance)) p.spawner.min_player_distance = d.spawner.min_player_distance;
  if (!check_combat_params(p.combat).empty()) {
    // Field by field: a bad value falls back to its default, the others are kept.
    const CombatParams dc{};
    const auto keep_if_ok = [&](auto CombatParams::*field) {
      CombatParams trial = dc;
      trial.*field = p.combat.*field;
      if (!check_combat_params(trial).empty()) p.combat.*field = dc.*field;
    };
    keep_if_ok(&CombatParams::player_health);
    keep_if_ok(&CombatParams::respawn_seconds);
    keep_if_ok(&CombatParams::fire_range);
    keep_if_ok(&CombatParams::fire_cone);
    keep_if_ok(&CombatParams::fire_damage);
    keep_if_ok(&CombatParams::fire_interval);
    keep_if_ok(&CombatParams::max_hits_per_shot);
    keep_if_ok(&CombatParams::barricade);
  }
  return p;
}

// Budget of the start-up sector field build after the initial spawn, in ticks' budgets.
constexpr std::size_t kStartupBudgetTicks = 600;

// xxHash64-style mixing (Collet, xxHash spec): four independent lanes so the agents loop is not
// one long multiply chain, then a merge and the final avalanche.
constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ull;

inline std::uint64_t hash_round(std::uint64_t acc, std::uint64_t input) noexcept {
  acc += input * kPrime2;
  acc = std::rotl(acc, 31);
  return acc * kPrime1;
}
inline std::uint64_t hash_merge(std::uint64_t acc, std::uint64_t lane) noexcept {
  acc ^= hash_round(0, lane);
  return acc * kPrime1 + kPrime4;
}
inline std::uint64_t bits_of(float a, float b) noexcept {
  return (static_cast<std::uint64_t>(std::bit_cast<std::uint32_t>(a)) << 32) | std::bit_cast<std::uint32_t>(b);
}
inline std::uint64_t bits_of(std::uint32_t a, float b) noexcept {
  return (static_cast<std::uint64_t>(a) << 32) | std::bit_cast<std::uint32_t>(b);
}

}  // namespace

World::World(GridMap map, const WorldParams& params)
    : map_(std::move(map)),
      params_(sanitize(params)),
      swarm_(swarm_params(params_), params_.max_agents),
      rng_(params_.seed) {
  if (!params_.kinds.empty()) (void)swarm_.set_kinds(params_.kinds);
  if (!check_waves(params_.waves, swarm_.kind_table().size()).empty()) params_.waves.clear();
  swarm_.set_environment(map_, {});
  contacts_.reserve(64);
  // Before any update_fields(), so the first build also reserves the back field pair.
  nav_.set_rebuild_budget(params_.field_rebuild_budget);
  nav_.set_field_mode(params_.field_mode);
  // Hierarchical mode: the sector graphs now, so the first tick only routes.
  nav_.prepare(map_, classes_present());
  if (params_.worker_threads > 1) pool_ = std::make_unique<WorkerPool>(params_.worker_threads);
  nav_.set_worker_pool(pool_.get());
}

Vec2 World::place_player(Vec2 p) const noexcept {
  if (!finite(p) || !map_.walkable_at(p)) {
    const Vec2 q = move_out_of_walls(map_, p, params_.player_radius);
    p = map_.walkable_at(q) ? map_.cell_center(map_.world_to_cell(q)) : q;
  }
  return p;
}

std::uint32_t World::add_player(Vec2 p) {
  p = place_player(p);
  Player player;
  player.id = next_player_id_++;
  player.position = p;
  player.spawn_point = p;
  player.health = params_.combat.player_health;
  players_.push_back(player);
  return player.id;
}

bool World::remove_player(std::uint32_t player_id) {
  const auto it = std::find_if(players_.begin(), players_.end(), [&](const Player& pl) { return pl.id == player_id; });
  if (it == players_.end()) return false;
  players_.erase(it);
  // Its barricades fall with it (reported as gone): a player who leaves and joins again has a
  // new id, so barricades left standing would let one client stand per_player more each time.
  for (std::size_t i = barricades_.size(); i-- > 0;) {
    if (barricades_[i].owner == player_id) remove_barricade_at(i, true);
  }
  return true;
}

bool World::teleport_player(std::uint32_t player_id, Vec2 p) {
  if (!finite(p)) return false;
  auto it = std::find_if(players_.begin(), players_.end(), [&](const Player& pl) { return pl.id == player_id; });
  if (it == players_.end()) return false;
  it->position = place_player(p);
  it->velocity = {};
  return true;
}

bool World::set_player_intent(std::uint32_t player_id, Vec2 intent) {
  if (!finite(intent)) return false;
  auto it = std::find_if(players_.begin(), players_.end(), [&](const Player& pl) { return pl.id == player_id; });
  if (it == players_.end()) return false;
  const float len = length(intent);
  it->intent = len > 1.0f ? intent * (1.0f / len) : intent;
  return true;
}

const Player* World::find_player(std::uint32_t player_id) const noexcept {
  for (const Player& pl : players_) {
    if (pl.id == player_id) return &pl;
  }
  return nullptr;
}

void World::set_cell_cost(CellCoord c, std::uint8_t cost) {
  if (const Barricade* b = find_barricade(c)) remove_barricade_at(static_cast<std::size_t>(b - barricades_.data()), true);
  map_.set_cost(c.x, c.y, cost);
  if (path_map_split_) path_map_.set_cost(c.x, c.y, cost);
}

SizeClassMask World::classes_present() const noexcept {
  // Class 1 always (spawning and viewers use it); the others for the kinds with agents or a
  // spawn weight (a wave's first tick already steps them).
  SizeClassMask classes = size_class_bit(1);
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    if (swarm_.kind_count(static_cast<std::uint8_t>(k)) > 0 || kinds[k].spawn_weight > 0.0f) {
      classes |= size_class_bit(size_class_of_radius(kinds[k].radius, map_.cell_size()));
    }
  }
  return classes;
}

bool World::update_fields() {
  goal_positions_.clear();
  // Dead players too: the horde gathers where a player fell until it respawns (a goal set
  // that only changes with cells keeps the fields' rebuilds to the players' moves).
  for (const Player& pl : players_) goal_positions_.push_back(pl.position);
  const SizeClassMask classes = classes_present();
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  // Hierarchical fields build the sectors agents occupy (positions at the start of the tick),
  // per size class.
  if (resolve_field_mode(params_.field_mode, map_.width(), map_.height()) == FieldMode::kHierarchical) {
    std::array<std::uint8_t, kMaxAgentKinds> class_of{};
    for (std::size_t k = 0; k < kinds.size() && k < class_of.size(); ++k) {
      class_of[k] = static_cast<std::uint8_t>(size_class_of_radius(kinds[k].radius, map_.cell_size()));
    }
    const std::span<const std::uint8_t> agent_kinds = swarm_.kinds();
    agent_classes_.resize(agent_kinds.size());
    for (std::size_t i = 0; i < agent_kinds.size(); ++i) {
      agent_classes_[i] = agent_kinds[i] < class_of.size() ? class_of[agent_kinds[i]] : std::uint8_t{1};
    }
    nav_.note_agents(path_map(), swarm_.xs(), swarm_.ys(), agent_classes_);
    if (fields_for_all_agents_) {
      // The initial population's sectors in one long tick at start-up (like the first routes)
      // instead of a few a tick under the budget: meanwhile the agents of the others take the
      // portal fallback, several times costlier per agent than the field's blend, for hundreds
      // of ticks on a 4096 map (thousands of occupied sectors). Capped at kStartupBudgetTicks
      // ticks' budget (~1 s here; about every occupied sector of a 4096 map, the busiest ~25%
      // of an 8192 map's: all of those would take ~10 s).
      fields_for_all_agents_ = false;
      const std::size_t budget = params_.field_rebuild_budget;
      nav_.set_rebuild_budget(budget > SIZE_MAX / kStartupBudgetTicks ? 0 : budget * kStartupBudgetTicks);
      const bool changed = nav_.update(path_map(), goal_positions_, classes);
      nav_.set_rebuild_budget(params_.field_rebuild_budget);
      return changed;
    }
  }
  return nav_.update(path_map(), goal_positions_, classes);
}

void World::move_players(float dt) {
  for (Player& pl : players_) {
    if (!pl.alive) continue;
    // A run-time blocker may have been placed on the player: step out first.
    if (!map_.walkable_at(pl.position)) pl.position = move_out_of_walls(map_, pl.position, params_.player_radius);
    const Vec2 start = pl.position;
    const Vec2 wanted = pl.intent * (params_.player_speed * dt);
    pl.position = slide_along_walls(map_, start, wanted, params_.player_radius);
    pl.velocity = (pl.position - start) * (1.0f / dt);
  }
}

std::uint64_t World::compute_state_hash() const noexcept {
  std::uint64_t lane[4] = {kPrime1 + kPrime2, kPrime2, 0, 0 - kPrime1};
  lane[0] = hash_round(lane[0], tick_);
  lane[1] = hash_round(lane[1], players_.size());
  lane[2] = hash_round(lane[2], swarm_.size());
  for (const Player& pl : players_) {
    lane[3] = hash_round(lane[3], bits_of(pl.id, pl.intent.x));
    lane[3] = hash_round(lane[3], bits_of(pl.position.x, pl.position.y));
    lane[3] = hash_round(lane[3], bits_of(pl.velocity.x, pl.velocity.y));
    lane[3] = hash_round(lane[3], bits_of(pl.contacts, pl.intent.y));
  }
  if (params_.combat.enabled) {
    // Combat state only when it exists, so worlds without combat hash as before.
    for (const Player& pl : players_) {
      lane[0] = hash_round(lane[0], bits_of(pl.health, pl.respawn_in));
      lane[0] = hash_round(lane[0], bits_of(pl.kills, pl.fire_cooldown));
      lane[0] = hash_round(lane[0], (static_cast<std::uint64_t>(pl.deaths) << 2) | (pl.alive ? 2u : 0u) | (pl.fire ? 1u : 0u));
      lane[0] = hash_round(lane[0], bits_of(pl.aim.x, pl.aim.y));
    }
    for (const auto& [id, taken] : agent_damage_) lane[1] = hash_round(lane[1], bits_of(id, taken));
    lane[1] = hash_round(lane[1], kills_);
    lane[1] = hash_round(lane[1], shots_);
    if (barricades_built_ > 0) {  // only once there were barricades: fights before them hash as before
      for (const Barricade& b : barricades_) {
        lane[2] = hash_round(lane[2], bits_of(static_cast<std::uint32_t>(map_.index(b.cell.x, b.cell.y)), b.health));
      }
      lane[2] = hash_round(lane[2], (barricades_built_ << 32) ^ barricades_fallen_);
    }
  }
  const std::span<const std::uint32_t> ids = swarm_.ids();
  const std::span<const float> xs = swarm_.xs(), ys = swarm_.ys(), hs = swarm_.headings();
  const std::size_t n = ids.size();
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (std::size_t k = 0; k < 4; ++k) {
      lane[k] = hash_round(lane[k], bits_of(ids[i + k], hs[i + k]));
      lane[k] = hash_round(lane[k], bits_of(xs[i + k], ys[i + k]));
    }
  }
  for (std::size_t k = 0; i < n; ++i, ++k) {
    lane[k] = hash_round(lane[k], bits_of(ids[i], hs[i]));
    lane[k] = hash_round(lane[k], bits_of(xs[i], ys[i]));
  }
  if (swarm_.kind_table().size() > 1) {
    // Kinds (immutable per agent) only when there is a choice, so one-kind worlds hash as before.
    const std::span<const std::uint8_t> kinds = swarm_.kinds();
    for (std::size_t j = 0; j < n; ++j) lane[j & 3] = hash_round(lane[j & 3], kinds[j]);
  }
  std::uint64_t h = std::rotl(lane[0], 1) + std::rotl(lane[1], 7) + std::rotl(lane[2], 12) + std::rotl(lane[3], 18);
  for (const std::uint64_t l : lane) h = hash_merge(h, l);
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

void World::step(float dt) {
  begin_tick(dt);
  finish_tick(dt);
}

bool World::begin_tick(float dt) {
  if (!(dt > 0.0f) || !std::isfinite(dt)) return false;  // a bad dt is ignored, not simulated
  // Inputs: move players (clamped intents, wall collision).
  move_players(dt);
  // Fields: rebuild only if a player changed cell or the map changed.
  update_fields();
  return nav_.last_update_work() > 0;
}

void World::finish_tick(float dt) {
  if (!(dt > 0.0f) || !std::isfinite(dt)) return;
  // Spawner: the initial population on the first tick, then waves.
  const SpawnerParams& sp = params_.spawner;
  if (tick_ == 0 && sp.initial_agents > 0) {
    fields_for_all_agents_ = spawn_agents(sp.initial_agents) > 0 && nav_.hierarchical() && params_.field_rebuild_budget > 0;
  }
  if (sp.wave_size > 0 && sp.wave_interval_ticks > 0 && tick_ > 0 && tick_ % sp.wave_interval_ticks == 0) {
    spawn_agents(sp.wave_size);
  }
  run_waves(dt);
  // Congestion (crowd density in the path cost), then the swarm.
  const CongestionFields* congestion = nullptr;
  if (params_.congestion) {
    const std::span<const AgentKind> table = swarm_.kind_table();
    kind_area_.resize(table.size());
    kind_speed_.resize(table.size());
    for (std::size_t k = 0; k < table.size(); ++k) {
      kind_area_[k] = 3.14159265f * table[k].radius * table[k].radius;
      kind_speed_[k] = table[k].max_speed;
    }
    congestion_.update(path_map(), nav_, swarm_.xs(), swarm_.ys(), swarm_.kinds(), kind_area_,
                       swarm_.step_view().resting, swarm_.vxs(), swarm_.vys(), kind_speed_);
    congestion = &congestion_;
  }
  // Players on the move (goal index = player index, see update_fields): no rest piles up
  // behind them, and agents in sight head for where they are going.
  goal_velocities_.resize(players_.size());
  const float moving_speed = kMovingGoalCellsPerSecond * map_.cell_size();
  for (std::size_t i = 0; i < players_.size(); ++i) {
    const Vec2 v = players_[i].velocity;
    goal_velocities_[i] = players_[i].alive && dot(v, v) > moving_speed * moving_speed ? v : Vec2{};
  }
  swarm_.step(map_, nav_, dt, pool_.get(), congestion, goal_velocities_);
  // Events, the game's rules, and the hash.
  collect_contacts(dt);
  agent_deaths_.clear();
  player_deaths_.clear();
  if (params_.combat.enabled) resolve_combat(dt);
  ++tick_;
  state_hash_ = compute_state_hash();
}

}  // namespace swarmfield::sim
