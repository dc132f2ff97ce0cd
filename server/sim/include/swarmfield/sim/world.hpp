#pragma once
// The authoritative world: map, players, fields, swarm, spawner. Pure and deterministic:
// time comes in as dt, randomness from the seed, no I/O.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/nav/field/congestion_fields.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/hierarchical/route_reachability.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/crowd/wall_collision.hpp"
#include "swarmfield/sim/game/combat.hpp"
#include "swarmfield/sim/game/waves.hpp"
#include "swarmfield/sim/vec2.hpp"
#include "swarmfield/sim/worker_pool.hpp"

namespace swarmfield::sim {

struct SpawnerParams {
  std::uint32_t initial_agents = 0;      ///< spawned on the first step
  std::uint32_t wave_size = 0;           ///< agents per wave (0 = no waves)
  std::uint32_t wave_interval_ticks = 0; ///< ticks between waves
  float min_player_distance = 20.0f;     ///< world units: spawn no closer to any player
  /// Stop at the map's density limit (density_limit(map, kinds), recomputed at every spawn from
  /// the walkable cells then, so run-time blockers count): the initial spawn and the waves add
  /// at most limit - size agents, and the agents held back are counted (spawns_held_back()).
  /// Off by default: the caller decides (the server and the tool turn it on; scenes that place
  /// agents by hand are not affected either way).
  bool stop_at_density_limit = false;
};

struct WorldParams {
  SwarmParams swarm;
  /// Enemy kinds (see AgentKind; the spawner picks among them by spawn_weight, see
  /// spawn_agents()). Empty: one kind made of swarm.radius, swarm.max_speed and
  /// swarm.max_turn_rate. Values are made usable by Swarm::set_kinds (check_agent_kinds() is the
  /// strict check configs should run first); a table Swarm refuses (more than kMaxAgentKinds)
  /// falls back to the one kind.
  std::vector<AgentKind> kinds;
  SpawnerParams spawner;
  std::uint32_t max_agents = 100000;
  float player_speed = 5.0f;   ///< world units per second
  float player_radius = 0.4f;  ///< world units
  /// Crowd density in the path cost (CongestionFields, whole-map field mode): agents whose exact
  /// route runs into a crowd take the congestion field's route when it is cheaper (round a pile
  /// to its free side, to another door). Off: the exact fields alone.
  bool congestion = true;
  std::uint64_t seed = 1;
  /// Field rebuild budget per tick in work units (NavigationFields::set_rebuild_budget; one
  /// unit ~ one settled cell). 0 = a whole rebuild in the tick that needs it. With a budget,
  /// agents read the previous complete field until the new one is swapped in; 200000 is about
  /// 3 ms a tick on a 1024x1024 map here, a full rebuild there being ~1.2 million units.
  std::size_t field_rebuild_budget = 0;
  /// Whole-map or hierarchical fields for size class 1 (NavigationSet::set_field_mode()); kAuto
  /// = hierarchical from kHierarchicalFromSide (4096) cells a side. The spawner ranks cells by
  /// reachability in either mode (spawn_agents()).
  FieldMode field_mode = FieldMode::kAuto;
  /// Threads that step the swarm, the calling thread included (a WorkerPool of
  /// worker_threads - 1 threads, started by the constructor; 0 or 1 = none, capped at
  /// WorkerPool::kMaxThreads). The state (and state_hash) is bit-identical for any value.
  std::uint32_t worker_threads = 1;
  /// Waves as data (WaveDirector, run in finish_tick after the spawner above). A table that
  /// check_waves() refuses with the world's kinds is dropped whole.
  std::vector<WaveSpec> waves;
  /// Health, damage, shots, deaths and respawns (off by default: see CombatParams). Made usable
  /// by the constructor (a field check_combat_params() refuses is replaced by its default).
  CombatParams combat;
};

struct Player {
  std::uint32_t id = 0;
  Vec2 position;
  Vec2 intent;    ///< requested direction, |intent| <= 1 (scaled by player_speed)
  Vec2 velocity;  ///< world units per second, after clamping and wall collision
  std::uint32_t contacts = 0;  ///< total contact events so far
  // Combat (WorldParams::combat.enabled; otherwise health stays full and alive stays true).
  float health = 0.0f;      ///< hit points; set to CombatParams::player_health by add_player
  bool alive = true;        ///< a dead player does not move, is not hurt and cannot fire (it stays a goal)
  float respawn_in = 0.0f;  ///< seconds left before a dead player respawns
  Vec2 spawn_point;         ///< where it respawns: where add_player placed it
  std::uint32_t kills = 0;  ///< agents its shots killed
  std::uint32_t deaths = 0;
  std::uint32_t shots = 0;  ///< shots it fired (not in the state hash: World::shots() counts them all)
  bool fire = false;        ///< trigger held (set_player_fire): it shoots whenever its gun is ready
  Vec2 aim;                 ///< direction of its shots, unit length while fire is set
  float fire_cooldown = 0.0f;  ///< seconds before its gun is ready again
};

/// An agent touching a player during a tick.
struct ContactEvent {
  std::uint32_t agent_id = 0;
  std::uint32_t player_id = 0;
};

class World {
 public:
  World(GridMap map, const WorldParams& params);

  /// Adds a player at `p` (moved to the nearest walkable cell centre if blocked). Returns its id.
  std::uint32_t add_player(Vec2 p);
  /// Removes the player with that id (false: none); the barricades it built fall with it
  /// (barricade_changes() reports them gone), so leaving and joining again under a new id does
  /// not let one client keep more than BarricadeParams::per_player standing.
  bool remove_player(std::uint32_t player_id);
  /// Moves a player to `p` at once (scripted tests, tools; a dead player's body moves, its respawn
  /// is still at its spawn point): placed like add_player (moved to
  /// the nearest walkable cell centre if blocked), velocity zeroed; intent kept. The fields
  /// follow on the next step() if the player's cell changed. Returns false for an unknown id or
  /// a non-finite `p` (ignored).
  bool teleport_player(std::uint32_t player_id, Vec2 p);
  /// Sets a player's move intent; vectors longer than 1 are clamped to 1. Returns false for an
  /// unknown id or a non-finite vector (ignored).
  bool set_player_intent(std::uint32_t player_id, Vec2 intent);
  /// Holds or releases a player's trigger: while `fire` is set, the player shoots along `aim`
  /// whenever its gun is ready (every CombatParams::fire_interval seconds; the shot is resolved
  /// after the swarm step, see finish_tick). Kept until changed. Returns false (and changes
  /// nothing) for an unknown id, or with `fire` set, for an aim that is not finite or too short
  /// to give a direction (|aim| < 1e-6). A dead player's trigger is kept but it does not shoot.
  bool set_player_fire(std::uint32_t player_id, bool fire, Vec2 aim);
  /// Spawns up to `n` agents at seeded random walkable cells at least min_player_distance from
  /// every player; returns how many were spawned (fewer when the swarm is full or, with
  /// SpawnerParams::stop_at_density_limit, when the swarm reached the map's density limit; 0
  /// when the map has no walkable cell). Agents held back by the density limit are added to
  /// spawns_held_back(); the random draws of the agents spawned are the same either way. Cells
  /// are ranked: reachable from a player and far enough, then reachable, then far enough, then
  /// any walkable. Reachability is the agent's size class's: from the class's whole-map
  /// integration field, or in hierarchical mode from its portal routes (RouteReachability: a
  /// flood fill inside the cell's sector, labelled once per sector and route version); unknown
  /// (counted as reachable) while the class has no fields yet. Small maps (below
  /// kSampledSpawnFromCells cells) scan every cell and use the best non-empty rank: cost
  /// O(cells) per call (two scans). Big maps draw up to kSpawnDraws uniform cells per agent and
  /// take the first of rank 0, else the best rank drawn: cost O(agents x draws), no O(cells)
  /// scan or list (falls back to the scan when no draw hits a walkable cell). An agent of a
  /// kind wider than a cell (size class n > 1) only goes where its n x n block of cells is
  /// walkable, centred in the block (draws among the ranked cells, then over the map, then a
  /// scan of the map; where no block fits anywhere, the agent is not spawned and counts in
  /// spawns_held_back()). Within a cell (class 1) the point is random but a radius from the
  /// cell's edges; in a block, random within the block's room to spare. Kinds: when more than one kind
  /// has a positive spawn_weight, each agent's kind is drawn first, from one 64-bit draw, by
  /// pick_agent_kind() (in proportion to the weights); with one such kind no draw is made.
  /// Randomness: the world's std::mt19937_64 seeded with WorldParams::seed, bits mapped to
  /// ranges by hand (no std::uniform_*_distribution, whose algorithm is implementation-defined),
  /// so a seed replays on every standard library.
  std::size_t spawn_agents(std::size_t n);
  /// Spawns up to `n` agents of kind `kind` (an index into the kinds; a kind out of range spawns
  /// nothing), like spawn_agents() but without drawing the kind, and when `zone` is given only
  /// in that rectangle of cells (clamped to the map): per agent up to kSpawnDraws uniform cells
  /// of the zone where the kind's block fits, the first of rank 0 (reachable, far from the
  /// players) or else the best rank drawn; when no draw fits, a scan of the zone (zones up to
  /// kZoneScanCells cells; bigger ones hold the agent back). The density limit holds as in
  /// spawn_agents(). Returns how many were spawned; the rest count in spawns_held_back() when
  /// the zone has no room. The wave director's orders come here.
  std::size_t spawn_agents_of(std::uint8_t kind, std::size_t n, const std::optional<SpawnZone>& zone);
  static constexpr std::size_t kZoneScanCells = std::size_t{1} << 20;
  /// A living player faster than this (cells per second) is a goal on the move: the agents
  /// touching it are not held, so no resting pile forms behind a walking player, and agents in
  /// sight of it pursue it, heading for where it is going (Swarm::step's goal_velocities).
  static constexpr float kMovingGoalCellsPerSecond = 0.5f;
  /// The wave director (WorldParams::waves): comings started so far, and whether the table is done.
  [[nodiscard]] const WaveDirector& waves() const noexcept { return waves_; }
  /// Changes one cell's cost (run-time blocker); agents inside it are pushed out on the next
  /// step and the fields rebuild on the next step. A barricade on the cell is taken away first
  /// (reported in barricade_changes() as fallen, not counted in barricades_fallen()).
  void set_cell_cost(CellCoord c, std::uint8_t cost);

  /// Player `player_id` builds a barricade (barricades.hpp) on `cell` (map cells), at once: the
  /// cell becomes blocked in map() and passable at barricade_path_cost() in path_map(); the
  /// fields follow on the next step. Refused (nothing changes) without combat, for an unknown
  /// or dead player, a cell off the map, a cell whose centre is farther than
  /// CombatParams::barricade.build_range from the player's centre, a cell that is not walkable
  /// (a wall or a barricade), a cell some agent's or player's disc overlaps, or a player with
  /// barricade.per_player barricades standing. Deterministic: a replay that repeats the call
  /// at the same point gets the same result.
  BuildResult build_barricade(std::uint32_t player_id, CellCoord cell);
  /// Standing barricades, ordered by cell index (row-major).
  [[nodiscard]] std::span<const Barricade> barricades() const noexcept { return barricades_; }
  /// The barricade on `cell`, or null.
  [[nodiscard]] const Barricade* find_barricade(CellCoord cell) const noexcept;
  /// Barricade cells that changed (built, worn down an eighth of their health, fallen) since the
  /// caller last called clear_barricade_changes(), in order. For the server's map deltas.
  [[nodiscard]] std::span<const BarricadeChange> barricade_changes() const noexcept { return barricade_changes_; }
  void clear_barricade_changes() noexcept { barricade_changes_.clear(); }
  [[nodiscard]] std::uint64_t barricades_built() const noexcept { return barricades_built_; }
  /// Barricades the horde broke.
  [[nodiscard]] std::uint64_t barricades_fallen() const noexcept { return barricades_fallen_; }
  /// The map the fields are built on: map() with every barricade cell passable at its path
  /// cost (the same object as map() until the first barricade is built). Shots see through
  /// it too: a barricade stops the horde, not the players' fire.
  [[nodiscard]] const GridMap& path_map() const noexcept { return path_map_split_ ? path_map_ : map_; }

  /// One tick: apply player intents (clamped, collided with walls; a player inside a blocked
  /// cell is moved out first; dead players stay) -> rebuild the fields of each size class present (class 1 always,
  /// and those of the kinds with agents or a spawn weight) if a player changed that class's
  /// goal block (or the map changed)
  /// -> spawner (initial_agents on the first tick, then a wave every wave_interval_ticks) ->
  /// step the swarm -> collect contact events (agent disc touching player disc, one event per
  /// agent and player per tick) -> combat, when enabled (resolve_combat below) -> update the
  /// state hash. `dt` in seconds; a non-positive or
  /// non-finite `dt` is ignored (no tick). Same as begin_tick(dt) then finish_tick(dt).
  void step(float dt);

  /// The two phases of step(), for callers that measure them separately (the server times the
  /// field rebuild). Call them in pairs with the same `dt`. begin_tick applies the player
  /// intents and brings the fields up to date (with a rebuild budget: one slice of the build in
  /// progress); it returns true when it did rebuild work this tick.
  /// finish_tick runs the spawner, the swarm (Swarm::step with the NavigationSet: any-angle,
  /// per size class; agents stop where they touch a player's disc), the contacts and the state
  /// hash, and advances tick(). A non-positive or non-finite `dt` makes both a no-op (begin_tick returns false).
  bool begin_tick(float dt);
  void finish_tick(float dt);

  [[nodiscard]] std::uint64_t tick() const noexcept { return tick_; }
  /// 64-bit hash of the state after the last step (xxHash64-style mixing of the tick, every
  /// player's id, intent, position, velocity and contact count, and every agent's id, x, y and
  /// heading bit patterns in swarm order, and its kind when the world has more than one kind).
  /// 0 before the first step.
  [[nodiscard]] std::uint64_t state_hash() const noexcept { return state_hash_; }
  /// Completed rebuilds of the size-class-1 fields, in hierarchical mode of its portal routes
  /// (the classes of bigger kinds rebuild on the same triggers: a player changing that class's
  /// goal block, or the map changing; see all_rebuild_count()).
  [[nodiscard]] std::uint64_t rebuild_count() const noexcept {
    return nav_.hierarchical() ? nav_.hierarchical_fields(1).route_builds() : nav_.fields(1).rebuild_count();
  }
  /// Completed field rebuilds summed over every size class.
  [[nodiscard]] std::uint64_t all_rebuild_count() const noexcept { return nav_.rebuild_count(); }
  [[nodiscard]] const GridMap& map() const noexcept { return map_; }
  /// The fields of size class 1 (agents up to half a cell in radius), always kept: what the
  /// spawner's reachability and viewers' arrows use.
  [[nodiscard]] const NavigationFields& fields() const noexcept { return nav_.fields(1); }
  /// Every size class's fields (class 1 and the classes of the kinds present or spawnable).
  [[nodiscard]] const NavigationSet& navigation() const noexcept { return nav_; }
  /// The congestion fields the swarm steers by where a crowd blocks the exact route
  /// (WorldParams::congestion; whole-map field mode).
  [[nodiscard]] const CongestionFields& congestion() const noexcept { return congestion_; }
  [[nodiscard]] const Swarm& swarm() const noexcept { return swarm_; }
  [[nodiscard]] Swarm& swarm_mutable() noexcept { return swarm_; }
  [[nodiscard]] std::span<const Player> players() const noexcept { return players_; }
  [[nodiscard]] const Player* find_player(std::uint32_t player_id) const noexcept;
  /// Player ids are issued 1, 2, 3, ... and never reused: every id below this one named a player.
  [[nodiscard]] std::uint32_t next_player_id() const noexcept { return next_player_id_; }
  /// Contacts raised during the last step() (living players only).
  [[nodiscard]] std::span<const ContactEvent> contacts() const noexcept { return contacts_; }
  /// Agents killed during the last step(), in the order they died (shooters in player order,
  /// each shot's hits nearest first). They have left the swarm; their ids are never reused.
  [[nodiscard]] std::span<const AgentDeath> agent_deaths() const noexcept { return agent_deaths_; }
  /// Players killed during the last step(), in player order.
  [[nodiscard]] std::span<const PlayerDeath> player_deaths() const noexcept { return player_deaths_; }
  /// Agents killed and player deaths since the world began (players that left included).
  [[nodiscard]] std::uint64_t kills() const noexcept { return kills_; }
  [[nodiscard]] std::uint64_t player_death_count() const noexcept { return player_death_count_; }
  /// Shots fired since the world began (a shot that hits nothing counts).
  [[nodiscard]] std::uint64_t shots() const noexcept { return shots_; }
  /// Hit points left to the agent with `id` (its kind's health less the damage it took), or a
  /// negative value when no agent has that id. Linear in the swarm size (tests, tools).
  [[nodiscard]] float agent_health(std::uint32_t id) const noexcept;
  [[nodiscard]] const WorldParams& params() const noexcept { return params_; }
  /// Agents the spawner did not place because the swarm had reached the map's density limit
  /// (SpawnerParams::stop_at_density_limit) or because no place on the map fits their kind's
  /// size class, summed over every spawn so far.
  [[nodiscard]] std::uint64_t spawns_held_back() const noexcept { return spawns_held_back_; }
  /// Whole-map rankings of the spawn cells done so far (spawn_scanned()'s, and the list of cells
  /// where a size class's block fits: each once per change of the map, the fields or the
  /// players' positions, not once per spawn call), for tests and tools.
  [[nodiscard]] std::uint64_t spawn_rankings() const noexcept { return spawn_rankings_; }

 private:
  [[nodiscard]] Vec2 place_player(Vec2 p) const noexcept;  // add_player's placement rule
  // spawn_agents() parts (see its comment): the exact scan, the random draws (scan_rest set
  // when no draw found a walkable cell), the players' distance rule for a cell's centre, the
  // rank of a cell (0 best .. 3) given that rule's answer, reachability, one agent's placement.
  static constexpr std::size_t kSampledSpawnFromCells = std::size_t{2048} * 2048;
  static constexpr int kSpawnDraws = 64;
  std::size_t spawn_scanned(std::size_t n);
  std::size_t spawn_sampled(std::size_t n, bool& scan_rest);
  [[nodiscard]] bool far_from_players(CellCoord c) const;
  // `n` cut to the room the density limit leaves (SpawnerParams::stop_at_density_limit), the
  // rest counted as held back.
  std::size_t within_density_limit(std::size_t n);
  // The kind of the next spawned agent: the one spawn_agents_of forces, else drawn by weight
  // (draw_kind: more than one spawnable kind) or the only spawnable one.
  std::uint8_t spawn_kind(bool draw_kind);
  // Rank and reachability for an agent of size class `size_class` (c: the top-left cell of its
  // class block, the class fields' lattice).
  int spawn_rank(CellCoord c, bool far, int size_class);
  bool reachable_for_spawn(CellCoord c, int size_class);
  // True when the size_class x size_class cells from c (top-left) are all walkable: a disc of
  // that class centred in the block clears every wall (class 1: the cell is walkable).
  [[nodiscard]] bool class_block_fits(CellCoord c, int size_class) const noexcept;
  // Up to kSpawnDraws uniform cells where the class fits: the first of rank 0, else the best
  // rank drawn; false when no draw fits.
  bool draw_spawn_cell(int size_class, std::uint32_t& cell);
  // A uniform pick among the cells of the best rank where the class fits (listed by one O(cells)
  // scan per spawn_agents() call and class: the last resort); false when it fits nowhere.
  bool scan_spawn_cell(int size_class, std::uint32_t& cell);
  std::array<std::vector<std::uint32_t>, kMaxSizeClass> fit_cells_;  // scan_spawn_cell()'s lists
  std::array<bool, kMaxSizeClass> fit_scanned_{};                    // ... made for spawn_scan_key_
  bool place_spawned_agent(std::uint32_t cell, std::uint8_t kind);
  void move_players(float dt);
  bool update_fields();
  void collect_contacts(float dt);
  // Combat after the contacts (CombatParams::enabled): shots of players whose gun is ready ->
  // dead agents leave the swarm -> players at 0 health die -> dead players count down and
  // respawn at their spawn point with full health. The agents' damage to players was summed by
  // collect_contacts() into player_damage_.
  void resolve_combat(float dt);
  void resolve_shots();
  void update_player_lives(float dt);
  // Barricades (world_barricades.cpp): agents within their attack range of a barricade's cell
  // wear it down; at 0 it falls (remove_barricade_at: both maps get the cell's cost back).
  void attack_barricades(float dt);
  // Waves (world_waves.cpp): the director's orders for this tick, placed by spawn_agents_of.
  void run_waves(float dt);
  std::size_t spawn_in_zone(std::uint8_t kind, std::size_t n, SpawnZone zone);
  void remove_barricade_at(std::size_t index, bool report);
  [[nodiscard]] std::uint64_t compute_state_hash() const noexcept;

  GridMap map_;
  WorldParams params_;
  /// Size classes with fields: class 1 and those of kinds with agents or a spawn weight.
  [[nodiscard]] SizeClassMask classes_present() const noexcept;
  NavigationSet nav_;
  CongestionFields congestion_;   // crowd density in the path cost (whole-map mode)
  std::vector<float> kind_area_;  // per kind: its disc's area (world units squared)
  std::vector<float> kind_speed_;  // per kind: its top speed (world units per second)
  std::vector<Vec2> goal_velocities_;  // per player (goal index): its velocity while walking, else 0 (Swarm::step)
  std::vector<std::uint8_t> agent_classes_;  // hierarchical fields: each agent's size class (scratch)
  Swarm swarm_;
  std::vector<Player> players_;
  std::vector<Vec2> goal_positions_;  // scratch of update_fields(): the players' positions
  std::vector<ContactEvent> contacts_;
  // Combat state: damage taken by agents that were hit and still live, by id (sparse: most
  // agents are never hit; a map keeps the hash's order fixed), and per player (same order as
  // players_) the damage agents did this tick.
  std::map<std::uint32_t, float> agent_damage_;
  std::vector<float> player_damage_;
  std::vector<AgentDeath> agent_deaths_;
  std::vector<PlayerDeath> player_deaths_;
  std::vector<ShotCandidate> shot_scratch_;
  std::vector<std::uint32_t> shot_hits_;
  std::vector<std::size_t> dead_agents_;  // indices into the swarm, this tick
  std::vector<std::uint8_t> dead_mask_;   // per agent index: 1 when killed this tick
  std::uint64_t kills_ = 0;
  std::uint64_t player_death_count_ = 0;
  std::uint64_t shots_ = 0;
  // Barricades: standing ones by cell index, the changes not yet taken, the path map (a copy of
  // map_ with barricades passable at their cost, made at the first build).
  std::vector<Barricade> barricades_;
  std::vector<BarricadeChange> barricade_changes_;
  GridMap path_map_;
  bool path_map_split_ = false;
  std::vector<std::uint64_t> barricade_tiles_;  // attack_barricades(): tiles near a barricade (bits)
  std::vector<float> barricade_damage_;         // ... per barricade this tick
  std::vector<std::size_t> fallen_scratch_;     // ... indices of those that fell
  std::uint64_t barricades_built_ = 0;
  std::uint64_t barricades_fallen_ = 0;
  WaveDirector waves_;
  bool waves_started_ = false;
  std::vector<SpawnOrder> wave_orders_;
  int forced_kind_ = -1;  // spawn_agents_of without a zone: the kind spawn_scanned/sampled place
  std::vector<std::uint32_t> spawn_candidates_;  // scratch of spawn_scanned(): cell indices
  // What spawn_scanned()'s spawn_candidates_ and scan_spawn_cell()'s fit_cells_ were made from:
  // while the maps' revisions, the completed field builds and the players' positions are the
  // same, the lists are reused instead of ranking every cell again. A wave paced over its
  // duration orders a few agents per kind each tick, and a rules script may call game.spawn in
  // a loop: each call ranked the whole map twice (a 2000 x 2000 city: tick p50 4 -> 48 ms; 1e5
  // calls of 1 agent held the tick thread for minutes).
  struct SpawnScanKey {
    std::uint32_t map_revision = 0;
    std::uint32_t path_revision = 0;
    std::uint64_t field_builds = 0;
    std::vector<Vec2> players;
    friend bool operator==(const SpawnScanKey&, const SpawnScanKey&) = default;
  };
  SpawnScanKey spawn_scan_key_;  // the last spawn_agents() call's (it drops the lists on a change)
  [[nodiscard]] SpawnScanKey spawn_scan_key() const;
  int spawn_scan_best_ = -1;  // the rank spawn_candidates_ holds; -1: none kept (scratch of spawn_in_zone)
  // Spawn reachability in hierarchical mode, per size class (labels kept per sector).
  std::array<RouteReachability, kMaxSizeClass> route_reachability_;
  std::mt19937_64 rng_;
  std::unique_ptr<WorkerPool> pool_;  // null when worker_threads <= 1
  std::uint32_t next_player_id_ = 1;
  std::uint64_t tick_ = 0;
  std::uint64_t state_hash_ = 0;
  std::uint64_t spawns_held_back_ = 0;
  std::uint64_t spawn_rankings_ = 0;
  // Hierarchical fields: the next update_fields() builds the occupied sectors' fields under a
  // start-up budget (set by the initial spawn, see finish_tick() and update_fields()).
  bool fields_for_all_agents_ = false;
};

}  // namespace swarmfield::sim
