#pragma once
// The enemy swarm: structure-of-arrays agent state and the per-tick steering step.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/field/congestion_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/crowd/burst_pattern.hpp"
#include "swarmfield/sim/crowd/spatial_hash.hpp"
#include "swarmfield/sim/crowd/wall_collision.hpp"
#include "swarmfield/sim/vec2.hpp"
#include "swarmfield/sim/worker_pool.hpp"

namespace swarmfield::sim {

namespace crowd_detail {
struct SwarmTick;  // one step's inputs and constants (src/crowd/swarm_tick.hpp)
struct KindTick;   // one kind's constants for a step (same file)
struct GatherInput;  // the separation pass's gather (src/crowd/gather_agent.hpp)
struct GatherAgent;
struct GatherSums;
class LatticeSampler;  // the steering's sampler (src/crowd/lattice_sampler.hpp)

/// A goal's motion as the pursuit reads it (Swarm::step's goal_velocities): the unit direction
/// and speed (world units per second; 0 = standing) of its velocity, and its clear run ahead
/// (world units along that direction over plain walkable cells, less a margin, at most
/// Swarm::kPursuitRunCells cells).
struct GoalLead {
  Vec2 unit{};
  float speed = 0.0f;
  float run = 0.0f;
};
}  // namespace crowd_detail

/// Tuning of the swarm. Lengths in world units, speeds in world units per second, angles in
/// radians. radius, max_speed and max_turn_rate are those of the one kind a swarm has until
/// Swarm::set_kinds() gives it a table of kinds (see AgentKind).
struct SwarmParams {
  float radius = 0.35f;                 ///< agent disc radius
  float max_speed = 3.0f;               ///< top speed along the flow
  /// R of the separation kernel (>= 2*radius) for agents of `radius`; a kind of radius r uses
  /// R * r / radius, and a pair of kinds the mean of their two R.
  float separation_radius = 0.9f;
  float flow_weight = 1.0f;             ///< w_flow
  float obstacle_max_force = 2.0f;      ///< clamp of the summed obstacle force
  /// World units of correction per unit separation, per tick. Gentle, because the separation
  /// kernel reaches past contact (R > 2 * radius) and would keep agents at rest in a queue
  /// rocking against the free path; enough to spread a crowd across a street.
  float overlap_stiffness = 0.1f;
  float max_turn_rate = 8.0f;           ///< heading change per second
  /// Fraction of a disc overlap (2 * radius - d) removed per tick, each agent of the pair
  /// moving half; summed over touching neighbours and added to the overlap correction. The
  /// kernel's mean alone cannot pull apart agents stacked inside a crowd (see swarm.cpp).
  /// Below 1: every agent moves at once (Jacobi), and at 1 a pressed row of agents swaps its
  /// overlaps back and forth every tick without ever settling (the undamped alternating mode
  /// of Jacobi relaxation; crowd scenario C4).
  float contact_stiffness = 0.7f;
  /// Route commitment: an agent moving at least this fraction of max_speed keeps its direction
  /// when the flow flips behind it, as long as its own cell's arrow still leads downhill in the
  /// integration field, or going on along its heading does (on open ground in the
  /// NavigationSet step; beside walls, and in the bare flow-field step, a lower cell within
  /// 67.5 degrees of the heading is enough) (no dithering between equal
  /// routes, C5; needs the integration overload of step()), for at most
  /// Swarm::kMaxCommitTicks ticks in a row (a far agent's step counts its ticks): then the
  /// blend wins (no agent walks away from its goal for more than a moment). 0 turns it off.
  float commit_min_speed = 0.25f;
  /// Free path: an agent moves along its path (steering after wall sliding) only part of the
  /// way to where its disc would touch an agent ahead, so a queue comes to rest instead of
  /// pressing and jittering (C4). Converging agents take turns: the one nearer the goal (then
  /// the lower id) goes first, the other also keeps clear of one diameter of the first's path.
  bool yield_to_agents_ahead = true;
  /// Fraction of the free path taken per tick (0..1); below 1 a follower eases up to the one
  /// ahead instead of closing the gap in one tick.
  float yield_fraction = 1.0f;
  /// An agent already overlapping the agent ahead by more than this fraction of a diameter
  /// ignores the free path and pushes on: a jammed crowd (a packed spawn, a mob at a door)
  /// clears only under pressure (C8); the contact term bounds the overlap.
  float press_overlap = 0.08f;
  /// Agents per chunk when step() runs over a WorkerPool (0: the default). Only a tuning knob:
  /// no agent's result depends on it or on the thread count (tests use small chunks to split
  /// small scenes over threads).
  std::uint32_t parallel_chunk_agents = 512;
  /// Rest, with yield_to_agents_ahead: a moving agent whose free path is below rest_below of
  /// its max step comes to rest (no flow move, no separation kernel: only contact moves it) and
  /// stays at rest until its free path exceeds wake_above of a step. (0..1 each.)
  float rest_below = 0.02f;
  float wake_above = 0.25f;
  /// Sleep (the World's step, with a NavigationSet): an agent at rest that has moved less than
  /// kSleepStill of its max step a tick for this many ticks in a row, with its steering the same
  /// every tick and no neighbour stirring, sleeps: its neighbour gather, move and contact pass
  /// are skipped (it holds where it is, at rest) until something could change what it does. It
  /// wakes the tick after a neighbour within the query radius moves, leaves rest or is pushed
  /// (that neighbour marks it), when its steering changes (a field rebuilt, the goal moved, the
  /// pile's levelling), when an agent near it is removed, and for every agent when the map, the
  /// obstacles, the kinds or a position set by hand change. As physics engines put resting
  /// bodies to sleep (Box2D's islands): a settled pile costs its steering only. 0: never.
  std::uint32_t sleep_after_ticks = 30;
  /// Far stepping (the World's step with whole-map fields): an agent whose path to its goal is
  /// longer than this many cells, with no goal in sight, not at rest and not bursting, steps on
  /// every other tick only with twice the time step (with far_step_levels 2, one whose path is
  /// longer than twice this on every fourth tick with four times): it covers the same ground at
  /// the same speed with a half (a quarter) of the steering, neighbour gathers, moves and contact
  /// passes. On its other ticks it holds where it is, velocity kept (its neighbours read the
  /// priority and path of its last step). A level
  /// of detail by distance, as game engines tick far agents less often (Unreal's MassEntity LOD,
  /// "variable tick rate"). In a horde on a 1024 map most agents are hundreds of cells out.
  /// 0: every agent steps every tick.
  float far_step_cells = 96.0f;
  /// Far stepping's levels: 1 (a step every 2 ticks beyond far_step_cells) or 2 (also a step
  /// every 4 ticks beyond twice that; other values are clamped). 1 by default: with 2, discs
  /// overlap four times as often again on a big map (10,000 mixed on Paris_1_1024, pairs past
  /// 10% of the smaller radius per frame: 2.4 every tick, 26.9 level 1, 114.8 level 2). (Its
  /// walk-aways of a block setting off from rest were route commitment's, repaired 2026-12-08.)
  std::uint32_t far_step_levels = 1;
  /// Radius (world units) of a goal's disc (a player's) that agents stop at, with any-angle
  /// navigation: an agent closes on a goal in sight only until the discs touch.
  float goal_radius = 0.4f;
};

/// A static round obstacle (prop), in world units.
struct Obstacle {
  Vec2 center;
  float radius = 0.5f;
};

/// Agent state as parallel arrays; index i is one agent. `ids` are unique, assigned in spawn
/// order, never reused. Capacity is reserved up front; step() allocates nothing once warm.
/// step() reorders the agents into spatial (hash cell) order for cache locality, so an index
/// is valid only until the next step(): follow an agent across steps by its id (index_of()).
class Swarm {
 public:
  Swarm() : Swarm(SwarmParams{}, 0) {}
  Swarm(const SwarmParams& params, std::size_t capacity);

  /// Adds an agent of kind `kind` (an index into kind_table()) at `p` (world units) with heading
  /// `heading` (radians). Returns its id, or kInvalidAgent when the swarm is at capacity or the
  /// kind does not exist.
  static constexpr std::uint32_t kInvalidAgent = 0xFFFFFFFFu;
  std::uint32_t add(Vec2 p, float heading = 0.0f, std::uint8_t kind = 0);
  /// Removes every agent (ids keep counting up).
  void clear() noexcept;
  /// Removes the agents at `indices` (positions in the current order, strictly increasing: a
  /// dead agent, see World's combat). The others keep their order, state and ids; ids are never
  /// reused, so a client that still holds a removed id can never confuse it with a new agent.
  /// Stops at the first index out of range or not above the one before (the rest of the list is
  /// ignored) and returns how many were removed. step_view() and hash() describe the agents
  /// before the removal until the next step(). O(size()).
  std::size_t remove_agents(std::span<const std::size_t> indices) noexcept;

  /// Replaces the kind table (1..kMaxAgentKinds kinds; agents of kind i use kinds[i]'s radius,
  /// max_speed, separation_weight and max_turn_rate). Returns false and changes nothing when the
  /// table is empty, too long, or would leave an existing agent with a kind index past its end.
  /// Values are made usable like SwarmParams (non-finite or negative ones replaced by the
  /// defaults); check_agent_kinds() is the strict check for configs. Until called, the table is
  /// one kind made of SwarmParams' radius, max_speed and max_turn_rate (separation weight 1).
  bool set_kinds(std::span<const AgentKind> kinds);
  [[nodiscard]] std::span<const AgentKind> kind_table() const noexcept { return kind_table_; }
  /// Agents of kind `kind` in the swarm.
  [[nodiscard]] std::uint32_t kind_count(std::uint8_t kind) const noexcept {
    return kind < kMaxAgentKinds ? kind_counts_[kind] : 0;
  }

  /// Configures the neighbour hash and the static obstacle hash for a map. Call once after
  /// the map is known (and again if obstacles change).
  void set_environment(const GridMap& map, std::span<const Obstacle> obstacles);

  /// One fixed step of `dt` seconds, in phases (one function each, see src/crowd/README.md):
  /// repair (agents inside a blocked cell or at a non-finite position move to the nearest
  /// walkable cell; discs of half a cell or more wherever their square overlaps a wall, to the
  /// nearest place it fits) -> rebuild hash and reorder -> steering (smoothed flow, route
  /// commitment, obstacle force; the path a full step would take after wall sliding) -> gather
  /// neighbours (separation: mean kernel of SPEC; plus a contact term, see contact_stiffness;
  /// the free path, see yield_to_agents_ahead; rest, see rest_below) -> bursts -> integrate: the
  /// overlap correction slid along walls, then the flow move slid along walls and round door
  /// posts -> heading. Each agent uses its kind's radius, speed, separation weight and turn rate
  /// (set_kinds()). Speed budget: an agent moves at most its max_speed * dt per step (the
  /// correction spends the budget first, as far as walls let it move, the flow move gets the
  /// rest up to the free path), except when repaired. Agents stacked on the bit-identical same
  /// point burst out along a pattern (BurstPatterns: points in the unit disc, ranked by id) that
  /// grows by max_speed * dt per tick until its tightest spacing is one diameter (C3). No agent
  /// ends the step inside a blocked cell. Each agent's new state depends only on the previous arrays and on earlier
  /// phases' completed outputs, never on another agent's new state, so the phases run over
  /// `pool` (null: on the calling thread) in fixed chunks of agents and the result is bit-for-bit
  /// the same for any thread count. `dt` <= 0 or non-finite: no-op. Without an integration
  /// field a walkable cell whose flow is kNone cannot be told apart from a goal, so agents there
  /// hold (use the overload below), and there is no route commitment. The pool must not be
  /// running another loop during the call (it is not reentrant).
  void step(const GridMap& map, const FlowField& flow, float dt, WorkerPool* pool = nullptr);
  /// As above, and an agent on a walkable cell that `integration` marks unreachable (no goal
  /// can reach it) steers to the nearest reachable cell within kEscapeSearchCells cells, or
  /// holds (no flow move, heading kept; the overlap correction still applies) when there is
  /// none. Agents on a goal cell (reachable, flow kNone) hold the same way.
  void step(const GridMap& map, const FlowField& flow, const IntegrationField& integration, float dt,
            WorkerPool* pool = nullptr);
  /// As above, with any-angle navigation per size class (the World's way): an agent of a kind
  /// of radius r follows `nav`'s class size_class_of_radius(r) (which must be among the
  /// classes of nav's last update(), else the agent holds): straight at the nearest goal's exact
  /// position where it is in sight, stopping when its disc touches the goal's disc
  /// (SwarmParams::goal_radius), else toward the waypoint of its class's field path (route
  /// commitment on that class's fields); on a block its class cannot use (kNoRoute) it follows
  /// the neighbouring samples' blend or escapes to the nearest reachable block within
  /// kEscapeSearchCells; failing both, an agent of a class above 1 (it has no route at all: a
  /// brute in a room whose doors only smaller kinds fit) makes way for class 1, walking across
  /// class 1's path and a little back against it (never waiting in a queue it cannot pass;
  /// whole-map mode: in hierarchical mode kNoRoute may mean "not routed yet"), and otherwise holds.
  /// With `congestion` (optional; World passes its CongestionFields): an agent out of sight of
  /// its goal and not at rest, on a block whose detour bit is set (CongestionFields::detour(): a
  /// crowd on its best route), follows the congestion field's smoothed flow instead, round the
  /// crowd or to another way. So does one in sight of a standing goal, more than 6 cells from
  /// touching it, where that flow turns 30 to 120 degrees from the straight line at the goal
  /// (round a pile that arrived from one side, to its thin side).
  /// `goal_velocities` (optional; by goal index, as nav's goals; world units per second; a zero
  /// or non-finite vector = the goal stands, and so does a goal past the span's end): touching a
  /// moving goal does not hold an agent, so no rest starts there and a horde chasing a running
  /// player never comes to rest behind it (a resting pile reaches out from a goal only while it
  /// stands). An agent in sight of a moving goal heads for where the goal is going, not where it
  /// is (pursuit): the point on the goal's way where the two can meet at the agent's max speed,
  /// or, where they cannot (a goal faster than the agent walking off or passing by), the point
  /// ahead of the goal by its speed times the agent's time to reach it (straight distance / own
  /// max speed; Reynolds 1999, "Steering Behaviors For Autonomous Characters"); that lead at most
  /// kPursuitLeadRatio times the distance and never past the goal's clear run ahead (plain
  /// walkable cells along its velocity, at most kPursuitRunCells, less half a cell), so the point
  /// stays in the goal's own sight line.
  /// Chasing where the goal is, a body slower than the goal falls onto a pursuit curve round it
  /// and packs into a ball (a player walking loops: half the horde below 90% of its speed).
  void step(const GridMap& map, const NavigationSet& nav, float dt, WorkerPool* pool = nullptr,
            const CongestionFields* congestion = nullptr, std::span<const Vec2> goal_velocities = {});
  /// Pursuit (see step()): the lead at most this many times the agent's distance to the goal
  /// (the aim at most ~63 degrees off the straight line at the goal), and the goal's clear run
  /// ahead measured up to this many cells.
  static constexpr float kPursuitLeadRatio = 2.0f;
  static constexpr float kPursuitRunCells = 48.0f;
  /// How far (cells, Chebyshev) an agent on an unreachable cell looks for a reachable one.
  static constexpr std::int32_t kEscapeSearchCells = 2;
  /// Most ticks in a row route commitment may override the field's blend (see
  /// SwarmParams::commit_min_speed).
  static constexpr std::uint8_t kMaxCommitTicks = 20;  // below 0x40: commit_'s low 6 bits

  [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] const SwarmParams& params() const noexcept { return params_; }
  [[nodiscard]] std::span<const std::uint32_t> ids() const noexcept { return ids_; }
  [[nodiscard]] std::span<const float> xs() const noexcept { return xs_; }
  [[nodiscard]] std::span<const float> ys() const noexcept { return ys_; }
  [[nodiscard]] std::span<const float> vxs() const noexcept { return vxs_; }  ///< last tick's velocity
  [[nodiscard]] std::span<const float> vys() const noexcept { return vys_; }
  [[nodiscard]] std::span<const float> headings() const noexcept { return headings_; }
  /// Each agent's kind: an index into kind_table().
  [[nodiscard]] std::span<const std::uint8_t> kinds() const noexcept { return kinds_; }
  /// The neighbour hash as of the start of the last step (positions before that step).
  [[nodiscard]] const SpatialHash& hash() const noexcept { return hash_; }
  /// Index of the agent with `id`, or kNoIndex. Linear scan (tests, tools; not per tick).
  static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
  [[nodiscard]] std::size_t index_of(std::uint32_t id) const noexcept;
  /// The last step's per-agent decisions, in the agents' current order (tests, tools, debugging;
  /// valid until the next step()): unit steering direction, the unit path a full step takes
  /// after wall sliding, the move allowance (world units per unit of budget), the room left to
  /// a goal in sight (world units; +inf without one), the right-of-way priority, the rest flag and
  /// the ticks waited.
  struct StepView {
    std::span<const float> steer_x, steer_y, path_x, path_y, allow, goal_room;
    std::span<const std::uint32_t> priority;
    std::span<const std::uint8_t> resting;
    std::span<const std::uint16_t> waited;  ///< ticks waited for agents crossing its way
    std::span<const float> move_x, move_y;  ///< unit direction of the move (the steering or a side step)
    std::span<const std::uint8_t> asleep;   ///< low two bits 1: slept through the step (SwarmParams::sleep_after_ticks); 3: held, far (SwarmParams::far_step_cells)
  };
  [[nodiscard]] StepView step_view() const noexcept {
    return {steer_x_, steer_y_, path_x_, path_y_, allow_,   goal_room_,
            prio_,    resting_, wait_,   move_x_, move_y_, asleep_};
  }
  /// Direct position write (tests, teleports); the next step() repairs invalid positions.
  void set_position(std::size_t index, Vec2 p) noexcept {
    xs_[index] = p.x;
    ys_[index] = p.y;
    needs_repair_ = true;
    wake_all_ = true;
  }
  /// The positions to show (snapshots), in the agents' current order. A far agent
  /// (SwarmParams::far_step_cells) moves in steps of 2 or 4 ticks; it is shown one such step late,
  /// on the straight line of its last step: at the start of that step on the tick it takes it,
  /// then a share more each tick it holds (as a client interpolates between two snapshots), so
  /// viewers see it move every tick and their snapshot predictor meets the motion it predicts.
  /// The others (and a far agent whose last step was not far) at xs(), ys(). Fills `xs` and `ys`
  /// (world units; resized to size()) and returns true, or returns false and leaves them alone
  /// when no agent held (xs() and ys() are the positions to show then). Display only: the
  /// simulation goes on from xs(), ys().
  bool shown_positions(std::vector<float>& xs, std::vector<float>& ys) const;
  /// Agents that slept through the last step() (SwarmParams::sleep_after_ticks).
  [[nodiscard]] std::size_t sleeping_count() const noexcept { return sleeping_count_; }

 private:
  void step_impl(const GridMap& map, const FlowField& flow, const IntegrationField* integration,
                 const NavigationSet* nav, const CongestionFields* congestion,
                 std::span<const Vec2> goal_velocities, float dt, WorkerPool* pool);
  // step_impl's steps, in order (swarm.cpp): the environment and the tick's constants, then one
  // call per phase over all agents, then the swap of the double-buffered state.
  bool follow_environment(const GridMap& map);  // true when the map or the kinds present changed
  void prepare_tick(crowd_detail::SwarmTick& t, const NavigationSet* nav, const CongestionFields* congestion,
                    std::span<const Vec2> goal_velocities, float dt, bool environment_changed);
  void prepare_goal_leads(crowd_detail::SwarmTick& t, const NavigationSet* nav, std::span<const Vec2> goal_velocities);
  void prepare_pile_profile(crowd_detail::SwarmTick& t, const NavigationSet* nav);
  void resize_tick_buffers(std::size_t n);
  void repair_positions(crowd_detail::SwarmTick& t, const NavigationSet* nav, WorkerPool* pool);
  void rebuild_hash(crowd_detail::SwarmTick& t, WorkerPool* pool);
  void reorder_and_steer(crowd_detail::SwarmTick& t, WorkerPool* pool);
  void gather_integrate_turn(const crowd_detail::SwarmTick& t, WorkerPool* pool);
  void start_and_move_bursts(const crowd_detail::SwarmTick& t, WorkerPool* pool);
  // The contact projection (swarm_contacts.cpp): overlaps past kContactTolerance of the smaller
  // radius taken out of this tick's new positions, each agent of a pair by its share.
  void project_contacts(const crowd_detail::SwarmTick& t, WorkerPool* pool);
  // any_shoving: some agent set kOtherRouteBit this tick (else agents near walls are skipped whole);
  // pass: 0 the first, else a later one (reads the flags of the pass before, contact_moved_last_).
  void project_contacts_of(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end, bool any_shoving,
                           int pass);
  void build_pile_profile(const crowd_detail::SwarmTick& t);
  void swap_in_positions(const crowd_detail::SwarmTick& t);
  // Sleep (SwarmParams::sleep_after_ticks, swarm_sleep.cpp): whether this step lets agents sleep
  // and the marks of removed agents' neighbours; after the gather of slot k, its calm count and
  // signature, and the marks it leaves on calm neighbours when it stirs.
  void prepare_sleep(crowd_detail::SwarmTick& t, bool environment_changed);
  void mark_removed_neighbours(const crowd_detail::SwarmTick& t);
  [[nodiscard]] std::uint32_t steering_signature(std::size_t k) const noexcept;
  void hold_asleep(std::size_t k, std::uint32_t signature) noexcept;  // the gather's outputs of a sleeper
  void hold_far(std::size_t k) noexcept;  // the gather's outputs of a far agent skipping a tick (swarm_far_step.cpp)
  // What both write: no move allowance, no correction, no contacts, the mark kept (swarm_sleep.cpp).
  void hold_in_place(std::size_t k) noexcept;
  [[nodiscard]] bool has_calm_neighbour(const crowd_detail::SwarmTick& t, const std::uint32_t* slots,
                                        std::uint32_t count, bool complete) const noexcept;
  void stir_neighbours(const crowd_detail::SwarmTick& t, std::size_t k, float r2);
  void settle_or_stir(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k, Vec2 p0,
                      Vec2 p2, std::size_t begin);
  void count_sleepers(const crowd_detail::SwarmTick& t);
  // The phases of step_impl over the slots [begin, end), each in its own unit (swarm.cpp says
  // which).
  void steer_agents(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end);
  // steer_agents' steps for the agent in slot k at p in cell (cx, cy), velocity v last tick
  // (swarm_steering.cpp): the desired direction (and prio_[k]) from the NavigationSet or from
  // the bare flow field, and the obstacles' push.
  Vec2 desired_on_navigation(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k, Vec2 p,
                             std::int32_t cx, std::int32_t cy, Vec2 v, crowd_detail::LatticeSampler& class1,
                             const crowd_detail::LatticeSampler* samplers, float& goal_room);
  Vec2 desired_on_flow(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k, Vec2 p,
                       std::int32_t cx, std::int32_t cy, Vec2 v);
  Vec2 obstacle_force(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, Vec2 p,
                      std::uint32_t id) const;
  // Route commitment's time limit for the agent in slot k (steering phase): `kept` (what
  // keep_route made of the field's `blend`) while it has overridden the blend for fewer than
  // kMaxCommitTicks ticks in a row, else the blend. `ticks_per_step`: the ticks this step covers (a far
  // agent's step covers 2 or 4: see SwarmParams::far_step_cells).
  Vec2 commit_route(std::size_t k, Vec2 blend, Vec2 kept, std::uint32_t ticks_per_step = 1) noexcept {
    std::uint8_t& state = perm_commit_[k];
    const auto back = static_cast<std::uint8_t>(state & (kBackDetourBit | kOtherRouteBit));  // kept as they are
    const auto ticks = static_cast<std::uint8_t>(state & ~(kBackDetourBit | kOtherRouteBit));
    if (kept.x == blend.x && kept.y == blend.y) {
      state = back;
      return blend;
    }
    if (ticks >= kMaxCommitTicks) return blend;
    state = static_cast<std::uint8_t>(back | (ticks + ticks_per_step));
    return kept;
  }
  void gather_neighbours(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end);
  // kMixed: several kinds have agents (per-pair constants); kRest: some agent rested last tick.
  template <bool kMixed, bool kRest>
  void gather_neighbours_of_kinds(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end);
  // gather_neighbours_of_kinds' steps for the agent in slot k (swarm_separation.cpp): its
  // neighbours' sums; its move (side step or not) and rest, returning whether it rests; its
  // overlap correction or burst displacement.
  // The slots the query found within its radius (not the agent itself), in the hash's order, so
  // the side step need not scan the hash again; complete false: more than kNearKeep, not kept.
  static constexpr std::uint32_t kNearKeep = 128;
  struct NearSlots {
    const std::uint32_t* slots = nullptr;
    std::uint32_t count = 0;
    bool complete = false;
  };
  // hit_slot: room for kNearKeep + 4 slots. contact_r2: squared distance within which a
  // neighbour goes to `contacts` (the first kContactSlots of them; contact_count counts all),
  // for the contact projection; 0: none.
  template <bool kMixed, bool kRest>
  NearSlots query_neighbours(const crowd_detail::GatherInput& in, const crowd_detail::GatherAgent& a, float r2,
                             std::uint32_t self, crowd_detail::GatherSums& sums, std::uint32_t* hit_slot,
                             float contact_r2, std::uint32_t* contacts, std::uint32_t& contact_count) const;
  template <bool kMixed>
  bool choose_move(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k,
                   const crowd_detail::GatherAgent& a, float path_len, const crowd_detail::GatherSums& sums,
                   const NearSlots& near, bool crowd_rules);
  void correct_overlap(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k,
                       std::size_t begin, const crowd_detail::GatherSums& sums, bool resting);
  void start_bursts(const crowd_detail::SwarmTick& t);  // serial, after the gather
  // A step round the agents ahead of the agent in slot k at p (swarm_side_step.cpp): the best
  // of the steering direction s0 turned both ways, its unit direction, allowance (world units
  // per unit of budget) and progress toward the goal (world units); progress 0 when none.
  // `path_dir`: the unit direction of its path (the blocker is the touching neighbour most
  // nearly along it). `turns`: try the steering turned either way; `round`: try the tangent
  // round the blocker. Result round: the step goes round the blocker (maybe no closer).
  // `near`: the gather's slots near p (scanned again from the hash when not complete).
  // `only`: that one direction instead (making way); `only_back`: even when it leads away from
  // the goal or against last tick's move (backing off; progress 0 then).
  struct SideStep {
    float ux = 0.0f, uy = 0.0f, allow = 0.0f, progress = 0.0f, bias = 0.0f;
    bool found = false, round = false;
    bool opens = false;  // round, and the way round leads to free ground toward the goal
  };
  template <bool kMixed>
  SideStep side_step(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k, Vec2 p,
                     Vec2 s0, Vec2 path_dir, bool turns, bool round, const NearSlots& near,
                     const Vec2* only = nullptr, bool only_back = false) const;
  void integrate_agents(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end);
  template <bool kMixed>  // several kinds have agents (per-agent kind constants)
  void integrate_agents_of_kinds(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end);
  void turn_headings(const crowd_detail::SwarmTick& t, std::size_t begin, std::size_t end);
  bool refresh_map_cache(const GridMap& map);  // true when the map changed
  // open_cells_ for the cells [x0, x1] x [y0, y1] (clamped to the map).
  void compute_open_cells(const GridMap& map, std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1);
  // The clearance of `map` for the repair: `nav`'s when it matches, else clearance_ brought to
  // the map (locally from its change log when it reaches back).
  const ClearanceMap& clearance_for(const GridMap& map, const NavigationSet* nav);
  void configure_hashes(const GridMap& map);
  // Largest separation radius over the kinds that have agents (the hash's cell size).
  [[nodiscard]] float interaction_radius() const noexcept;

  SwarmParams params_;
  std::size_t capacity_ = 0;
  std::uint32_t next_id_ = 0;
  std::vector<std::uint32_t> ids_;
  std::vector<float> xs_, ys_, vxs_, vys_, headings_;
  std::vector<std::uint8_t> kinds_, perm_kinds_;  // kind index per agent (and reorder scratch)
  std::vector<AgentKind> kind_table_;
  std::vector<float> kind_sep_r_;                     // per kind: its separation radius R
  std::array<std::uint32_t, kMaxAgentKinds> kind_counts_{};  // agents per kind
  float hash_cell_ = -1.0f;  // the separation radius the hashes were configured for
  // For repairing discs of half a cell or more when step() has no NavigationSet's clearance of
  // the map (built on demand, then follows the map's changes), and the map it follows.
  ClearanceMap clearance_;
  const std::uint8_t* clearance_source_ = nullptr;
  std::vector<CellCoord> bulk_scratch_;  // a bulk map change's cells (GridMap::cells_changed_since)
  // Per-tick scratch indexed by hash slot (cell-sorted order), not by agent index.
  std::vector<float> steer_x_, steer_y_;  // unit steering direction (or 0)
  std::vector<float> move_x_, move_y_;    // unit direction of this tick's move (the steering, or a side step)
  std::vector<float> next_xs_, next_ys_;  // positions being written this tick (swapped in)
  std::vector<std::uint32_t> perm_ids_;   // reorder scratch (swapped in)
  std::vector<float> perm_headings_;
  std::vector<std::uint8_t> burst_ticks_, perm_burst_;  // ticks spent bursting out of a stack (0 = not)
  std::vector<std::uint8_t> resting_, perm_resting_;    // 1 = at rest (see SwarmParams::rest_below)
  std::vector<std::uint16_t> wait_, perm_wait_;         // ticks waited for agents crossing its way (patience)
  // Low 6 bits: ticks in a row its route commitment overrode the blend (commit_route); kBackDetourBit:
  // it follows the congestion field's way back from its goal (swarm_steering.cpp, kBackDetourCells);
  // kOtherRouteBit: the gather found it in another route's crowd (GatherSums::other_route: held by
  // it, or going through it, drop_bulldozed); read by this tick's contact projection, the next
  // steering (the way round) and the next gather (shoving goes on), which clears and sets it anew.
  std::vector<std::uint8_t> commit_, perm_commit_;
  static constexpr std::uint8_t kBackDetourBit = 0x80;
  static constexpr std::uint8_t kOtherRouteBit = 0x40;
  std::vector<float> perm_vxs_, perm_vys_;
  std::vector<std::uint32_t> prio_;  // per slot: integration value of the agent's cell (right of way)
  std::vector<float> goal_room_;     // per slot: distance it may still close on a goal in sight (or inf)
  std::vector<std::uint8_t> goal_moves_;  // per slot: 1 when that goal in sight is on the move
  // Per slot (steering phase): the standing goal in sight (goal index, else -1), the agent's
  // sector round it and the distance of its outer edge from it, for the pile profile
  // (build_pile_profile).
  std::vector<std::int16_t> sight_goal_;
  std::vector<std::uint8_t> pile_sector_;
  std::vector<float> pile_dist_;
  std::vector<std::uint8_t> pile_level_;  // per slot: 1 when it walks round the pile this tick
  // Per standing goal, kPileSectors distances (world units): the farthest outer edge in each
  // sector round it of the agents in sight of it that rested or moved slowly last tick (0:
  // none). See crowd/README.md, "Levelling the pile" (swarm_pile_profile.cpp).
  std::vector<float> pile_profile_;
  // Per goal and sector: the clear distance (world units) from the goal to a wall along the
  // sector's middle, 0 round a goal not on open ground (prepare_pile_profile), and what they
  // were measured for: each goal's position (NaN x: on the move), the map and its revision.
  std::vector<float> pile_room_;
  // Per goal and sector: how far along the sector's middle the ground stays wide open (the 5 x 5
  // cells round each walkable; at most its room), measured with the rooms.
  std::vector<float> pile_wide_;
  // Per goal and sector, this tick: the farthest outer edge of the slow agents in sight that are
  // not on wide open ground (build_pile_profile's scratch).
  std::vector<float> pile_narrow_;
  std::vector<Vec2> pile_room_goals_;
  const GridMap* pile_room_map_ = nullptr;
  std::uint32_t pile_room_revision_ = 0;
  std::vector<float> path_x_, path_y_;  // per slot: displacement of a unit move after wall sliding
  std::vector<std::uint8_t> streaming_;  // per slot: crowd_rules::kStreamBit / kFreeFlowBit of last tick's speed (steering phase)
  // Per slot, the neighbours that may touch the agent after the move (crowd_detail::kContactSlots
  // each, written by the gather) and how many (more than kContactSlots: not all kept), for the
  // contact projection.
  std::vector<std::uint32_t> contacts_;
  std::vector<std::uint8_t> contact_count_;
  // Per slot, 1 when the contact projection's pass moved the agent: this pass's (written) and the
  // one before's (read). A later pass recomputes only an agent that moved or has a listed
  // neighbour that moved: for any other the inputs are the pass before's, and so is the result.
  std::vector<std::uint8_t> contact_moved_, contact_moved_last_;
  std::vector<std::uint8_t> open_here_;  // per slot: bit 1 when the agent's cell is open (see open_cells_) and moves are small; bit 2 when the 3 x 3 round it is (steer_agents)
  // Per slot, from the neighbour gather for the integration: the overlap correction (world
  // units; for a bursting agent its displacement in units of max_step), the move allowance
  // (world units per unit of move budget, from the free path), and 1 when bursting.
  std::vector<float> corr_x_, corr_y_, allow_;
  std::vector<std::uint8_t> bursting_;      // per slot: 0 no, 1 bursting, 2 burst starts (gather)
  // Class 1's far bits for the steering (see crowd_detail::build_far_bits), rebuilt each step
  // that has enough agents to gain from them, and their scratch.
  std::vector<std::uint64_t> far_bits_, far_scratch_;
  std::vector<crowd_detail::GoalLead> goal_leads_;  // per goal: its motion for the pursuit (prepare_tick)
  std::vector<std::uint8_t> burst_chunks_;  // per chunk: 1 when a burst starts in it this tick
  std::vector<std::uint8_t> rest_chunks_;   // per chunk: 1 when an agent of it rests this tick
  std::vector<std::uint8_t> shove_chunks_;  // per chunk: 1 when an agent of it set kOtherRouteBit this tick
  std::vector<std::uint8_t> calm_chunks_;   // per chunk: 1 when an agent of it may sleep next tick
  std::vector<std::uint32_t> sleep_chunks_;  // per chunk: its agents asleep this tick
  bool any_rest_ = false;                   // some agent rested last tick (else no flag is set)
  // Far stepping (SwarmParams::far_step_cells, swarm_far_step.cpp), per agent and reordered with
  // it: its far level at its last gather, and the steering outputs of its last step that
  // its neighbours read while it holds (a holding agent's steering is skipped).
  struct FarState {
    std::uint32_t prio = 0;              // right-of-way priority (prio_)
    float path_x = 0.0f, path_y = 0.0f;  // the path of a full step (path_x_, path_y_)
    std::uint8_t far = 0;                // its far level at its last gather (0: not far, 1, 2)
    // What shown_positions draws: the position before its last far step (world units), 2^level
    // of that step (0: its last step was not far), and where it is shown this step: at
    // prev + (position - prev) x shown / step_ticks, or at its position (kShowTrue).
    float prev_x = 0.0f, prev_y = 0.0f;
    std::uint8_t step_ticks = 0;
    std::uint8_t shown = 0xFF;
  };
  std::vector<FarState> far_, perm_far_;
  // Per chunk, 1 when an agent of it was far this tick; whether any was (the next step then lets
  // far agents skip ticks); steps taken (with its id, which far agents step: far_holds).
  std::vector<std::uint8_t> far_chunks_;
  bool far_seen_ = false;
  bool far_held_ = false;  // the last step let far agents hold (some FarState::shown may be set)
  std::uint64_t step_count_ = 0;
  // Sleep (SwarmParams::sleep_after_ticks), per agent and reordered with it: calm ticks in a row
  // (at rest, still, steering unchanged, not woken; saturating), the steering's signature of
  // the tick (steering_signature), and 1 when a neighbour stirred near it (read the tick after
  // it is written, so no agent reads a mark of its own tick: the same for any thread count).
  // asleep_: per slot, 1 when it sleeps this tick.
  std::vector<std::uint8_t> calm_, perm_calm_;
  std::vector<std::uint32_t> signature_, perm_signature_;
  std::vector<std::uint8_t> wake_, perm_wake_;
  std::vector<float> mark_x_, mark_y_, perm_mark_x_, perm_mark_y_;  // where it last marked its neighbours
  std::vector<std::uint8_t> asleep_;
  static constexpr std::size_t kMaxRemovedPoints = 4096;  // beyond: every agent wakes
  std::vector<Vec2> removed_points_;  // where agents were removed since the last step
  bool wake_all_ = true;              // no agent sleeps in the next step (see prepare_sleep)
  bool calm_ready_ = false;           // after a step: some agent's calm count is one short of sleep
  std::size_t sleeping_count_ = 0;
  BurstPatterns burst_patterns_;
  // Per map cell, a bit: set when the cell and its 8 neighbours are walkable, so a short move from it
  // cannot touch a wall (the fast path of wall sliding). Keyed by the map it was built from.
  std::vector<std::uint64_t> open_cells_;  // one bit a cell (crowd_detail::open_at): 8 MiB at 8192 x 8192
  const std::uint8_t* open_source_ = nullptr;
  std::int32_t open_width_ = -1, open_height_ = -1;
  std::uint32_t open_revision_ = 0;
  float env_world_width_ = -1.0f, env_world_height_ = -1.0f;
  bool needs_repair_ = true;   // positions may be invalid (added, set, or the map changed)
  bool has_invalid_ = false;   // repair found no walkable cell for some agent
  std::vector<Obstacle> obstacles_;
  SpatialHash hash_;
  SpatialHash obstacle_hash_;
  std::vector<float> obstacle_xs_, obstacle_ys_;
};

}  // namespace swarmfield::sim
