// Swarm: structure-of-arrays agents and the per-tick step (SPEC "Swarm step"), after the shape
// of DetourCrowd's dtCrowd::update(): one loop per phase, each in the unit named after it.
//   repair         here: repair_positions       agents at invalid positions move out of walls
//   rebuild hash   here: rebuild_hash           counting sort by cell (SpatialHash) ...
//   reorder        here: reorder_and_steer      ... agents reordered to slot order, then per chunk:
//   steer          swarm_steering.cpp           flow direction, route commitment, obstacles, wall path
//   gather         swarm_separation.cpp         separation, contact, free path, stacks bursting
//   integrate      swarm_motion.cpp             correction and move, slid along walls (wall_collision)
//   heading        swarm_motion.cpp             bounded turn toward the steering direction
//   bursts         here: start_and_move_bursts  chunks where a burst starts, after its pattern points
//   contacts       swarm_contacts.cpp           overlaps past a tolerance taken out of the new positions
//   pile profile   swarm_pile_profile.cpp       per standing goal, how far its pile reaches (levelling)
// Sleep (swarm_sleep.cpp) decides in the gather which settled agents skip it, and the marks that
// wake them. The map the agents live on (hashes, open-cell cache, clearance) is followed in
// swarm_environment.cpp; the agents' storage (construction, add, remove, kinds) is swarm_agents.cpp.
// step_impl is the list of these calls (gather, integrate and heading in gather_integrate_turn).
//
// Every phase reads the previous tick's arrays or the completed outputs of earlier phases and
// writes per-agent outputs, so one agent's new state never depends on another agent's new
// state: the phases run over a WorkerPool in fixed chunks of agents, with the pool's return as
// the barrier between them, and give the same result for any thread count. Phases that read
// only their own agents' outputs of the phase before run on the same chunk right after it,
// inside one parallel loop (reorder + steer; gather + integrate + heading), while the chunk's
// arrays are still in cache.
#include "swarmfield/sim/crowd/swarm.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iterator>
#include <limits>

#include "crowd_rules.hpp"
#include "lattice_sampler.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim {

using crowd_detail::cell_of;

void Swarm::step(const GridMap& map, const FlowField& flow, float dt, WorkerPool* pool) {
  step_impl(map, flow, nullptr, nullptr, nullptr, {}, dt, pool);
}

void Swarm::step(const GridMap& map, const FlowField& flow, const IntegrationField& integration, float dt,
                 WorkerPool* pool) {
  step_impl(map, flow, &integration, nullptr, nullptr, {}, dt, pool);
}

void Swarm::step(const GridMap& map, const NavigationSet& nav, float dt, WorkerPool* pool,
                 const CongestionFields* congestion, std::span<const Vec2> goal_velocities) {
  // Class 1's fields stand in for the single field where the phases still look at one (the
  // prefetch of the steering phase); each agent reads its own class's.
  step_impl(map, nav.fields(1).flow(), &nav.fields(1).integration(), &nav, congestion, goal_velocities, dt, pool);
}

void Swarm::step_impl(const GridMap& map, const FlowField& flow, const IntegrationField* integration,
                      const NavigationSet* nav, const CongestionFields* congestion,
                      std::span<const Vec2> goal_velocities, float dt, WorkerPool* pool) {
  if (!(dt > 0.0f) || !std::isfinite(dt)) return;
  const bool environment_changed = follow_environment(map);
  if (integration != nullptr && (integration->width() != map.width() || integration->height() != map.height())) {
    integration = nullptr;  // not built for this map: cannot tell unreachable cells apart
  }
  crowd_detail::SwarmTick t{map, flow, integration};
  prepare_tick(t, nav, congestion, goal_velocities, dt, environment_changed);
  prepare_sleep(t, environment_changed);
  far_held_ = t.far_step;
  resize_tick_buffers(t.n);

  // Threading: every phase below is a parallel_for over fixed chunks of `chunk` agents. A
  // phase writes only the slots of its own agents and reads the previous tick's arrays or the
  // completed outputs of earlier phases (the pool's return is the barrier), so an agent's
  // arithmetic never depends on the thread count. The one cross-agent step, the hash rebuild,
  // is a stable sort by cell, whose result is unique (see SpatialHash::rebuild).
  repair_positions(t, nav, pool);
  rebuild_hash(t, pool);
  reorder_and_steer(t, pool);
  mark_removed_neighbours(t);
  gather_integrate_turn(t, pool);
  start_and_move_bursts(t, pool);
  project_contacts(t, pool);
  build_pile_profile(t);
  count_sleepers(t);
  swap_in_positions(t);
  far_seen_ = std::find(far_chunks_.begin(), far_chunks_.end(), std::uint8_t{1}) != far_chunks_.end();
  ++step_count_;
}

// Each goal's motion for the pursuit (see step()): its velocity's direction and speed, and its
// clear run ahead, walked in quarter cells over the map until a cell that is not plain walkable
// (a wall, a barricade, rough ground: the any-angle layer's sight rule), less half a cell so the
// point keeps off the wall. A few hundred cell reads per moving goal.
void Swarm::prepare_goal_leads(crowd_detail::SwarmTick& t, const NavigationSet* nav,
                               std::span<const Vec2> goal_velocities) {
  t.goal_leads = {};
  t.any_goal_moving = false;
  if (nav == nullptr || !nav->has_class(1)) return;
  const std::span<const Vec2> goals = nav->goal_positions(1);
  const std::size_t n = std::min(goals.size(), goal_velocities.size());
  goal_leads_.resize(n);  // grows once: no allocation per tick with the same goals
  const float cs = t.map.cell_size();
  const float step = 0.25f * cs;
  const int steps = static_cast<int>(kPursuitRunCells * 4.0f);
  for (std::size_t g = 0; g < n; ++g) {
    crowd_detail::GoalLead& lead = goal_leads_[g];
    lead = {};
    const Vec2 v = goal_velocities[g];
    const float speed = length(v);
    if (!(speed > 0.0f) || !std::isfinite(speed)) continue;
    lead.unit = v * (1.0f / speed);
    lead.speed = speed;
    t.any_goal_moving = true;
    int walked = 0;
    while (walked < steps) {
      const CellCoord c = t.map.world_to_cell(goals[g] + lead.unit * (step * static_cast<float>(walked + 1)));
      if (t.map.cost(c.x, c.y) != kDefaultCost) break;
      ++walked;
    }
    lead.run = std::max(0.0f, step * static_cast<float>(walked) - 0.5f * cs);
  }
  t.goal_leads = goal_leads_;
}

// The step's inputs and constants, per kind and per pair of kinds present.
void Swarm::prepare_tick(crowd_detail::SwarmTick& t, const NavigationSet* nav, const CongestionFields* congestion,
                         std::span<const Vec2> goal_velocities, float dt, bool environment_changed) {
  const GridMap& map = t.map;
  const std::size_t n = ids_.size();
  const float cs = map.cell_size();
  const std::int32_t map_w = map.width(), map_h = map.height();
  const std::size_t chunk = params_.parallel_chunk_agents;
  t.nav = nav;
  t.congestion = nav != nullptr ? congestion : nullptr;
  prepare_goal_leads(t, nav, goal_velocities);
  prepare_pile_profile(t, nav);
  // Class 1's far bits: one bit test per agent beyond the any-angle range instead of the region
  // bits of its lattice square (~70 instructions); the build costs ~12 per 64 cells, so only
  // with enough agents for the map.
  if (nav != nullptr && nav->has_class(1) && cs == 1.0f &&
      n * 8 >= static_cast<std::size_t>(map_w) * static_cast<std::size_t>(map_h) / 64) {
    crowd_detail::build_far_bits(nav->fields(1).any_angle(), far_bits_, far_scratch_);
    t.far_bits = far_bits_.data();
  }
  t.n = n;
  t.chunk = chunk;
  t.cs = cs;
  t.map_w = map_w;
  t.map_h = map_h;
  t.map_wf = static_cast<float>(map_w);
  t.map_hf = static_cast<float>(map_h);
  t.inv_cs = 1.0f / cs;
  t.unit_cells = cs == 1.0f && map_w < (1 << 24) && map_h < (1 << 24);
  t.open = open_cells_.data();
  t.dt = dt;
  t.inv_dt = 1.0f / dt;
  // Per kind and per pair of kinds present. A swarm of one kind gets exactly the constants of
  // SwarmParams (r + r == 2r, (R + R) / 2 == R in floats), so kinds change no result there.
  std::uint8_t present[kMaxAgentKinds];
  std::size_t present_count = 0;
  for (std::size_t k = 0; k < kind_table_.size(); ++k) {
    if (kind_counts_[k] != 0) present[present_count++] = static_cast<std::uint8_t>(k);
  }
  for (std::size_t k = 0; k < kind_table_.size(); ++k) {
    const AgentKind& kind = kind_table_[k];
    crowd_detail::KindTick& kt = t.kinds[k];
    kt.radius = wall_collision_radius(kind.radius, cs);
    kt.max_step = kind.max_speed * dt;
    kt.dt = dt;
    kt.inv_dt = t.inv_dt;
    kt.ticks = 1;
    kt.contact_d = 2.0f * kind.radius;
    kt.sep_r = kind_sep_r_[k];
    kt.inv_sep_r = 1.0f / kt.sep_r;
    kt.stiffness = params_.overlap_stiffness * kind.separation_weight;
    kt.contact_stiffness = params_.contact_stiffness;
    kt.commit_speed = params_.commit_min_speed * kind.max_speed;
    kt.max_turn = kind.max_turn_rate * dt;
    kt.size_class = size_class_of_radius(kind.radius, cs);
    kt.stop_distance = kind.radius + params_.goal_radius;
    kt.small_moves = kt.max_step + kt.radius < cs;
    float query_r = 0.0f;
    for (std::size_t q = 0; q < present_count; ++q) {
      const std::uint8_t other = present[q];
      const float pair_r = 0.5f * (kt.sep_r + kind_sep_r_[other]);
      query_r = std::max(query_r, pair_r);
      crowd_detail::PairTick& pair = t.pairs[k * kMaxAgentKinds + other];
      pair.r2 = pair_r * pair_r;
      pair.inv_r = 1.0f / pair_r;
      pair.cd = kind.radius + kind_table_[other].radius;
      pair.pd = pair.cd * (1.0f - params_.press_overlap);
      pair.faster = kind_table_[other].max_speed > kind.max_speed ? 1u : 0u;
      const int other_class = size_class_of_radius(kind_table_[other].radius, cs);
      pair.larger = kt.size_class > other_class ? 1u : 0u;
      // (With the crowd rules only: the World's step.)
      pair.both_large = nav != nullptr && kt.size_class > 1 && other_class > 1 ? 1u : 0u;
    }
    kt.query_r2 = query_r * query_r;
  }
  t.mixed = present_count > 1;
  t.only_kind = present_count == 1 ? present[0] : 0;
  if (present_count == 0) {  // no agents: keep the table well-defined anyway
    crowd_detail::PairTick& pair = t.pairs[0];
    pair.r2 = kind_sep_r_[0] * kind_sep_r_[0];
    pair.inv_r = 1.0f / kind_sep_r_[0];
  }
  // The contact projection's lists (see SwarmTick::kind_contact_r2): a pair (a, b) overlaps past
  // the tolerance after the move only if it started within r_a + r_b - tolerance + both steps.
  // Per pair of kinds present (the lists keep only those: a runner among runners is not kept for
  // every runner a brute's reach away, and its kContactSlots hold in a packed crowd), and per
  // kind the widest of its pairs (the gather's first test).
  // Far stepping: a far agent steps with 2 or 4 times dt on one tick in 2 or 4 (see
  // SwarmParams::far_step_cells, crowd_detail::far_holds); only once some agent was far (far_seen_), so a scene without
  // one keeps every constant below, and not when the map changed (every agent moves then: those
  // a new wall overlaps are pushed clear at once).
  t.far_prio = 0;
  if (nav != nullptr && !nav->hierarchical() && params_.far_step_cells > 0.0f) {
    const float prio = params_.far_step_cells * static_cast<float>(kOrthogonalStep);
    t.far_prio = prio < 4.0e9f ? std::max<std::uint32_t>(1u, static_cast<std::uint32_t>(prio)) : kUnreachable - 1;
  }
  t.far_prio2 = params_.far_step_levels >= 2 && t.far_prio != 0 && t.far_prio < kUnreachable / 2 ? 2 * t.far_prio : 0;
  t.far_step = t.far_prio != 0 && far_seen_ && !environment_changed;
  t.far_tick = static_cast<std::uint32_t>(step_count_);
  for (std::size_t k = 0; k < kind_table_.size(); ++k) {
    for (const std::uint32_t ticks : {2u, 4u}) {
      crowd_detail::KindTick& far = ticks == 2 ? t.far_kinds[k] : t.far_kinds2[k];
      const auto times = static_cast<float>(ticks);
      far = t.kinds[k];
      far.max_step = times * far.max_step;
      far.max_turn = times * far.max_turn;
      far.dt = times * dt;
      far.inv_dt = 1.0f / far.dt;
      far.ticks = ticks;
      far.small_moves = far.max_step + far.radius < cs;
      // What its ticks' corrections remove of an overlap (each removes its fraction of the rest):
      // an overlap near a wall, where only these clear it, lasts no longer than every tick.
      float keep = (1.0f - far.stiffness) * (1.0f - far.stiffness);
      float contact_keep = (1.0f - far.contact_stiffness) * (1.0f - far.contact_stiffness);
      if (ticks == 4) {
        keep *= keep;
        contact_keep *= contact_keep;
      }
      far.stiffness = 1.0f - keep;
      far.contact_stiffness = 1.0f - contact_keep;
    }
  }
  // The contact lists' reach, from the steps of the kinds that may move this tick: with far
  // stepping level 1's (a level-2 pair closing more than two level-1 steps in one step is parted
  // by the next gather; reaching four steps, the lists of a packed crowd passed kContactSlots and
  // sent the projection to the hash).
  const auto contact_reach = [&](const crowd_detail::KindTick* steps) {
    t.contact_step_max = 0.0f;
    t.contact_r_max = 0.0f;
    for (std::size_t q = 0; q < present_count; ++q) {
      t.contact_step_max = std::max(t.contact_step_max, steps[present[q]].max_step);
      t.contact_r_max = std::max(t.contact_r_max, 0.5f * t.kinds[present[q]].contact_d);
    }
    bool complete = nav != nullptr && present_count > 0;
    for (std::size_t a = 0; a < present_count; ++a) {
      const crowd_detail::KindTick& ka = t.kinds[present[a]];
      const float ra = 0.5f * ka.contact_d;
      float widest = 0.0f;
      for (std::size_t b = 0; b < present_count; ++b) {
        const crowd_detail::KindTick& kb = t.kinds[present[b]];
        const float rb = 0.5f * kb.contact_d;
        const float reach = ra + rb - crowd_rules::kContactTolerance * std::min(ra, rb) + steps[present[a]].max_step +
                            steps[present[b]].max_step + crowd_detail::kContactMargin;
        t.pairs[present[a] * kMaxAgentKinds + present[b]].contact_r2 = reach * reach;
        widest = std::max(widest, reach);
      }
      t.kind_contact_r2[present[a]] = widest * widest;
      if (!(widest <= hash_.cell_size())) complete = false;
    }
    return complete;
  };
  t.contacts_complete = contact_reach(t.far_step ? t.far_kinds : t.kinds);
  if (t.far_step && !t.contacts_complete) {
    // Two far steps would reach past the hash's block (a horde of one small kind: the block is
    // its R): the lists reach the steps of one tick. A pair of far agents that closes more than
    // that in one step is then parted by the next step's gather instead of this projection.
    // (Turning far stepping off instead left every single-kind horde stepping every tick.)
    t.contacts_complete = contact_reach(t.kinds);
  }
  if (!t.contacts_complete) {
    std::fill(std::begin(t.kind_contact_r2), std::end(t.kind_contact_r2), 0.0f);
    for (crowd_detail::PairTick& pair : t.pairs) pair.contact_r2 = 0.0f;
  }
  // What a far step can reach: a runner's 0.3-cell step (level 1) closed from beyond the pair's
  // R (0.77 cells with a walker, contact 0.6), where the gather did not look, into 0.13 cells of
  // overlap; beside walls only the correction terms parted them (Paris_1_1024, 10,000 mixed:
  // pairs past 10% of the smaller radius 2.4 per frame every tick, 26.4 with far stepping).
  if (t.far_step) {
    for (std::size_t a = 0; a < present_count; ++a) {
      const std::uint8_t ka = present[a];
      const float step = (t.far_prio2 != 0 ? t.far_kinds2 : t.far_kinds)[ka].max_step;
      float widest2 = 0.0f;
      for (std::size_t b = 0; b < present_count; ++b) {
        const std::size_t at = ka * kMaxAgentKinds + present[b];
        crowd_detail::PairTick pair = t.pairs[at];
        const float reach = pair.cd + step + crowd_detail::kContactMargin;
        pair.r2 = std::max(pair.r2, reach * reach);
        t.far_pairs[at] = pair;
        widest2 = std::max(widest2, pair.r2);
      }
      t.far_kinds[ka].query_r2 = std::max(t.far_kinds[ka].query_r2, widest2);
      t.far_kinds2[ka].query_r2 = std::max(t.far_kinds2[ka].query_r2, widest2);
    }
  }
  t.max_force = params_.obstacle_max_force;
  t.have_obstacles = !obstacles_.empty();
  t.yield = params_.yield_to_agents_ahead;
  t.yield_fraction = params_.yield_fraction;
  t.rest_below = params_.rest_below;
  t.wake_above = params_.wake_above;
  t.corner_eps = 2.0f * wall_span_epsilon(map);
  t.step_slack = 1.0e-6f * cs + 8.0e-7f * static_cast<float>(std::max(map_w, map_h)) * cs;
}

// Per-slot scratch sized for n agents (within the capacity reserved at construction).
void Swarm::resize_tick_buffers(std::size_t n) {
  for (auto* v : {&steer_x_, &steer_y_, &move_x_, &move_y_, &path_x_, &path_y_, &next_xs_, &next_ys_, &corr_x_,
                  &corr_y_, &allow_, &goal_room_}) {
    v->resize(n);
  }
  prio_.resize(n);
  open_here_.resize(n);
  contacts_.resize(n * crowd_detail::kContactSlots);
  contact_count_.resize(n);
  contact_moved_.resize(n);
  contact_moved_last_.resize(n);
  streaming_.resize(n);
  goal_moves_.resize(n);
  sight_goal_.resize(n);
  pile_sector_.resize(n);
  pile_dist_.resize(n);
  pile_level_.resize(n);
  bursting_.resize(n);
  asleep_.resize(n);
}

// --- Repair: positions that are non-finite or inside a blocked cell (set by add(),
//     set_position() or a wall that appeared) move to the nearest point clear of walls in the
//     nearest walkable cell; a disc of half a cell or more (its square spans several cells)
//     also when its square overlaps a wall, to the nearest point where its square fits in a
//     block of its size class (move_disc_out_of_walls). Only needed after such a change:
//     step() itself never leaves an agent in a wall, so this loop is skipped on ordinary ticks.
void Swarm::repair_positions(crowd_detail::SwarmTick& t, const NavigationSet* nav, WorkerPool* pool) {
  const GridMap& map = t.map;
  const std::size_t n = t.n;
  const float cs = t.cs;
  const std::size_t chunk = t.chunk;
  if (needs_repair_) {
    bool big_kinds = false;
    for (std::size_t k = 0; k < kind_table_.size(); ++k) {
      big_kinds = big_kinds || (kind_counts_[k] != 0 && t.kinds[k].radius >= 0.5f * cs);
    }
    const ClearanceMap* const clearance = big_kinds ? &clearance_for(map, nav) : nullptr;
    const std::uint8_t max_clearance = clearance != nullptr ? clearance->largest() : 0;
    std::atomic<bool> invalid{false};  // an OR: the same whatever order chunks finish in
    parallel_for(pool, n, chunk, [&](std::size_t begin, std::size_t end, std::size_t) {
      bool bad = false;
      for (std::size_t i = begin; i < end; ++i) {
        const Vec2 p{xs_[i], ys_[i]};
        const float r = t.kinds[kinds_[i]].radius;
        Vec2 q = p;
        if (r < 0.5f * cs) {
          if (finite(p) && map.walkable(cell_of(p.x, cs), cell_of(p.y, cs))) continue;
          q = move_out_of_walls(map, p, r);
        } else {
          if (square_fits(map, p, r)) continue;
          // A class no block of the map fits (the clearance's largest value says so, without a
          // search per agent) gets the nearest walkable cell: it cannot stand anywhere without
          // touching a wall. (big_kinds holds here, so `clearance` is set.)
          const bool fits_somewhere = size_class_of_radius(r, cs) <= max_clearance;
          if (!fits_somewhere || !move_disc_out_of_walls(map, *clearance, p, r, q)) q = move_out_of_walls(map, p, r);
        }
        xs_[i] = q.x;
        ys_[i] = q.y;
        if (!map.walkable(cell_of(q.x, cs), cell_of(q.y, cs))) bad = true;  // map has no walkable cell
      }
      if (bad) invalid.store(true, std::memory_order_relaxed);
    });
    has_invalid_ = invalid.load(std::memory_order_relaxed);
    needs_repair_ = false;
  }
  t.has_invalid = has_invalid_;
}

// --- Rebuild hash, and reorder agents into its cell-sorted order -------------------------------
// Agent i of this step is slot i of the hash: neighbours, map cells and flow cells of
// consecutive agents are close in memory, which matters more than anything else at 100k
// agents on a 1024 x 1024 map. Agents move little per tick, so the order is nearly the same
// every tick and this permutation reads almost sequentially. Indices therefore change across
// steps; ids follow an agent. The hash's sorted positions are the previous tick's positions
// (the read buffer); this tick's are written to next_xs_/next_ys_ and swapped in at the end.
void Swarm::rebuild_hash(crowd_detail::SwarmTick& t, WorkerPool* pool) {
  const std::size_t n = t.n;
  hash_.rebuild(xs_, ys_, pool);
  t.items = hash_.items().data();
  t.sxs = hash_.sorted_xs().data();
  t.sys = hash_.sorted_ys().data();
  perm_ids_.resize(n);
  perm_headings_.resize(n);
  perm_burst_.resize(n);
  perm_vxs_.resize(n);
  perm_vys_.resize(n);
  perm_kinds_.resize(n);
  perm_resting_.resize(n);
  perm_wait_.resize(n);
  perm_commit_.resize(n);
  perm_calm_.resize(n);
  perm_signature_.resize(n);
  perm_wake_.resize(n);
  perm_mark_x_.resize(n);
  perm_mark_y_.resize(n);
  perm_far_.resize(n);
}

// The reorder runs chunk by chunk just before the steering of the same chunk, which reads
// the reordered state (perm_*, swapped in after the loop) while it is still in cache; t.kind
// points at the buffer that becomes kinds_.
void Swarm::reorder_and_steer(crowd_detail::SwarmTick& t, WorkerPool* pool) {
  const std::size_t n = t.n;
  const std::size_t chunk = t.chunk;
  t.kind = perm_kinds_.data();
  parallel_for(pool, n, chunk, [&](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t k = begin; k < end; ++k) {
      const std::uint32_t from = t.items[k];
      perm_ids_[k] = ids_[from];
      perm_headings_[k] = headings_[from];
      perm_burst_[k] = burst_ticks_[from];
      perm_vxs_[k] = vxs_[from];
      perm_vys_[k] = vys_[from];
      perm_kinds_[k] = kinds_[from];
      perm_resting_[k] = resting_[from];
      perm_wait_[k] = wait_[from];
      perm_commit_[k] = commit_[from];
      perm_calm_[k] = calm_[from];
      perm_signature_[k] = signature_[from];
      perm_wake_[k] = wake_[from];
      perm_mark_x_[k] = mark_x_[from];
      perm_mark_y_[k] = mark_y_[from];
      perm_far_[k] = far_[from];
    }
    // --- Steer: desired = smoothed flow or the size class's any-angle direction, obstacle
    //     force, steer = normalize(desired * w + force), and the path a full step takes along
    //     walls (swarm_steering.cpp).
    steer_agents(t, begin, end);
  });
  ids_.swap(perm_ids_);
  headings_.swap(perm_headings_);
  burst_ticks_.swap(perm_burst_);
  vxs_.swap(perm_vxs_);
  vys_.swap(perm_vys_);
  kinds_.swap(perm_kinds_);
  resting_.swap(perm_resting_);
  wait_.swap(perm_wait_);
  commit_.swap(perm_commit_);
  calm_.swap(perm_calm_);
  signature_.swap(perm_signature_);
  wake_.swap(perm_wake_);
  mark_x_.swap(perm_mark_x_);
  mark_y_.swap(perm_mark_y_);
  far_.swap(perm_far_);  // the steering wrote this tick's outputs there; the gather sets `far`
  // This tick's marks go to the spare buffer (swapped in with the positions).
  std::fill(perm_wake_.begin(), perm_wake_.end(), std::uint8_t{0});
}

// --- Gather neighbours: separation, contact, free path, stacks (swarm_separation.cpp).
// --- Integrate: correction then move, slid along walls (swarm_motion.cpp).
// --- Heading: bounded turn toward the steering direction (swarm_motion.cpp).
// The three run chunk by chunk in one parallel loop, each phase still its own loop over the
// chunk: the integration and the heading read only their own agents' gather and steering
// outputs (and the gather reads other agents' steering outputs and last tick's positions,
// which nothing here writes), so a chunk's arrays are still in cache when they are read
// again, and no result depends on the order. A chunk where a burst starts waits for the
// bursts' pattern points (start_bursts, serial; rare) and is integrated after them.
void Swarm::gather_integrate_turn(const crowd_detail::SwarmTick& t, WorkerPool* pool) {
  const std::size_t n = t.n;
  const std::size_t chunk = t.chunk;
  burst_chunks_.assign((n + chunk - 1) / chunk, 0);
  rest_chunks_.assign(burst_chunks_.size(), 0);
  shove_chunks_.assign(burst_chunks_.size(), 0);
  calm_chunks_.assign(burst_chunks_.size(), 0);
  sleep_chunks_.assign(burst_chunks_.size(), 0);
  far_chunks_.assign(burst_chunks_.size(), 0);
  parallel_for(pool, n, chunk, [&](std::size_t begin, std::size_t end, std::size_t) {
    gather_neighbours(t, begin, end);
    if (burst_chunks_[begin / chunk] != 0) return;
    integrate_agents(t, begin, end);
    turn_headings(t, begin, end);
  });
}

// --- Bursts starting this tick: their pattern points and durations, then their chunks.
void Swarm::start_and_move_bursts(const crowd_detail::SwarmTick& t, WorkerPool* pool) {
  if (std::find(burst_chunks_.begin(), burst_chunks_.end(), std::uint8_t{1}) == burst_chunks_.end()) return;
  const std::size_t chunk = t.chunk;
  start_bursts(t);
  parallel_for(pool, t.n, chunk, [&](std::size_t begin, std::size_t end, std::size_t) {
    if (burst_chunks_[begin / chunk] == 0) return;
    integrate_agents(t, begin, end);
    turn_headings(t, begin, end);
  });
}

// This tick's positions and rest flags become the state.
void Swarm::swap_in_positions(const crowd_detail::SwarmTick& t) {
  xs_.swap(next_xs_);
  ys_.swap(next_ys_);
  vxs_.swap(perm_vxs_);  // integrate_agents wrote this tick's velocities there
  vys_.swap(perm_vys_);
  resting_.swap(perm_resting_);  // the gather wrote this tick's rest flags there
  calm_.swap(perm_calm_);        // this tick's calm counts and marks (swarm_sleep.cpp)
  wake_.swap(perm_wake_);
  if (t.sleep_ticks != 0) {  // the gather wrote signatures and mark positions (else the reordered ones stand)
    signature_.swap(perm_signature_);
    mark_x_.swap(perm_mark_x_);
    mark_y_.swap(perm_mark_y_);
  }
  any_rest_ = std::find(rest_chunks_.begin(), rest_chunks_.end(), std::uint8_t{1}) != rest_chunks_.end();
}

}  // namespace swarmfield::sim
