#pragma once
// The crowd rules' constants and the free path, shared by the separation pass
// (swarm_separation.cpp, gather_kernel.hpp, right_of_way.hpp) and the side step (swarm_side_step.cpp).
// Internal to server/sim/src/crowd.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::sim::crowd_rules {

// Held by a neighbour: centres closer than this many contact distances, and the neighbour
// within acos(kHeldAhead) of the agent's path.
inline constexpr float kHeldContact = 1.1f;
// Crushed: summed overlaps with the neighbours above this many contact distances (a crowd packed
// past contact, as a spawn can be); see gather_neighbours_of_kinds.
inline constexpr float kCrushed = 0.6f;
inline constexpr float kHeldAhead = 0.0f;
// Ticks an agent yields to agents crossing its way before it stops yielding to them (fairness:
// nobody starves on a door post while a stream goes by).
inline constexpr std::uint32_t kPatienceTicks = 20;
// Making way (an agent whose goal moves, pressed from behind by a faster kind heading into it):
// a neighbour within kMakeWayContact contact distances, behind or beside, whose path points at
// the agent within acos(kMakeWayHeading) (120 degrees: any faster neighbour behind or beside not
// walking off; at 60 degrees runners caught in a body of walkers and brutes chasing a player got
// by less: 600 chase 77-79% of the agents not held by the pile at speed, now 80-81%); the agent
// then turns kMakeWayTurn (tangent) to the side away from it when that keeps kMakeWayProgress of
// a step toward its goal.
inline constexpr float kMakeWayContact = 1.3f;
inline constexpr float kMakeWayHeading = -0.5f;
inline constexpr float kMakeWayTurn = 1.0f;
inline constexpr float kMakeWayProgress = 0.5f;
// Swarm::streaming_ bits: moved at kStreamSpeed of its max last tick (a stream going by), and at
// kFreeFlowSpeed of it (flowing freely: a leader a chasing agent counts on going on).
inline constexpr std::uint8_t kStreamBit = 1, kFreeFlowBit = 2;
// kStoodBit: below kStreamSpeed (held up: a larger kind touching it, in its way, backs off).
inline constexpr std::uint8_t kStoodBit = 4;
// Right of way between two agents of a larger size class (goes_first): by who is in front when
// their priorities differ by less than this (one cell of the field).
inline constexpr std::uint32_t kFrontBand = 985;
// An agent moves (has a path) when its path rate is above this.
inline constexpr float kMovingPath = 1e-4f;
// Backing off (a larger size class near a wall, out of sight of its goal: GatherAgent::backs_off)
// from a neighbour with right of way that touches it (within kBackOffContact contact distances),
// heads into it (the cosine of its path with the line to the agent above kBackOffHeading) and was
// held up last tick (kStoodBit), by at most kBackOffStep of its step a tick.
inline constexpr float kBackOffContact = 1.02f;
inline constexpr float kBackOffHeading = 0.7f;
inline constexpr float kBackOffStep = 0.5f;
// Touching the goal's disc: the room left to it below this many of the agent's diameters.
inline constexpr float kGoalTouch = 0.05f;
// A step round the agent ahead is looked for when the path brings the agent less than
// kSideTrigger of a step closer, and taken when it brings it kSideMargin of a step closer still.
inline constexpr float kSideTrigger = 0.5f;
inline constexpr float kSideMargin = 0.05f;
// An agent chasing a goal on the move looks for a step round the agent ahead already when that
// holds it below this much of its step (overtaking a slower kind).
inline constexpr float kOvertakeTrigger = 0.9f;
// A side step must be free for at least this much of a step: slivers of room between packed
// neighbours are not a way round (taking them keeps a pile creeping for ever).
inline constexpr float kSideMinFree = 0.75f;
// Touching, for the blocker a step round goes round: centres closer than this many contact
// distances. A walk round may take the agent this much (cosine) away from its goal direction.
inline constexpr float kTouching = 1.05f;
inline constexpr float kRoundSlack = 0.05f;
// The two tangents an agent at rest on wide open ground tries are tilted this much (of a unit
// vector) away from the blocker; its way round opens when kOpensAhead contact distances toward
// the goal are free beside the blocker (swarm_side_step.cpp).
inline constexpr float kRoundTilt = 0.02f;
inline constexpr float kOpensAhead = 3.0f;
// Below this length of the steering's part along the blocker, the blocker is dead ahead.
inline constexpr float kSlideMin = 0.1f;
// Side steps turn a moving agent (last speed above kTurnAbove of its max) round the agents ahead
// (overtaking in a stream); a held agent walks round the agent it is held by. Neither goes
// against the way it moved last tick, when faster than kReverseBelow of its max.
inline constexpr float kTurnAbove = 0.5f;
inline constexpr float kReverseBelow = 0.1f;
// The directions tried: the steering direction turned by these angles either way (cos, sin).
inline constexpr float kSideCos[2] = {0.76604444f, 0.25881905f};  // 40 and 75 degrees
inline constexpr float kSideSin[2] = {0.64278761f, 0.96592583f};

// A neighbour with no way to any goal (prio_ unreachable: a brute in a room whose doors it
// cannot fit) that the agent's path only grazes (approach, the cosine between the path and the
// way to it, below kGrazeStuck) does not stop an agent that has a way: it pushes past, and the
// contact term shoves the stuck one aside. Else a brute a step behind a 1-cell door's mouth held
// the walkers on both of the door's posts, each sliding along the wall into it, for seconds
// (the mixed door room of crowd_scenes.sh: 3 s with seed 1, 5.3 s with seed 7). Tried only for
// agents sliding along a wall, past a brute clear of the walls: no better (seeds 2, 7, 11 of
// that room 1.7-2.0 s against 0.7-1.0 s).
inline constexpr float kGrazeStuck = 0.6f;

// Cross traffic of a smaller size class: an agent of a larger class with a way to a goal is
// not held up by a neighbour of a smaller class ahead whose own path crosses the agent's (the
// cosine between the two paths below kShoveCross): it shoves through, and the contact term
// pushes the smaller one aside. Else a brute whose way runs past a gap only smaller kinds fit
// yields to the queue converging on the gap, and waits pinned beside the gap's mouth for as
// long as the queue lasts (issue 19's gap scene: three brutes 2-6 s; a 2-cell opening: 12 s).
// Only an agent held up last tick (moving below kShoveBelow of its top speed) shoves, and only
// through neighbours on another route: nearer the goal by more than kShoveRouteGap (integration
// units, 8 cells) at the same place. Without that, brutes held up in a street crowd shoved through
// every crossing runner (the Paris junction's jitter 299 -> 545, the Boston street's overlapping
// pairs 11.4 -> 16.7 a frame).
inline constexpr float kShoveCross = 0.7f;
inline constexpr float kShoveBelow = 0.5f;
inline constexpr std::uint32_t kShoveRouteGap = 8 * kOrthogonalStep;

// The contact projection (swarm_contacts.cpp) takes out overlaps deeper than this fraction of
// the smaller radius of the pair (issue 19's bound is 10%), in kContactPasses passes, and leaves
// pairs whose centres are closer than sqrt(kCoincidentProjection) world units to the burst of a
// stack.
inline constexpr float kContactTolerance = 0.05f;
inline constexpr float kCoincidentProjection = 1e-8f;
inline constexpr int kContactPasses = 2;

// Sleep (SwarmParams::sleep_after_ticks): an agent at rest counts as still while it moves less
// than this fraction of its max step a tick, and one that rests but is pushed farther (the
// contact term) stirs its neighbours like a moving one. A settled pile's contact terms are far
// below it; an agent pressed by an arrival is far above it.
inline constexpr float kSleepStill = 0.01f;
// ... and an awake neighbour marks the calm agents round it (they wake) once it may have moved
// this fraction of its max step from where it last marked them: rest ends when a free path
// opens by wake_above (a quarter) of a step, so a creep below this changes no sleeper's choice.
inline constexpr float kSleepStir = 0.05f;

/// How far (world units) a disc may move along a unit direction before it touches another disc:
/// the other's centre is at distance `d` in a direction whose cosine with the move is
/// `approach` (> 0), and discs touch at `contact_d`. Exact for the straight sweep: the smallest
/// L >= 0 with |d u - L s| = contact_d, or +infinity when the sweep passes by. 0 when the
/// discs already overlap (any such move brings them closer).
inline float free_path(float d, float approach, float contact_d) noexcept {
  if (d <= contact_d) return 0.0f;
  const float disc = d * d * approach * approach - (d * d - contact_d * contact_d);
  if (disc < 0.0f) return std::numeric_limits<float>::infinity();
  return std::max(0.0f, d * approach - std::sqrt(disc));
}

}  // namespace swarmfield::sim::crowd_rules
