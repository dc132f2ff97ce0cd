#pragma once
// Enemy kinds: per-kind size, speed, separation and turn rate used by the swarm step, plus the
// name, colour and spawn weight that configs, spawners and viewers use. A swarm holds a table of
// up to kMaxAgentKinds kinds and a kind index (u8) per agent.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace swarmfield::sim {

/// One kind of agent. Lengths in world units, speeds in world units per second, angles in
/// radians.
struct AgentKind {
  std::string name = "walker";     ///< unique in a table; 1..kMaxKindNameBytes bytes
  float radius = 0.35f;            ///< disc radius, kMinKindRadiusCells..kMaxKindRadiusCells cells
  float max_speed = 3.0f;          ///< top speed, > 0
  /// Scales the separation kernel's push (SwarmParams::overlap_stiffness) for agents of this
  /// kind: above 1 they keep more room round them, below 1 they crowd in. 0..10.
  float separation_weight = 1.0f;
  float max_turn_rate = 8.0f;      ///< heading change per second, > 0
  std::uint32_t colour = 0xE04848; ///< 0xRRGGBB, for viewers
  /// Relative share of spawned agents (the spawner picks kinds in proportion; see
  /// pick_agent_kind). >= 0; a kind of weight 0 is never spawned by the spawner.
  float spawn_weight = 1.0f;
  /// Combat (CombatParams::enabled): hit points; a player's shot takes CombatParams::fire_damage
  /// from them and the agent dies at 0. > 0, at most kMaxKindHealth.
  float health = 40.0f;
  /// Hit points per second taken from each player within the kind's attack reach (its disc
  /// within attack_range world units of the player's disc). 0..kMaxKindDamage.
  float damage = 5.0f;
  /// World units between the agent's disc and a player's disc up to which it hurts the player
  /// (0: the discs must touch). 0..kMaxKindAttackRangeCells cells.
  float attack_range = 0.25f;

  friend bool operator==(const AgentKind&, const AgentKind&) = default;
};

inline constexpr std::size_t kMaxAgentKinds = 16;
inline constexpr std::size_t kMaxKindNameBytes = 32;
inline constexpr float kMinKindRadiusCells = 0.2f;
inline constexpr float kMaxKindRadiusCells = 2.0f;
inline constexpr float kMaxKindSpeed = 100.0f;           ///< world units per second
inline constexpr float kMaxKindSeparationWeight = 10.0f;
inline constexpr float kMaxKindTurnRate = 100.0f;        ///< radians per second
inline constexpr float kMaxKindHealth = 1.0e6f;          ///< hit points
inline constexpr float kMaxKindDamage = 1.0e6f;          ///< hit points per second
inline constexpr float kMaxKindAttackRangeCells = 4.0f;  ///< cells

/// The default set: runner (small and fast, r 0.25, 4.5/s, 20 hp, 4 hp/s), walker (the swarm's
/// defaults, r 0.35, 3/s, 40 hp, 5 hp/s) and brute (big and slow, r 0.8, 2/s, 200 hp, 15 hp/s),
/// spawned 3 : 6 : 1; each hurts a player from 0.25 world units off its disc.
[[nodiscard]] std::vector<AgentKind> default_agent_kinds();

/// Checks a kind table for maps with cells of `cell_size` world units: 1..kMaxAgentKinds
/// kinds; names non-empty, at most kMaxKindNameBytes, printable ASCII without ':' or ',' (the
/// tool's --kind NAME:WEIGHT syntax), unique; radius within kMinKindRadiusCells..
/// kMaxKindRadiusCells cells; max_speed in (0, kMaxKindSpeed]; separation_weight in
/// [0, kMaxKindSeparationWeight]; max_turn_rate in (0, kMaxKindTurnRate]; colour <= 0xFFFFFF;
/// spawn_weight finite and >= 0, and some kind's > 0; health in (0, kMaxKindHealth]; damage in
/// [0, kMaxKindDamage]; attack_range within 0..kMaxKindAttackRangeCells cells. Returns "" when valid, else one sentence
/// naming the kind (by index and name) and the field ("kinds[2] 'brute': radius 2.5 is outside
/// 0.2..2 cells").
[[nodiscard]] std::string check_agent_kinds(std::span<const AgentKind> kinds, float cell_size = 1.0f);

/// The kind a spawner gives the next agent, from 64 random bits: kinds are chosen in
/// proportion to spawn_weight. Rule (deterministic on every platform with IEEE doubles): u =
/// (bits >> 11) * 2^-53 is uniform in [0, 1); the cumulative weights are summed in double in
/// table order; the first kind whose cumulative weight exceeds u * total is returned, so a kind
/// of weight 0 never is. A table with no positive weight returns 0.
[[nodiscard]] std::uint8_t pick_agent_kind(std::span<const AgentKind> kinds, std::uint64_t bits) noexcept;

/// Number of kinds of positive spawn weight (a spawner draws a kind only when this is > 1, so a
/// single kind costs no random numbers).
[[nodiscard]] std::size_t spawnable_kind_count(std::span<const AgentKind> kinds) noexcept;

/// Index of the kind named `name`, or -1.
[[nodiscard]] int find_agent_kind(std::span<const AgentKind> kinds, const std::string& name) noexcept;

}  // namespace swarmfield::sim
