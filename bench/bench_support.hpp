#pragma once
// Shared set-up of the benchmark programs: where the maps are, loading them once, choosing
// goals and agent cells reproducibly, and reading the process's memory use. Nothing here is
// timed.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::bench {

/// Folder of the MovingAI maps: the last set_maps_dir(), else the SWARMFIELD_MAPS_DIR
/// environment variable, else the SWARMFIELD_MAPS_DIR compile definition (the build's
/// ${SWARMFIELD_SHARED_DIR}/data/maps).
[[nodiscard]] std::string maps_dir();
void set_maps_dir(std::string dir);

/// The map at `relative` (e.g. "street/Boston_0_1024.map") under maps_dir(), read once and kept
/// for the life of the process. Throws std::runtime_error naming the file and the problem
/// (missing file, parse error) so a benchmark can report it with SkipWithError.
[[nodiscard]] const sim::GridMap& load_map(const std::string& relative);

/// "Boston_0_1024" for "street/Boston_0_1024.map" (benchmark names).
[[nodiscard]] std::string map_label(const std::string& relative);

/// The walkable cell nearest to `target` (cells): the first walkable cell scanning square rings
/// of growing Chebyshev radius, each ring in row-major order (deterministic). Returns `target`
/// itself if the map has no walkable cell.
[[nodiscard]] sim::CellCoord nearest_walkable(const sim::GridMap& map, sim::CellCoord target);

/// The benchmarks' goals: `count` == 1 gives the walkable cell nearest the map centre; 4 gives
/// the walkable cells nearest the centres of the four quadrants (a few players spread out).
[[nodiscard]] std::vector<sim::CellCoord> benchmark_goals(const sim::GridMap& map, int count);

/// `count` cells drawn uniformly (with replacement) from the cells `field` marks reachable,
/// seeded (std::mt19937_64, so the same on every run of the same build). Empty if none is
/// reachable.
[[nodiscard]] std::vector<sim::CellCoord> random_reachable_cells(const sim::IntegrationField& field, std::size_t count,
                                                                 std::uint64_t seed);

/// The `count` reachable cells with the lowest integration value (closest to a goal by path
/// cost; ties by index), i.e. a disc around the goals measured along the streets.
[[nodiscard]] std::vector<sim::CellCoord> nearest_reachable_cells(const sim::IntegrationField& field, std::size_t count);

/// A player that wanders round `centre` (cells) as a bot wanders from its spawn, so that the
/// horde chasing it keeps moving rather than piling up still: it walks at a waypoint drawn
/// uniformly within `range` cells of the centre (seeded, std::mt19937_64) and takes a new one
/// when it gets within 2 cells or every 150 ticks; the first walkable draw of up to 1000 is
/// taken (none: the old waypoint stays).
class WanderingPlayer {
 public:
  WanderingPlayer(sim::World& world, sim::CellCoord centre, float range, std::uint64_t seed);
  /// Sets the player's intent for tick `tick` and steps the world one 30 Hz tick.
  void step(int tick);
  [[nodiscard]] std::uint32_t player() const noexcept { return player_; }

 private:
  sim::World& world_;
  sim::CellCoord centre_;
  float range_;
  std::uint32_t player_;
  std::mt19937_64 rng_;
  sim::Vec2 target_;
};

/// The positions the server's snapshots carry (SnapshotWorldState::assign(World)): the swarm's
/// Swarm::shown_positions, else its xs(), ys(); into `xs`, `ys`.
void shown_positions(const sim::Swarm& swarm, std::vector<float>& xs, std::vector<float>& ys);

/// Peak resident set size of this process (VmHWM of /proc/self/status), in MiB; -1 when it
/// cannot be read (not Linux).
[[nodiscard]] double peak_rss_mib();
/// Current resident set size (VmRSS), in MiB; -1 when it cannot be read.
[[nodiscard]] double current_rss_mib();
/// CPU time of the calling thread, seconds: a phase timed alone, whatever else the shared
/// machine runs (wall time would count the time other processes held the core).
[[nodiscard]] double thread_cpu_seconds();
/// "model name" of the first processor in /proc/cpuinfo, or "unknown".
[[nodiscard]] std::string cpu_model();

}  // namespace swarmfield::bench
