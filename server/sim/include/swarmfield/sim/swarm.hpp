#pragma once
// The enemy swarm: structure-of-arrays agent state and the per-tick steering step.
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/flow_field.hpp"
#include "swarmfield/sim/grid_map.hpp"
#include "swarmfield/sim/spatial_hash.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim {

/// Tuning of the swarm. Lengths in world units, speeds in world units per second, angles in
/// radians.
struct SwarmParams {
  float radius = 0.35f;                 ///< agent disc radius
  float max_speed = 3.0f;               ///< top speed along the flow
  float separation_radius = 0.9f;       ///< R of the separation kernel (>= 2*radius)
  float flow_weight = 1.0f;             ///< w_flow
  float obstacle_max_force = 2.0f;      ///< clamp of the summed obstacle force
  float overlap_stiffness = 0.25f;      ///< world units of correction per unit separation, per tick
  float max_turn_rate = 8.0f;           ///< heading change per second
};

/// A static round obstacle (prop), in world units.
struct Obstacle {
  Vec2 center;
  float radius = 0.5f;
};

/// Agent state as parallel arrays; index i is one agent. `ids` are unique, assigned in spawn
/// order, never reused. Capacity is reserved up front; step() allocates nothing once warm.
class Swarm {
 public:
  Swarm() = default;
  Swarm(const SwarmParams& params, std::size_t capacity);

  /// Adds an agent at `p` (world units) with heading `heading` (radians). Returns its id, or
  /// kInvalidAgent when the swarm is at capacity.
  static constexpr std::uint32_t kInvalidAgent = 0xFFFFFFFFu;
  std::uint32_t add(Vec2 p, float heading = 0.0f);
  /// Removes every agent (ids keep counting up).
  void clear() noexcept;

  /// Configures the neighbour hash and the static obstacle hash for a map. Call once after
  /// the map is known (and again if obstacles change).
  void set_environment(const GridMap& map, std::span<const Obstacle> obstacles);

  /// One fixed step of `dt` seconds, in phases: rebuild hash -> gather neighbours (separation)
  /// -> steering (smoothed flow + obstacle force) -> integrate with wall sliding -> overlap
  /// correction (slid along walls) -> heading. Agents inside a blocked cell are first moved to
  /// the nearest walkable cell. No agent ends the step inside a blocked cell.
  void step(const GridMap& map, const FlowField& flow, float dt);

  [[nodiscard]] std::size_t size() const noexcept { return ids_.size(); }
  [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] const SwarmParams& params() const noexcept { return params_; }
  [[nodiscard]] std::span<const std::uint32_t> ids() const noexcept { return ids_; }
  [[nodiscard]] std::span<const float> xs() const noexcept { return xs_; }
  [[nodiscard]] std::span<const float> ys() const noexcept { return ys_; }
  [[nodiscard]] std::span<const float> vxs() const noexcept { return vxs_; }  ///< last tick's velocity
  [[nodiscard]] std::span<const float> vys() const noexcept { return vys_; }
  [[nodiscard]] std::span<const float> headings() const noexcept { return headings_; }
  [[nodiscard]] const SpatialHash& hash() const noexcept { return hash_; }
  /// Direct position write (tests, teleports); the next step() repairs invalid positions.
  void set_position(std::size_t index, Vec2 p) noexcept { xs_[index] = p.x; ys_[index] = p.y; }

 private:
  SwarmParams params_;
  std::size_t capacity_ = 0;
  std::uint32_t next_id_ = 0;
  std::vector<std::uint32_t> ids_;
  std::vector<float> xs_, ys_, vxs_, vys_, headings_;
  std::vector<float> sep_x_, sep_y_;  // per-tick scratch
  std::vector<Obstacle> obstacles_;
  SpatialHash hash_;
  SpatialHash obstacle_hash_;
  std::vector<float> obstacle_xs_, obstacle_ys_;
};

}  // namespace swarmfield::sim
