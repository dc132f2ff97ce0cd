#pragma once
// The steering phase's fast paths of NavigationSet::sample(). Internal to server/sim/src/crowd
// (and its test).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/any_angle_field.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::sim::crowd_detail {

/// Far bits of an any-angle field (w x h cells, bit i of `far` = cell of row-major index i):
/// set only where no cell of the 3x3 block centred on the cell is in the field's region and the
/// cell is not on the field's border, so an agent of size class 1 in such a cell has its whole
/// lattice square on the field and none of its four samples in the region (the square round p
/// lies in that block). Word-parallel: the region bits OR'ed with their shifts by -1, +1 cells
/// and then by -w, +w cells of the row-major bit string (conservative: a shift by one cell also
/// crosses from a row's end into the next row's start, which only clears far bits). `far` is
/// resized to the region's words, `scratch` to them plus two rows of padding (each allocates
/// only when it grows). O(cells / 64): ~20 instructions per 64 cells.
inline void build_far_bits(const AnyAngleField& field, std::vector<std::uint64_t>& far,
                           std::vector<std::uint64_t>& scratch) {
  const std::size_t w = static_cast<std::size_t>(std::max(field.width(), 0));
  const std::size_t h = static_cast<std::size_t>(std::max(field.height(), 0));
  const std::size_t cells = w * h, words = (cells + 63) / 64;
  const std::vector<std::uint64_t>& region = field.region_bits();
  far.resize(words);
  if (region.size() < words || w < 3 || h < 3) {  // no build yet, or no interior: nothing is far
    std::fill(far.begin(), far.end(), 0);
    return;
  }
  // Horizontal dilation into scratch, between `pad` zero words each side (the vertical shifts
  // then read no word outside the vector).
  const std::size_t row_words = w / 64, pad = row_words + 2;
  scratch.assign(words + 2 * pad, 0);
  std::uint64_t* const hz = scratch.data() + pad;
  for (std::size_t j = 0; j < words; ++j) {
    const std::uint64_t prev = j > 0 ? region[j - 1] : 0, next = j + 1 < words ? region[j + 1] : 0;
    const std::uint64_t r = region[j];
    hz[j] = r | (r << 1) | (prev >> 63) | (r >> 1) | (next << 63);
  }
  // Vertical: bits w further on (the row below) and w back (the row above); w = 64 row_words + o.
  const unsigned o = static_cast<unsigned>(w % 64);
  for (std::size_t j = 0; j < words; ++j) {
    const std::uint64_t* const down = hz + j + row_words;  // bits 64 j + w ..: words down[0], down[1]
    const std::uint64_t* const up = hz + j - row_words;    // bits 64 j - w ..: words up[-1], up[0]
    const std::uint64_t below = o == 0 ? down[0] : (down[0] >> o) | (down[1] << (64 - o));
    const std::uint64_t above = o == 0 ? up[0] : (up[-1] >> (64 - o)) | (up[0] << o);
    far[j] = ~(hz[j] | below | above);
  }
  // The border cells are never far (their lattice squares may leave the field).
  const auto clear = [&far](std::size_t i) { far[i >> 6] &= ~(std::uint64_t{1} << (i & 63u)); };
  for (std::size_t x = 0; x < w; ++x) {
    clear(x);
    clear((h - 1) * w + x);
  }
  for (std::size_t y = 0; y < h; ++y) {
    clear(y * w);
    clear(y * w + w - 1);
  }
  if (cells % 64 != 0) far[words - 1] &= (std::uint64_t{1} << (cells % 64)) - 1;  // no cells there
}

/// NavigationSet::sample() (sample_any_angle()) of one size class for the common cases,
/// cheaply, with what it reads fetched once per chunk of agents: the class's any-angle field
/// (raw arrays and region bits), its goals and, for class 1, its flow field. sample() returns
/// false where the full sampler must decide. Two cases:
///  - interior: all four lattice samples round p are in the any-angle region (have a
///    waypoint): nothing is skipped (no sample is missing, so none is diagonal across a blocked
///    corner) and the blend is the documented one: the bilinear weights of the unit vectors
///    from p to each sample's target (the goal's position when in sight, else its waypoint
///    block's centre), normalized; status, target and goal those of the reference block (the
///    sample nearest p). When the four share one target the blend is the unit vector to it.
///    The full sampler decides at a sample without a waypoint, a sample whose target p stands
///    on, or at the goal.
///  - beyond the range (class 1 only, whose lattice is the cell centres): none of the four is
///    in the region and the reference cell has a flow direction: the sampler blends the flow
///    directions exactly as sample_flow() does (others without a flow direction are skipped by
///    the blend, as nav's sampler skips them), and the reference cell follows the flow
///    (kFollowFlow).
/// Which case applies is one read of the region bits of the 2x2 lattice square (the four bits
/// lie in one or two 64-bit words per row, in a cells / 8-byte array that stays in cache),
/// instead of four bounds-checked has_waypoint() calls. The result is NavigationSet::sample()'s
/// exactly in status, goal and target, and within a few float roundings in direction (the
/// interior blend normalizes by one reciprocal, and a single target's unit vector is taken
/// directly): measured in tests/sim/crowd/lattice_sampler_test.cpp. The crowd's behaviour
/// (state hash) is this sampler's.
class LatticeSampler {
 public:
  LatticeSampler() = default;
  /// For agents of `size_class` on `map` with `nav` (which has the class), or an empty sampler
  /// (sample() always false) when the class is absent.
  LatticeSampler(const NavigationSet& nav, const GridMap& map, int size_class) noexcept {
    if (!nav.has_class(size_class)) return;
    const NavigationFields& fields = nav.fields(size_class);
    const AnyAngleField& field = fields.any_angle();
    w_ = field.width();
    h_ = field.height();
    const std::size_t cells = static_cast<std::size_t>(std::max(w_, 0)) * static_cast<std::size_t>(std::max(h_, 0));
    if (w_ < 2 || h_ < 2 || field.region_bits().size() * 64 < cells || field.waypoints().size() < cells ||
        field.goal_words().size() < cells) {
      w_ = h_ = 0;  // no field yet: every sample goes to the full sampler
      return;
    }
    max_u_ = static_cast<float>(w_ - 1);
    max_v_ = static_cast<float>(h_ - 1);
    region_ = field.region_bits().data();
    waypoints_ = field.waypoints().data();
    goal_words_ = field.goal_words().data();
    goals_ = nav.goal_positions(size_class);
    size_class_ = size_class;
    half_ = 0.5f * static_cast<float>(size_class);
    cs_ = map.cell_size();
    const FlowField& flow = fields.flow();
    if (size_class == 1 && flow.width() == w_ && flow.height() == h_ &&
        flow.directions().size() >= cells) {
      flow_ = &flow;
      flow_dirs_ = flow.directions().data();
    }
  }

  /// Far bits (build_far_bits() of this class's field) for sample_at_cell(); class 1 on a map of
  /// unit cells less than 2^22 cells wide and high only (else ignored). Null: none.
  void set_far_bits(const std::uint64_t* far) noexcept {
    far_ = flow_ != nullptr && cs_ == 1.0f && w_ < (1 << 22) && h_ < (1 << 22) ? far : nullptr;
  }

  /// sample() for an agent at p in map cell (cx, cy) = (floor(p.x), floor(p.y)): where the cell
  /// is far from the any-angle region (one far bit) the beyond-range case without the region
  /// bits of the lattice square. Unit cells make (cx, cy) the reference cell there: for
  /// 0.5 <= p.x < 2^22, p.x - 0.5 is exact, so the lattice square's top-left is floor(p.x - 0.5)
  /// and the sample nearest p is floor(p.x).
  /// (A far cell is not on the border, so p's lattice square is on the field.)
  bool sample_at_cell(const GridMap& map, Vec2 p, std::int32_t cx, std::int32_t cy, NavSample& out) const noexcept {
    if (far_ != nullptr && static_cast<std::uint32_t>(cx) < static_cast<std::uint32_t>(w_) &&
        static_cast<std::uint32_t>(cy) < static_cast<std::uint32_t>(h_)) {
      const std::size_t at = static_cast<std::size_t>(cy) * static_cast<std::size_t>(w_) + static_cast<std::size_t>(cx);
      if (((far_[at >> 6] >> (at & 63u)) & 1u) != 0) return follow_flow(map, p, cx, cy, out);
    }
    return sample(map, p, out);
  }

  /// Region bits of the cells x0, x0 + 1 of rows y0, y0 + 1 (bit 0: (x0, y0), 1: (x0 + 1, y0),
  /// 2: (x0, y0 + 1), 3: (x0 + 1, y0 + 1)); the square must be on the field.
  [[nodiscard]] std::uint32_t square_bits(std::size_t at) const noexcept {
    return pair_bits(at) | (pair_bits(at + static_cast<std::size_t>(w_)) << 2);
  }

  /// True if the cell (x, y) (on the field) is in the region; for prefetch hints.
  [[nodiscard]] bool in_region(std::int32_t x, std::int32_t y) const noexcept {
    return x >= 0 && y >= 0 && x < w_ && y < h_ &&
           bit(static_cast<std::size_t>(y) * static_cast<std::size_t>(w_) + static_cast<std::size_t>(x)) != 0;
  }

  bool sample(const GridMap& map, Vec2 p, NavSample& out) const noexcept {
    const float ux = (cs_ == 1.0f ? p.x : p.x / cs_) - half_;
    const float uy = (cs_ == 1.0f ? p.y : p.y / cs_) - half_;
    // The 2x2 lattice square on the field (also false for NaN and infinities; then
    // truncation is floor and fits an int32).
    if (!(ux >= 0.0f && uy >= 0.0f && ux < max_u_ && uy < max_v_)) {
      return false;
    }
    const auto x0 = static_cast<std::int32_t>(ux), y0 = static_cast<std::int32_t>(uy);
    const std::size_t at = static_cast<std::size_t>(y0) * static_cast<std::size_t>(w_) + static_cast<std::size_t>(x0);
    const std::uint32_t in = square_bits(at);
    if (in == 15u) return interior(p, ux, uy, x0, y0, at, out);
    if (in == 0u && flow_ != nullptr) return beyond_range(map, p, ux, uy, x0, y0, out);
    return false;
  }

 private:
  [[nodiscard]] std::uint32_t bit(std::size_t i) const noexcept {
    return static_cast<std::uint32_t>((region_[i >> 6] >> (i & 63u)) & 1u);
  }
  /// Bits i and i + 1 (i + 1 a cell of the field): one word, or two when i ends a word.
  [[nodiscard]] std::uint32_t pair_bits(std::size_t i) const noexcept {
    const std::size_t shift = i & 63u;
    std::uint64_t v = region_[i >> 6] >> shift;
    if (shift == 63u) v |= region_[(i >> 6) + 1] << 1;
    return static_cast<std::uint32_t>(v & 3u);
  }

  bool interior(Vec2 p, float ux, float uy, std::int32_t x0, std::int32_t y0, std::size_t at,
                NavSample& sample) const noexcept {
    const float tx = ux - static_cast<float>(x0), ty = uy - static_cast<float>(y0);
    const std::size_t w = static_cast<std::size_t>(w_);
    const std::uint32_t* wp = waypoints_ + at;
    const std::uint32_t packed[4] = {wp[0], wp[1], wp[w], wp[w + 1]};
    const std::uint16_t* gw = goal_words_ + at;
    const std::uint16_t words[4] = {gw[0], gw[1], gw[w], gw[w + 1]};
    const float cs = cs_, half = half_;
    const float eps = 1.0e-4f * cs;
    Vec2 targets[4];
    for (int k = 0; k < 4; ++k) {
      const bool sight = (words[k] & AnyAngleField::kInSightBit) != 0;
      const auto goal = static_cast<std::size_t>(words[k] & AnyAngleField::kGoalIndexMask);
      if (sight) {
        if (goal >= goals_.size()) return false;
        targets[k] = goals_[goal];
      } else {
        targets[k] = {(static_cast<float>(packed[k] & 0xFFFFu) + half) * cs,
                      (static_cast<float>(packed[k] >> 16) + half) * cs};
      }
    }
    // The reference block: the lattice point nearest p.
    const int own = (tx >= 0.5f ? 1 : 0) + (ty >= 0.5f ? 2 : 0);
    const bool own_sight = (words[own] & AnyAngleField::kInSightBit) != 0;
    const Vec2 to_own = targets[own] - p;
    const float own_dist = length(to_own);
    if (!(own_dist > (own_sight ? kAtGoalCells * cs : eps)) || !(own_dist > eps)) return false;
    Vec2 sum{};
    if (packed[0] == packed[1] && packed[0] == packed[2] && packed[0] == packed[3] && words[0] == words[1] &&
        words[0] == words[2] && words[0] == words[3]) {
      sum = to_own * (1.0f / own_dist);  // one target: the blend is its unit vector
    } else {
      const float wx[2] = {1.0f - tx, tx}, wy[2] = {1.0f - ty, ty};
      for (int k = 0; k < 4; ++k) {
        const Vec2 d = targets[k] - p;
        const float len = length(d);
        if (!(len > eps)) return false;  // standing on a sample's target: the full sampler skips it
        sum += d * (wx[k & 1] * wy[k >> 1] / len);
      }
    }
    const float sum_len = length(sum);
    if (!(sum_len > 1.0e-3f)) return false;
    sample.direction = sum * (1.0f / sum_len);
    sample.target = targets[own];
    sample.goal = static_cast<std::int32_t>(words[own] & AnyAngleField::kGoalIndexMask);
    sample.status = own_sight ? NavStatus::kGoalInSight : NavStatus::kFollow;
    return true;
  }

  bool beyond_range(const GridMap& map, Vec2 p, float ux, float uy, std::int32_t x0, std::int32_t y0,
                    NavSample& sample) const noexcept {
    // The reference cell: the sample nearest p.
    const std::int32_t own_x = x0 + (ux - static_cast<float>(x0) >= 0.5f ? 1 : 0);
    const std::int32_t own_y = y0 + (uy - static_cast<float>(y0) >= 0.5f ? 1 : 0);
    return follow_flow(map, p, own_x, own_y, sample);
  }

  /// The beyond-range case once the reference cell (own_x, own_y) is known: it must follow the
  /// flow.
  bool follow_flow(const GridMap& map, Vec2 p, std::int32_t own_x, std::int32_t own_y, NavSample& sample) const noexcept {
    const std::size_t own = static_cast<std::size_t>(own_y) * static_cast<std::size_t>(w_) + static_cast<std::size_t>(own_x);
    const auto dir = static_cast<FlowDirection>(flow_dirs_[own]);
    if (dir == FlowDirection::kNone) return false;
    sample.direction = sample_flow(map, *flow_, p);
    if (sample.direction.x == 0.0f && sample.direction.y == 0.0f) return false;
    sample.goal = -1;
    // The reference cell's flow successor's centre, as the full sampler gives (the steering
    // does not read it beyond the range).
    const CellCoord o = kDirectionOffsets[static_cast<std::size_t>(dir) & 7u];
    sample.target = {(static_cast<float>(own_x + o.x) + half_) * cs_, (static_cast<float>(own_y + o.y) + half_) * cs_};
    sample.status = NavStatus::kFollowFlow;
    return true;
  }

  const std::uint64_t* region_ = nullptr;
  const std::uint32_t* waypoints_ = nullptr;
  const std::uint16_t* goal_words_ = nullptr;
  std::span<const Vec2> goals_;
  const FlowField* flow_ = nullptr;  // class 1 with a flow field of the field's size
  const std::uint8_t* flow_dirs_ = nullptr;
  const std::uint64_t* far_ = nullptr;  // see set_far_bits()
  std::int32_t w_ = 0, h_ = 0;
  int size_class_ = 1;
  float half_ = 0.5f, cs_ = 1.0f;
  float max_u_ = -1.0f, max_v_ = -1.0f;  // w - 1, h - 1: the last lattice square's top-left
};

}  // namespace swarmfield::sim::crowd_detail
