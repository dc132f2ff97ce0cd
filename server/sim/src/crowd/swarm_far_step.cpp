// Far stepping (SwarmParams::far_step_cells): agents far from their goal step on one tick in 2
// (level 1) or, beyond twice the distance, in 4 (level 2) with as many times the time step, a
// level of detail by distance as game engines tick far agents less often (Unreal's MassEntity
// LOD: variable tick rates by distance to the viewers).
//
// Far: a path to the goal longer than far_step_cells (the agent's priority, whole-map fields
// only), no goal in sight, not at rest last tick and not bursting; the gather decides it and
// its level on the agent's steps (Swarm::FarState::far). Once some agent was far
// (Swarm::far_seen_, from the step before), an agent that was far at its last gather holds on
// the ticks that are not its level's (crowd_detail::far_holds: its id plus the step count a
// multiple of 2^level): the steering skips it (its neighbours read the priority and path of its
// last step, FarState) and the gather holds it (hold_far). On its level's ticks it steps with
// SwarmTick::far_kinds or far_kinds2: 2^level x max_step and max_turn, its velocity the move
// over 2^level dt, its waiting counted in ticks, its correction terms what 2^level ticks remove
// of an overlap. The ids spread the steps evenly, so the cost per tick stays level. A far agent
// holding keeps its velocity: neighbours read what it is doing, not that it paused. The contact
// lists reach two level-1 steps (SwarmTick::kind_contact_r2): a level-2 pair that closes more
// than that in one step is parted by the next gather. A scene with no far agent keeps every
// constant of the step (bit for bit the same results).
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::sim {

void Swarm::hold_far(std::size_t k) noexcept {
  // What the gather writes for an agent that skips this tick: no move allowance, no correction,
  // no contacts, not at rest; its mark stays (integrate_agents keeps its position and velocity).
  asleep_[k] = crowd_detail::kFarHold;
  perm_calm_[k] = 0;
  perm_signature_[k] = crowd_detail::kNoSignature;
  perm_resting_[k] = 0;
  hold_in_place(k);
}

bool Swarm::shown_positions(std::vector<float>& xs, std::vector<float>& ys) const {
  if (!far_held_) return false;
  const std::size_t n = ids_.size();
  xs.assign(xs_.begin(), xs_.end());
  ys.assign(ys_.begin(), ys_.end());
  for (std::size_t i = 0; i < n; ++i) {
    const FarState& f = far_[i];
    if (f.shown == crowd_detail::kShowTrue || f.step_ticks == 0) continue;
    const float share = static_cast<float>(f.shown) / static_cast<float>(f.step_ticks);
    xs[i] = f.prev_x + (xs_[i] - f.prev_x) * share;
    ys[i] = f.prev_y + (ys_[i] - f.prev_y) * share;
  }
  return true;
}

}  // namespace swarmfield::sim
