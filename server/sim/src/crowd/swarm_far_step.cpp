// Far stepping (SwarmParams::far_step_cells): agents far from their goal step on every other
// tick with twice the time step, a level of detail by distance as game engines tick far agents
// less often (Unreal's MassEntity LOD: variable tick rates by distance to the viewers).
//
// Far: a path to the goal longer than far_step_cells (the agent's priority, whole-map fields
// only), no goal in sight, not at rest last tick and not bursting; the gather decides it on the
// agent's steps (Swarm::FarState::far). Once some agent was far (Swarm::far_seen_, from the step
// before), an agent that was far at its last gather and whose id's parity is not this tick's
// holds: the steering skips it (its neighbours read the priority and path of its last step,
// FarState) and the gather holds it (hold_far). A far agent whose parity is this tick's steps
// with SwarmTick::far_kinds: twice max_step and max_turn, its velocity the move over 2 dt, its
// waiting counted in ticks, its correction terms what two ticks remove of an overlap. Half the
// far agents step on each tick, so the cost per tick stays level. A far agent holding keeps its
// velocity: neighbours read what it is doing, not that it paused. A scene with no far agent
// keeps every constant of the step (bit for bit the same results).
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

}  // namespace swarmfield::sim
