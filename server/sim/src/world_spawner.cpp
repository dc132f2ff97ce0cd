// World's spawner: where new agents go (every walkable cell ranked by reachability and distance
// from the players, or cells drawn at random on big maps), their kinds and the density limit;
// the rankings are kept while the map, the fields and the players stay the same. Random draws
// come from the world's generator in a fixed order, so a match replays bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <utility>

#include "spawn_draws.hpp"
#include "swarmfield/sim/crowd/density_limit.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::sim {

using spawn_draws::bits_to_index;
using spawn_draws::bits_to_unit;
using spawn_draws::first_spawnable_kind;

World::SpawnScanKey World::spawn_scan_key() const {
  SpawnScanKey key{map_.revision(), path_map().revision(), nav_.rebuild_count(), {}};
  key.players.reserve(players_.size());
  for (const Player& pl : players_) key.players.push_back(pl.position);
  return key;
}

std::size_t World::spawn_agents(std::size_t n) {
  n = std::min(n, swarm_.capacity() - swarm_.size());
  if (n == 0 || map_.width() <= 0 || map_.height() <= 0) return 0;
  // Reachability must reflect the players and map. With a budget, the tick's own update has
  // already run its slice: a second one here would spend the budget twice.
  if (params_.field_rebuild_budget == 0 ||
      (!nav_.hierarchical() && (fields().integration().width() != map_.width() ||
                                fields().integration().height() != map_.height()))) {
    update_fields();
  }
  // Big maps draw cells at random (no scan of every cell, no candidate list of every cell);
  // small maps keep the exact scan (in hierarchical mode too: reachability is labelled once
  // per sector, RouteReachability).
  const bool sampled = map_.cell_count() >= kSampledSpawnFromCells;
  n = within_density_limit(n);
  if (n == 0) return 0;
  // spawn_scanned()'s ranking and scan_spawn_cell()'s lists hold while the map, the fields and
  // the players are unchanged: a paced wave or a rules script spawning one agent a call ranked
  // the whole map each call (a 2000 x 2000 city: tick p50 4 -> 48 ms; brutes where none fits, a
  // 64 x 64 map of 1-cell streets: a 1.7 s tick).
  SpawnScanKey key = spawn_scan_key();
  if (!(key == spawn_scan_key_)) {
    fit_scanned_.fill(false);
    spawn_scan_best_ = -1;
    spawn_scan_key_ = std::move(key);
  }
  bool scan_rest = true;
  std::size_t spawned = sampled ? spawn_sampled(n, scan_rest) : 0;
  if (spawned < n && scan_rest) spawned += spawn_scanned(n - spawned);
  if (sampled) {  // on a big map a list can be a whole map's worth of cells: not kept
    for (std::vector<std::uint32_t>& list : fit_cells_) std::vector<std::uint32_t>().swap(list);
    fit_scanned_.fill(false);
  }
  return spawned;
}

std::uint8_t World::spawn_kind(bool draw_kind) {
  if (forced_kind_ >= 0) return static_cast<std::uint8_t>(forced_kind_);  // spawn_agents_of
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  return draw_kind ? pick_agent_kind(kinds, rng_()) : first_spawnable_kind(kinds);
}

std::size_t World::within_density_limit(std::size_t n) {
  if (!params_.spawner.stop_at_density_limit) return n;
  const std::size_t walkable = map_.walkable_count();  // O(1): the map keeps the count
  if (walkable == 0) return 0;
  // The walkable cells are the map's now (run-time blockers included).
  const std::uint64_t limit = density_limit(walkable, map_.cell_size(), smallest_spawned_radius(swarm_.kind_table()));
  const std::uint64_t room = limit > swarm_.size() ? limit - swarm_.size() : 0;
  if (n <= room) return n;
  spawns_held_back_ += n - room;
  return static_cast<std::size_t>(room);
}

bool World::far_from_players(CellCoord c) const {
  const Vec2 centre = map_.cell_center(c);
  const float min_d = params_.spawner.min_player_distance;
  for (const Player& pl : players_) {
    const Vec2 d = centre - pl.position;
    if (dot(d, d) < min_d * min_d) return false;
  }
  return true;
}

int World::spawn_rank(CellCoord c, bool far, int size_class) {
  return reachable_for_spawn(c, size_class) ? (far ? 0 : 1) : (far ? 2 : 3);
}

bool World::reachable_for_spawn(CellCoord c, int size_class) {
  if (players_.empty()) return true;  // nothing to reach: every cell ranks as reachable
  const int n = std::clamp(size_class, 1, kMaxSizeClass);
  if (n > 1 && !nav_.has_class(n)) return true;  // no fields for the class yet: unknown
  if (nav_.hierarchical()) {
    const HierarchicalFields& h = nav_.hierarchical_fields(n);
    if (h.routes().goals().empty()) return true;  // no routes yet: unknown
    const GridMap& grid = n == 1 ? path_map() : nav_.class_grid(n);
    // Every counter below only grows, and one grows whenever graph, routes or grid change.
    const std::uint64_t version = h.route_builds() + h.graph_builds() + h.graph_updates() + grid.revision();
    return route_reachability_[static_cast<std::size_t>(n - 1)].reaches_goal(h.graph(), h.routes(), grid, c, version);
  }
  const IntegrationField& integration = nav_.fields(n).integration();
  if (integration.width() != map_.width() || integration.height() != map_.height()) return true;
  return integration.reachable(c.x, c.y);
}

bool World::class_block_fits(CellCoord c, int size_class) const noexcept {
  for (std::int32_t y = c.y; y < c.y + size_class; ++y)
    for (std::int32_t x = c.x; x < c.x + size_class; ++x)
      if (!map_.walkable(x, y)) return false;
  return true;
}

bool World::draw_spawn_cell(int size_class, std::uint32_t& cell) {
  const auto cells = static_cast<std::uint32_t>(map_.cell_count());
  const auto width = static_cast<std::uint32_t>(map_.width());
  int best_rank = 4;
  for (int draw = 0; draw < kSpawnDraws && best_rank > 0; ++draw) {
    const std::uint32_t at = bits_to_index(rng_(), cells);
    const CellCoord c{static_cast<std::int32_t>(at % width), static_cast<std::int32_t>(at / width)};
    if (!class_block_fits(c, size_class)) continue;
    // Ranks 1 and 3 can only improve on nothing or rank 3: skip the reachability test otherwise.
    const bool far = far_from_players(c);
    if (!far && best_rank <= 1) continue;
    const int rank = spawn_rank(c, far, size_class);
    if (rank < best_rank) {
      best_rank = rank;
      cell = at;
    }
  }
  return best_rank < 4;
}

bool World::scan_spawn_cell(int size_class, std::uint32_t& cell) {
  // Once per spawn_agents() call and class: every cell where the class's block fits, of the best
  // rank; then a uniform pick per agent (one scan per call, not per agent: on a map of 1-cell
  // streets every brute of a wave came here).
  const auto k = static_cast<std::size_t>(std::clamp(size_class, 1, kMaxSizeClass) - 1);
  std::vector<std::uint32_t>& list = fit_cells_[k];
  if (!fit_scanned_[k]) {
    fit_scanned_[k] = true;
    ++spawn_rankings_;
    list.clear();
    int best_rank = 4;
    const auto width = static_cast<std::size_t>(map_.width());
    for (std::size_t at = 0; at < map_.cell_count(); ++at) {
      const CellCoord c{static_cast<std::int32_t>(at % width), static_cast<std::int32_t>(at / width)};
      if (!class_block_fits(c, size_class)) continue;
      const int rank = spawn_rank(c, far_from_players(c), size_class);
      if (rank > best_rank) continue;
      if (rank < best_rank) {
        best_rank = rank;
        list.clear();
      }
      list.push_back(static_cast<std::uint32_t>(at));
    }
  }
  if (list.empty()) return false;
  cell = list[bits_to_index(rng_(), static_cast<std::uint32_t>(list.size()))];
  return true;
}

std::size_t World::spawn_scanned(std::size_t n) {
  // Rank every walkable cell (spawn_rank: 0 = reachable and far from every player, 1 =
  // reachable, 2 = far, 3 = walkable); spawn in the best non-empty rank ("where possible").
  // The ranking reads the map, the fields (reachability) and the players, never the agents: kept
  // while those are unchanged (spawn_agents() drops it when spawn_scan_key_ changes).
  if (spawn_scan_best_ < 0) {
    ++spawn_rankings_;
    auto rank_of = [&](CellCoord c) { return spawn_rank(c, far_from_players(c), 1); };
    std::size_t counts[4] = {0, 0, 0, 0};
    for (std::int32_t y = 0; y < map_.height(); ++y) {
      for (std::int32_t x = 0; x < map_.width(); ++x) {
        if (map_.walkable(x, y)) ++counts[rank_of({x, y})];
      }
    }
    int best = 0;
    while (best < 4 && counts[best] == 0) ++best;
    spawn_candidates_.clear();
    if (best < 4) {
      spawn_candidates_.reserve(counts[best]);
      for (std::int32_t y = 0; y < map_.height(); ++y) {
        for (std::int32_t x = 0; x < map_.width(); ++x) {
          if (map_.walkable(x, y) && rank_of({x, y}) == best) {
            spawn_candidates_.push_back(static_cast<std::uint32_t>(map_.index(x, y)));
          }
        }
      }
    }
    spawn_scan_best_ = best;
  }
  const int best = spawn_scan_best_;
  if (best == 4) return 0;  // no walkable cell at all
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  const bool draw_kind = spawnable_kind_count(kinds) > 1;
  const auto count = static_cast<std::uint32_t>(spawn_candidates_.size());
  const auto width = static_cast<std::uint32_t>(map_.width());
  std::size_t spawned = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t kind = spawn_kind(draw_kind);
    std::uint32_t cell = spawn_candidates_[bits_to_index(rng_(), count)];
    const int size_class = size_class_of_radius(kinds[kind].radius, map_.cell_size());
    if (size_class > 1) {
      // The listed cells are class 1's best: the first drawn where the class's block fits and
      // ranks as well for the class, else the best such draw over the map, else a scan.
      bool found = false;
      for (int draw = 0; draw < kSpawnDraws && !found; ++draw) {
        const std::uint32_t at = spawn_candidates_[bits_to_index(rng_(), count)];
        const CellCoord c{static_cast<std::int32_t>(at % width), static_cast<std::int32_t>(at / width)};
        if (class_block_fits(c, size_class) && spawn_rank(c, far_from_players(c), size_class) == best) {
          cell = at;
          found = true;
        }
      }
      if (!found && !draw_spawn_cell(size_class, cell) && !scan_spawn_cell(size_class, cell)) {
        ++spawns_held_back_;  // no block on the map fits the kind
        continue;
      }
    }
    if (!place_spawned_agent(cell, kind)) break;
    ++spawned;
  }
  // On a big map the list can be a whole map's worth of cells: not kept between waves.
  if (map_.cell_count() >= kSampledSpawnFromCells) {
    std::vector<std::uint32_t>().swap(spawn_candidates_);
    spawn_scan_best_ = -1;
  }
  return spawned;
}

std::size_t World::spawn_sampled(std::size_t n, bool& scan_rest) {
  // Per agent up to kSpawnDraws uniform cells: the first of rank 0 is taken, else the best
  // rank drawn. With rank-0 cells a share q of the map, an agent misses one with probability
  // (1 - q)^kSpawnDraws (q = 5%: 4%; q = 20%: 6e-7). No walkable cell in kSpawnDraws draws
  // (a map almost all walls) hands the rest to the exact scan.
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  const bool draw_kind = spawnable_kind_count(kinds) > 1;
  std::size_t spawned = 0;
  scan_rest = false;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t kind = spawn_kind(draw_kind);
    const int size_class = size_class_of_radius(kinds[kind].radius, map_.cell_size());
    std::uint32_t cell = 0;
    if (!draw_spawn_cell(size_class, cell)) {
      if (size_class == 1) {  // no walkable cell drawn: the exact scan takes over
        scan_rest = true;
        break;
      }
      if (!scan_spawn_cell(size_class, cell)) {
        ++spawns_held_back_;  // no block on the map fits the kind
        continue;
      }
    }
    if (!place_spawned_agent(cell, kind)) break;
    ++spawned;
  }
  return spawned;
}

bool World::place_spawned_agent(std::uint32_t cell, std::uint8_t kind) {
  // A random point of the cell (class 1) or of the class's block from the cell (top-left),
  // kept a radius away from its edges so the disc starts clear of walls; random offsets keep
  // agents sharing a cell apart.
  const float cs = map_.cell_size();
  const std::span<const AgentKind> kinds = swarm_.kind_table();
  const auto side = static_cast<float>(size_class_of_radius(kinds[kind].radius, cs));
  const float margin = std::clamp(kinds[kind].radius / cs, 0.0f, side * 0.5f - 0.01f);
  const std::uint64_t bits = rng_();
  const auto cx = static_cast<std::int32_t>(cell % static_cast<std::uint32_t>(map_.width()));
  const auto cy = static_cast<std::int32_t>(cell / static_cast<std::uint32_t>(map_.width()));
  const float ux = margin + bits_to_unit(bits >> 40) * (side - 2.0f * margin);
  const float uy = margin + bits_to_unit(bits >> 16) * (side - 2.0f * margin);
  const float heading = (bits_to_unit(bits << 8) * 2.0f - 1.0f) * std::numbers::pi_v<float>;
  const Vec2 p{(static_cast<float>(cx) + ux) * cs, (static_cast<float>(cy) + uy) * cs};
  return swarm_.add(p, heading, kind) != Swarm::kInvalidAgent;
}

}  // namespace swarmfield::sim
