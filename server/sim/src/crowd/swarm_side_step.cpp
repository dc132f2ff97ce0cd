// The side step of the separation pass (Swarm::side_step): when the path is mostly blocked by
// agents, a direction round the agent ahead (turned by 40 or 75 degrees either way, or the
// blocker's tangent) that brings the agent closer. See crowd/README.md, "Crowd rules".
#include <algorithm>
#include <cmath>
#include <limits>

#include "crowd_rules.hpp"
#include "gather_kernel.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::sim {

using namespace crowd_rules;  // NOLINT: the rules' constants, read throughout

template <bool kMixed>
Swarm::SideStep Swarm::side_step(const crowd_detail::SwarmTick& t, const crowd_detail::KindTick& kt, std::size_t k,
                                 Vec2 p, Vec2 s0, Vec2 path_dir, bool turns, bool round, const NearSlots& near_slots,
                                 const Vec2* only, bool only_back) const {
  // The neighbours within the query radius: offsets, distances, contact distances and how
  // nearly along the path they lie (cosine). Room for the gather's whole list (kNearKeep).
  constexpr std::uint32_t kMaxNear = 96;
  constexpr std::uint32_t kRoom = kNearKeep + 4;
  float ndx[kRoom], ndy[kRoom], nd[kRoom], ncd[kRoom], napp[kRoom];
  std::uint8_t nkind_near[kRoom];
  std::uint32_t near = 0;
  bool overflow = false;
  const std::uint8_t self_kind = kMixed ? t.kind[k] : t.only_kind;
  const crowd_detail::PairTick* const row = t.pairs + self_kind * kMaxAgentKinds;
  const float r2 = kMixed ? kt.query_r2 : row[self_kind].r2;
  const float* const nx = t.sxs;
  const float* const ny = t.sys;
  const auto consider = [&](std::uint32_t m) SWARMFIELD_ALWAYS_INLINE {
    const float dx = nx[m] - p.x, dy = ny[m] - p.y;
    const float d2 = dx * dx + dy * dy;
    if (!(d2 < r2) || d2 < crowd_detail::kCoincidentDist2) return true;
    if (near == kMaxNear) {
      overflow = true;
      return false;
    }
    ndx[near] = dx;
    ndy[near] = dy;
    nd[near] = std::sqrt(d2);
    napp[near] = (path_dir.x * dx + path_dir.y * dy) / nd[near];
    ncd[near] = row[kMixed ? t.kind[m] : self_kind].cd;
    nkind_near[near] = kMixed ? t.kind[m] : self_kind;
    ++near;
    return true;
  };
  if (near_slots.complete) {
    // The gather's hits: the slots of the same scan that passed its test (!(d2 >= r2), the same
    // d2 bit for bit: (a - b)^2 == (b - a)^2), in the same order, without the agent itself.
#if defined(SWARMFIELD_SIMD_GATHER)
    // Four at a time, each lane the operations of consider(); every lane is written at `near`,
    // which then moves past the kept ones only (order kept). More than kMaxNear kept is
    // consider()'s overflow.
    const __m128 vpx = _mm_set1_ps(p.x), vpy = _mm_set1_ps(p.y), vr2 = _mm_set1_ps(r2);
    const __m128 vco = _mm_set1_ps(crowd_detail::kCoincidentDist2);
    const __m128 pdx = _mm_set1_ps(path_dir.x), pdy = _mm_set1_ps(path_dir.y);
    const std::uint32_t* const slots = near_slots.slots;
    const std::uint32_t count = near_slots.count;
    for (std::uint32_t j = 0; j < count; j += 4) {
      const std::uint32_t lanes = count - j < 4 ? count - j : 4;
      const std::uint32_t m[4] = {slots[j], lanes > 1 ? slots[j + 1] : slots[j], lanes > 2 ? slots[j + 2] : slots[j],
                                  lanes > 3 ? slots[j + 3] : slots[j]};
      const __m128 dx = _mm_sub_ps(_mm_setr_ps(nx[m[0]], nx[m[1]], nx[m[2]], nx[m[3]]), vpx);
      const __m128 dy = _mm_sub_ps(_mm_setr_ps(ny[m[0]], ny[m[1]], ny[m[2]], ny[m[3]]), vpy);
      const __m128 d2 = _mm_add_ps(_mm_mul_ps(dx, dx), _mm_mul_ps(dy, dy));
      const __m128 d = _mm_sqrt_ps(d2);
      const std::uint32_t keep =
          static_cast<std::uint32_t>(_mm_movemask_ps(_mm_and_ps(_mm_cmplt_ps(d2, vr2), _mm_cmpnlt_ps(d2, vco)))) &
          ((1u << lanes) - 1u);
      alignas(16) float lx[4], ly[4], ld[4], la[4];
      _mm_store_ps(lx, dx);
      _mm_store_ps(ly, dy);
      _mm_store_ps(ld, d);
      _mm_store_ps(la, _mm_div_ps(_mm_add_ps(_mm_mul_ps(pdx, dx), _mm_mul_ps(pdy, dy)), d));
      for (std::uint32_t l = 0; l < 4; ++l) {
        const std::uint8_t kind = kMixed ? t.kind[m[l]] : self_kind;
        ndx[near] = lx[l];
        ndy[near] = ly[l];
        nd[near] = ld[l];
        napp[near] = la[l];
        ncd[near] = row[kind].cd;
        nkind_near[near] = kind;
        near += (keep >> l) & 1u;
      }
    }
    overflow = near > kMaxNear;
#else
    for (std::uint32_t j = 0; j < near_slots.count; ++j) {
      if (!consider(near_slots.slots[j])) break;
    }
#endif
  } else {
    hash_.for_each_range_near(p, [&](std::uint32_t first, std::uint32_t last) {
      for (std::uint32_t m = first; m < last; ++m) {
        if (m != k && !consider(m)) return;
      }
    });
  }
  SideStep best;
  if (overflow) return best;  // a heap of agents far denser than packing: no way round to find
  // The agent that blocks the path: touching it, the most nearly ahead. (Looked for only where
  // a step round it is tried, and the overtaking below only where the turns are: not for the
  // one given direction, `only`.)
  float block_approach = 0.0f;
  std::uint32_t blocker = kMaxNear;
  for (std::uint32_t j = 0; j < (round && only == nullptr ? near : 0); ++j) {
    if (nd[j] > ncd[j] * kTouching) continue;
    const float approach = napp[j];
    if (approach > block_approach) {
      block_approach = approach;
      blocker = j;
    }
  }
  // Overtaking: an agent turns round the agents ahead when it moves at speed, or when the one
  // that holds it up (the shortest free path along its path) is of a slower kind. Agents of one
  // kind queueing do not shuffle.
  if (!turns && kMixed && only == nullptr) {
    float shortest = std::numeric_limits<float>::infinity();
    std::uint32_t slowest = kMaxNear;
    for (std::uint32_t j = 0; j < near; ++j) {
      const float approach = napp[j];
      if (approach <= 0.0f) continue;
      const float f = free_path(nd[j], approach, ncd[j]);
      if (f < shortest) {
        shortest = f;
        slowest = j;
      }
    }
    turns = slowest != kMaxNear && t.kinds[nkind_near[slowest]].max_step < t.kinds[self_kind].max_step;
  }
  // The candidates: s0 turned both ways by each angle, and the tangent of the blocker on the
  // goal's side (both sides as good when it is dead ahead: the side the agent already moves
  // to, else one by id; both of them for an agent at rest on wide open ground). Each slid along
  // walls where the agent is near one.
  constexpr int kCandidates = 6;
  float ux[kCandidates] = {}, uy[kCandidates] = {}, along[kCandidates], free[kCandidates] = {};
  float scale[kCandidates];                // world units of travel per unit of move budget
  float cx[kCandidates], cy[kCandidates];  // the un-slid unit direction the move is made along
  const float max_step = kt.max_step;
  const bool open = open_here_[k] != 0;
  int candidates = turns ? 4 : 0;
  for (int c = 0; c < 4; ++c) {
    const float co = kSideCos[c >> 1], si = (c & 1) != 0 ? -kSideSin[c >> 1] : kSideSin[c >> 1];
    cx[c] = s0.x * co - s0.y * si;
    cy[c] = s0.x * si + s0.y * co;
  }
  if (only != nullptr) {  // one given direction (making way), nothing else
    cx[0] = only->x;
    cy[0] = only->y;
    candidates = 1;
    round = false;
  }
  // On wide open ground (the 5 x 5 cells round the agent walkable) a walk round that opens to
  // free ground toward the goal is taken before one that does not, and an agent at rest there
  // tries both sides of a blocker dead ahead and walks round when a way opens (choose_move): a
  // line of resting agents from a corridor's mouth to the pile otherwise holds everyone behind.
  const bool wide = (open_here_[k] & crowd_detail::kWideOpen) != 0;
  if (round && blocker != kMaxNear) {
    // Round the blocker: slide along it (the steering less its part toward the blocker, as
    // along a wall), or, with the blocker dead ahead, its tangent on the side the agent already
    // moves to, else one by id.
    const float nx_b = ndx[blocker] / nd[blocker], ny_b = ndy[blocker] / nd[blocker];
    const float into = s0.x * nx_b + s0.y * ny_b;
    float tx = s0.x - into * nx_b, ty = s0.y - into * ny_b;
    const float tl = std::sqrt(tx * tx + ty * ty);
    bool both = false;  // both tangents: an agent at rest on wide open ground, the blocker dead ahead
    if (tl > kSlideMin) {
      tx /= tl;
      ty /= tl;
    } else {
      tx = -ny_b;
      ty = nx_b;
      float side = tx * vxs_[k] + ty * vys_[k];
      if (std::abs(side) < 1e-6f) side = (ids_[k] & 1u) != 0 ? 1.0f : -1.0f;
      if (side < 0.0f) {
        tx = -tx;
        ty = -ty;
      }
      both = wide && resting_[k] != 0;
    }
    if (both) {
      // Tilted a little away from the blocker: exactly along its tangent the approach to it is
      // zero give or take a rounding error, and a positive one to a disc at contact distance
      // (where the contact projection leaves it) gives no free path at all.
      for (const float sign : {1.0f, -1.0f}) {
        const float ax = sign * tx - kRoundTilt * nx_b, ay = sign * ty - kRoundTilt * ny_b;
        const float an = 1.0f / std::sqrt(ax * ax + ay * ay);
        cx[candidates] = ax * an;
        cy[candidates] = ay * an;
        ++candidates;
      }
    } else {
      cx[candidates] = tx;
      cy[candidates] = ty;
      ++candidates;
    }
  }
  const int round_first = round && blocker != kMaxNear ? (turns ? 4 : 0) : candidates;
  for (int c = 0; c < candidates; ++c) {
    Vec2 path{cx[c], cy[c]};
    if (!open) {
      const Vec2 move = path * max_step;
      const Vec2 q = crowd_detail::round_post(t, kt, p, slide_along_walls(t.map, p, move, kt.radius), move, max_step);
      path = (q - p) * (1.0f / max_step);
    }
    const float len = length(path);
    scale[c] = len;
    if (len < 0.2f) {  // into a wall
      ux[c] = uy[c] = 0.0f;
      free[c] = 0.0f;
    } else {
      ux[c] = path.x / len;
      uy[c] = path.y / len;
      free[c] = std::min(len * max_step, std::max(goal_room_[k], 0.0f));
    }
    along[c] = ux[c] * s0.x + uy[c] * s0.y;
  }
#if defined(SWARMFIELD_SIMD_GATHER)
  // Candidates 0..3 in the four lanes (those past `candidates` are zeros, computed and unused),
  // the fifth on its own: lane by lane the same operations as the loop below (free_path4 is
  // free_path's, min(fp, free) is std::min(free, fp), and a lane that skips keeps its value).
  if (candidates > 0) {
    const __m128 vux = _mm_loadu_ps(ux), vuy = _mm_loadu_ps(uy), zero = _mm_setzero_ps();
    __m128 vfree = _mm_loadu_ps(free);
    for (std::uint32_t j = 0; j < near; ++j) {
      const float inv_d = 1.0f / nd[j];
      const __m128 approach = _mm_mul_ps(
          _mm_add_ps(_mm_mul_ps(vux, _mm_set1_ps(ndx[j])), _mm_mul_ps(vuy, _mm_set1_ps(ndy[j]))), _mm_set1_ps(inv_d));
      const __m128 fp = crowd_detail::free_path4(_mm_set1_ps(nd[j]), approach, _mm_set1_ps(ncd[j]));
      vfree = crowd_detail::select4(_mm_cmpnle_ps(approach, zero), _mm_min_ps(fp, vfree), vfree);
      for (int c = 4; c < candidates; ++c) {
        const float approach_c = (ux[c] * ndx[j] + uy[c] * ndy[j]) * inv_d;
        if (!(approach_c <= 0.0f)) free[c] = std::min(free[c], free_path(nd[j], approach_c, ncd[j]));
      }
    }
    _mm_storeu_ps(free, vfree);
  }
#else
  for (std::uint32_t j = 0; j < near; ++j) {
    const float inv_d = 1.0f / nd[j];
    for (int c = 0; c < candidates; ++c) {
      const float approach = (ux[c] * ndx[j] + uy[c] * ndy[j]) * inv_d;
      if (approach <= 0.0f) continue;
      free[c] = std::min(free[c], free_path(nd[j], approach, ncd[j]));
    }
  }
#endif
  const float vx = vxs_[k], vy = vys_[k];
  const float slow2 = kReverseBelow * kReverseBelow * max_step * max_step * t.inv_dt * t.inv_dt;
  const bool moved = vx * vx + vy * vy > slow2;
  for (int c = 0; c < candidates; ++c) {
    if (free[c] < kSideMinFree * max_step || scale[c] <= 0.0f) continue;
    // Never a step back against the way the agent moved last tick: no dithering, no orbits.
    if (moved && cx[c] * vx + cy[c] * vy < 0.0f && !only_back) continue;
    // The tangent walks round the blocker even when it brings the agent no closer this tick
    // (dead ahead); the turned directions must bring it closer.
    const bool is_round = c >= round_first;
    if (!is_round && along[c] <= 0.0f && !only_back) continue;
    if (is_round && along[c] < -kRoundSlack) continue;
    const float progress = free[c] * std::max(along[c], 0.0f);
    // Of two sides as good, keep turning the way the agent already moves (no dithering).
    const float bias = 1e-3f * max_step * (cx[c] * vxs_[k] + cy[c] * vys_[k]);
    // Whether the way round opens (on wide open ground): a diameter along the tangent is clear
    // and from there kOpensAhead diameters toward the goal are too: the side of a line of
    // resting agents, not the rim of a pile or of a queue at a door.
    bool opens = false;
    if (is_round && wide) {
      const float reach = kt.contact_d;
      const float qx = cx[c] * reach, qy = cy[c] * reach;  // where the walk round leads, from p
      float along_free = std::numeric_limits<float>::infinity(), ahead_free = along_free;
      for (std::uint32_t j = 0; j < near; ++j) {
        const float a1 = (cx[c] * ndx[j] + cy[c] * ndy[j]) / nd[j];
        if (a1 > 0.0f) along_free = std::min(along_free, free_path(nd[j], a1, ncd[j]));
        const float rx = ndx[j] - qx, ry = ndy[j] - qy;
        const float rd = std::sqrt(rx * rx + ry * ry);
        const float a2 = rd > 0.0f ? (s0.x * rx + s0.y * ry) / rd : 1.0f;
        if (a2 > 0.0f) ahead_free = std::min(ahead_free, free_path(rd, a2, ncd[j]));
      }
      opens = along_free >= reach && ahead_free >= kOpensAhead * reach;
    }
    if (!best.found || (opens && !best.opens) ||
        (opens == best.opens && progress + bias > best.progress + best.bias)) {
      best.found = true;
      best.opens = opens;
      best.round = is_round;
      best.progress = progress;
      best.bias = bias;
      best.ux = cx[c];
      best.uy = cy[c];
      best.allow = free[c] / scale[c];
    }
  }
  return best;
}

template Swarm::SideStep Swarm::side_step<true>(const crowd_detail::SwarmTick&, const crowd_detail::KindTick&,
                                                 std::size_t, Vec2, Vec2, Vec2, bool, bool, const NearSlots&,
                                                 const Vec2*, bool) const;
template Swarm::SideStep Swarm::side_step<false>(const crowd_detail::SwarmTick&, const crowd_detail::KindTick&,
                                                  std::size_t, Vec2, Vec2, Vec2, bool, bool, const NearSlots&,
                                                  const Vec2*, bool) const;

}  // namespace swarmfield::sim
