// Swarm: the environment the agents live on (see swarm.cpp for the step): the obstacles and the
// two spatial hashes sized to the kinds present, the open-cell cache (a bit per map cell: its
// 3 x 3 block is walkable, so a small move there needs no wall test) and the clearance map,
// each kept in step with the map's edits by its change log instead of a rebuild.
#include <algorithm>
#include <cmath>

#include "swarmfield/sim/crowd/swarm.hpp"
#include "swarmfield/sim/huge_pages.hpp"

namespace swarmfield::sim {

void Swarm::set_environment(const GridMap& map, std::span<const Obstacle> obstacles) {
  obstacles_.clear();
  for (const Obstacle& o : obstacles) {
    if (!finite(o.center) || !std::isfinite(o.radius) || o.radius < 0.0f) continue;  // ignore bad props
    obstacles_.push_back(o);
  }
  obstacle_xs_.resize(obstacles_.size());
  obstacle_ys_.resize(obstacles_.size());
  for (std::size_t i = 0; i < obstacles_.size(); ++i) {
    obstacle_xs_[i] = obstacles_[i].center.x;
    obstacle_ys_[i] = obstacles_[i].center.y;
  }
  configure_hashes(map);
  refresh_map_cache(map);
  needs_repair_ = true;
  wake_all_ = true;
}

void Swarm::configure_hashes(const GridMap& map) {
  const float cs = map.cell_size();
  env_world_width_ = static_cast<float>(map.width()) * cs;
  env_world_height_ = static_cast<float>(map.height()) * cs;
  // The 3x3 query block must hold every agent that can act on another: a cell of the largest
  // pair R over the kinds present (the mean of two kinds' R is at most the larger).
  hash_cell_ = interaction_radius();
  hash_.configure(env_world_width_, env_world_height_, hash_cell_);
  hash_.reserve(capacity_);
  float max_obstacle_radius = 0.0f;
  for (const Obstacle& o : obstacles_) max_obstacle_radius = std::max(max_obstacle_radius, o.radius);
  // An obstacle acts within separation_radius of its surface, so a hash cell of
  // R + largest radius keeps every obstacle that can act inside the 3x3 query block. With no
  // obstacles, a one-cell grid (positions clamp into it; queries find nothing) instead of a
  // grid over the whole map (~40 MiB at 4096 x 4096).
  const bool none = obstacles_.empty();
  obstacle_hash_.configure(none ? 0.0f : env_world_width_, none ? 0.0f : env_world_height_,
                           hash_cell_ + max_obstacle_radius);
  obstacle_hash_.rebuild(obstacle_xs_, obstacle_ys_);
}

bool Swarm::refresh_map_cache(const GridMap& map) {
  const std::uint8_t* source = map.costs().data();
  const bool same_map = source == open_source_ && map.width() == open_width_ && map.height() == open_height_;
  if (same_map && map.revision() == open_revision_) return false;
  // A cell's flag reads its 3 x 3 block: a changed cell changes the flags of the block round
  // it, so a few edits cost a few blocks (a whole pass is ~0.1 s at 8192 x 8192).
  std::span<const CellCoord> changed;
  if (same_map && map.cells_changed_since(open_revision_, bulk_scratch_, changed)) {
    open_revision_ = map.revision();
    for (const CellCoord c : changed) compute_open_cells(map, c.x - 1, c.y - 1, c.x + 1, c.y + 1);
    if (bulk_scratch_.capacity() > (std::size_t{1} << 16)) std::vector<CellCoord>().swap(bulk_scratch_);
    return true;
  }
  open_source_ = source;
  open_width_ = map.width();
  open_height_ = map.height();
  open_revision_ = map.revision();
  assign_huge(open_cells_, (static_cast<std::size_t>(open_width_) * static_cast<std::size_t>(open_height_) + 63) / 64,
              std::uint64_t{0});
  compute_open_cells(map, 0, 0, open_width_ - 1, open_height_ - 1);
  return true;
}

void Swarm::compute_open_cells(const GridMap& map, std::int32_t x0, std::int32_t y0, std::int32_t x1,
                               std::int32_t y1) {
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, open_width_ - 1);
  y1 = std::min(y1, open_height_ - 1);
  if (x0 > x1) return;
  // Row by row: the three rows' walkable bytes ANDed, then three columns of that (off the
  // map counts as blocked, so border cells are never open).
  const std::uint8_t* const costs = map.costs().data();
  const auto w = static_cast<std::size_t>(open_width_);
  std::uint64_t* const bits = open_cells_.data();
  for (std::int32_t y = y0; y <= y1; ++y) {
    const std::size_t row = static_cast<std::size_t>(y) * w;
    const bool inner_row = y > 0 && y + 1 < open_height_;
    // (Rows 0 and h - 1 read no costs: `up` then points at row 0 for want of a row above.)
    const std::uint8_t* const up = inner_row ? costs + row - w : costs;
    const std::uint8_t* const mid = inner_row ? up + w : costs;
    const std::uint8_t* const down = inner_row ? mid + w : costs;
    const auto column = [&](std::int32_t x) -> std::uint64_t {
      return static_cast<std::uint64_t>((up[x] != kBlockedCost) & (mid[x] != kBlockedCost) & (down[x] != kBlockedCost));
    };
    for (std::int32_t x = x0; x <= x1; ++x) {
      const std::uint64_t open =
          inner_row && x > 0 && x + 1 < open_width_ ? column(x - 1) & column(x) & column(x + 1) : 0u;
      const std::size_t i = row + static_cast<std::size_t>(x);
      bits[i >> 6] = (bits[i >> 6] & ~(std::uint64_t{1} << (i & 63))) | (open << (i & 63));
    }
  }
}

const ClearanceMap& Swarm::clearance_for(const GridMap& map, const NavigationSet* nav) {
  if (nav != nullptr && nav->clearance_matches(map)) return nav->clearance();
  if (clearance_.matches(map) && clearance_source_ == map.costs().data()) return clearance_;
  std::span<const CellCoord> changed;
  const bool follows = clearance_source_ == map.costs().data() && clearance_.width() == map.width() &&
                       clearance_.height() == map.height() &&
                       map.cells_changed_since(clearance_.revision(), bulk_scratch_, changed) &&
                       clearance_.update(map, changed);
  if (!follows) clearance_.build(map);  // once per map (allocates only when the map grows)
  clearance_source_ = map.costs().data();
  if (bulk_scratch_.capacity() > (std::size_t{1} << 16)) std::vector<CellCoord>().swap(bulk_scratch_);
  return clearance_;
}

// The hashes and the map cache follow the map and the kinds present; a change may leave agents
// in walls (needs_repair_).
bool Swarm::follow_environment(const GridMap& map) {
  const float cs = map.cell_size();
  bool changed = false;
  if (static_cast<float>(map.width()) * cs != env_world_width_ ||
      static_cast<float>(map.height()) * cs != env_world_height_) {
    configure_hashes(map);  // first step on a map of this size (allocates once)
    needs_repair_ = true;
    changed = true;
  } else if (interaction_radius() != hash_cell_) {
    configure_hashes(map);  // the kinds present changed (allocates when the grid grows)
    changed = true;
  }
  if (refresh_map_cache(map)) {
    needs_repair_ = true;  // walls may have appeared under agents
    changed = true;
  }
  return changed;
}

}  // namespace swarmfield::sim
