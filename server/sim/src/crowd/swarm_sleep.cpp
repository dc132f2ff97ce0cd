// Sleep (SwarmParams::sleep_after_ticks): agents of a settled crowd stop being simulated until
// something near them changes, as physics engines put resting bodies to sleep (Catto, Box2D:
// islands of touching bodies at rest sleep; a body that moves wakes those it touches).
//
// An agent sleeps on a tick when, for sleep_after_ticks ticks in a row before it, it was at
// rest (SwarmParams::rest_below), moved less than kSleepStill of its step, its steering's
// signature (steering_signature: direction, path, right of way, goal room) was the same as the
// tick before, and no neighbour marked it. A sleeping agent's steering still runs (the
// signature needs it; it is a fraction of the cost in a packed crowd), but its neighbour gather,
// side steps, move and contact pass do not: it holds where it is, at rest, velocity zero.
// Marks: an agent that moves, leaves rest or is pushed past kSleepStill marks every neighbour
// within its query radius (the largest pair R of its kind: every agent whose gather could see
// it, as pair radii are symmetric) that could sleep on the next tick; the mark is read on the
// next tick (a second buffer, so no agent reads a mark of its own tick), which wakes it and
// starts its count again. A removed agent marks the agents within the hash's cell size of where
// it stood (its neighbours may have rested against it). A change of the map, the obstacles,
// the kinds present or a position set by hand wakes every agent.
// Everything an awake neighbour reads of a sleeper (position, rest flag, zero velocity, its
// steering outputs) is what it would read of the same agent awake and still, so a crowd of
// sleepers and awake agents moves as it would with all awake, except that a sleeper answers an
// agent that came within its radius during a tick one tick later (it is marked on the tick after,
// from the positions the tick starts with).
#include <algorithm>
#include <atomic>
#include <bit>

#include "crowd_rules.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::sim {

void Swarm::prepare_sleep(crowd_detail::SwarmTick& t, bool environment_changed) {
  // The World's step only (crowd rules, NavigationSet): the bare flow-field step keeps its rules.
  t.sleep_ticks = t.nav != nullptr ? params_.sleep_after_ticks : 0;
  t.sleep_hold = t.sleep_ticks != 0 && !wake_all_ && !environment_changed;
  t.calm_ready = t.sleep_hold && calm_ready_;
  wake_all_ = false;
  if (!t.sleep_hold) removed_points_.clear();  // every agent wakes anyway
}

void Swarm::mark_removed_neighbours(const crowd_detail::SwarmTick& t) {
  if (removed_points_.empty()) return;
  if (t.sleep_hold) {
    // The hash holds this tick's start positions by slot, and wake_ last tick's marks by slot.
    const float reach = hash_.cell_size();
    const float reach2 = reach * reach;
    for (const Vec2 p : removed_points_) {
      hash_.for_each_range_within(p, reach, [&](std::uint32_t first, std::uint32_t last) {
        for (std::uint32_t m = first; m < last; ++m) {
          const float dx = t.sxs[m] - p.x, dy = t.sys[m] - p.y;
          if (dx * dx + dy * dy < reach2) wake_[m] = 1;
        }
      });
    }
  }
  removed_points_.clear();
}

std::uint32_t Swarm::steering_signature(std::size_t k) const noexcept {
  // What the agent's own rules read of its steering; any change of a bit changes the hash
  // (almost surely: a 32-bit mix, a collision only delays a wake-up by the ticks it lasts).
  auto mix = [](std::uint64_t h, std::uint32_t v) noexcept {
    h ^= v;
    h *= 0x100000001B3ull;
    return h ^ (h >> 29);
  };
  std::uint64_t h = 0xCBF29CE484222325ull;
  h = mix(h, std::bit_cast<std::uint32_t>(steer_x_[k]));
  h = mix(h, std::bit_cast<std::uint32_t>(steer_y_[k]));
  h = mix(h, std::bit_cast<std::uint32_t>(path_x_[k]));
  h = mix(h, std::bit_cast<std::uint32_t>(path_y_[k]));
  h = mix(h, prio_[k]);
  h = mix(h, std::bit_cast<std::uint32_t>(goal_room_[k]));
  h = mix(h, static_cast<std::uint32_t>(goal_moves_[k]) | (static_cast<std::uint32_t>(pile_level_[k]) << 8) |
                 (static_cast<std::uint32_t>(open_here_[k]) << 16));
  return static_cast<std::uint32_t>(h ^ (h >> 32));
}

void Swarm::hold_asleep(std::size_t k, std::uint32_t signature) noexcept {
  // What the gather writes for an agent that rests where it is without a move: rest, no move
  // allowance, no correction, no contacts; its calm count goes on and its mark stays.
  asleep_[k] = crowd_detail::kAsleep;
  perm_calm_[k] = static_cast<std::uint8_t>(std::min<std::uint32_t>(calm_[k] + 1u, 255u));
  perm_signature_[k] = signature;
  perm_resting_[k] = 1;
  wait_[k] = 0;
  hold_in_place(k);
}

void Swarm::hold_in_place(std::size_t k) noexcept {
  allow_[k] = 0.0f;
  move_x_[k] = steer_x_[k];
  move_y_[k] = steer_y_[k];
  corr_x_[k] = 0.0f;
  corr_y_[k] = 0.0f;
  bursting_[k] = 0;
  contact_count_[k] = 0;
  perm_mark_x_[k] = mark_x_[k];
  perm_mark_y_[k] = mark_y_[k];
}

bool Swarm::has_calm_neighbour(const crowd_detail::SwarmTick& t, const std::uint32_t* slots, std::uint32_t count,
                               bool complete) const noexcept {
  if (!complete) return true;  // more neighbours than the gather kept: stir_neighbours looks
  const std::uint32_t ready = t.sleep_ticks - 1;  // could sleep on the next tick
  std::uint32_t any = 0;
  for (std::uint32_t i = 0; i < count; ++i) any |= calm_[slots[i]] >= ready ? 1u : 0u;
  return any != 0;
}

void Swarm::stir_neighbours(const crowd_detail::SwarmTick& t, std::size_t k, float r2) {
  // The gather's neighbours again (start positions, the same radius), from the hash: only for an
  // agent that stirred with a calm neighbour, a few at the edge of a settled crowd.
  const std::uint32_t ready = t.sleep_ticks - 1;
  const float px = t.sxs[k], py = t.sys[k];
  hash_.for_each_range_within({px, py}, std::sqrt(r2), [&](std::uint32_t first, std::uint32_t last) {
    for (std::uint32_t m = first; m < last; ++m) {
      const float dx = t.sxs[m] - px, dy = t.sys[m] - py;
      if (m != k && dx * dx + dy * dy < r2 && calm_[m] >= ready) {
        std::atomic_ref<std::uint8_t>(perm_wake_[m]).store(1, std::memory_order_relaxed);
      }
    }
  });
}

void Swarm::count_sleepers(const crowd_detail::SwarmTick& t) {
  // From the chunks' counts and flags (the gather and the integration set them).
  std::size_t asleep = 0;
  for (const std::uint32_t c : sleep_chunks_) asleep += c;
  sleeping_count_ = t.sleep_hold ? asleep : 0;
  // Whether marks matter on the next step: without an agent one tick short of sleeping, no agent
  // looks for calm neighbours.
  calm_ready_ = t.sleep_ticks != 0 &&
                std::find(calm_chunks_.begin(), calm_chunks_.end(), std::uint8_t{1}) != calm_chunks_.end();
}

}  // namespace swarmfield::sim
