// Swarm's agents as structure-of-arrays state (swarm.hpp): construction (capacity fixed up
// front, so add() and step() never allocate), adding, removing and finding agents, the kinds
// table and the interaction radius it gives the hashes. The step itself is swarm.cpp's.
#include <algorithm>
#include <cmath>
#include <limits>

#include "crowd_math.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::sim {

using crowd_detail::wrap_angle;

namespace {
/// Replaces non-finite or out-of-range tuning values by usable ones so step() never divides
/// by zero or produces NaN whatever the caller passed.
SwarmParams sanitize(SwarmParams p) noexcept {
  const SwarmParams d{};
  auto ok = [](float v) { return std::isfinite(v) && v >= 0.0f; };
  if (!ok(p.radius)) p.radius = d.radius;
  if (!ok(p.max_speed)) p.max_speed = d.max_speed;
  if (!ok(p.separation_radius) || p.separation_radius <= 0.0f) p.separation_radius = std::max(2.0f * p.radius, 1e-3f);
  if (!std::isfinite(p.flow_weight)) p.flow_weight = d.flow_weight;
  if (!ok(p.obstacle_max_force)) p.obstacle_max_force = d.obstacle_max_force;
  if (!ok(p.overlap_stiffness)) p.overlap_stiffness = d.overlap_stiffness;
  if (!ok(p.contact_stiffness)) p.contact_stiffness = d.contact_stiffness;
  if (!ok(p.max_turn_rate)) p.max_turn_rate = d.max_turn_rate;
  if (!ok(p.commit_min_speed)) p.commit_min_speed = d.commit_min_speed;
  if (!ok(p.yield_fraction)) p.yield_fraction = d.yield_fraction;
  p.yield_fraction = std::min(p.yield_fraction, 1.0f);
  if (!ok(p.press_overlap)) p.press_overlap = d.press_overlap;
  if (!ok(p.goal_radius)) p.goal_radius = d.goal_radius;
  if (!ok(p.far_step_cells)) p.far_step_cells = 0.0f;  // (a NaN or a negative: every agent every tick)
  p.far_step_levels = std::clamp(p.far_step_levels, 1u, 2u);
  if (!ok(p.rest_below)) p.rest_below = d.rest_below;
  if (!ok(p.wake_above)) p.wake_above = d.wake_above;
  p.wake_above = std::max(std::min(p.wake_above, 1.0f), p.rest_below);
  p.press_overlap = std::min(p.press_overlap, 1.0f);
  if (p.parallel_chunk_agents == 0) p.parallel_chunk_agents = d.parallel_chunk_agents;
  return p;
}

}  // namespace

Swarm::Swarm(const SwarmParams& params, std::size_t capacity) : params_(sanitize(params)), capacity_(capacity) {
  // Capacity is fixed here so step() and add() never allocate (Detour's crowd does the same).
  ids_.reserve(capacity);
  for (auto* v : {&xs_, &ys_, &vxs_, &vys_, &headings_, &steer_x_, &steer_y_, &move_x_, &move_y_, &next_xs_, &next_ys_,
                  &corr_x_, &corr_y_, &allow_, &goal_room_}) {
    v->reserve(capacity);
  }
  burst_ticks_.reserve(capacity);
  resting_.reserve(capacity);
  perm_resting_.reserve(capacity);
  wait_.reserve(capacity);
  perm_wait_.reserve(capacity);
  commit_.reserve(capacity);
  perm_commit_.reserve(capacity);
  perm_burst_.reserve(capacity);
  perm_vxs_.reserve(capacity);
  prio_.reserve(capacity);
  path_x_.reserve(capacity);
  path_y_.reserve(capacity);
  open_here_.reserve(capacity);
  contacts_.reserve(capacity * crowd_detail::kContactSlots);
  contact_count_.reserve(capacity);
  contact_moved_.reserve(capacity);
  contact_moved_last_.reserve(capacity);
  streaming_.reserve(capacity);
  goal_moves_.reserve(capacity);
  sight_goal_.reserve(capacity);
  pile_sector_.reserve(capacity);
  pile_dist_.reserve(capacity);
  pile_level_.reserve(capacity);
  bursting_.reserve(capacity);
  perm_vys_.reserve(capacity);
  perm_ids_.reserve(capacity);
  perm_headings_.reserve(capacity);
  for (auto* v : {&calm_, &perm_calm_, &wake_, &perm_wake_, &asleep_}) v->reserve(capacity);
  signature_.reserve(capacity);
  perm_signature_.reserve(capacity);
  for (auto* v : {&mark_x_, &mark_y_, &perm_mark_x_, &perm_mark_y_}) v->reserve(capacity);
  far_.reserve(capacity);
  perm_far_.reserve(capacity);
  removed_points_.reserve(kMaxRemovedPoints);
  burst_chunks_.reserve(capacity / (params_.parallel_chunk_agents > 0 ? params_.parallel_chunk_agents : 1) + 1);
  rest_chunks_.reserve(burst_chunks_.capacity());
  shove_chunks_.reserve(burst_chunks_.capacity());
  calm_chunks_.reserve(burst_chunks_.capacity());
  sleep_chunks_.reserve(burst_chunks_.capacity());
  kinds_.reserve(capacity);
  perm_kinds_.reserve(capacity);
  hash_.reserve(capacity);
  AgentKind only;
  only.name = "default";
  only.radius = params_.radius;
  only.max_speed = params_.max_speed;
  only.max_turn_rate = params_.max_turn_rate;
  kind_table_.assign(1, only);
  kind_sep_r_.assign(1, params_.separation_radius);
}

std::size_t Swarm::index_of(std::uint32_t id) const noexcept {
  for (std::size_t i = 0; i < ids_.size(); ++i) {
    if (ids_[i] == id) return i;
  }
  return kNoIndex;
}

std::uint32_t Swarm::add(Vec2 p, float heading, std::uint8_t kind) {
  if (ids_.size() >= capacity_ || next_id_ == kInvalidAgent || kind >= kind_table_.size()) return kInvalidAgent;
  const std::uint32_t id = next_id_++;
  kinds_.push_back(kind);
  ++kind_counts_[kind];
  ids_.push_back(id);
  // A non-finite position is kept non-finite on purpose: the next step() moves it to the
  // nearest walkable cell like any other invalid position.
  xs_.push_back(p.x);
  ys_.push_back(p.y);
  needs_repair_ = true;
  vxs_.push_back(0.0f);
  vys_.push_back(0.0f);
  headings_.push_back(wrap_angle(heading));
  burst_ticks_.push_back(0);
  resting_.push_back(0);
  wait_.push_back(0);
  commit_.push_back(0);
  calm_.push_back(0);
  signature_.push_back(0);
  wake_.push_back(0);
  mark_x_.push_back(std::numeric_limits<float>::infinity());  // marks its neighbours on its first step
  mark_y_.push_back(std::numeric_limits<float>::infinity());
  far_.push_back({});
  return id;
}

void Swarm::clear() noexcept {
  ids_.clear();
  xs_.clear();
  ys_.clear();
  vxs_.clear();
  vys_.clear();
  headings_.clear();
  burst_ticks_.clear();
  resting_.clear();
  wait_.clear();
  commit_.clear();
  kinds_.clear();
  kind_counts_.fill(0);
  calm_.clear();
  signature_.clear();
  wake_.clear();
  mark_x_.clear();
  mark_y_.clear();
  far_.clear();
  removed_points_.clear();
}

std::size_t Swarm::remove_agents(std::span<const std::size_t> indices) noexcept {
  const std::size_t n = ids_.size();
  std::size_t valid = 0;
  for (; valid < indices.size(); ++valid) {
    if (indices[valid] >= n || (valid > 0 && indices[valid] <= indices[valid - 1])) break;
  }
  if (valid == 0) return 0;
  // Stable compaction of every per-agent array (the order is the spatial order the next step
  // starts from, and keeping it keeps the state hash independent of how deaths are listed).
  std::size_t out = indices[0];
  std::size_t next_dead = 0;
  for (std::size_t i = indices[0]; i < n; ++i) {
    if (next_dead < valid && indices[next_dead] == i) {
      --kind_counts_[kinds_[i]];
      ++next_dead;
      // Its neighbours may have rested against it: they wake (Swarm::mark_removed_neighbours).
      if (removed_points_.size() < kMaxRemovedPoints) {
        removed_points_.push_back({xs_[i], ys_[i]});
      } else {
        wake_all_ = true;
      }
      continue;
    }
    ids_[out] = ids_[i];
    xs_[out] = xs_[i];
    ys_[out] = ys_[i];
    vxs_[out] = vxs_[i];
    vys_[out] = vys_[i];
    headings_[out] = headings_[i];
    burst_ticks_[out] = burst_ticks_[i];
    resting_[out] = resting_[i];
    wait_[out] = wait_[i];
    commit_[out] = commit_[i];
    kinds_[out] = kinds_[i];
    calm_[out] = calm_[i];
    signature_[out] = signature_[i];
    wake_[out] = wake_[i];
    mark_x_[out] = mark_x_[i];
    mark_y_[out] = mark_y_[i];
    far_[out] = far_[i];
    ++out;
  }
  ids_.resize(out);
  for (auto* v : {&xs_, &ys_, &vxs_, &vys_, &headings_}) v->resize(out);
  for (auto* v : {&burst_ticks_, &resting_, &commit_, &kinds_, &calm_, &wake_}) v->resize(out);
  signature_.resize(out);
  mark_x_.resize(out);
  mark_y_.resize(out);
  far_.resize(out);
  wait_.resize(out);
  return valid;
}

bool Swarm::set_kinds(std::span<const AgentKind> kinds) {
  if (kinds.empty() || kinds.size() > kMaxAgentKinds) return false;
  for (std::size_t k = kinds.size(); k < kMaxAgentKinds; ++k) {
    if (kind_counts_[k] != 0) return false;  // an agent would be left without its kind
  }
  const SwarmParams d{};
  auto ok = [](float v) { return std::isfinite(v) && v >= 0.0f; };
  kind_table_.assign(kinds.begin(), kinds.end());
  kind_sep_r_.resize(kinds.size());
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    AgentKind& kind = kind_table_[k];
    if (!ok(kind.radius)) kind.radius = d.radius;
    if (!ok(kind.max_speed)) kind.max_speed = d.max_speed;
    if (!ok(kind.separation_weight)) kind.separation_weight = 1.0f;
    if (!ok(kind.max_turn_rate)) kind.max_turn_rate = d.max_turn_rate;
    const AgentKind dk{};
    if (!(ok(kind.health) && kind.health > 0.0f)) kind.health = dk.health;
    if (!ok(kind.damage)) kind.damage = dk.damage;
    if (!ok(kind.attack_range)) kind.attack_range = dk.attack_range;
    // The separation radius scales with the radius (the same room round a big agent, in its
    // own diameters); exactly SwarmParams' for a kind of its radius.
    float sep_r = params_.separation_radius;
    if (kind.radius != params_.radius) {
      sep_r = params_.radius > 0.0f ? kind.radius * (params_.separation_radius / params_.radius) : 0.0f;
    }
    kind_sep_r_[k] = std::max({sep_r, 2.0f * kind.radius, 1e-3f});
  }
  hash_cell_ = -1.0f;  // reconfigure the hashes for the kinds present on the next step
  wake_all_ = true;
  return true;
}

float Swarm::interaction_radius() const noexcept {
  float r = 0.0f;
  for (std::size_t k = 0; k < kind_table_.size(); ++k) {
    if (kind_counts_[k] != 0) r = std::max(r, kind_sep_r_[k]);
  }
  return r > 0.0f ? r : params_.separation_radius;
}

}  // namespace swarmfield::sim
