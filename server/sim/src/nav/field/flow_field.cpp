// Flow field (steepest neighbour of the integration field) and its smoothed sampling.
#include "swarmfield/sim/nav/field/flow_field.hpp"

#include <algorithm>
#include <cmath>
#include <span>

#include "vector_clones.hpp"

namespace swarmfield::sim {

namespace {

constexpr float kDiag = 0.70710678118654752f;
constexpr std::array<Vec2, 9> kDirectionVectors = {{
    {1.0f, 0.0f}, {kDiag, kDiag}, {0.0f, 1.0f}, {-kDiag, kDiag},
    {-1.0f, 0.0f}, {-kDiag, -kDiag}, {0.0f, -1.0f}, {kDiag, -kDiag}, {0.0f, 0.0f}}};

constexpr auto kNone = static_cast<std::uint8_t>(FlowDirection::kNone);

// The snapshot row loop is vectorized per CPU (SWARMFIELD_VECTOR_CLONES; AVX2 about 2x and
// AVX-512 about 4x faster than baseline x86-64 on 1024 x 1024 maps).

/// One row of directions from the padded search words of an IntegrationField (three padded
/// rows starting one row above, `pw` words each; `out` gets pw - 2 cells). Blocked words are 0
/// and the border is blocked, so no bounds checks are needed. Subtracting 1 (mod 2^32) maps a
/// word to the integration value, blocked to kUnreachable and unreached to kUnreachable - 1;
/// neither can be below a reachable cell's own value (at most kUnreachable - 2), so both are
/// never chosen. Orthogonals first in enum order, then the diagonals whose two orthogonal
/// cells are walkable (no corner cutting), each taking over only when strictly lower: an
/// orthogonal beats an equal diagonal and the lowest enum value wins a tie. Branch-free, with
/// unconditional loads, so the compiler vectorizes it.
SWARMFIELD_VECTOR_CLONES void snapshot_row(const std::uint32_t* __restrict words, std::size_t pw,
                                           std::uint8_t* __restrict out) noexcept {
  const std::uint32_t* wn = words + 1;
  const std::uint32_t* w0 = wn + pw;
  const std::uint32_t* ws = w0 + pw;
  const std::size_t w = pw - 2;
  for (std::size_t x = 0; x < w; ++x) {
    const std::uint32_t own_word = w0[x];
    std::uint32_t best = own_word - 1u;
    std::uint8_t dir = kNone;
    const auto take = [&](std::uint32_t candidate, std::uint8_t d) {
      const bool better = candidate < best;
      best = better ? candidate : best;
      dir = better ? d : dir;
    };
    // Every load unconditional, then selects: keeps the loop branch-free (vectorizable).
    const std::uint32_t e = w0[x + 1];
    const std::uint32_t s = ws[x];
    const std::uint32_t wv = w0[x - 1];
    const std::uint32_t n = wn[x];
    const std::uint32_t se = ws[x + 1] - 1u;
    const std::uint32_t sw = ws[x - 1] - 1u;
    const std::uint32_t nw = wn[x - 1] - 1u;
    const std::uint32_t ne = wn[x + 1] - 1u;
    take(e - 1u, 0);
    take(s - 1u, 2);
    take(wv - 1u, 4);
    take(n - 1u, 6);
    const bool fe = e != IntegrationField::kSearchBlocked;
    const bool fs = s != IntegrationField::kSearchBlocked;
    const bool fw = wv != IntegrationField::kSearchBlocked;
    const bool fn = n != IntegrationField::kSearchBlocked;
    take((fe & fs) ? se : kUnreachable, 1);
    take((fw & fs) ? sw : kUnreachable, 3);
    take((fw & fn) ? nw : kUnreachable, 5);
    take((fe & fn) ? ne : kUnreachable, 7);
    // Blocked (0), goal (1) and unreached words have no direction.
    const bool none = (own_word <= 1u) | (own_word == IntegrationField::kSearchUnreached);
    out[x] = none ? kNone : dir;
  }
}

}  // namespace

Vec2 direction_vector(FlowDirection d) noexcept {
  const auto i = static_cast<std::size_t>(d);
  return i < kDirectionVectors.size() ? kDirectionVectors[i] : Vec2{};
}

void FlowField::build(const GridMap& map, const IntegrationField& integration) {
  width_ = integration.width();
  height_ = integration.height();
  const std::size_t n = static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_);
  // A field built on another map cannot be trusted; leave everything kNone.
  if (n == 0 || map.width() != width_ || map.height() != height_) {
    dirs_.assign(n, kNone);
    return;
  }
  build_rows(integration, 0, height_);
}

void FlowField::reserve(std::int32_t width, std::int32_t height) {
  if (width <= 0 || height <= 0) return;
  dirs_.reserve(static_cast<std::size_t>(width) * static_cast<std::size_t>(height));
}

void FlowField::build_rows(const IntegrationField& integration, std::int32_t y_begin, std::int32_t y_end) {
  if (width_ != integration.width() || height_ != integration.height() ||
      dirs_.size() != static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_)) {
    width_ = integration.width();
    height_ = integration.height();
    dirs_.assign(static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_), kNone);
  }
  y_begin = std::max(y_begin, 0);
  y_end = std::min(y_end, height_);
  if (y_begin >= y_end) return;
  const auto uw = static_cast<std::size_t>(width_);
  const std::size_t pw = uw + 2;
  const std::span<const std::uint32_t> words = integration.search_words();
  const bool usable = !integration.in_progress() && words.size() == pw * (static_cast<std::size_t>(height_) + 2);
  for (std::int32_t y = y_begin; y < y_end; ++y) {
    std::uint8_t* row = dirs_.data() + static_cast<std::size_t>(y) * uw;
    if (!usable) {
      std::fill(row, row + uw, kNone);
      continue;
    }
    // Padded row y + 1 is the cell row y; start one padded row above it.
    snapshot_row(words.data() + static_cast<std::size_t>(y) * pw, pw, row);
  }
}

namespace {

/// sample_flow() for any finite p: every sample bounds-checked through GridMap/FlowField.
Vec2 sample_flow_checked(const GridMap& map, const FlowField& flow, Vec2 p) noexcept {
  const CellCoord own = map.world_to_cell(p);
  // Cell-centre samples sit at (c + 0.5) * cell_size; find the 2x2 block around p.
  const float u = p.x / map.cell_size() - 0.5f;
  const float v = p.y / map.cell_size() - 0.5f;
  const float fu = std::floor(u);
  const float fv = std::floor(v);
  // p is finite and world_to_cell kept it in int range; far-out positions are simply off-map.
  if (std::fabs(fu) > 1.0e9f || std::fabs(fv) > 1.0e9f) return {};
  const auto x0 = static_cast<std::int32_t>(fu);
  const auto y0 = static_cast<std::int32_t>(fv);
  const float tx = u - fu;
  const float ty = v - fv;

  const bool own_walkable = map.walkable(own);
  Vec2 sum{};
  for (int k = 0; k < 4; ++k) {
    const std::int32_t cx = x0 + (k & 1);
    const std::int32_t cy = y0 + (k >> 1);
    if (!map.walkable(cx, cy)) continue;
    const FlowDirection d = flow.at(cx, cy);
    if (d == FlowDirection::kNone) continue;
    // A sample diagonal to p's own cell across a blocked corner belongs to the other side of a
    // wall (e.g. two walls touching diagonally); blending it in would pull agents into the corner.
    if (own_walkable && cx != own.x && cy != own.y && (!map.walkable(cx, own.y) || !map.walkable(own.x, cy)))
      continue;
    const float wx = (k & 1) ? tx : 1.0f - tx;
    const float wy = (k >> 1) ? ty : 1.0f - ty;
    sum += direction_vector(d) * (wx * wy);
  }
  // Weights sum to at most 1, so a blend this short means the samples cancel or were all skipped.
  constexpr float kMinBlend = 1.0e-3f;
  const Vec2 blended = normalized_or_zero(sum, kMinBlend);
  if (blended.x != 0.0f || blended.y != 0.0f) return blended;
  return direction_vector(flow.at(own.x, own.y));
}

}  // namespace

// The swarm calls this once per agent per tick, so the common case -- the 2x2 block inside the
// map and p's own cell walkable -- skips the bounds checks, std::floor (a library call on
// baseline x86-64) and the out-of-line GridMap::world_to_cell, and blends without branches.
// Every float operation that reaches the result is the one sample_flow_checked() does, in the
// same order, so the results are bit-identical (tests/sim/nav/field/sample_flow_fast_path_test.cpp
// compares them). A skipped sample becomes a zero weight instead: its term is then +-0, and
// adding +-0 to the sum changes nothing, because the sum, which starts at +0, is never -0
// (x + y is -0 only when both are -0).
Vec2 sample_flow(const GridMap& map, const FlowField& flow, Vec2 p) noexcept {
  if (!std::isfinite(p.x) || !std::isfinite(p.y)) return {};
  const float cs = map.cell_size();
  const std::int32_t w = map.width(), h = map.height();
  // Dividing by 1 is exact: unit cells skip the division.
  const bool unit = cs == 1.0f;
  const float u = (unit ? p.x : p.x / cs) - 0.5f;
  const float v = (unit ? p.y : p.y / cs) - 0.5f;
  // Fast path only when floor(u), floor(u) + 1 (and the same for v) are map cells: then u, v
  // >= 0, so truncation is floor, and they fit an int32.
  if (!(u >= 0.0f && v >= 0.0f && u < static_cast<float>(w - 1) && v < static_cast<float>(h - 1)) ||
      flow.width() != w || flow.height() != h) {
    return sample_flow_checked(map, flow, p);
  }
  const auto x0 = static_cast<std::int32_t>(u);
  const auto y0 = static_cast<std::int32_t>(v);
  // Own cell as GridMap::world_to_cell computes it (floor of the double quotient, which is the
  // float itself for unit cells; u >= 0 makes it positive, so truncation is floor). It is one
  // of the block's cells unless float rounding of huge coordinates says otherwise: then the
  // checked path decides.
  const auto ox = unit ? static_cast<std::int32_t>(p.x)
                       : static_cast<std::int32_t>(static_cast<double>(p.x) / static_cast<double>(cs));
  const auto oy = unit ? static_cast<std::int32_t>(p.y)
                       : static_cast<std::int32_t>(static_cast<double>(p.y) / static_cast<double>(cs));
  const auto ix = static_cast<std::uint32_t>(ox - x0), iy = static_cast<std::uint32_t>(oy - y0);
  if ((ix | iy) > 1u) return sample_flow_checked(map, flow, p);
  const std::uint8_t* costs = map.costs().data();
  const std::uint8_t* dirs = flow.directions().data();
  const auto uw = static_cast<std::size_t>(w);
  const std::size_t base = static_cast<std::size_t>(y0) * uw + static_cast<std::size_t>(x0);
  const std::size_t own = base + static_cast<std::size_t>(iy) * uw + ix;
  if (costs[own] == kBlockedCost) return sample_flow_checked(map, flow, p);
  const float tx = u - static_cast<float>(x0);
  const float ty = v - static_cast<float>(y0);
  // Samples k = 0..3 at base, base + 1, base + w, base + w + 1 (k & 1: right, k >> 1: below).
  const bool free0 = costs[base] != kBlockedCost, free1 = costs[base + 1] != kBlockedCost;
  const bool free2 = costs[base + uw] != kBlockedCost, free3 = costs[base + uw + 1] != kBlockedCost;
  // The sample diagonal to the own cell (block index 3 - own's) counts only when both cells
  // between them are walkable: those are the block's other two cells, 1 and 2 when own is 0
  // or 3, else 0 and 3.
  const std::uint32_t own_k = ix + 2u * iy;
  const bool corner_open = (own_k == 0u || own_k == 3u) ? (free1 && free2) : (free0 && free3);
  const std::uint32_t diagonal = 3u - own_k;
  auto term = [&](std::uint32_t k, std::size_t cell, bool free, float weight) noexcept {
    const std::uint8_t d = dirs[cell];  // kNone's vector is {0, 0}: no term, like a skip
    const Vec2 dir = kDirectionVectors[d < kDirectionVectors.size() ? d : kNone];
    const bool use = free && (k != diagonal || corner_open);
    return dir * (use ? weight : 0.0f);
  };
  Vec2 sum{};
  sum += term(0, base, free0, (1.0f - tx) * (1.0f - ty));
  sum += term(1, base + 1, free1, tx * (1.0f - ty));
  sum += term(2, base + uw, free2, (1.0f - tx) * ty);
  sum += term(3, base + uw + 1, free3, tx * ty);
  constexpr float kMinBlend = 1.0e-3f;
  const Vec2 blended = normalized_or_zero(sum, kMinBlend);
  if (blended.x != 0.0f || blended.y != 0.0f) return blended;
  return direction_vector(static_cast<FlowDirection>(dirs[own]));
}

}  // namespace swarmfield::sim
