// GridMap: the per-cell cost field and world <-> cell conversion.
#include "swarmfield/sim/map/grid_map.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "swarmfield/sim/huge_pages.hpp"

namespace swarmfield::sim {

namespace {
// Keeps floor() results inside int32 so the cast below is defined; anything this far out is
// out of bounds anyway (maps are at most a few thousand cells wide).
constexpr double kCoordLimit = 1.0e9;

std::int32_t floor_to_cell(float world, float cell_size) noexcept {
  const double c = std::floor(static_cast<double>(world) / static_cast<double>(cell_size));
  if (!(c > -kCoordLimit)) return static_cast<std::int32_t>(-kCoordLimit);  // also NaN
  if (c > kCoordLimit) return static_cast<std::int32_t>(kCoordLimit);
  return static_cast<std::int32_t>(c);
}
}  // namespace

GridMap::GridMap(std::int32_t width, std::int32_t height, std::uint8_t fill, float cell_size)
    : width_(std::max<std::int32_t>(width, 0)),
      height_(std::max<std::int32_t>(height, 0)),
      // A non-positive or non-finite cell size would make world_to_cell meaningless.
      cell_size_(std::isfinite(cell_size) && cell_size > 0.0f ? cell_size : 1.0f) {
  assign_huge(costs_, static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_), fill);
  walkable_ = fill != kBlockedCost ? costs_.size() : 0;
}

GridMap GridMap::from_costs(std::int32_t width, std::int32_t height, std::vector<std::uint8_t> costs,
                           float cell_size) {
  GridMap map(0, 0, kDefaultCost, cell_size);
  map.width_ = std::max<std::int32_t>(width, 0);
  map.height_ = std::max<std::int32_t>(height, 0);
  map.costs_ = std::move(costs);
  map.costs_.resize(static_cast<std::size_t>(map.width_) * static_cast<std::size_t>(map.height_), kBlockedCost);
  move_to_huge_pages(map.costs_);  // every agent reads its cell's cost each tick
  map.walkable_ = static_cast<std::size_t>(
      std::count_if(map.costs_.begin(), map.costs_.end(), [](std::uint8_t c) { return c != kBlockedCost; }));
  return map;
}

void GridMap::set_cost(std::int32_t x, std::int32_t y, std::uint8_t cost) {
  if (!in_bounds(x, y)) return;
  std::uint8_t& c = costs_[index(x, y)];
  if (c == cost) return;
  walkable_ += static_cast<std::size_t>(cost != kBlockedCost) - static_cast<std::size_t>(c != kBlockedCost);
  c = cost;
  if (!log_on_) {
    log_base_ = ++revision_;
    return;
  }
  if (change_log_.size() >= kChangeLogLimit) {
    const std::size_t drop = change_log_.size() / 2;
    change_log_.erase(change_log_.begin(), change_log_.begin() + static_cast<std::ptrdiff_t>(drop));
    log_base_ += static_cast<std::uint32_t>(drop);
  }
  if (block_revision_.empty()) {
    const std::int32_t by = (height_ + kChangeBlockSide - 1) / kChangeBlockSide;
    block_revision_.assign(static_cast<std::size_t>(blocks_x()) * static_cast<std::size_t>(by), 0);
    blocks_base_ = revision_;
  }
  change_log_.push_back({x, y});
  ++revision_;
  block_revision_[static_cast<std::size_t>(y / kChangeBlockSide) * static_cast<std::size_t>(blocks_x()) +
                  static_cast<std::size_t>(x / kChangeBlockSide)] = revision_;
}

void GridMap::set_change_log(bool on) noexcept {
  log_on_ = on;
  if (!on) {
    std::vector<CellCoord>().swap(change_log_);
    std::vector<std::uint32_t>().swap(block_revision_);
    log_base_ = revision_;
  }
}

bool GridMap::changed_blocks_since(std::uint32_t since, std::size_t max_cells, std::vector<CellCoord>& out) const {
  out.clear();
  if (since > revision_) return false;
  if (since == revision_) return true;
  if (block_revision_.empty() || since < blocks_base_) return false;
  const std::int32_t bx = blocks_x();
  std::size_t cells = 0;
  for (std::size_t b = 0; b < block_revision_.size(); ++b) {
    if (block_revision_[b] <= since) continue;
    const std::int32_t x0 = static_cast<std::int32_t>(b % static_cast<std::size_t>(bx)) * kChangeBlockSide;
    const std::int32_t y0 = static_cast<std::int32_t>(b / static_cast<std::size_t>(bx)) * kChangeBlockSide;
    const std::int32_t w = std::min(kChangeBlockSide, width_ - x0), h = std::min(kChangeBlockSide, height_ - y0);
    cells += static_cast<std::size_t>(w) * static_cast<std::size_t>(h);
    if (cells > max_cells) {
      out.clear();
      return false;
    }
    for (std::int32_t y = y0; y < y0 + h; ++y)
      for (std::int32_t x = x0; x < x0 + w; ++x) out.push_back({x, y});
  }
  return true;
}

bool GridMap::cells_changed_since(std::uint32_t since, std::vector<CellCoord>& scratch,
                                  std::span<const CellCoord>& out) const {
  if (changes_since(since, out)) return true;
  if (!changed_blocks_since(since, bulk_change_limit(), scratch)) return false;
  out = scratch;
  return true;
}

bool GridMap::changes_since(std::uint32_t since, std::span<const CellCoord>& out) const noexcept {
  out = {};
  // Revisions only grow (a wrap after 2^32 changes reads as "too old": a whole rebuild).
  if (since < log_base_ || since > revision_) return false;
  const std::size_t first = since - log_base_;
  out = std::span<const CellCoord>(change_log_).subspan(first, revision_ - since);
  return true;
}

CellCoord GridMap::world_to_cell(Vec2 p) const noexcept {
  return {floor_to_cell(p.x, cell_size_), floor_to_cell(p.y, cell_size_)};
}

Vec2 GridMap::cell_center(CellCoord c) const noexcept {
  return {(static_cast<float>(c.x) + 0.5f) * cell_size_, (static_cast<float>(c.y) + 0.5f) * cell_size_};
}

}  // namespace swarmfield::sim
