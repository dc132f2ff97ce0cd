// RulesContext, the default rules' score and the per-tick call (game_rules.hpp).
#include "swarmfield/rules/game_rules.hpp"

#include <algorithm>

namespace swarmfield::rules {

std::size_t RulesContext::spawn(const std::string& kind, std::size_t count, const std::optional<sim::SpawnZone>& zone) {
  const std::span<const sim::AgentKind> kinds = world_.swarm().kind_table();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    if (kinds[k].name == kind) return world_.spawn_agents_of(static_cast<std::uint8_t>(k), count, zone);
  }
  return 0;
}

void RulesContext::add_score(std::uint32_t player_id, std::int64_t points) {
  std::int64_t& s = scores_[player_id];
  s = std::clamp(s + std::clamp(points, -kMaxScore, kMaxScore), -kMaxScore, kMaxScore);
}

std::int64_t RulesContext::score(std::uint32_t player_id) const {
  const auto it = scores_.find(player_id);
  return it == scores_.end() ? 0 : it->second;
}

std::int64_t RulesContext::total_score() const {
  std::int64_t total = 0;  // each score is within 2^53: a sum of fewer than 2^9 cannot overflow, clamp anyway
  for (const auto& [id, s] : scores_) total = std::clamp(total + s, -kMaxScore * 512, kMaxScore * 512);
  return total;
}

void RulesContext::end_match(std::string reason) {
  if (!match_over_) match_over_ = std::move(reason);
}

void RulesContext::log(std::string line) {
  if (log_.size() >= kMaxLogLines) {
    ++log_dropped_;
    return;
  }
  log_.push_back(std::move(line));
}

std::vector<std::string> RulesContext::take_log() {
  std::vector<std::string> out;
  out.swap(log_);
  if (log_dropped_ > 0) {
    // Built by append: g++ 12 at -O3 reports a false -Wrestrict on `"(" + std::to_string(..)`.
    std::string line = "(";
    line += std::to_string(log_dropped_);
    line += " more lines dropped: at most ";
    line += std::to_string(kMaxLogLines);
    line += " between two reads)";
    out.push_back(std::move(line));
    log_dropped_ = 0;
  }
  return out;
}

void DefaultRules::after_step(RulesContext& ctx, const TickEvents& events) {
  const std::span<const sim::AgentKind> kinds = ctx.world().swarm().kind_table();
  for (const sim::AgentDeath& d : events.agent_deaths) {
    const std::string& kind = d.kind < kinds.size() ? kinds[d.kind].name : std::string();
    const std::int64_t points = kind == "runner" ? 5 : kind == "brute" ? 50 : 10;
    ctx.add_score(d.killer_id, points);
  }
  for (const sim::PlayerDeath& d : events.player_deaths) ctx.add_score(d.player_id, -25);
}

void run_rules_after_step(GameRules& rules, RulesContext& ctx, RulesTracker& t,
                          std::span<const sim::BarricadeChange> changes) {
  const sim::World& world = ctx.world();
  t.now.clear();
  for (const sim::Player& p : world.players()) t.now.push_back(p.id);
  std::sort(t.now.begin(), t.now.end());
  t.joined.clear();
  t.left.clear();
  std::set_difference(t.now.begin(), t.now.end(), t.players.begin(), t.players.end(), std::back_inserter(t.joined));
  std::set_difference(t.players.begin(), t.players.end(), t.now.begin(), t.now.end(), std::back_inserter(t.left));
  t.players.swap(t.now);
  t.fallen.clear();
  for (const sim::BarricadeChange& c : changes) {
    if (c.health == 0) t.fallen.push_back(c.cell);
  }
  const std::uint32_t comings = world.waves().comings_started();
  TickEvents e;
  e.tick = world.tick();
  e.first = !t.started;
  e.agent_deaths = world.agent_deaths();
  e.player_deaths = world.player_deaths();
  e.players_joined = t.joined;
  e.players_left = t.left;
  e.barricades_fallen = t.fallen;
  e.waves_started = comings - t.comings;
  t.comings = comings;
  t.started = true;
  if (rules.stopped().empty()) rules.after_step(ctx, e);
}

}  // namespace swarmfield::rules
