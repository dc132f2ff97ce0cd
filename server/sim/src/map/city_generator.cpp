// Deterministic procedural city. Layout, in order:
//   border ring road -> arterial grid (wide, spanning the map) -> per-superblock local streets
//   (some ending at a T junction) -> optional diagonal avenues -> blocks = 4-connected
//   non-road regions -> plazas (some blocks) -> sidewalks (block cells touching a road) ->
//   alleys cut through the remaining building interiors -> pocket fill (flood fill from the
//   border; anything walkable it misses becomes building).
// Randomness: std::mt19937_64, whose output sequence the C++ standard fixes, mapped to ranges
// by our own rejection sampling (std::uniform_*_distribution is implementation-defined), and
// no floating point in any decision, so the same seed gives the same city on every platform.
#include "swarmfield/sim/map/city_generator.hpp"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

namespace swarmfield::sim {

namespace {

constexpr std::int32_t kMinSide = 32;
constexpr std::int32_t kMaxSide = 8192;

// Cell kinds during generation; turned into costs at the end.
enum Kind : std::uint8_t { kBuilding = 0, kRoad, kSidewalk, kAlley, kPlaza, kPlazaProp };

constexpr std::uint8_t cost_of(std::uint8_t kind) noexcept {
  switch (kind) {
    case kRoad: return 1;
    case kSidewalk: return 2;
    case kAlley: return 3;
    case kPlaza: return 1;
    default: return kBlockedCost;
  }
}

/// Platform-independent integer draws on top of mt19937_64.
class CityRng {
 public:
  explicit CityRng(std::uint64_t seed) : engine_(seed ^ 0x5C17F1E1D5EEDull) {}
  /// Uniform integer in [lo, hi] (lo <= hi) by rejection: draws below 2^64 mod span are
  /// rejected so `r % span` is unbiased.
  std::int32_t range(std::int32_t lo, std::int32_t hi) {
    if (hi <= lo) return lo;
    const std::uint64_t span = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo) + 1;
    const std::uint64_t threshold = (0 - span) % span;
    std::uint64_t r = engine_();
    while (r < threshold) r = engine_();
    return lo + static_cast<std::int32_t>(r % span);
  }
  /// True with probability percent / 100.
  bool chance(std::int32_t percent) { return range(0, 99) < percent; }

 private:
  std::mt19937_64 engine_;
};

struct Span {
  std::int32_t start = 0;  ///< first cell of the street
  std::int32_t width = 0;  ///< cells
};

/// Streets across [lo, hi): gaps (blocks) of gap_min..gap_max cells between them, widths
/// w_min..w_max. The last block is at least gap_min long.
std::vector<Span> place_streets(CityRng& rng, std::int32_t lo, std::int32_t hi, std::int32_t gap_min,
                                std::int32_t gap_max, std::int32_t w_min, std::int32_t w_max) {
  std::vector<Span> out;
  std::int32_t pos = lo;
  for (;;) {
    const std::int32_t gap = rng.range(gap_min, gap_max);
    const std::int32_t w = rng.range(w_min, w_max);
    if (pos + gap + w + gap_min > hi) break;
    pos += gap;
    out.push_back({pos, w});
    pos += w;
  }
  return out;
}

class CityBuilder {
 public:
  CityBuilder(std::int32_t w, std::int32_t h, std::uint64_t seed)
      : w_(w), h_(h), rng_(seed), kind_(static_cast<std::size_t>(w) * static_cast<std::size_t>(h), kBuilding) {}

  GridMap build() {
    roads();
    diagonal_avenues();
    label_blocks();
    plazas();
    sidewalks();
    alleys();
    fill_pockets();
    std::vector<std::uint8_t> costs(kind_.size());
    std::transform(kind_.begin(), kind_.end(), costs.begin(), [](std::uint8_t k) { return cost_of(k); });
    return GridMap::from_costs(w_, h_, std::move(costs));
  }

 private:
  std::size_t idx(std::int32_t x, std::int32_t y) const noexcept {
    return static_cast<std::size_t>(y) * static_cast<std::size_t>(w_) + static_cast<std::size_t>(x);
  }
  bool inside(std::int32_t x, std::int32_t y) const noexcept { return x >= 0 && y >= 0 && x < w_ && y < h_; }
  void fill_rect(std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1, std::uint8_t kind) {
    x0 = std::max(x0, 0);
    y0 = std::max(y0, 0);
    x1 = std::min(x1, w_);
    y1 = std::min(y1, h_);
    for (std::int32_t y = y0; y < y1; ++y)
      for (std::int32_t x = x0; x < x1; ++x) kind_[idx(x, y)] = kind;
  }

  // --- border ring road, arterials, local streets -------------------------------------------
  void roads() {
    constexpr std::int32_t kBorder = 2;
    fill_rect(0, 0, w_, kBorder, kRoad);
    fill_rect(0, h_ - kBorder, w_, h_, kRoad);
    fill_rect(0, 0, kBorder, h_, kRoad);
    fill_rect(w_ - kBorder, 0, w_, h_, kRoad);

    // Arterials: wide boulevards every 70..120 cells, spanning the map.
    const std::vector<Span> ax = place_streets(rng_, kBorder, w_ - kBorder, 70, 120, 6, 8);
    const std::vector<Span> ay = place_streets(rng_, kBorder, h_ - kBorder, 70, 120, 6, 8);
    for (const Span& s : ax) fill_rect(s.start, 0, s.start + s.width, h_, kRoad);
    for (const Span& s : ay) fill_rect(0, s.start, w_, s.start + s.width, kRoad);

    // Superblocks between arterials get their own local street grid, so local streets do not
    // line up across an arterial (as in real cities).
    const auto bounds = [](const std::vector<Span>& spans, std::int32_t end, std::int32_t border) {
      std::vector<std::pair<std::int32_t, std::int32_t>> out;
      std::int32_t pos = border;
      for (const Span& s : spans) {
        out.emplace_back(pos, s.start);
        pos = s.start + s.width;
      }
      out.emplace_back(pos, end - border);
      return out;
    };
    for (const auto& [y0, y1] : bounds(ay, h_, kBorder)) {
      for (const auto& [x0, x1] : bounds(ax, w_, kBorder)) local_streets(x0, y0, x1, y1);
    }
  }

  void local_streets(std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1) {
    const std::vector<Span> hs = place_streets(rng_, y0, y1, 14, 30, 3, 4);
    const std::vector<Span> vs = place_streets(rng_, x0, x1, 16, 34, 3, 4);
    for (const Span& s : hs) fill_rect(x0, s.start, x1, s.start + s.width, kRoad);
    for (const Span& s : vs) {
      // Most vertical streets cross the superblock; some stop at a horizontal street (a T
      // junction), which merges blocks and breaks the grid's regularity.
      std::int32_t top = y0;
      std::int32_t bottom = y1;
      if (!hs.empty() && rng_.chance(30)) {
        const Span& cut = hs[static_cast<std::size_t>(rng_.range(0, static_cast<std::int32_t>(hs.size()) - 1))];
        if (rng_.chance(50)) {
          bottom = cut.start + cut.width;
        } else {
          top = cut.start;
        }
      }
      fill_rect(s.start, top, s.start + s.width, bottom, kRoad);
    }
  }

  // --- diagonal avenues ------------------------------------------------------------------------
  // A straight avenue across the map at a slant, like Broadway across Manhattan's grid. Integer
  // geometry only: a cell is on the avenue when its distance to the line, measured along the
  // minor axis, is at most the half width.
  void diagonal_avenues() {
    const std::int32_t count = rng_.range(0, 1 + std::max(w_, h_) / 384);
    for (std::int32_t i = 0; i < count; ++i) {
      // Line from (xa, 0) to (xb, h_ - 1); half width 2 cells measured horizontally.
      const std::int32_t xa = rng_.range(w_ / 8, w_ - 1 - w_ / 8);
      const std::int32_t xb = rng_.range(w_ / 8, w_ - 1 - w_ / 8);
      if (std::abs(xa - xb) < w_ / 6) continue;  // nearly vertical: would just double a street
      const std::int64_t dy = std::max(h_ - 1, 1);
      for (std::int32_t y = 0; y < h_; ++y) {
        // Rounded x of the line at row y.
        const std::int64_t num = static_cast<std::int64_t>(xa) * dy + static_cast<std::int64_t>(xb - xa) * y;
        const auto xc = static_cast<std::int32_t>((2 * num + dy) / (2 * dy));
        fill_rect(xc - 2, y, xc + 3, y + 1, kRoad);
      }
    }
  }

  // --- blocks ----------------------------------------------------------------------------------
  struct Block {
    std::int32_t x0, y0, x1, y1;  ///< bounding box, exclusive max
    std::size_t area = 0;
  };

  void label_blocks() {
    block_id_.assign(kind_.size(), -1);
    std::vector<std::size_t> stack;
    for (std::int32_t y = 0; y < h_; ++y) {
      for (std::int32_t x = 0; x < w_; ++x) {
        const std::size_t start = idx(x, y);
        if (kind_[start] != kBuilding || block_id_[start] >= 0) continue;
        const auto id = static_cast<std::int32_t>(blocks_.size());
        Block b{x, y, x + 1, y + 1, 0};
        block_id_[start] = id;
        stack.assign(1, start);
        while (!stack.empty()) {
          const std::size_t i = stack.back();
          stack.pop_back();
          ++b.area;
          const auto cx = static_cast<std::int32_t>(i % static_cast<std::size_t>(w_));
          const auto cy = static_cast<std::int32_t>(i / static_cast<std::size_t>(w_));
          b.x0 = std::min(b.x0, cx);
          b.y0 = std::min(b.y0, cy);
          b.x1 = std::max(b.x1, cx + 1);
          b.y1 = std::max(b.y1, cy + 1);
          const std::int32_t nx[4] = {cx + 1, cx - 1, cx, cx};
          const std::int32_t ny[4] = {cy, cy, cy + 1, cy - 1};
          for (int k = 0; k < 4; ++k) {
            if (!inside(nx[k], ny[k])) continue;
            const std::size_t j = idx(nx[k], ny[k]);
            if (kind_[j] == kBuilding && block_id_[j] < 0) {
              block_id_[j] = id;
              stack.push_back(j);
            }
          }
        }
        blocks_.push_back(b);
      }
    }
  }

  // --- plazas ----------------------------------------------------------------------------------
  // Some mid-sized blocks become open squares: paved (cost 1) with a fountain in the middle and
  // a regular grid of trees or bollards (blocked single cells) that crowds must flow around.
  void plazas() {
    std::vector<std::int32_t> candidates;
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const Block& b = blocks_[i];
      if (b.area >= 120 && b.area <= 1600) candidates.push_back(static_cast<std::int32_t>(i));
    }
    const std::int64_t area = static_cast<std::int64_t>(w_) * h_;
    std::int64_t want = std::max<std::int64_t>(1, area / 30000);
    while (want-- > 0 && !candidates.empty()) {
      const auto pick = static_cast<std::size_t>(rng_.range(0, static_cast<std::int32_t>(candidates.size()) - 1));
      const std::int32_t id = candidates[pick];
      candidates.erase(candidates.begin() + static_cast<std::ptrdiff_t>(pick));
      make_plaza(id);
    }
  }

  void make_plaza(std::int32_t id) {
    const Block& b = blocks_[static_cast<std::size_t>(id)];
    const std::int32_t cx = (b.x0 + b.x1) / 2;
    const std::int32_t cy = (b.y0 + b.y1) / 2;
    const std::int32_t fountain = std::min(b.x1 - b.x0, b.y1 - b.y0) >= 14 ? 2 : 0;
    const std::int32_t spacing = rng_.range(5, 7);
    for (std::int32_t y = b.y0; y < b.y1; ++y) {
      for (std::int32_t x = b.x0; x < b.x1; ++x) {
        const std::size_t i = idx(x, y);
        if (block_id_[i] != id) continue;
        std::uint8_t k = kPlaza;
        const std::int32_t dx = x - cx;
        const std::int32_t dy = y - cy;
        if (fountain > 0 && dx * dx + dy * dy <= fountain * fountain) {
          k = kPlazaProp;
        } else if (x - b.x0 >= 2 && b.x1 - 1 - x >= 2 && y - b.y0 >= 2 && b.y1 - 1 - y >= 2 &&
                   (x - b.x0 - 2) % spacing == 0 && (y - b.y0 - 2) % spacing == 0 &&
                   dx * dx + dy * dy > (fountain + 2) * (fountain + 2)) {
          k = kPlazaProp;  // tree
        }
        kind_[i] = k;
      }
    }
    blocks_[static_cast<std::size_t>(id)].area = 0;  // no longer a building block
  }

  // --- sidewalks ------------------------------------------------------------------------------
  void sidewalks() {
    std::vector<std::size_t> cells;
    for (std::int32_t y = 0; y < h_; ++y) {
      for (std::int32_t x = 0; x < w_; ++x) {
        if (kind_[idx(x, y)] != kBuilding) continue;
        bool touches_road = false;
        for (std::int32_t dy = -1; dy <= 1 && !touches_road; ++dy)
          for (std::int32_t dx = -1; dx <= 1; ++dx)
            if (inside(x + dx, y + dy) && kind_[idx(x + dx, y + dy)] == kRoad) touches_road = true;
        if (touches_road) cells.push_back(idx(x, y));
      }
    }
    for (const std::size_t i : cells) kind_[i] = kSidewalk;
  }

  // --- alleys ---------------------------------------------------------------------------------
  // Alleys split a block's buildings: a through alley across the shorter dimension of a long
  // block (recursively, less likely each level) and sometimes a dead-end service alley. Alley
  // cells are painted only over this block's building cells, so they always end on the block's
  // own sidewalk.
  void alleys() {
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const Block& b = blocks_[i];
      if (b.area < 60) continue;
      split(static_cast<std::int32_t>(i), b.x0 + 1, b.y0 + 1, b.x1 - 1, b.y1 - 1, 0);
    }
  }

  void paint_alley(std::int32_t id, std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1) {
    for (std::int32_t y = std::max(y0, 0); y < std::min(y1, h_); ++y)
      for (std::int32_t x = std::max(x0, 0); x < std::min(x1, w_); ++x) {
        const std::size_t i = idx(x, y);
        if (block_id_[i] == id && kind_[i] == kBuilding) kind_[i] = kAlley;
      }
  }

  void split(std::int32_t id, std::int32_t x0, std::int32_t y0, std::int32_t x1, std::int32_t y1, int depth) {
    const std::int32_t w = x1 - x0;
    const std::int32_t h = y1 - y0;
    const std::int32_t longer = std::max(w, h);
    constexpr std::int32_t kMinLot = 5;
    const std::int32_t percent = depth == 0 ? 65 : (depth == 1 ? 40 : 15);
    if (longer >= 2 * kMinLot + 3 && rng_.chance(percent)) {
      const std::int32_t lo = std::max(kMinLot, longer * 35 / 100);
      const std::int32_t hi = std::min(longer - kMinLot - 1, longer * 65 / 100);
      const std::int32_t at = rng_.range(lo, std::max(lo, hi));
      if (w >= h) {
        paint_alley(id, x0 + at, y0 - 1, x0 + at + 1, y1 + 1);
        split(id, x0, y0, x0 + at, y1, depth + 1);
        split(id, x0 + at + 1, y0, x1, y1, depth + 1);
      } else {
        paint_alley(id, x0 - 1, y0 + at, x1 + 1, y0 + at + 1);
        split(id, x0, y0, x1, y0 + at, depth + 1);
        split(id, x0, y0 + at + 1, x1, y1, depth + 1);
      }
      return;
    }
    // Dead-end service alley from one side into a large lot.
    if (w >= 10 && h >= 10 && rng_.chance(25)) {
      const bool vertical = rng_.chance(50);
      if (vertical) {
        const std::int32_t x = rng_.range(x0 + 3, x1 - 4);
        const std::int32_t len = rng_.range(h / 3, h / 2);
        if (rng_.chance(50)) {
          paint_alley(id, x, y0 - 1, x + 1, y0 + len);
        } else {
          paint_alley(id, x, y1 - len, x + 1, y1 + 1);
        }
      } else {
        const std::int32_t y = rng_.range(y0 + 3, y1 - 4);
        const std::int32_t len = rng_.range(w / 3, w / 2);
        if (rng_.chance(50)) {
          paint_alley(id, x0 - 1, y, x0 + len, y + 1);
        } else {
          paint_alley(id, x1 - len, y, x1 + 1, y + 1);
        }
      }
    }
  }

  // --- pockets ----------------------------------------------------------------------------------
  // Reachability under the no-corner-cutting 8-neighbour rule equals 4-connectivity, so a
  // 4-connected flood fill from the border road finds everything an agent can reach.
  void fill_pockets() {
    std::vector<std::uint8_t> seen(kind_.size(), 0);
    std::vector<std::size_t> stack{idx(0, 0)};
    seen[idx(0, 0)] = 1;
    while (!stack.empty()) {
      const std::size_t i = stack.back();
      stack.pop_back();
      const auto cx = static_cast<std::int32_t>(i % static_cast<std::size_t>(w_));
      const auto cy = static_cast<std::int32_t>(i / static_cast<std::size_t>(w_));
      const std::int32_t nx[4] = {cx + 1, cx - 1, cx, cx};
      const std::int32_t ny[4] = {cy, cy, cy + 1, cy - 1};
      for (int k = 0; k < 4; ++k) {
        if (!inside(nx[k], ny[k])) continue;
        const std::size_t j = idx(nx[k], ny[k]);
        if (!seen[j] && cost_of(kind_[j]) != kBlockedCost) {
          seen[j] = 1;
          stack.push_back(j);
        }
      }
    }
    for (std::size_t i = 0; i < kind_.size(); ++i)
      if (!seen[i]) kind_[i] = kBuilding;
  }

  std::int32_t w_;
  std::int32_t h_;
  CityRng rng_;
  std::vector<std::uint8_t> kind_;
  std::vector<std::int32_t> block_id_;
  std::vector<Block> blocks_;
};

}  // namespace

GridMap generate_city(const CityParams& params) {
  const std::int32_t w = std::clamp(params.width, kMinSide, kMaxSide);
  const std::int32_t h = std::clamp(params.height, kMinSide, kMaxSide);
  return CityBuilder(w, h, params.seed).build();
}

}  // namespace swarmfield::sim
