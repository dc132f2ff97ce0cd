// World's waves (waves.hpp): the director's orders each tick, and spawning a kind in a zone.
// Random draws come from the world's generator in a fixed order, so a match replays bit for bit.
#include <algorithm>

#include "../spawn_draws.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::sim {

using spawn_draws::bits_to_index;

void World::run_waves(float dt) {
  if (params_.waves.empty()) return;
  if (!waves_started_) {
    // The director counts in ticks of the first step's dt (the server's fixed tick).
    waves_ = WaveDirector(params_.waves, dt);
    waves_started_ = true;
  }
  wave_orders_.clear();
  waves_.update(tick_, swarm_.size(), wave_orders_);
  for (const SpawnOrder& order : wave_orders_) (void)spawn_agents_of(order.kind, order.count, order.zone);
}

std::size_t World::spawn_agents_of(std::uint8_t kind, std::size_t n, const std::optional<SpawnZone>& zone) {
  if (kind >= swarm_.kind_table().size()) return 0;
  if (!zone) {
    forced_kind_ = kind;
    const std::size_t spawned = spawn_agents(n);
    forced_kind_ = -1;
    return spawned;
  }
  return spawn_in_zone(kind, n, *zone);
}

std::size_t World::spawn_in_zone(std::uint8_t kind, std::size_t n, SpawnZone zone) {
  n = std::min(n, swarm_.capacity() - swarm_.size());
  if (n == 0 || map_.width() <= 0 || map_.height() <= 0) return 0;
  zone.min.x = std::clamp(zone.min.x, 0, map_.width() - 1);
  zone.min.y = std::clamp(zone.min.y, 0, map_.height() - 1);
  zone.max.x = std::clamp(zone.max.x, zone.min.x, map_.width() - 1);
  zone.max.y = std::clamp(zone.max.y, zone.min.y, map_.height() - 1);
  n = within_density_limit(n);
  if (n == 0) return 0;
  const int size_class = size_class_of_radius(swarm_.kind_table()[kind].radius, map_.cell_size());
  const auto w = static_cast<std::uint32_t>(zone.max.x - zone.min.x + 1);
  const auto h = static_cast<std::uint32_t>(zone.max.y - zone.min.y + 1);
  const std::uint64_t area = static_cast<std::uint64_t>(w) * h;
  const auto cell_of = [&](std::uint64_t i) {
    return CellCoord{zone.min.x + static_cast<std::int32_t>(i % w), zone.min.y + static_cast<std::int32_t>(i / w)};
  };
  const auto index_of = [&](CellCoord c) { return static_cast<std::uint32_t>(map_.index(c.x, c.y)); };
  bool scanned = false;  // the zone's best cells, listed once per call when draws miss
  std::size_t spawned = 0;
  for (std::size_t a = 0; a < n; ++a) {
    int best_rank = 4;
    CellCoord best{};
    for (int draw = 0; draw < kSpawnDraws && best_rank > 0; ++draw) {
      const CellCoord c = cell_of(bits_to_index(rng_(), static_cast<std::uint32_t>(area)));
      if (!class_block_fits(c, size_class)) continue;
      const int rank = spawn_rank(c, far_from_players(c), size_class);
      if (rank < best_rank) {
        best_rank = rank;
        best = c;
      }
    }
    if (best_rank == 4) {
      if (!scanned) {
        scanned = true;
        spawn_scan_best_ = -1;  // the list is this zone's now, not spawn_scanned()'s
        spawn_candidates_.clear();
        if (area <= kZoneScanCells) {
          int rank_listed = 4;
          for (std::uint64_t i = 0; i < area; ++i) {
            const CellCoord c = cell_of(i);
            if (!class_block_fits(c, size_class)) continue;
            const int rank = spawn_rank(c, far_from_players(c), size_class);
            if (rank < rank_listed) {
              rank_listed = rank;
              spawn_candidates_.clear();
            }
            if (rank == rank_listed) spawn_candidates_.push_back(index_of(c));
          }
        }
      }
      if (spawn_candidates_.empty()) {
        spawns_held_back_ += n - a;  // the kind fits nowhere in the zone
        break;
      }
      const std::uint32_t cell =
          spawn_candidates_[bits_to_index(rng_(), static_cast<std::uint32_t>(spawn_candidates_.size()))];
      if (place_spawned_agent(cell, kind)) ++spawned;
      continue;
    }
    if (place_spawned_agent(index_of(best), kind)) ++spawned;
  }
  return spawned;
}

}  // namespace swarmfield::sim
