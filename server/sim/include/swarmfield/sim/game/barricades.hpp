#pragma once
// Barricades: cells a player builds that block movement, cost the horde the time it needs to
// break them, and get attacked. World keeps them (World::build_barricade); this header holds the
// types and the path-cost rule, which is pure and tested on its own.
//
// Two views of the map: the physical map (World::map()) has a barricade cell blocked (255), so
// agents and players collide with it and shots pass over it only through the path map; the path
// map (World::path_map(), what the fields are built on) has it passable at the attack-through
// cost, so the exact integration field weighs "break through" against "walk round" (as
// Mindustry's Pathfinder.java makes enemy team blocks passable at a cost growing with their
// health; Factorio's biters weigh walls the same way). Agents whose field path leads through a
// barricade press against it, and every agent within its kind's attack range of the cell
// damages it; at 0 it falls and both maps get the cell's cost back.
#include <cstdint>
#include <span>
#include <string_view>

#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim {

/// Barricade tuning (part of CombatParams: barricades exist only with combat on). Health in hit
/// points, lengths in world units.
struct BarricadeParams {
  float health = 300.0f;  ///< a new barricade's hit points, > 0
  /// Farthest a player's centre may be from the centre of the cell it builds on, > 0.
  float build_range = 4.0f;
  /// Barricades a player may have standing at once (0 = no building). A fallen one frees its slot.
  std::uint32_t per_player = 8;
  /// Agents the path cost assumes attack a barricade at once (the time to break it is health /
  /// (attackers x damage per second)), >= 1. More attackers: cheaper to break, fewer detours.
  float attackers = 4.0f;
};

inline constexpr std::uint32_t kMaxBarricadesPerPlayer = 1024;
/// Steps of a barricade's health at which its path cost is recomputed (4: at 100%, 75%, 50%,
/// 25%), so a barricade under attack changes the fields at most 3 times before it falls.
inline constexpr int kBarricadeCostSteps = 4;

/// A standing barricade.
struct Barricade {
  CellCoord cell;
  std::uint32_t owner = 0;      ///< the player that built it (its id)
  float health = 0.0f;          ///< hit points left, > 0
  float full_health = 0.0f;     ///< at build time
  std::uint8_t under_cost = 1;  ///< the cell's cost before it was built (given back when it falls)
  std::uint8_t path_cost = 1;   ///< its cost in the path map now
};

/// Why World::build_barricade refused (or kBuilt).
enum class BuildResult : std::uint8_t {
  kBuilt,
  kNoCombat,      ///< barricades need CombatParams::enabled
  kUnknownPlayer,
  kDeadPlayer,
  kOffMap,
  kOutOfReach,    ///< the cell's centre is farther than build_range from the player's centre
  kNotWalkable,   ///< a wall or already a barricade
  kOccupied,      ///< an agent's or a player's disc overlaps the cell
  kOverBudget,    ///< the player has per_player barricades standing
};

/// A stable lower-case name ("built", "out of reach", ...) for messages and logs.
[[nodiscard]] std::string_view build_result_name(BuildResult r) noexcept;

/// A cell whose barricade state changed during a tick (World::barricade_changes()): built,
/// worn to another health step (kBarricadeCostSteps x 2 reporting steps), or fallen.
struct BarricadeChange {
  CellCoord cell;
  std::uint8_t cost = 0;    ///< the cell's cost in the physical map now (255 while it stands)
  /// Health as a fraction of full in 1..255 (255 whole), 0 when it fell (no barricade).
  std::uint8_t health = 0;
};

/// Damage per second and speed (world units per second) of the horde a barricade's path cost is
/// reckoned against: the spawn-weighted means over `kinds` (all kinds equally when no kind has a
/// spawn weight). Zeros for an empty table.
struct HordeReference {
  float damage = 0.0f;
  float speed = 0.0f;
};
[[nodiscard]] HordeReference horde_reference(std::span<const AgentKind> kinds) noexcept;

/// A barricade's cost in the path map (GridMap cost units: 1 = one cell of open road): the cells
/// the reference agent would walk in the time `attackers` of it need to break `health` hit
/// points: 1 + health / (attackers x ref.damage) x ref.speed / cell_size, rounded, clamped to
/// 2..254 (254 also when the horde does no damage: it can never break through, but a
/// barricade is never a wall to the fields, so a horde boxed in still presses on it).
[[nodiscard]] std::uint8_t barricade_path_cost(float health, float attackers, HordeReference ref,
                                               float cell_size) noexcept;

/// The health a barricade's path cost is reckoned from: `health` rounded up to the next of
/// kBarricadeCostSteps steps of `full` (so the cost changes only at those steps).
[[nodiscard]] float barricade_cost_health(float health, float full) noexcept;

}  // namespace swarmfield::sim
