// `--spawn-rect` placement (spawn_rect.hpp): where each kind's disc fits in the rectangle.
#include "spawn_rect.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "swarmfield/sim/crowd/wall_collision.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

namespace swarmfield::tool {
namespace {

// Uniform draws per kind before its placements come from its fit boxes (spawn_rect.hpp).
constexpr int kFitAttempts = 1000;

/// The kind every agent gets when at most one kind is spawnable: the first with a weight > 0,
/// else the last of the table.
std::size_t first_spawned_kind(std::span<const sim::AgentKind> kinds) {
  std::size_t k = 0;
  while (k + 1 < kinds.size() && !(kinds[k].spawn_weight > 0.0f)) ++k;
  return k;
}

/// Where a disc of one kind can stand in the spawn rectangle: boxes of centre positions (world
/// units), each keeping the disc inside an all-walkable rectangle of cells of n or n + 1 cells
/// a side (n = its size class; ClearanceMap blocks, after Harabor & Botea: every placement where
/// square_fits holds lies in such a rectangle, since the disc's square spans n or n + 1 cells),
/// clipped to the spawn rectangle. Boxes may overlap; a box may be a point (radius n / 2).
struct FitBox {
  float x0, y0, x1, y1;  // closed ranges of centres
  double weight;         // cumulative area (for a draw by area)
};

/// The boxes of a disc of `radius` inside the world rectangle `rect` (X0, Y0, X1, Y1). Empty
/// when no place in the rectangle fits the disc. With `first_only`, stops at the first box.
std::vector<FitBox> fit_boxes(const sim::GridMap& map, const sim::ClearanceMap& clearance, float radius,
                              const float rect[4], bool first_only) {
  const float cs = map.cell_size();
  const float r = sim::wall_collision_radius(radius, cs);
  const int n = sim::size_class_of_radius(r, cs);
  std::vector<FitBox> boxes;
  double total = 0.0;
  // Blocks whose (n + 1)-cell rectangles can reach the spawn rectangle.
  const auto lo = [cs](float v, int extra) { return static_cast<std::int32_t>(std::floor(v / cs)) - extra; };
  const std::int32_t bx0 = std::max(lo(rect[0], n + 1), 0), bx1 = std::min(lo(rect[2], 0), map.width() - n);
  const std::int32_t by0 = std::max(lo(rect[1], n + 1), 0), by1 = std::min(lo(rect[3], 0), map.height() - n);
  for (std::int32_t by = by0; by <= by1; ++by) {
    for (std::int32_t bx = bx0; bx <= bx1; ++bx) {
      if (!clearance.fits({bx, by}, n)) continue;
      const bool right = clearance.fits({bx + 1, by}, n), down = clearance.fits({bx, by + 1}, n);
      const bool both = right && down && clearance.fits({bx + 1, by + 1}, n);
      // The largest shapes this block starts (they contain the smaller ones): (n + 1) square, or
      // the wide and/or tall rectangle, or the block alone.
      int shapes[2] = {0, -1};
      if (both) {
        shapes[0] = 3;
      } else if (right || down) {
        shapes[0] = right ? 1 : 2;
        if (right && down) shapes[1] = 2;
      }
      for (const int shape : shapes) {
        if (shape < 0) continue;
        const float wx = static_cast<float>(n + (shape & 1)) * cs, wy = static_cast<float>(n + (shape >> 1)) * cs;
        const float x0 = static_cast<float>(bx) * cs, y0 = static_cast<float>(by) * cs;
        FitBox b{std::max(x0 + r, rect[0]), std::max(y0 + r, rect[1]), std::min(std::max(x0 + r, x0 + wx - r), rect[2]),
                 std::min(std::max(y0 + r, y0 + wy - r), rect[3]), 0.0};
        // The rectangle is half-open: a box touching its far edge only is outside.
        if (b.x0 > b.x1 || b.y0 > b.y1 || b.x0 >= rect[2] || b.y0 >= rect[3]) continue;
        total += static_cast<double>(b.x1 - b.x0) * static_cast<double>(b.y1 - b.y0) + 1e-12;
        b.weight = total;
        boxes.push_back(b);
        if (first_only) return boxes;
      }
    }
  }
  return boxes;
}

}  // namespace

std::size_t rect_walkable_cells(const sim::GridMap& map, const float rect[4]) {
  const sim::CellCoord c0 = map.world_to_cell({rect[0], rect[1]});
  const sim::CellCoord c1 = map.world_to_cell({std::nextafter(rect[2], rect[0]), std::nextafter(rect[3], rect[1])});
  std::size_t count = 0;
  for (std::int32_t y = c0.y; y <= c1.y; ++y) {
    for (std::int32_t x = c0.x; x <= c1.x; ++x) {
      if (map.walkable(x, y)) ++count;
    }
  }
  return count;
}

std::string check_kinds_fit(const sim::World& world, const sim::ClearanceMap& clearance, const float rect[4],
                            const std::string& rect_text) {
  const std::span<const sim::AgentKind> kinds = world.swarm().kind_table();
  const bool draw_kind = sim::spawnable_kind_count(kinds) > 1;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const bool spawned = draw_kind ? kinds[k].spawn_weight > 0.0f : k == first_spawned_kind(kinds);
    if (!spawned || !fit_boxes(world.map(), clearance, kinds[k].radius, rect, true).empty()) continue;
    const int n = sim::size_class_of_radius(sim::wall_collision_radius(kinds[k].radius, world.map().cell_size()),
                                            world.map().cell_size());
    char text[160];
    std::snprintf(text, sizeof text, "no place in it fits a %s (radius %g: needs a %d x %d block of walkable cells)",
                  kinds[k].name.c_str(), static_cast<double>(kinds[k].radius), n, n);
    return "--spawn-rect '" + rect_text + "': " + text;
  }
  return {};
}

void spawn_in_rect(sim::World& world, const sim::ClearanceMap& clearance, std::uint32_t n, const float rect[4],
                   std::uint64_t seed) {
  const sim::GridMap& map = world.map();
  std::mt19937_64 rng(seed ^ 0x5157A7E5EEDull);
  const auto unit = [&rng] { return static_cast<float>(rng() >> 40) * (1.0f / 16777216.0f); };
  const std::span<const sim::AgentKind> kinds = world.swarm().kind_table();
  const bool draw_kind = sim::spawnable_kind_count(kinds) > 1;
  const auto only = static_cast<std::uint8_t>(first_spawned_kind(kinds));
  std::vector<std::vector<FitBox>> boxes(kinds.size());  // per kind, built when first needed
  std::vector<bool> by_boxes(kinds.size(), false);
  sim::Swarm& swarm = world.swarm_mutable();
  for (std::uint32_t added = 0; added < n; ++added) {
    const std::uint8_t kind = draw_kind ? sim::pick_agent_kind(kinds, rng()) : only;
    const float radius = kinds[kind].radius;
    sim::Vec2 p{};
    bool placed = false;
    for (int attempt = 0; attempt < kFitAttempts && !by_boxes[kind]; ++attempt) {
      const sim::Vec2 q{rect[0] + unit() * (rect[2] - rect[0]), rect[1] + unit() * (rect[3] - rect[1])};
      if (map.walkable_at(q) && sim::square_fits(map, q, radius)) {
        p = q;
        placed = true;
        break;
      }
    }
    if (!placed) {
      by_boxes[kind] = true;
      std::vector<FitBox>& list = boxes[kind];
      if (list.empty()) list = fit_boxes(map, clearance, radius, rect, false);
      if (list.empty()) continue;  // not reached: check_kinds_fit
      const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53 * list.back().weight;
      const auto it = std::upper_bound(list.begin(), list.end(), u, [](double v, const FitBox& b) { return v < b.weight; });
      const FitBox& b = it == list.end() ? list.back() : *it;
      p = {b.x0 + unit() * (b.x1 - b.x0), b.y0 + unit() * (b.y1 - b.y0)};
      // Float rounding at a box edge (a box one placement wide): its corner fits by construction.
      if (!sim::square_fits(map, p, radius)) p = {b.x0, b.y0};
    }
    const float heading = (unit() * 2.0f - 1.0f) * 3.14159265f;
    if (swarm.add(p, heading, kind) == sim::Swarm::kInvalidAgent) break;
  }
}

}  // namespace swarmfield::tool
