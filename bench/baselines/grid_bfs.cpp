// Unit-step 8-neighbour BFS on a padded grid (baseline; see the header).
#include "baselines/grid_bfs.hpp"

#include <algorithm>

namespace swarmfield::bench {

namespace {
constexpr std::int32_t kBlocked = -2;
constexpr std::int32_t kUnreached = -1;
}  // namespace

std::size_t GridBfs::build(const sim::GridMap& map, std::span<const sim::CellCoord> goals) {
  const auto w = static_cast<std::size_t>(map.width()), h = static_cast<std::size_t>(map.height());
  const std::size_t pw = w + 2;
  padded_width_ = pw;
  padded_.resize(pw * (h + 2));
  queue_.resize(map.cell_count());
  std::int32_t* cell = padded_.data();
  std::fill(cell, cell + pw, kBlocked);
  std::fill(cell + (h + 1) * pw, cell + (h + 2) * pw, kBlocked);
  const std::uint8_t* src = map.costs().data();
  for (std::size_t y = 0; y < h; ++y) {
    std::int32_t* row = cell + (y + 1) * pw;
    row[0] = kBlocked;
    row[w + 1] = kBlocked;
    for (std::size_t x = 0; x < w; ++x) row[x + 1] = src[y * w + x] == sim::kBlockedCost ? kBlocked : kUnreached;
  }
  std::size_t head = 0, tail = 0;
  for (const sim::CellCoord g : goals) {
    if (!map.walkable(g)) continue;
    const std::size_t i = (static_cast<std::size_t>(g.y) + 1) * pw + static_cast<std::size_t>(g.x) + 1;
    if (cell[i] == 0) continue;
    cell[i] = 0;
    queue_[tail++] = static_cast<std::int32_t>(i);
  }
  const auto s = static_cast<std::ptrdiff_t>(pw);
  std::int32_t* const queue = queue_.data();
  const auto visit = [&](std::ptrdiff_t n, std::int32_t next) {
    if (cell[n] != kUnreached) return;
    cell[n] = next;
    queue[tail++] = static_cast<std::int32_t>(n);
  };
  while (head < tail) {
    const std::ptrdiff_t u = queue[head++];
    const std::int32_t next = cell[u] + 1;
    const bool e = cell[u + 1] != kBlocked, so = cell[u + s] != kBlocked;
    const bool wf = cell[u - 1] != kBlocked, n = cell[u - s] != kBlocked;
    visit(u + 1, next);
    visit(u + s, next);
    visit(u - 1, next);
    visit(u - s, next);
    if (e && so) visit(u + s + 1, next);  // diagonals: no corner cutting
    if (wf && so) visit(u + s - 1, next);
    if (wf && n) visit(u - s - 1, next);
    if (e && n) visit(u - s + 1, next);
  }
  return tail;
}

}  // namespace swarmfield::bench
