#pragma once
// Congestion fields: per size class, an integration and flow field of the class's planning grid
// with a crowd-density cost added to each cell, so the route an agent prefers weighs the time a
// crowd costs, not the distance alone. The idea is Continuum Crowds' (Treuille, Cooper &
// Popovic 2006, "Continuum Crowds": path cost = length + discomfort, discomfort from the
// density field); here the discomfort of a cell is how much of it agents fill. A layer on top of
// the exact fields (NavigationSet), which stay exact: `swarmfield-tool scen` and the any-angle
// layer read those.
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::sim {

/// Per size class present: the class grid's costs plus a congestion cost, its integration field
/// (raw values in the units of IntegrationField, from the same goal blocks as the class's exact
/// field) and flow field. Rebuilt from the agents' positions every kPeriodTicks updates (one
/// class after another), each build time-sliced with a work budget per update (IntegrationField
/// work units); readers see the last complete build of a class (ready()). Deterministic: same
/// inputs, same fields; no clock. Whole-map field mode only (in hierarchical mode nothing is
/// built and ready() stays false). Memory: about 10 bytes per cell per class present.
class CongestionFields {
 public:
  /// Updates between the starts of two builds of the fields (all classes, one after another).
  static constexpr std::uint32_t kPeriodTicks = 15;
  /// Cost units added to a cell that agents fill to hexagonal packing (0.9069 of its area); a
  /// cell filled to fraction f < 1 of that adds kMaxPenalty * ((f - kFreeFill) / (1 - kFreeFill))^2
  /// above kFreeFill, rounded (a moving stream adds nothing; a packed pile or a jammed door a lot).
  static constexpr float kMaxPenalty = 6.0f;
  static constexpr float kFreeFill = 0.5f;
  /// Cost units added to a plugged passage: a cell of a passage at most kPlugWidthCells wide (a
  /// 1- or 2-cell door, gap or corridor) that holds an agent at rest. A queue waits there for
  /// nothing -- the pile beyond the passage has sealed its mouth -- and by its fill alone (two
  /// walkers fill a cell to 0.85) the passage cost what a stream through it does. 200, not less:
  /// with 60 the queue at a plugged gap stayed whenever the other opening lay ~80 cells round
  /// (the gap wall with its wide opening 40 cells from the gap: ~270 of 600 queued to the end).
  /// Costs stay below kBlockedCost (start_build caps them).
  static constexpr std::uint8_t kPlugPenalty = 200;
  /// The widest passage (cells across, walls or the map's edge on both sides) whose cells plug:
  /// a 2-cell door with its player just outside let a room fill as a short cut to the player
  /// (1,100 of 2,000 walkers standing behind the door) while 1-cell doors plugged.
  static constexpr std::int32_t kPlugWidthCells = 2;
  /// A passage cell beside a plugged one plugs too with an agent slower than this share of its
  /// kind's top speed in it (held still, not flagged at rest), or with no agent at or above it
  /// in it and every other walkable 4-neighbour touched by the disc of an agent at rest (sealed).
  static constexpr float kPlugHeldSpeed = 0.02f;
  /// Work units per update: the map's cells / 20, at least kMinBudget (a 1024 x 1024 build
  /// takes ~20 updates).
  static constexpr std::size_t kMinBudget = 50000;

  /// One update (call once per tick, after NavigationSet::update()): `xs`, `ys` the agents'
  /// positions (world units), `kinds` their kinds, `kind_area` the disc area of each kind
  /// (world units squared) and, optional, `resting` (per agent, non-zero = at rest; see
  /// kPlugPenalty), `vxs`, `vys` (per agent, world units per second) and `kind_speed` (per
  /// kind, its top speed; see kPlugHeldSpeed). Starts a build when one is due and advances the
  /// build in progress.
  /// Does nothing (and forgets its fields) when `nav` is hierarchical.
  void update(const GridMap& map, const NavigationSet& nav, std::span<const float> xs, std::span<const float> ys,
              std::span<const std::uint8_t> kinds, std::span<const float> kind_area,
              std::span<const std::uint8_t> resting = {}, std::span<const float> vxs = {},
              std::span<const float> vys = {}, std::span<const float> kind_speed = {});

  /// True when a complete build exists for the class on a grid of the class's current size.
  [[nodiscard]] bool ready(int size_class) const noexcept {
    return size_class >= 1 && size_class <= kMaxSizeClass && slots_[slot(size_class)].ready;
  }
  /// The class's last complete congestion integration and flow (lattice: the class's grid).
  [[nodiscard]] const IntegrationField& integration(int size_class) const noexcept {
    return slots_[slot(size_class)].integration;
  }
  [[nodiscard]] const FlowField& flow(int size_class) const noexcept { return slots_[slot(size_class)].flow; }
  /// True when an agent of the class on `block` (cells of the class's grid) should take the
  /// congestion field's way: as of the class's last complete build, its congestion value
  /// exceeded the exact field's by more than `margin` cost units (set_detour_margin()), and the
  /// block itself was not crowded. One bit a block, read per agent per tick.
  [[nodiscard]] bool detour(int size_class, std::int32_t x, std::int32_t y) const noexcept {
    return block_bit(&Slot::detour, size_class, x, y);
  }
  /// As detour(), for a block that was crowded itself: the congestion value exceeded the exact
  /// one by more than the margin there too. For an agent held in another route's crowd (a brute
  /// walking along a wall under a funnel of smaller kinds converging on their gap), whose way
  /// leads through the crowd but is not the crowd's: it takes the way round. A brute's own body
  /// fills its cell past packing, so no block a brute stands on is ever free of crowd.
  [[nodiscard]] bool detour_in_crowd(int size_class, std::int32_t x, std::int32_t y) const noexcept {
    return block_bit(&Slot::crowded_detour, size_class, x, y);
  }
  /// True when class 1's exact route from map cell (x, y) (its flow field, followed to the goal)
  /// runs through a plugged passage (kPlugPenalty), as of the last complete class 1 build; for
  /// cells within kPluggedReachCells of a goal (exact value) only, false elsewhere. An agent
  /// resting in a queue on such a route waits for nothing: the steering lets it take the
  /// congestion field's way back to another opening.
  [[nodiscard]] bool plugged_route(std::int32_t x, std::int32_t y) const noexcept {
    return route_state(x, y) == kRoutePlugged;
  }
  /// True when plugged_route() holds somewhere and class 1's exact route from map cell (x, y),
  /// within kPluggedReachCells of a goal, runs through no plugged passage (a queue for another
  /// opening, or free ground on the way to one). False where plugged_route() is true, beyond the
  /// reach, on unreachable cells and while no route is plugged.
  [[nodiscard]] bool unplugged_route(std::int32_t x, std::int32_t y) const noexcept {
    return route_state(x, y) == kRouteClear;
  }
  /// How far from a goal (exact field, cells) routes are followed for plugged_route() and
  /// unplugged_route(). 32 left the crowd at a wide opening 30-35 cells from the player outside
  /// the marks; each class 1 build walks each cell within the reach once.
  static constexpr float kPluggedReachCells = 64.0f;
  /// Extra cost (cost units, ~cells on unit-cost maps) a crowd must add to a route before
  /// detour() says so (default 3).
  void set_detour_margin(float cost_units) noexcept { margin_ = cost_units; }
  /// The congestion cost (cost units) last added to a map cell, for tools and tests.
  [[nodiscard]] std::uint8_t penalty_at(std::int32_t x, std::int32_t y) const noexcept;
  /// Builds completed (all classes).
  [[nodiscard]] std::uint64_t build_count() const noexcept { return builds_; }

 private:
  struct Slot {
    GridMap costs;                 // the class grid's costs plus congestion (the build's input)
    IntegrationField integration;  // front: last complete build
    FlowField flow;
    IntegrationField building;     // back: the build in progress
    std::vector<std::uint64_t> detour;  // per block, a bit: see detour()
    std::vector<std::uint64_t> crowded_detour;  // per block, a bit: see detour_in_crowd()
    bool ready = false;
  };
  /// The class's block (x, y) in one of its per-block bit sets; false off the grid or not ready.
  [[nodiscard]] bool block_bit(std::vector<std::uint64_t> Slot::*bits, int size_class, std::int32_t x,
                               std::int32_t y) const noexcept {
    const Slot& s = slots_[slot(size_class)];
    if (!s.ready || x < 0 || y < 0 || x >= s.costs.width() || y >= s.costs.height()) return false;
    const std::size_t i = static_cast<std::size_t>(y) * static_cast<std::size_t>(s.costs.width()) + static_cast<std::size_t>(x);
    return (((s.*bits)[i >> 6] >> (i & 63)) & 1u) != 0;
  }
  [[nodiscard]] static std::size_t slot(int size_class) noexcept {
    return static_cast<std::size_t>(size_class < 1 ? 0 : (size_class > kMaxSizeClass ? kMaxSizeClass - 1 : size_class - 1));
  }
  void measure_density(const GridMap& map, std::span<const float> xs, std::span<const float> ys,
                       std::span<const std::uint8_t> kinds, std::span<const float> kind_area,
                       std::span<const std::uint8_t> resting, std::span<const float> vxs,
                       std::span<const float> vys, std::span<const float> kind_speed);
  void start_build(const GridMap& map, const NavigationSet& nav, int size_class);
  void finish_build(const NavigationSet& nav, int size_class);
  void mark_plugged_routes(const NavigationSet& nav);

  Slot slots_[kMaxSizeClass];
  std::vector<std::uint8_t> penalty_;  // per map cell: congestion cost units (0..kMaxPenalty)
  std::vector<float> fill_;            // per map cell: agents' area over the packed area
  // Per map cell: kPlugRest = a passage plugged by an agent at rest, kPlugHeld = one plugged
  // by a held agent beside such a cell (last measure); 0 = not plugged.
  std::vector<std::uint8_t> plugged_;
  static constexpr std::uint8_t kPlugRest = 1, kPlugHeld = 2;
  // Per map cell, while a passage is plugged: kOccupiedRest (touched by an agent at rest),
  // kOccupiedHeld (an agent not at rest slower than kPlugHeldSpeed of its top speed in it) and
  // kOccupiedMoving (one not at rest, faster) bits.
  std::vector<std::uint8_t> occupancy_;
  static constexpr std::uint8_t kOccupiedRest = 1, kOccupiedMoving = 2, kOccupiedHeld = 4;
  bool any_plug_ = false;
  // Per map cell: kRouteUnknown (not walked: beyond the reach or unreachable), kRouteClear (its
  // exact route is clear), kRoutePlugged (it runs through a plugged passage: plugged_route());
  // a scratch path for filling it.
  std::vector<std::uint8_t> plugged_route_;
  static constexpr std::uint8_t kRouteUnknown = 0, kRouteClear = 1, kRoutePlugged = 2;
  bool any_plugged_route_ = false;  // some cell is kRoutePlugged (the steering's fast path)
  /// plugged_route_ at map cell (x, y); kRouteUnknown out of bounds and while no route is plugged.
  [[nodiscard]] std::uint8_t route_state(std::int32_t x, std::int32_t y) const noexcept {
    if (!any_plugged_route_ || x < 0 || y < 0 || x >= width_ || y >= height_) return kRouteUnknown;
    return plugged_route_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)];
  }
  std::vector<std::size_t> route_path_;
  std::int32_t width_ = 0, height_ = 0;
  std::uint32_t ticks_ = 0;            // updates since the last round of builds started
  int building_class_ = 0;             // class whose build is in progress (0: none)
  std::uint32_t round_mask_ = 0;       // classes still to build in this round
  std::uint64_t builds_ = 0;
  float margin_ = 3.0f;
};

}  // namespace swarmfield::sim
