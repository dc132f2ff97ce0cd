#pragma once
// The default horde game's combat: agents hurt the players they reach, players shoot agents
// along an aim direction, dead agents leave the swarm, dead players wait and respawn. World
// applies these rules after the swarm step when CombatParams::enabled (see World::finish_tick);
// this header holds the parameters, the events and the shot's target search, which is pure and
// tested on its own.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/game/barricades.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Combat tuning. Lengths in world units, times in seconds, health in hit points. Agents' own
/// numbers (health, damage per second, attack range) are per kind (AgentKind).
struct CombatParams {
  /// Off: no health, no damage, no deaths; contacts are only counted (the world hashes and
  /// behaves exactly as before combat existed).
  bool enabled = false;
  float player_health = 100.0f;  ///< a player's hit points at (re)spawn, > 0
  float respawn_seconds = 3.0f;  ///< a dead player's wait before it respawns at its spawn point, >= 0
  /// A shot: a hitscan cone from the player's centre along its aim, reaching fire_range past the
  /// player's centre (to the near edge of an agent's disc), fire_cone radians either side of the
  /// aim; it hits the nearest max_hits_per_shot agents in the cone that the player can see (the
  /// segment between the centres crosses no blocked cell), each losing fire_damage.
  float fire_range = 10.0f;
  float fire_cone = 0.26f;  ///< half-angle, radians (0.26 ~ 15 degrees), in [0, pi/2]
  float fire_damage = 20.0f;
  float fire_interval = 0.25f;  ///< seconds between two shots of one player (the trigger may be held), > 0
  std::uint32_t max_hits_per_shot = 3;  ///< 1..kMaxHitsPerShot
  /// Building (World::build_barricade) and the barricades' health and path cost.
  BarricadeParams barricade;
};

inline constexpr std::uint32_t kMaxHitsPerShot = 64;
/// Candidates a shot tests for line of sight at most (a crowd pressed behind a wall cannot make
/// one shot walk thousands of segments); past them the shot hits no more.
inline constexpr std::size_t kMaxSightChecksPerShot = 256;
inline constexpr float kMaxFireRange = 256.0f;  ///< world units
inline constexpr float kMaxCombatValue = 1.0e6f;  ///< health, damage, seconds

/// "" when usable, else one sentence naming the field and its range ("combat.fire_range 0
/// must be in (0, 256]"). Checks every field of `p`, enabled or not.
[[nodiscard]] std::string check_combat_params(const CombatParams& p);

/// An agent killed this tick (World::agent_deaths()).
struct AgentDeath {
  std::uint32_t agent_id = 0;
  std::uint32_t killer_id = 0;  ///< the player whose shot killed it
  std::uint8_t kind = 0;
  Vec2 position;  ///< where it died, world units
};

/// A player killed this tick (World::player_deaths()).
struct PlayerDeath {
  std::uint32_t player_id = 0;
  Vec2 position;  ///< where it died, world units
};

/// The agents a shot hits. `origin` is the shooter's centre, `aim` its direction (any length >
/// 0; a zero or non-finite aim hits nothing), the agents are given as parallel arrays (x, y in
/// world units, kind indices into `kinds`, ids). An agent is a candidate when the near edge of
/// its disc is within p.fire_range of `origin` and its centre lies within p.fire_cone of the aim,
/// or its disc crosses the aim ray in front of the shooter (an agent pressed against the muzzle
/// is hit though its centre may be off the cone). Candidates are taken nearest first (distance
/// between centres, ties by id) while the segment from `origin` to the candidate's centre crosses
/// no blocked cell of `map` (segment_clear), until p.max_hits_per_shot are taken or
/// kMaxSightChecksPerShot candidates were tested. Writes their
/// indices (nearest first) to `hits` (cleared first). `skip` (optional, one byte per agent):
/// agents whose byte is non-zero are not there (killed earlier in the same tick; they neither
/// take nor block a hit). `scratch` is reused between calls. Cost: one pass over the agents
/// (blocks rejected on distance alone) plus a partial sort of the candidates (the nearest
/// kMaxSightChecksPerShot).
struct ShotCandidate {
  float distance2 = 0.0f;
  std::uint32_t id = 0;
  std::uint32_t index = 0;
};
void pick_shot_targets(const GridMap& map, Vec2 origin, Vec2 aim, const CombatParams& p, std::span<const float> xs,
                       std::span<const float> ys, std::span<const std::uint8_t> agent_kinds,
                       std::span<const AgentKind> kinds, std::span<const std::uint32_t> ids,
                       std::vector<ShotCandidate>& scratch, std::vector<std::uint32_t>& hits,
                       std::span<const std::uint8_t> skip = {});

/// True when the segment from `a` to `b` (world units) crosses only walkable cells of `map`
/// (both ends included; a point outside the map is blocked). Walks the cells the segment
/// touches in order (Amanatides & Woo, "A Fast Voxel Traversal Algorithm for Ray Tracing",
/// 1987): O(cells crossed).
[[nodiscard]] bool segment_clear(const GridMap& map, Vec2 a, Vec2 b) noexcept;

}  // namespace swarmfield::sim
