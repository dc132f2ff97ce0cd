// Textbook binary-heap Dijkstra and scalar flow extraction (baselines; see the header).
#include "baselines/heap_dijkstra.hpp"

#include <array>
#include <limits>

namespace swarmfield::bench {

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kSqrt2 = 1.41421356237309505f;

// Neighbour order E SE S SW W NW N NE (sim::FlowDirection). Even = orthogonal.
constexpr std::array<int, 8> kDx = {1, 1, 0, -1, -1, -1, 0, 1};
constexpr std::array<int, 8> kDy = {0, 1, 1, 1, 0, -1, -1, -1};

}  // namespace

std::size_t HeapDijkstra::build(const sim::GridMap& map, std::span<const sim::CellCoord> goals) {
  width_ = map.width();
  height_ = map.height();
  dist_.assign(map.cell_count(), kInf);
  heap_.clear();
  heap_.reserve(map.cell_count() / 4);
  for (const sim::CellCoord g : goals) {
    if (!map.walkable(g)) continue;
    const auto i = static_cast<std::int32_t>(map.index(g.x, g.y));
    dist_[static_cast<std::size_t>(i)] = 0.0f;
    heap_.push({0.0f, i});
  }
  std::size_t settled = 0;
  while (!heap_.empty()) {
    const auto [d, u] = heap_.top();
    heap_.pop();
    if (d > dist_[static_cast<std::size_t>(u)]) continue;  // stale entry (lazy deletion)
    ++settled;
    const std::int32_t ux = u % width_, uy = u / width_;
    bool free[4] = {false, false, false, false};  // E S W N walkable
    for (int k = 0; k < 8; k += 2) free[k / 2] = map.walkable(ux + kDx[static_cast<std::size_t>(k)], uy + kDy[static_cast<std::size_t>(k)]);
    for (int k = 0; k < 8; ++k) {
      const std::int32_t nx = ux + kDx[static_cast<std::size_t>(k)], ny = uy + kDy[static_cast<std::size_t>(k)];
      if (!map.walkable(nx, ny)) continue;  // also the bounds check
      const bool diagonal = (k & 1) != 0;
      if (diagonal && !(free[k / 2] && free[((k / 2) + 1) & 3])) continue;  // no corner cutting
      const float step = static_cast<float>(map.cost(nx, ny)) * (diagonal ? kSqrt2 : 1.0f);
      const float nd = d + step;
      const std::size_t n = map.index(nx, ny);
      if (nd < dist_[n]) {
        dist_[n] = nd;
        heap_.push({nd, static_cast<std::int32_t>(n)});
      }
    }
  }
  return settled;
}

void extract_flow(const sim::GridMap& map, std::span<const float> distances, std::vector<std::uint8_t>& out) {
  const std::int32_t w = map.width(), h = map.height();
  out.resize(map.cell_count());
  for (std::int32_t y = 0; y < h; ++y) {
    for (std::int32_t x = 0; x < w; ++x) {
      const std::size_t i = map.index(x, y);
      const float own = distances[i];
      std::uint8_t dir = 8;
      if (own != 0.0f && own != kInf) {
        float best = own;
        bool free[4] = {false, false, false, false};
        for (int k = 0; k < 8; k += 2) {  // orthogonals first (they win ties)
          const std::int32_t nx = x + kDx[static_cast<std::size_t>(k)], ny = y + kDy[static_cast<std::size_t>(k)];
          if (!map.in_bounds(nx, ny)) continue;
          free[k / 2] = map.walkable(nx, ny);
          const float v = distances[map.index(nx, ny)];
          if (v < best) {
            best = v;
            dir = static_cast<std::uint8_t>(k);
          }
        }
        for (int k = 1; k < 8; k += 2) {
          if (!free[k / 2] || !free[((k / 2) + 1) & 3]) continue;
          const float v = distances[map.index(x + kDx[static_cast<std::size_t>(k)], y + kDy[static_cast<std::size_t>(k)])];
          if (v < best) {
            best = v;
            dir = static_cast<std::uint8_t>(k);
          }
        }
      }
      out[i] = dir;
    }
  }
}

}  // namespace swarmfield::bench
