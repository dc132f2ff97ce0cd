#include "swarmfield/client/combat_effects.hpp"

#include <algorithm>

namespace swarmfield::client {

CombatEffects::CombatEffects(double death_life_ticks, double shot_life_ticks, std::size_t max_marks)
    : death_life_(death_life_ticks > 0.0 ? death_life_ticks : 1.0),
      shot_life_(shot_life_ticks > 0.0 ? shot_life_ticks : 1.0),
      max_marks_(std::max<std::size_t>(1, max_marks)) {}

void CombatEffects::update(const std::deque<ReceivedSnapshot>& history, double render_tick) {
  if (!history.empty() && history.back().snapshot.tick < last_tick_) {
    last_tick_ = 0;  // a new stream: its ticks start again
    last_players_.clear();
    deaths_.clear();
    shots_.clear();
  }
  for (const ReceivedSnapshot& r : history) {
    const SnapshotState& s = r.snapshot;
    if (s.tick <= last_tick_) continue;
    if (static_cast<double>(s.tick) > render_tick) break;
    take(s);
  }
  age(deaths_, render_tick, death_life_);
  age(shots_, render_tick, shot_life_);
}

void CombatEffects::take(const SnapshotState& s) {
  for (const RenderAgent& a : s.deaths) {
    deaths_.push_back(CombatMark{a.x, a.y, 0.0f, s.tick, 0, a.kind, 0.0f});
    ++deaths_seen_;
  }
  // The first snapshot taken has nothing to compare with: its counts are the starting point.
  if (last_tick_ != 0) {
    for (const protocol::PlayerState& p : s.players) {
      const auto before = std::find_if(last_players_.begin(), last_players_.end(),
                                       [&](const protocol::PlayerState& q) { return q.id == p.id; });
      if (before != last_players_.end() && p.shots > before->shots && p.health > 0.0f) {
        shots_.push_back(CombatMark{p.x, p.y, protocol::dequantize_heading(p.aim), s.tick, p.id, 0, 0.0f});
        ++shots_seen_;
      }
    }
  }
  last_players_ = s.players;
  last_tick_ = s.tick;
  for (std::vector<CombatMark>* marks : {&deaths_, &shots_}) {
    if (marks->size() > max_marks_) marks->erase(marks->begin(), marks->end() - static_cast<std::ptrdiff_t>(max_marks_));
  }
}

void CombatEffects::age(std::vector<CombatMark>& marks, double render_tick, double life) const {
  std::erase_if(marks, [&](const CombatMark& m) { return render_tick - static_cast<double>(m.tick) >= life; });
  for (CombatMark& m : marks) {
    m.age = static_cast<float>(std::clamp((render_tick - static_cast<double>(m.tick)) / life, 0.0, 1.0));
  }
}

}  // namespace swarmfield::client
