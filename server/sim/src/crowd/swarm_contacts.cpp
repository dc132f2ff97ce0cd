// The contact projection of the swarm step (see Swarm::step), after the move: kContactPasses
// (two) Jacobi passes of position-based dynamics' non-overlap constraint (Mueller et al. 2007, "Position Based
// Dynamics"; the same pass as Macklin and Mueller 2013's unilateral contacts between particles).
// The gather's free path and contact term keep discs apart only as far as last tick's positions
// tell: two agents that move into each other in the same tick (a runner overtaking into a
// walker that turns, a brute pushing a runner off a stream), or a correction that pushes an
// agent sideways into a third, leave overlaps of up to a step (0.15 cells for a runner: 60% of
// its radius). Here each agent, from this tick's new positions, moves itself away from every
// neighbour it overlaps past a tolerance by its share of the excess (the neighbour's own pass
// moves it the rest), within its speed limit and slid along walls. Each pass reads the positions
// before it and writes a second buffer, so an agent's result depends only on the move phase's
// output: the same for any thread count. The neighbours come from the gather's
// contact list (Swarm::contacts_), else from the hash.
#include <algorithm>
#include <cmath>

#include "crowd_rules.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/worker_pool.hpp"

namespace swarmfield::sim {

using namespace crowd_rules;  // NOLINT: the rules' constants

using crowd_detail::kWideOpen;

namespace {
// How many slots ahead project_contacts_of fetches a contact list.
constexpr std::size_t kListPrefetch = 16;
}  // namespace

void Swarm::project_contacts(const crowd_detail::SwarmTick& t, WorkerPool* pool) {
  // The World's step only (crowd rules): the bare flow-field step keeps its plain rules.
  if (t.nav == nullptr || t.n == 0) return;
  // Agents near walls take part only for a larger kind going through another route's crowd
  // (kOtherRouteBit, set by this tick's gather): with none, they are skipped whole.
  const bool any_shoving =
      std::find(shove_chunks_.begin(), shove_chunks_.end(), std::uint8_t{1}) != shove_chunks_.end();
  for (int pass = 0; pass < kContactPasses; ++pass) {
    parallel_for(pool, t.n, t.chunk,
                 [&](std::size_t begin, std::size_t end, std::size_t) {
                   project_contacts_of(t, begin, end, any_shoving, pass);
                 });
    // The projected positions become this tick's (project_contacts_of wrote every slot).
    next_xs_.swap(corr_x_);
    next_ys_.swap(corr_y_);
    contact_moved_.swap(contact_moved_last_);
  }
}

void Swarm::project_contacts_of(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end, bool any_shoving,
                                int pass) {
  const float r_max = t.contact_r_max, step_max = t.contact_step_max;  // over the kinds present
  const float* const nx = next_xs_.data();
  const float* const ny = next_ys_.data();
  const float hash_reach = hash_.cell_size();
  std::uint8_t* const moved_now = contact_moved_.data();
  const std::uint8_t* const moved_last = contact_moved_last_.data();
  const bool first_pass = pass == 0;
  const std::uint32_t* const lists = contacts_.data();
  for (std::size_t k = begin; k < end; ++k) {
    // The lists are read in slot order but sparsely (most slots skip): fetched ahead.
    if (k + kListPrefetch < end) __builtin_prefetch(lists + (k + kListPrefetch) * crowd_detail::kContactSlots);
    const Vec2 p{nx[k], ny[k]};
    corr_x_[k] = p.x;
    corr_y_[k] = p.y;
    moved_now[k] = 0;
    // A stack bursting out along its pattern keeps the pattern (burst_pattern.hpp). An agent
    // with no way to a goal (prio_ unreachable: a brute in a room whose doors it cannot fit)
    // holds where it is, and the others squeeze past it as before: a brute parked in a door's
    // mouth would otherwise cork the door. Within two cells of a wall (door mouths, posts,
    // corridors, dead ends: both agents of a pair must have the 5 x 5 cells round theirs
    // walkable) the gather's rules stand alone: a jam in a doorway clears by pressing, and
    // projected apart the arch held (a 1-cell door passed a quarter fewer, an agent stayed
    // pinned on a post for 300 ticks, a queue in a dead end kept stirring).
    // An agent at rest this tick stays where it is: a neighbour that moved into it takes the
    // whole excess (an arrival does not shove the pile), and the pile costs nothing here.
    // Near walls, with several kinds, only the pairs of a larger kind going through a smaller
    // one's crowd on another route (drop_bulldozed) are projected (`across` below).
    const bool wide = (open_here_[k] & kWideOpen) != 0;
    if (bursting_[k] != 0 || prio_[k] == kUnreachable || perm_resting_[k] != 0 || (!wide && !any_shoving)) continue;
    // A far agent skipping this tick (swarm_far_step.cpp) holds; its neighbours take the excess.
    const std::uint8_t state = asleep_[k];
    if ((state & 3u) == crowd_detail::kFarHold) continue;
    const bool shoving = (commit_[k] & kOtherRouteBit) != 0;
    // The gather kept every neighbour that may touch the agent now (SwarmTick::kind_contact_r2):
    // none, nothing to do (most of a crowd streaming through a city).
    const std::uint32_t listed = contact_count_[k];
    const bool from_list = t.contacts_complete && listed <= crowd_detail::kContactSlots;
    if (from_list && listed == 0) continue;
    const std::uint32_t* list = lists + k * crowd_detail::kContactSlots;
    if (from_list && !first_pass && moved_last[k] == 0) {
      // Neither the agent nor a listed neighbour moved in the pass before: the same inputs, the
      // same result (no move). Most agents with neighbours near (31k of 52k stepping in a 100k
      // street horde) have none that overlaps (~1k moved).
      std::uint8_t any = 0;
      for (std::uint32_t i = 0; i < listed; ++i) any |= moved_last[list[i]];
      if (any == 0) continue;
    }
    const std::uint8_t kind = t.kind[k];
    const crowd_detail::KindTick& kt = crowd_detail::step_kind(t, state, kind);
    const float r = 0.5f * kt.contact_d;
    const Vec2 p0{t.sxs[k], t.sys[k]};
    // No pair of kinds touches beyond this (the new positions tested first: most candidates of
    // the hash block are farther).
    const float touch2 = (r + r_max) * (r + r_max);
    const crowd_detail::PairTick* row = t.pairs + kind * kMaxAgentKinds;
    const float room = std::max(0.0f, kt.max_step - length(p - p0));  // of its step, still to move
    Vec2 push{};
    // One neighbour slot m: its share of the pair's excess into push.
    const auto project_from = [&](std::uint32_t m) SWARMFIELD_ALWAYS_INLINE {
      const float dx = p.x - nx[m], dy = p.y - ny[m];
      const float d2 = dx * dx + dy * dy;
      // A neighbour with no way to any goal takes no part, unless it shoves (a larger kind making
      // way through smaller ones: see Swarm::gather_neighbours_of_kinds).
      if (!(d2 < touch2) || m == k || (prio_[m] == kUnreachable && (commit_[m] & kOtherRouteBit) == 0)) return;
      const std::uint8_t other = t.kind[m];
      const float cd = row[other].cd;
      const float tolerance = kContactTolerance * std::min(r, 0.5f * t.kinds[other].contact_d);
      const float limit = cd - tolerance;
      if (!(d2 < limit * limit) || d2 < kCoincidentProjection) return;  // clear, or no direction
      // A larger kind going through another route's crowd (this tick's gather: kOtherRouteBit,
      // drop_bulldozed) and a smaller one on that route: the smaller takes the whole excess, the
      // larger none, near walls too.
      const bool across = any_shoving && t.pairs[other * kMaxAgentKinds + kind].larger != 0 &&
                          (commit_[m] & kOtherRouteBit) != 0 && prio_[k] + kShoveRouteGap < prio_[m];
      const bool shoved = shoving && row[other].larger != 0 && prio_[m] + kShoveRouteGap < prio_[k];
      if (shoved) return;
      if (!across && (!wide || (open_here_[m] & kWideOpen) == 0)) return;
      // The pair's excess is shared by what each may still move this tick, each taking at
      // least half: an agent that spent its whole step leaves the rest to the other, but the
      // other may be held by a wall, so it still takes its half off its own move.
      const float moved_m = std::sqrt((nx[m] - t.sxs[m]) * (nx[m] - t.sxs[m]) + (ny[m] - t.sys[m]) * (ny[m] - t.sys[m]));
      // (A far agent skipping this tick, swarm_far_step.cpp, holds as one at rest does.)
      const std::uint8_t state_m = asleep_[m];
      const float room_m = std::max(0.0f, crowd_detail::step_kind(t, state_m, other).max_step - moved_m);
      const float rooms = room + room_m;
      const bool holds_m = perm_resting_[m] != 0 || (state_m & 3u) == crowd_detail::kFarHold;
      const float share = (holds_m || across) ? 1.0f : (rooms > 0.0f ? std::max(0.5f, room / rooms) : 0.5f);
      const float d = std::sqrt(d2);
      const float s = share * (limit - d) / d;
      if (across) {
        // Out of the larger one's way to the side, never ahead of it: pushed along the line of
        // centres, an agent it meets head-on was carried before it like snow before a plough
        // (gap wall, 2-cell opening, 600 mixed: walkers on their way north to the gap pushed
        // back south into the brutes' queue for the opening, up to 12 of them never out).
        const float mx = nx[m] - t.sxs[m], my = ny[m] - t.sys[m];
        const float mlen = std::sqrt(mx * mx + my * my);
        if (mlen > 1e-6f) {
          const float ux = mx / mlen, uy = my / mlen;
          const float ahead = dx * ux + dy * uy;  // (dx, dy): from m to the agent
          if (ahead > 0.0f) {
            // The side the agent is on (dead ahead: the left of m's way), by the excess.
            const float side = dx * uy - dy * ux;  // > 0: right of m's way
            const float sx = side >= 0.0f ? uy : -uy, sy = side >= 0.0f ? -ux : ux;
            const float excess = share * (limit - d);
            push.x += sx * excess;
            push.y += sy * excess;
            return;
          }
        }
      }
      push.x += dx * s;
      push.y += dy * s;
    };
    if (from_list) {
      for (std::uint32_t i = 0; i < listed; ++i) project_from(list[i]);
    } else {
      // Any neighbour that overlaps the agent now was within this of it at the start of the
      // tick (each moved at most its step); the hash holds start positions by slot.
      const float reach = std::min(r + r_max + kt.max_step + step_max, hash_reach);
      hash_.for_each_range_within(p0, reach, [&](std::uint32_t first, std::uint32_t last) {
        for (std::uint32_t m = first; m < last; ++m) project_from(m);
      });
    }
    if (push.x == 0.0f && push.y == 0.0f) continue;
    // The displacement of the whole tick: the move plus the push, except for an agent chasing a
    // goal on the move, which deflects rather than brakes. That one makes the push's progress
    // along its direction u (a.u + |push|) and keeps its speed with what is left across u, on
    // the side it was already moving to (at rest: the push itself). Braking a chasing agent that
    // ran into a neighbour costs the crowd its speed (600 mixed chasing a walking player: 1-2
    // points fewer agent-samples at speed); round a standing goal, deflected agents keep a pile
    // or a street crowd stirring (jitter 173 -> 609 at the junction). Then within the speed
    // limit: shortened to max_step in its direction.
    const Vec2 a = p - p0;
    const float step_limit = kt.max_step + t.step_slack;
    Vec2 total = a + push;
    if (goal_moves_[k] != 0) {
      const float push_len = length(push);
      const Vec2 u = push * (1.0f / push_len);
      const float along = dot(a, u) + push_len;
      const Vec2 across = a - u * dot(a, u);
      const float across_len = length(across);
      const float keep2 = dot(a, a) - along * along;
      total = u * along;
      if (across_len > 0.0f && keep2 > 0.0f) total = total + across * (std::sqrt(keep2) / across_len);
    }
    const float total2 = dot(total, total);
    if (total2 > kt.max_step * kt.max_step) total = total * (kt.max_step / std::sqrt(total2));
    const Vec2 q = crowd_detail::slide(t, kt, p, total - a);
    const Vec2 moved = q - p0;
    if (dot(moved, moved) > step_limit * step_limit) continue;  // sliding turned it past the limit
    corr_x_[k] = q.x;
    corr_y_[k] = q.y;
    moved_now[k] = 1;
    perm_vxs_[k] = moved.x * t.inv_dt;
    perm_vys_[k] = moved.y * t.inv_dt;
  }
}

}  // namespace swarmfield::sim
