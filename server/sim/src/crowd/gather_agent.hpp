#pragma once
// The neighbour gather's data for one agent (Swarm::gather_neighbours_of_kinds): the other
// agents' slot-indexed arrays and the pass's constants (GatherInput), the agent's own side
// (GatherAgent) and what the gather accumulates for it (GatherSums). Internal to
// server/sim/src/crowd; used by gather_kernel.hpp, right_of_way.hpp and swarm_separation.cpp.
#include <cstdint>

#include "swarm_tick.hpp"

namespace swarmfield::sim::crowd_detail {

/// The separation pass's view of the other agents (slot-indexed arrays) and its constants: with
/// one kind, inv_r, cd and pd are those of its pair; with several (kMixed below), each hit's pair
/// constants come from the agent's row of the pair table, indexed by the neighbour's kind.
struct GatherInput {
  const float* nx;
  const float* ny;
  const std::uint32_t* nid;
  const std::uint32_t* nprio;
  const float* npx;
  const float* npy;
  const std::uint8_t* nkind;
  const std::uint8_t* nrest;  // 1 = at rest last tick
  const std::uint8_t* nstream;  // 1 = moved at speed last tick
  const float* nvx;  // velocity last tick (world units per second)
  const float* nvy;
  float inv_r, cd, pd, yf;
  float lead_dt;   // seconds of a leader's last velocity counted as gone from the way; 0: none
  bool press_all;  // the flow-field step: push on into every neighbour overlapped past pd
  const std::uint8_t* nopen;  // Swarm::open_here_ (kWideOpen: the 5 x 5 cells round all walkable)
  const float* ngoal_room;    // Swarm::goal_room_ (infinite: no goal in sight, priority by the field)
  // One kind (not kMixed): its pair's PairTick::both_large (goes_first); with several kinds each
  // hit's pair's.
  bool both_large = false;
};

/// One agent's side of the gather.
struct GatherAgent {
  float px, py;    // position
  float skx, sky;  // unit direction of its path (when moving)
  std::uint32_t id, prio;
  bool moving;
  bool impatient;  // waited kPatienceTicks for converging agents: no longer yields to them
  bool chasing;    // its goal is on the move: counts on leaders going on (see gather_one)
  const crowd_detail::PairTick* pair_row;  // its kind's row of the pair table
  bool wide_open = false;  // the 5 x 5 cells round its own all walkable (see gather_one's kernel rule)
  bool shoves = false;     // held up last tick, with a way (or a larger kind with none): shoves (shoves_across)
  bool backs_off = false;  // a larger size class near a wall, with a way, no goal in sight: backs off (GatherSums::bx)
  bool large = false;      // its kind's own pair is both_large: goes_first may apply to its pairs
  bool by_field = false;   // its priority is the field's (no goal in sight: goal_room_ infinite)
};

/// What the gather accumulates for one agent.
struct GatherSums {
  float sx = 0.0f, sy = 0.0f;  // kernel sum
  float kx = 0.0f, ky = 0.0f;  // contact sum
  float allow;                 // free path along the path direction
  std::uint32_t count = 0, coincident = 0, rank = 0;
  std::uint32_t anchored = 0;  // touches a neighbour ahead with right of way that rested last tick
  float yield_allow;           // the free path left by neighbours converging on the agent's path
  float press_allow;           // the free path pushing on into every neighbour it overlaps past pd
  float overlap = 0.0f;        // summed disc overlaps, in contact distances (how crushed it is)
  float wx = 0.0f, wy = 0.0f;  // chasing, mixed: which way to make way for faster kinds behind
  // Shoving (GatherAgent::shoves), mixed: nonzero when a smaller kind on another route (as in
  // shoves_across, whatever its heading) still limits the free path: held in another route's crowd.
  std::uint32_t other_route = 0;
  // Backing off (GatherAgent::backs_off): the sum of unit vectors away from neighbours with right
  // of way that it yields to, that touch it, head into it and were held up last tick (held up
  // by it: kBackOffContact, kBackOffHeading, kStoodBit).
  float bx = 0.0f, by = 0.0f;
};

}  // namespace swarmfield::sim::crowd_detail
