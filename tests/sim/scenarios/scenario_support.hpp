#pragma once
// Helpers shared by the crowd scenarios C1-C9 (/work/shared/scenarios/README.md): ASCII scenes,
// optimal times from the integration field, following agents by id, and motion statistics.
//
// Conventions used by every scenario test:
//  - fixed step kDt = 1/30 s (the world's default 30 Hz); times are counted in ticks;
//  - "optimal time" = octile shortest-path length (cells, read from the integration field, which
//    equals the exact octile distance) / max_speed (cells per second), in ticks;
//  - an agent "arrives" on the first tick its centre lies in the goal cell (it holds there);
//  - agents are followed by id (Swarm::step() reorders them every tick).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <string_view>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/sim/world.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "swarmfield/sim/map/map_parse.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim::scenario {

inline constexpr float kDt = 1.0f / 30.0f;

/// An ASCII map with its markers (test::AsciiScene; fails the test when it does not parse).
struct Scene : test::AsciiScene {
  using AsciiScene::AsciiScene;
  /// The single cell marked `symbol` (fails the test when there is not exactly one).
  [[nodiscard]] CellCoord one(char symbol) const {
    const std::vector<CellCoord> cells = cells_of(symbol);
    REQUIRE_MESSAGE(cells.size() == 1, "marker '" << symbol << "' appears " << cells.size() << " times");
    return cells[0];
  }
};

/// Octile shortest-path length (cells) from `from` to `goal`; +infinity when unreachable.
[[nodiscard]] inline double optimal_length(const GridMap& map, CellCoord from, CellCoord goal) {
  IntegrationField field;
  const CellCoord goals[1] = {goal};
  field.build(map, goals);
  return field.cost_to_goal(from.x, from.y);
}

/// Ticks (at kDt) an agent at `max_speed` cells/s needs for `length` cells.
[[nodiscard]] inline double ticks_for(double length, float max_speed) {
  return length / static_cast<double>(max_speed) / static_cast<double>(kDt);
}

/// Position of the agent with `id`; fails the test when it does not exist.
[[nodiscard]] inline Vec2 position_of(const Swarm& s, std::uint32_t id) {
  const std::size_t i = s.index_of(id);
  REQUIRE(i != Swarm::kNoIndex);
  return {s.xs()[i], s.ys()[i]};
}

/// Last tick's velocity (world units per second) of the agent with `id`.
[[nodiscard]] inline Vec2 velocity_of(const Swarm& s, std::uint32_t id) {
  const std::size_t i = s.index_of(id);
  REQUIRE(i != Swarm::kNoIndex);
  return {s.vxs()[i], s.vys()[i]};
}

/// True when the agent with `id` has arrived at player `player_id`: in the player's cell, or
/// touching the player's disc (agents stop there: they steer for the player's position, not its
/// cell, and never walk into the player), within 0.05 world units.
[[nodiscard]] inline bool arrived_at_player(const World& world, std::uint32_t id, std::uint32_t player_id) {
  const Player* player = world.find_player(player_id);
  REQUIRE(player != nullptr);
  const std::size_t i = world.swarm().index_of(id);
  REQUIRE(i != Swarm::kNoIndex);
  const Vec2 p{world.swarm().xs()[i], world.swarm().ys()[i]};
  const float touch = world.swarm().kind_table()[world.swarm().kinds()[i]].radius + world.params().player_radius;
  return world.map().world_to_cell(p) == world.map().world_to_cell(player->position) ||
         length(p - player->position) <= touch + 0.05f;
}

// Shared with the swarm and world tests.
using test::agents_in_walls;
using test::positions_by_id;
using test::all_finite;
using test::wall_overlap;

/// Distance (world units, unit cells) from p to the square of cell c; 0 inside it.
[[nodiscard]] inline float wall_gap(Vec2 p, CellCoord c) {
  const float x0 = static_cast<float>(c.x), y0 = static_cast<float>(c.y);
  const float dx = std::max({x0 - p.x, 0.0f, p.x - (x0 + 1.0f)});
  const float dy = std::max({y0 - p.y, 0.0f, p.y - (y0 + 1.0f)});
  return std::sqrt(dx * dx + dy * dy);
}

/// True when a move from cell a to cell b (at most one step each way) is a legal 8-connected
/// step: b walkable, and a diagonal step only when both orthogonal cells it passes are walkable
/// (no corner cutting).
[[nodiscard]] inline bool legal_step(const GridMap& map, CellCoord a, CellCoord b) {
  const std::int32_t dx = b.x - a.x, dy = b.y - a.y;
  if (std::abs(dx) > 1 || std::abs(dy) > 1 || !map.walkable(b)) return false;
  if (dx != 0 && dy != 0) return map.walkable(a.x + dx, a.y) && map.walkable(a.x, a.y + dy);
  return true;
}

/// Counts velocity reversals of one agent: a tick whose velocity (at least `min_speed`) points
/// more than 120 degrees away from the last velocity that was at least `min_speed`. Gradual
/// turns (round a corner) do not count; stopping and going back does.
struct ReversalCounter {
  explicit ReversalCounter(float min_speed_ = 0.0f) : min_speed(min_speed_) {}
  float min_speed = 0.0f;
  Vec2 last{};
  bool has_last = false;
  int count = 0;
  std::vector<std::uint64_t> ticks;  // when each reversal happened

  void add(Vec2 v, std::uint64_t tick) {
    const float speed = length(v);
    if (!(speed >= min_speed) || speed <= 0.0f) return;
    const Vec2 u = v * (1.0f / speed);
    if (has_last && dot(u, last) < -0.5f) {
      ++count;
      ticks.push_back(tick);
    }
    last = u;
    has_last = true;
  }
  /// Smallest gap (ticks) between two consecutive reversals; max when fewer than two.
  [[nodiscard]] std::uint64_t min_gap() const {
    std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t i = 1; i < ticks.size(); ++i) best = std::min(best, ticks[i] - ticks[i - 1]);
    return best;
  }
};

/// How a scenario steps its agents toward the goal cell `P`:
///  - kFlowField: Swarm::step() with the single flow field (and integration field) of that cell;
///  - kWorld: a World with a player standing at the cell's centre: the NavigationSet (any-angle
///    directions, a field per size class), agents that stop where their disc touches the
///    player's, contacts: the path the server runs.
enum class Steering { kFlowField, kWorld };

[[nodiscard]] inline std::string steering_name(Steering s) { return s == Steering::kWorld ? "World" : "flow field"; }

/// One scenario run: the swarm (add agents through swarm()) and its step.
class ScenarioRun {
 public:
  /// `capacity`: most agents; `params`: the swarm's (its radius and speed are the only kind's).
  ScenarioRun(const GridMap& map, CellCoord goal, Steering steering, std::size_t capacity,
              const SwarmParams& params = {})
      : map_(map), goal_(goal), steering_(steering), swarm_(params, capacity) {
    if (steering == Steering::kWorld) {
      WorldParams wp;
      wp.swarm = params;
      wp.max_agents = static_cast<std::uint32_t>(capacity);
      world_ = std::make_unique<World>(map, wp);
      player_ = world_->add_player(map.cell_center(goal));
      REQUIRE(world_->find_player(player_) != nullptr);
    } else {
      const CellCoord goals[1] = {goal};
      REQUIRE(fields_.update(map, goals));
      swarm_.set_environment(map, {});
    }
  }

  [[nodiscard]] Swarm& swarm() { return world_ ? world_->swarm_mutable() : swarm_; }
  [[nodiscard]] const Swarm& swarm() const { return world_ ? world_->swarm() : swarm_; }
  [[nodiscard]] Steering steering() const { return steering_; }
  [[nodiscard]] const World* world() const { return world_.get(); }

  void step() {
    if (world_) {
      world_->step(kDt);
    } else {
      swarm_.step(map_, fields_.flow(), fields_.integration(), kDt);
    }
  }

  /// The agent has arrived: its centre in the goal cell (kFlowField: it holds there), or with
  /// kWorld also its disc touching the player's (arrived_at_player: it stops there).
  [[nodiscard]] bool arrived(std::uint32_t id) const {
    if (world_) return arrived_at_player(*world_, id, player_);
    return map_.world_to_cell(position_of(swarm_, id)) == goal_;
  }

 private:
  const GridMap& map_;
  CellCoord goal_;
  Steering steering_;
  NavigationFields fields_;
  Swarm swarm_;
  std::unique_ptr<World> world_;
  std::uint32_t player_ = 0;
};

/// A crowd's shape about `centre` (world units), as ../shared/tools/crowd_scene.py measures it:
/// `packed_radius`, the radius of the disc (or of its open `fraction`: 1, 1/2, 1/4) that the
/// agents fill at hexagonal packing (each disc's hex cell, sqrt(3)/2 (2r)^2, plus `extra_area`,
/// e.g. the player's disc); `rg_ratio`, the crowd's radius of gyration about `centre` over that
/// disc's (packed_radius / sqrt(2)).
struct PileShape {
  double packed_radius = 0.0;
  double rg_ratio = 0.0;
};
[[nodiscard]] inline PileShape pile_shape(const Swarm& s, Vec2 centre, double fraction = 1.0,
                                          double extra_area = 0.0) {
  double sum2 = 0.0, area = extra_area;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const float r_i = s.kind_table()[s.kinds()[i]].radius;
    const float dist = length(Vec2{s.xs()[i], s.ys()[i]} - centre);
    sum2 += static_cast<double>(dist) * dist;
    area += std::sqrt(3.0) / 2.0 * (2.0 * r_i) * (2.0 * r_i);
  }
  PileShape shape;
  shape.packed_radius = std::sqrt(area / (fraction * std::numbers::pi));
  shape.rg_ratio = s.size() == 0 ? 0.0
                                 : std::sqrt(sum2 / static_cast<double>(s.size())) / (shape.packed_radius / std::sqrt(2.0));
  return shape;
}

/// Signed angle (radians, in (-pi, pi]) from direction a to direction b.
[[nodiscard]] inline float angle_between(Vec2 a, Vec2 b) {
  return std::atan2(a.x * b.y - a.y * b.x, dot(a, b));
}

}  // namespace swarmfield::sim::scenario
