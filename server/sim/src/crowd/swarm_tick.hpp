#pragma once
// What every phase of one Swarm::step reads: the map and fields, the tick's constants, and the
// agents' positions in hash-slot order. Built once per step by Swarm::step_impl (swarm.cpp) and
// passed to the phase units (swarm_steering.cpp, swarm_separation.cpp, swarm_motion.cpp).
// Internal to server/sim/src/crowd.
#include <cstddef>
#include <cstdint>

#include "crowd_math.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/crowd/wall_collision.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/field/congestion_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim::crowd_detail {

// How many agents ahead the phases prefetch map, field and hash cells.
inline constexpr std::size_t kPrefetchAgents = 8;
// Sectors of the pile profile round a standing goal (Swarm::pile_profile_).
inline constexpr std::size_t kPileSectors = 32;
// Per agent, the gather keeps up to this many neighbours that may touch it after the move
// (Swarm::contacts_, for the contact projection); an agent with more is projected through the
// hash instead.
inline constexpr std::uint32_t kContactSlots = 12;
// World units added to the reach of that list (float rounding of the positions and steps).
inline constexpr float kContactMargin = 1e-3f;
// Swarm::asleep_ per slot (swarm_sleep.cpp): the low two bits 1 asleep, 2 calm so far this tick
// (integrate_agents decides); kNearCalm: a neighbour within its query radius could sleep on the
// next tick.
inline constexpr std::uint8_t kAsleep = 1;
inline constexpr std::uint8_t kQuiet = 2;
inline constexpr std::uint8_t kNearCalm = 4;
// Far stepping (SwarmParams::far_step_cells), in Swarm::asleep_ too: the low two bits 3, a far
// agent holding this tick (far_holds); kFarStep: a far agent stepping this tick with
// SwarmTick::far_kinds (level 1: twice the time step), kFarStep2 with far_kinds2 (level 2: four
// times); kFarSteps: either.
inline constexpr std::uint8_t kFarHold = 3;
inline constexpr std::uint8_t kFarStep = 8;
inline constexpr std::uint8_t kFarStep2 = 16;
inline constexpr std::uint8_t kFarSteps = kFarStep | kFarStep2;
// Swarm::FarState::shown of an agent shown at its position (Swarm::shown_positions).
inline constexpr std::uint8_t kShowTrue = 0xFF;
// Swarm::signature_ of an agent whose steering signature was not needed this tick.
inline constexpr std::uint32_t kNoSignature = 0;

/// One kind's constants for this tick.
struct KindTick {
  float radius = 0.0f;    // wall collision radius (wall_collision_radius)
  float max_step = 0.0f;  // max_speed * dt
  float dt = 0.0f;        // seconds this step covers (2 or 4 x SwarmTick::dt in far_kinds, far_kinds2)
  float inv_dt = 0.0f;    // 1 / dt
  std::uint32_t ticks = 1;  // ticks this step covers (2 in far_kinds, 4 in far_kinds2)
  float contact_d = 0.0f;  // its own diameter (a stack of its kind bursts to this spacing)
  float sep_r = 0.0f, inv_sep_r = 0.0f;  // its separation radius R (obstacle kernel)
  float query_r2 = 0.0f;   // squared largest pair R over the kinds present (neighbour query)
  float stiffness = 0.0f;  // overlap_stiffness * separation_weight
  float contact_stiffness = 0.0f;  // SwarmParams::contact_stiffness (far_kinds: the same over its ticks)
  float commit_speed = 0.0f;  // route commitment above this speed
  float max_turn = 0.0f;      // radians per tick
  int size_class = 1;         // its NavigationSet class (size_class_of_radius)
  float stop_distance = 0.0f; // radius + SwarmParams::goal_radius: where it stops short of a goal
  // The fast path of wall sliding is valid while a move cannot reach past the 3x3 block.
  bool small_moves = false;
};

/// The separation constants of a pair of kinds: kernel radius R = the mean of the two kinds'
/// R (squared and inverted), contact distance = the sum of the radii, and the press distance.
struct PairTick {
  float r2 = 0.0f, inv_r = 0.0f, cd = 0.0f, pd = 0.0f;
  std::uint32_t faster = 0;  // 1: the second kind's top speed is above the first's
  std::uint32_t larger = 0;  // 1: the first kind's size class is above the second's (kShoveCross)
  std::uint32_t both_large = 0;  // 1: both kinds' size classes are above 1 (goes_first)
  // The contact projection's list (SwarmTick::kind_contact_r2) for this pair alone: the squared
  // distance at the start of the tick within which the second may overlap the first past the
  // tolerance after the move (0 when the lists are not kept).
  float contact_r2 = 0.0f;
};

struct SwarmTick {
  const GridMap& map;
  const FlowField& flow;
  const IntegrationField* integration;  // null: cannot tell unreachable cells from goals
  const NavigationSet* nav = nullptr;   // per size class any-angle navigation (else flow/integration)
  const CongestionFields* congestion = nullptr;  // crowd density in the path cost (with nav only)
  // By goal index (with nav only): where a goal on the move is going (pursuit), speed 0 for a
  // standing goal (Swarm::goal_leads_, filled by prepare_tick).
  std::span<const GoalLead> goal_leads = {};
  bool any_goal_moving = false;  // some goal of goal_leads is on the move
  // Last tick's pile profile (Swarm::pile_profile_): kPileSectors floats per goal index below
  // pile_goals; null when none was built.
  const float* pile_profile = nullptr;
  const float* pile_room = nullptr;  // per goal and sector: clear distance to a wall (Swarm::pile_room_)
  std::size_t pile_goals = 0;
  // Class 1's far bits (build_far_bits, lattice_sampler.hpp), or null when not built this step.
  const std::uint64_t* far_bits = nullptr;
  std::size_t n = 0;                    // agents
  std::size_t chunk = 1;                // agents per chunk of the parallel phases

  // Map geometry.
  float cs = 1.0f;  // cell size
  std::int32_t map_w = 0, map_h = 0;
  float map_wf = 0.0f, map_hf = 0.0f;  // map_w, map_h as floats
  float inv_cs = 1.0f;                 // for prefetch hints only
  // Unit cells (the usual case): for 0 <= v < W, cell_of(v) is truncation, so the open-cell test
  // needs only float compares (same answer as cell_of plus bounds checks, NaN included).
  bool unit_cells = false;
  // Per map cell, one bit (cell index i: word i / 64, bit i % 64): set when the cell and its 8
  // neighbours are walkable (Swarm::open_cells_; open_at()).
  const std::uint64_t* open = nullptr;

  // Agent constants (world units, seconds), per kind and per pair of kinds (pair index
  // a * kMaxAgentKinds + b); filled for the kinds that have agents.
  float dt = 0.0f, inv_dt = 0.0f;
  KindTick kinds[kMaxAgentKinds] = {};
  // Far stepping (SwarmParams::far_step_cells): far_prio, the priority (field units) from which
  // an agent is far (level 1; 0: far stepping off, whole-map fields with the crowd rules only),
  // far_prio2 from which it is at level 2 (twice as far); far_step: far agents skip ticks this
  // step (some agent was far last step); far_tick: the step count, which picks the agents that
  // step (far_holds); far_kinds, far_kinds2: the kinds' constants for a step of 2 dt, 4 dt.
  std::uint32_t far_prio = 0, far_prio2 = 0;
  bool far_step = false;
  std::uint32_t far_tick = 0;
  KindTick far_kinds[kMaxAgentKinds] = {};
  KindTick far_kinds2[kMaxAgentKinds] = {};
  PairTick pairs[kMaxAgentKinds * kMaxAgentKinds] = {};
  // The pairs as a far-stepping agent (the first kind) sees them: r2 at least (cd + its far
  // step)^2, the step of its kind's highest level (level 2's when far_prio2 is set, for level-1
  // steps too), so its free path sees every neighbour its step can reach (beyond R the kernel
  // is 0); the rest as in pairs. Filled when far stepping runs this tick (far_step).
  PairTick far_pairs[kMaxAgentKinds * kMaxAgentKinds] = {};
  // More than one kind has agents: the neighbour gather looks up each pair's constants;
  // otherwise every agent is of kind `only_kind` and the gather uses its pair as constants.
  bool mixed = false;
  std::uint8_t only_kind = 0;
  float max_force = 0.0f;  // obstacle force clamp
  bool have_obstacles = false;
  bool yield = false;
  float yield_fraction = 1.0f;
  float rest_below = 0.0f, wake_above = 0.0f;  // SwarmParams', fractions of max_step
  // slide_round_corner() returns its p1 unchanged when neither axis lost more than this.
  float corner_eps = 0.0f;
  // Float rounding allowance of a step's length (world units): grows with the map extent.
  float step_slack = 0.0f;
  bool has_invalid = false;  // repair found no walkable cell for some agent
  // The contact projection (swarm_contacts.cpp): the largest step and radius over the kinds
  // present; per kind, the squared distance at the start of the tick within which a neighbour
  // may overlap an agent of it past the tolerance after the move (the gather keeps those in
  // Swarm::contacts_); contacts_complete: that distance is within the hash cell for every kind
  // present, so the gather's 3 x 3 block holds them all (else 0, and the projection queries
  // the hash itself).
  float contact_step_max = 0.0f, contact_r_max = 0.0f;
  float kind_contact_r2[kMaxAgentKinds] = {};
  bool contacts_complete = false;
  // Sleep (SwarmParams::sleep_after_ticks; the World's step only): calm ticks after which an
  // agent sleeps (0: off, no calm is counted); sleep_hold false: none sleeps this tick and every
  // calm count starts again (the map, the kinds or a position changed).
  std::uint32_t sleep_ticks = 0;
  bool sleep_hold = false;
  bool calm_ready = false;  // some agent may sleep next tick (its calm count one short): marks matter

  // The agents' kinds and positions at the start of the tick, in hash-slot order.
  const std::uint8_t* kind = nullptr;
  const std::uint32_t* items = nullptr;  // slot -> index before the reorder
  const float* sxs = nullptr;
  const float* sys = nullptr;
};

/// Far stepping: a far agent of level L (1 or 2) steps on the ticks where its id plus the step
/// count is a multiple of 2^L (swarm_far_step.cpp): the ids spread the steps evenly, and a
/// level-2 agent's ticks are among its level-1 ticks, so a change of level keeps its rhythm.
/// The ticks since such a tick (0 on one; for an agent that holds, the ticks since its last step).
[[nodiscard]] inline std::uint8_t far_lead(const SwarmTick& t, std::uint32_t id, std::uint8_t level) noexcept {
  return static_cast<std::uint8_t>((id + t.far_tick) & ((1u << level) - 1u));
}

/// Whether a far agent with this id and far level holds on this tick (once some agent was far).
[[nodiscard]] inline bool far_holds(const SwarmTick& t, std::uint32_t id, std::uint8_t level) noexcept {
  return t.far_step && far_lead(t, id, level) != 0;
}

/// The far level (1 or 2) of a far agent with priority `prio` (at least SwarmTick::far_prio).
[[nodiscard]] inline std::uint8_t far_level(const SwarmTick& t, std::uint32_t prio) noexcept {
  return t.far_prio2 != 0 && prio >= t.far_prio2 ? 2 : 1;
}

/// The constants of an agent's step this tick from its Swarm::asleep_ state: far_kinds or
/// far_kinds2 when it steps far (kFarStep, kFarStep2), else its kind's.
[[nodiscard]] inline const KindTick& step_kind(const SwarmTick& t, std::uint8_t state, std::uint8_t kind) noexcept {
  return (state & kFarStep2) != 0 ? t.far_kinds2[kind] : (state & kFarStep) != 0 ? t.far_kinds[kind] : t.kinds[kind];
}

/// Swarm::open_here_'s bit for the 5 x 5 cells round the agent all walkable (set in steer_agents;
/// bit 0 is the 3 x 3 cells' SwarmTick::open).
constexpr std::uint8_t kWideOpen = 2;

/// The open bit of map cell index `i` (see SwarmTick::open).
inline bool open_at(const std::uint64_t* open, std::size_t i) noexcept { return ((open[i >> 6] >> (i & 63)) & 1u) != 0; }

/// Wide open ground at open map cell index `i` of a map `row` cells wide: the 5 x 5 cells round
/// it all walkable (its 8 neighbours open too). The caller knows open_at(open, i), so the
/// neighbours are map cells.
inline bool wide_open_at(const std::uint64_t* open, std::size_t i, std::size_t row) noexcept {
  return open_at(open, i - row - 1) && open_at(open, i - row) && open_at(open, i - row + 1) && open_at(open, i - 1) &&
         open_at(open, i + 1) && open_at(open, i + row - 1) && open_at(open, i + row) && open_at(open, i + row + 1);
}

/// Whether a disc centred at `from` is in an open cell (see SwarmTick::open).
inline bool is_open(const SwarmTick& t, Vec2 from) noexcept {
  if (t.unit_cells) {
    return from.x >= 0.0f && from.y >= 0.0f && from.x < t.map_wf && from.y < t.map_hf &&
           open_at(t.open, t.map.index(static_cast<std::int32_t>(from.x), static_cast<std::int32_t>(from.y)));
  }
  const std::int32_t cx = cell_of(from.x, t.cs), cy = cell_of(from.y, t.cs);
  return cx >= 0 && cy >= 0 && cx < t.map_w && cy < t.map_h && open_at(t.open, t.map.index(cx, cy));
}

/// slide_along_walls for an agent of kind `k`, with the fast path of a short move from an open
/// cell (`from_open`: the caller knows is_open(from)); the same result either way.
inline Vec2 slide_known(const SwarmTick& t, const KindTick& k, Vec2 from, Vec2 move, bool from_open) noexcept {
  if (k.small_moves && std::abs(move.x) <= k.max_step && std::abs(move.y) <= k.max_step && from_open) {
    return from + move;
  }
  return slide_along_walls(t.map, from, move, k.radius);
}

/// slide_along_walls for an agent of kind `k`, with the open-cell fast path.
inline Vec2 slide(const SwarmTick& t, const KindTick& k, Vec2 from, Vec2 move) noexcept {
  if (k.small_moves && std::abs(move.x) <= k.max_step && std::abs(move.y) <= k.max_step && is_open(t, from)) {
    return from + move;
  }
  return slide_along_walls(t.map, from, move, k.radius);
}

/// After wall sliding took `move` from `from` only to `slid`: round the door post that stopped
/// it (slide_round_corner, within `budget` world units) when an axis lost to a wall's edge, else
/// `slid`.
inline Vec2 round_post(const SwarmTick& t, const KindTick& k, Vec2 from, Vec2 slid, Vec2 move, float budget) noexcept {
  if ((slid.x - from.x != move.x || slid.y - from.y != move.y) && may_round_corner(from, slid, move, t.corner_eps)) {
    return slide_round_corner(t.map, from, slid, move, budget, k.radius);
  }
  return slid;
}

}  // namespace swarmfield::sim::crowd_detail
