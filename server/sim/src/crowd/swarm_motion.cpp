// The last phases of the swarm step (see Swarm::step):
//   integrate: the overlap correction (separation * stiffness + contact term, not scaled by dt,
//     clamped to max_speed * dt) slid along walls, then the move = steer * budget slid along
//     walls and round door posts (slide_round_corner()). Budget: max_speed * dt minus what the
//     correction actually moved the agent, and at most the free path; so the total stays within
//     max_speed * dt, a pushed agent yields instead of pressing on, and one pushed into a wall
//     still walks. Wall collision (wall_collision.hpp) is part of this loop, not a loop of its
//     own: the flow move's budget depends on how far the walls let the correction go.
//   heading: turn toward the steering direction by at most max_turn_rate * dt.
#include <algorithm>

#include "crowd_rules.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::sim {

using crowd_detail::cell_of;

// Sleep (swarm_sleep.cpp), after an awake agent's move from p0 to p2: its calm count (quiet in
// the gather, at rest, moved less than kSleepStill of a step), and whether it stirs its calm
// neighbours: its rest flag flipped, its steering changed, or it ends more than kSleepStir of a
// step from where it last marked them (so a creep adds up; a contact push after this is counted
// on the next tick). An agent that stays about where it was (the tail of a queue waiting, the
// rim of a pile pressing on) leaves them asleep.
SWARMFIELD_ALWAYS_INLINE inline void Swarm::settle_or_stir(const crowd_detail::SwarmTick& t,
                                                           const crowd_detail::KindTick& kt, std::size_t k, Vec2 p0,
                                                           Vec2 p2, std::size_t begin) {
  const Vec2 moved = p2 - p0;
  const float still = crowd_rules::kSleepStill * kt.max_step;
  const std::uint8_t state = asleep_[k];
  const bool calm = (state & 3u) == crowd_detail::kQuiet && perm_resting_[k] != 0 && dot(moved, moved) <= still * still;
  const std::uint32_t count = calm ? std::min<std::uint32_t>(calm_[k] + 1u, 255u) : 0u;
  perm_calm_[k] = static_cast<std::uint8_t>(count);
  if (count + 1u >= t.sleep_ticks) calm_chunks_[begin / t.chunk] = 1;  // may sleep next tick
  if ((state & crowd_detail::kNearCalm) == 0) {
    // No neighbour about to sleep: nobody needs the mark; it moves with the agent, so the one
    // that falls asleep next to it later measures the creep from there.
    perm_mark_x_[k] = p2.x;
    perm_mark_y_[k] = p2.y;
    return;
  }
  const Vec2 from_mark{p2.x - mark_x_[k], p2.y - mark_y_[k]};
  const float reach = crowd_rules::kSleepStir * kt.max_step;
  const bool stirred = !(dot(from_mark, from_mark) <= reach * reach) || bursting_[k] != 0 ||
                       perm_resting_[k] != resting_[k] || perm_signature_[k] != signature_[k];
  if (!stirred) {
    perm_mark_x_[k] = mark_x_[k];
    perm_mark_y_[k] = mark_y_[k];
    return;
  }
  perm_mark_x_[k] = p2.x;
  perm_mark_y_[k] = p2.y;
  const float r2 = t.mixed ? kt.query_r2 : t.pairs[t.only_kind * kMaxAgentKinds + t.only_kind].r2;
  stir_neighbours(t, k, r2);
}

void Swarm::integrate_agents(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end) {
  if (t.mixed) {
    integrate_agents_of_kinds<true>(t, begin, end);
  } else {
    integrate_agents_of_kinds<false>(t, begin, end);
  }
}

template <bool kMixed>
void Swarm::integrate_agents_of_kinds(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end) {
  const GridMap& map = t.map;
  const float cs = t.cs;
  // With one kind, every agent is of it: its constants from a local copy.
  const crowd_detail::KindTick only_kt = t.kinds[t.only_kind];
  for (std::size_t k = begin; k < end; ++k) {
    const std::uint8_t state = asleep_[k];
    const crowd_detail::KindTick& kt = kMixed || (state & crowd_detail::kFarSteps) != 0
                                           ? crowd_detail::step_kind(t, state, t.kind[k])
                                           : only_kt;
    const float max_step = kt.max_step;
    const Vec2 p0{t.sxs[k], t.sys[k]};
    if ((state & 3u) == crowd_detail::kAsleep) {  // (swarm_sleep.cpp) holds, its calm count already written
      next_xs_[k] = p0.x;
      next_ys_[k] = p0.y;
      perm_vxs_[k] = 0.0f;
      perm_vys_[k] = 0.0f;
      continue;
    }
    if ((state & 3u) == crowd_detail::kFarHold) {  // (swarm_far_step.cpp) skips the tick, velocity kept
      next_xs_[k] = p0.x;
      next_ys_[k] = p0.y;
      perm_vxs_[k] = vxs_[k];
      perm_vys_[k] = vys_[k];
      continue;
    }
    Vec2 corr{corr_x_[k], corr_y_[k]};
    Vec2 p2 = p0;
    if (t.has_invalid && !map.walkable(cell_of(p0.x, cs), cell_of(p0.y, cs))) {
      // Only when the map has no walkable cell at all (repair failed): hold.
    } else if (bursting_[k] != 0) {
      p2 = crowd_detail::slide(t, kt, p0, corr * max_step);
    } else {
      const float c_len = length(corr);
      if (c_len > max_step) corr = corr * (max_step / c_len);
      // The correction first, slid along walls: only what it actually moves the agent spends
      // the budget (a crowd pressing an agent into a corner must not freeze it there).
      const Vec2 pc = crowd_detail::slide_known(t, kt, p0, corr, open_here_[k] != 0);
      // The move's budget: as far along the move direction m as keeps the whole step within
      // max_step (|c + m L| <= max_step, c the correction actually made), and at most the free
      // path. A correction across the move costs little speed, one against it the most.
      const Vec2 m{move_x_[k], move_y_[k]};
      const Vec2 c = pc - p0;
      const float cm = dot(c, m);
      const float room = cm * cm - dot(c, c) + max_step * max_step;
      const float reach = room > 0.0f ? std::sqrt(room) - cm : 0.0f;
      // (The flow-field step keeps the plain budget: what the correction left of the step.)
      const float budget = t.nav != nullptr ? std::max(0.0f, std::min(reach, allow_[k]))
                                            : std::min(max_step - std::min(max_step, length(c)), allow_[k]);
      const Vec2 move = m * budget;
      p2 = crowd_detail::round_post(t, kt, pc, crowd_detail::slide(t, kt, pc, move), move, budget);
      // Sliding can turn the two parts so they no longer partly cancel, and the budget is at the
      // limit itself; never exceed the speed limit: then the move of the old rule (what the
      // correction left of the step), and the correction alone if even that goes past. The
      // limit allows for the float rounding of the positions (step_slack: a few ulps at the
      // map's far edge), which a relative tolerance on the step alone does not: at x ~ 300 an
      // ulp is 3e-5 cells, 0.03% of a 0.1-cell step, and every other diagonal move was refused.
      const float limit = kt.max_step + t.step_slack;
      Vec2 d = p2 - p0;
      if (dot(d, d) > limit * limit) {
        const float used = std::min(max_step, length(c));
        const float safe = std::max(0.0f, std::min(max_step - used, allow_[k]));
        const Vec2 short_move = m * safe;
        p2 = crowd_detail::round_post(t, kt, pc, crowd_detail::slide(t, kt, pc, short_move), short_move, safe);
        d = p2 - p0;
        if (dot(d, d) > limit * limit) p2 = pc;
      }
      // Beside a wall, a correction that undoes the move (a neighbour's push off a door post's
      // edge, the move rounding the post straight back to where the agent stood): the move
      // alone, when it gets the agent on. Else an agent pushed by a neighbour beside it waits at
      // the door for ever.
      if (t.nav != nullptr && open_here_[k] == 0 && (corr.x != 0.0f || corr.y != 0.0f) && allow_[k] >= 0.5f * max_step) {
        const Vec2 moved = p2 - p0;
        if (dot(moved, moved) < 0.01f * max_step * max_step) {
          const float alone_budget = std::min(max_step, allow_[k]);
          const Vec2 alone = m * alone_budget;
          const Vec2 q =
              crowd_detail::round_post(t, kt, p0, slide_along_walls(map, p0, alone, kt.radius), alone, alone_budget);
          const Vec2 dq = q - p0;
          if (dot(dq, dq) > 0.25f * max_step * max_step && dot(dq, dq) <= limit * limit) p2 = q;
        }
      }
    }
    next_xs_[k] = p2.x;
    next_ys_[k] = p2.y;
    if (t.sleep_ticks != 0) {
      settle_or_stir(t, kt, k, p0, p2, begin);
    } else {
      perm_calm_[k] = 0;
    }
    // Into the spare buffer (swapped in with the positions): the gather of other chunks reads
    // last tick's velocities (vxs_) while this runs.
    perm_vxs_[k] = (p2.x - p0.x) * kt.inv_dt;
    perm_vys_[k] = (p2.y - p0.y) * kt.inv_dt;
  }
}

void Swarm::turn_headings(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end) {
  const float only_turn = t.kinds[t.only_kind].max_turn;  // with one kind, every agent's
  for (std::size_t k = begin; k < end; ++k) {
    const std::uint8_t state = asleep_[k];
    if ((state & 3u) == crowd_detail::kFarHold) continue;  // skips the tick (swarm_far_step.cpp)
    const float max_turn =
        t.mixed || (state & crowd_detail::kFarSteps) != 0 ? crowd_detail::step_kind(t, state, t.kind[k]).max_turn : only_turn;
    const float hx = steer_x_[k], hy = steer_y_[k];
    if (hx == 0.0f && hy == 0.0f) continue;  // holding: keep the heading
    float& h = headings_[k];
    const float diff = crowd_detail::wrap_angle(crowd_detail::fast_atan2(hy, hx) - h);
    h = crowd_detail::wrap_angle(h + std::clamp(diff, -max_turn, max_turn));
  }
}

template void Swarm::integrate_agents_of_kinds<true>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);
template void Swarm::integrate_agents_of_kinds<false>(const crowd_detail::SwarmTick&, std::size_t, std::size_t);

}  // namespace swarmfield::sim
