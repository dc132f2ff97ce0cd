#pragma once
// Interpolation between snapshots: the viewer renders a couple of snapshot intervals in the
// past and blends agent positions by id between the two snapshots that bracket that time, so
// motion is smooth although snapshots arrive at 20 Hz with jitter (the classic entity
// interpolation of Quake/Source netcode).
#include <chrono>
#include <cstdint>
#include <deque>
#include <vector>

#include "swarmfield/client/connection.hpp"
#include "swarmfield/client/snapshot_state.hpp"
#include "swarmfield/protocol/snapshot/density_grid.hpp"

namespace swarmfield::client {

struct RenderPlayer {
  std::uint32_t id = 0;
  float x = 0.0f;
  float y = 0.0f;
  std::uint32_t contacts = 0;
  float health = -1.0f;     ///< hit points (0: dead, waiting to respawn; < 0: not known, drawn alive)
  std::uint32_t kills = 0;
  std::uint32_t shots = 0;  ///< shots fired so far (a new shot when it grows)
  std::int64_t score = 0;
  float aim = 0.0f;         ///< direction of its shots, radians (0 = +x, y grows downward)
};

/// What one rendered frame shows.
struct InterpolatedFrame {
  double tick = 0.0;              ///< server tick shown (fractional while between snapshots)
  std::uint32_t total_agents = 0; ///< in the world (from the newer snapshot)
  std::vector<RenderAgent> agents;   ///< sorted by id
  std::vector<RenderPlayer> players; ///< in the newer snapshot's order
  /// The newer snapshot's density grid of the agents not tracked individually (map cells of
  /// `density_cell_size` world units), drawn as shaded squares.
  protocol::DensityGrid density;
  float density_cell_size = 1.0f;
  std::uint32_t wave = 0;  ///< comings of the wave table started (the newer snapshot's)
};

/// Copies one snapshot into `out`.
void unpack_snapshot(const SnapshotState& snapshot, InterpolatedFrame& out);

/// Blends `from` and `to` at `alpha` in [0,1] (clamped) by id:
///  - an id in both: position lerped, heading along the shorter arc;
///  - an id only in `to` (appeared: spawned or entered the view): drawn at its `to` position;
///  - an id only in `from` (disappeared: died or left the view): not drawn.
/// Players follow the same rules. Agents must be sorted by id (SnapshotState promises it).
void interpolate_snapshots(const SnapshotState& from, const SnapshotState& to, float alpha, InterpolatedFrame& out);

/// Picks the two snapshots of `history` (ordered by tick) that bracket `render_tick` and
/// interpolates them. Before the oldest: the oldest as is; at or after the newest: the newest
/// as is (no extrapolation). Returns false when `history` is empty.
bool interpolate_history(const std::deque<ReceivedSnapshot>& history, double render_tick,
                         InterpolatedFrame& out);

/// Maps the local steady clock to the server tick, from the arrival times of snapshots.
/// The offset is smoothed so jitter does not shake the picture; a jump of more than a second
/// (server restart, long stall) resets it.
class InterpolationClock {
 public:
  explicit InterpolationClock(double tick_hz = 30.0) : tick_hz_(tick_hz > 0.0 ? tick_hz : 30.0) {}
  /// A snapshot of `tick` completed at `received_at`.
  void observe(std::uint32_t tick, std::chrono::steady_clock::time_point received_at);
  [[nodiscard]] bool valid() const noexcept { return valid_; }
  /// Estimated server tick at `now`, minus `delay_ticks`.
  [[nodiscard]] double render_tick(std::chrono::steady_clock::time_point now, double delay_ticks) const;

 private:
  double tick_hz_;
  bool valid_ = false;
  double offset_ticks_ = 0.0;  ///< server tick - local seconds * tick_hz
};

}  // namespace swarmfield::client
