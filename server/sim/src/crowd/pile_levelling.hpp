#pragma once
// Levelling the pile round a standing goal (crowd/README.md, "Levelling the pile"): the
// steering's walk round the pile (swarm_steering.cpp calls it per agent in sight of a standing
// goal) and the sector of the pile profile an agent is in. Next to the profile itself, which
// swarm_pile_profile.cpp builds. Internal to server/sim/src/crowd.
#include <cstddef>
#include <numbers>

#include "crowd_math.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim::crowd_detail {

/// The pile profile's sector (0 .. kPileSectors - 1) of an agent whose way to its goal is
/// `to_goal` (the goal minus the agent): by the angle of the agent round the goal.
inline std::size_t pile_sector_of(Vec2 to_goal) noexcept {
  constexpr float kPerRadian = static_cast<float>(kPileSectors) / (2.0f * std::numbers::pi_v<float>);
  // fast_atan2: plain float arithmetic (the same sector on any C library), and cheaper.
  const float a = fast_atan2(-to_goal.y, -to_goal.x) + std::numbers::pi_v<float>;  // 0 .. 2 pi
  const auto s = static_cast<std::size_t>(a * kPerRadian);
  return s < kPileSectors ? s : kPileSectors - 1;
}

/// Levelling the pile round a standing goal (see crowd/README.md, "Levelling the pile"). An
/// agent at the pile's rim in its sector -- its outer edge within kLevelRim of its diameter
/// beyond the farthest outer edge at rest there last tick (`profile[sector]`, world units from
/// the goal) and not more than kLevelInside diameters inside it -- walks round the pile, along
/// the tangent tilted kLevelTilt outward, to the side where a sector within kLevelReach (as low
/// as the higher of its two neighbours) holds its rim lower than the agent's edge by more than
/// kLevelGain diameters plus a cell (less kLevelArc of the arc walked to it), while the ground
/// is open out to the agent's distance `dist` in every sector on the way (`room`) and the
/// sector has room for one more beyond its rim; of two sides as good, the one `v` (its last
/// velocity) already walks round. An agent still arriving (its edge up to kLevelFar diameters
/// beyond the profile) bound for a high side turns the same way already, spiralling in (the
/// tangent tilted kLevelFarTilt inward: it closes in at 0.89 of its speed), the gain measured as
/// if it stood at the rim. An agent deeper inside, at rest last tick (`rested`) on wide open
/// ground (the 5 x 5 cells round its open map cell index `cell` walkable), walks round too when
/// its sector is a spike: a neighbouring sector lower than it by a gain (a tongue of resting
/// agents from a gap or a corridor's mouth to the pile).
/// Elsewhere `straight` (the way at the goal). Without it a
/// crowd arriving from one side piles up there: the agents at the rim are held by the agents
/// ahead and no straight move brings them closer, so they rest while the player's back stays
/// empty (1,000 walkers: radius of gyration 1.78x the packed disc's).
/// The kLevel* constants are in swarm_pile_profile.cpp. Positions and distances in world units.
Vec2 level_pile(const SwarmTick& t, const KindTick& kt, const float* profile, const float* room, std::size_t sector,
                Vec2 to_goal, float dist, Vec2 straight, Vec2 v, bool rested, std::size_t cell) noexcept;

}  // namespace swarmfield::sim::crowd_detail
