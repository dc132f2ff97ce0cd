// The pile profile round each standing goal, for levelling the pile (crowd/README.md,
// "Levelling the pile"): prepare_pile_profile hands the steering last tick's profile and each
// goal's rooms (how far the ground is open along each sector), build_pile_profile records this
// tick's after the gather, and level_pile (pile_levelling.hpp) is the steering's walk round.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

#include "pile_levelling.hpp"
#include "swarm_tick.hpp"
#include "swarmfield/sim/crowd/swarm.hpp"

namespace swarmfield::sim {

namespace {

// The pile profile (Swarm::prepare_pile_profile): rooms are measured out to kPileReachCells
// cells from a goal (farther counts as open); a goal is on open ground when at least
// kPileOpenSectors of its sectors have kPileOpenCells of room; an agent counts in the profile
// when it rests or moves below kPileSlowSpeed of its top speed.
constexpr float kPileReachCells = 96.0f;
constexpr float kPileOpenCells = 8.0f;
constexpr int kPileOpenSectors = 14;  // of 32: a player against a straight wall has ~16
constexpr float kPileSlowSpeed = 0.5f;
// The middle of each pile sector (crowd_detail::kPileSectors of them, sector s from angle
// (s + 0.5) * 2 pi / 32 - pi), as literals: the same on any C library, as fast_atan2 makes the
// sectors.
constexpr Vec2 kPileSectorMiddles[crowd_detail::kPileSectors] = {
    {-0.995184727f, -0.098017140f},
    {-0.956940336f, -0.290284677f},
    {-0.881921264f, -0.471396737f},
    {-0.773010453f, -0.634393284f},
    {-0.634393284f, -0.773010453f},
    {-0.471396737f, -0.881921264f},
    {-0.290284677f, -0.956940336f},
    {-0.098017140f, -0.995184727f},
    {0.098017140f, -0.995184727f},
    {0.290284677f, -0.956940336f},
    {0.471396737f, -0.881921264f},
    {0.634393284f, -0.773010453f},
    {0.773010453f, -0.634393284f},
    {0.881921264f, -0.471396737f},
    {0.956940336f, -0.290284677f},
    {0.995184727f, -0.098017140f},
    {0.995184727f, 0.098017140f},
    {0.956940336f, 0.290284677f},
    {0.881921264f, 0.471396737f},
    {0.773010453f, 0.634393284f},
    {0.634393284f, 0.773010453f},
    {0.471396737f, 0.881921264f},
    {0.290284677f, 0.956940336f},
    {0.098017140f, 0.995184727f},
    {-0.098017140f, 0.995184727f},
    {-0.290284677f, 0.956940336f},
    {-0.471396737f, 0.881921264f},
    {-0.634393284f, 0.773010453f},
    {-0.773010453f, 0.634393284f},
    {-0.881921264f, 0.471396737f},
    {-0.956940336f, 0.290284677f},
    {-0.995184727f, 0.098017140f},
};

// The 5 x 5 cells round `c` all walkable (wide open ground, as open_here_'s kWideOpen).
bool wide_open(const GridMap& map, CellCoord c) {
  for (std::int32_t dy = -2; dy <= 2; ++dy) {
    for (std::int32_t dx = -2; dx <= 2; ++dx) {
      if (!map.walkable(c.x + dx, c.y + dy)) return false;
    }
  }
  return true;
}

}  // namespace

namespace crowd_detail {

// Levelling the pile (level_pile): the rim band (agent diameters beyond and inside the sector's
// profile), the gain a lower sector must offer (diameters, plus a cell), the share of the arc
// walked that counts against it, how many sectors each way are looked at (8 of 32: 90 degrees),
// and the outward tilt of the walk round.
constexpr float kLevelRim = 1.0f;
constexpr float kLevelInside = 2.0f;
constexpr float kLevelGain = 1.0f;
constexpr float kLevelArc = 0.1f;
constexpr int kLevelReach = 8;
constexpr float kLevelTilt = 0.3f;
// Arriving (beyond the rim band, up to kLevelFar diameters past the profile): an agent bound for
// a clearly high side of the pile already turns toward a lower one, spiralling in (the tangent
// plus kLevelFarTilt times the way to the goal: 63 degrees off the tangent, so it always closes
// in at 0.89 of its speed), instead of joining the high side and walking round it at the rim. The
// gain is measured as if it stood at the rim, and must be kLevelFarGain times the rim's (with the
// rim's own, the surround scenes' crowd arriving from every side wandered more: at rest 5 s
// after arriving 0.90-0.915 against 0.92-0.94). Before, a crowd arriving from one side built its
// pile on that side and levelled it only at the rim, late (crowd_scenes.sh's one-sided family at
// 60 s: fill 0.80-0.83, 0.65 from a corner, with 4-25% beyond the disc + 3 cells; now
// 0.82-0.84, 0.70 from the corner, 1-12%).
constexpr float kLevelFar = 10.0f;
constexpr float kLevelFarTilt = 2.0f;
constexpr float kLevelFarGain = 1.5f;

Vec2 level_pile(const SwarmTick& t, const KindTick& kt, const float* profile,
                const float* room, std::size_t sector, Vec2 to_goal, float dist, Vec2 straight, Vec2 v, bool rested, std::size_t cell) noexcept {
  constexpr int kS = static_cast<int>(kPileSectors);
  const float h = profile[sector];
  const float diameter = kt.contact_d;
  const float edge = dist + 0.5f * diameter;  // the profile holds outer edges
  const bool arriving = edge > h + kLevelRim * diameter;
  if (edge > h + kLevelFar * diameter) return straight;
  if (edge < h - kLevelInside * diameter) {
    // Deep inside its sector's rim: inside the pile, unless the agent rested last tick on wide
    // open ground and the sector is a spike -- a sector on either side lower than the agent by a
    // gain: then it stands in a tongue of the pile (agents out of a gap or a corridor's mouth,
    // resting two or three wide from it to the pile) and walks round like one at the rim. Else
    // such a tongue never drained: its agents were inside their sector's rim, and the ones at
    // its tip, by the wall, had no room to walk round. Not off wide ground: a queue in a
    // corridor in sight of the goal (its sector's rim, once the wide ground before it is full)
    // turned its agents to walk round at the corridor's mouth, across it; nor while moving: the
    // stream out of the mouth turned aside there too (the corridor room's first 20 s: 73 in
    // the room instead of 127).
    if (!rested || !wide_open_at(t.open, cell, static_cast<std::size_t>(t.map_w))) return straight;
    const float low = edge - (kLevelGain * diameter + t.cs);
    const float before = profile[(sector + kPileSectors - 1) % kPileSectors];
    const float after = profile[(sector + 1) % kPileSectors];
    if (!(before < low || after < low)) return straight;
  }
  const float from = std::min(edge, h + kLevelRim * diameter);  // an arriving agent as if at the rim
  const float arc = dist * (2.0f * std::numbers::pi_v<float> / static_cast<float>(kS));
  const float need = (kLevelGain * diameter + t.cs) * (arriving ? kLevelFarGain : 1.0f);
  float gain[2] = {-1.0f, -1.0f};  // the best gain each way round (-1, +1), or -1
  for (int side = -1; side <= 1; side += 2) {
    float& best = gain[side > 0 ? 1 : 0];
    for (int j = 1; j <= kLevelReach; ++j) {
      const int s = ((static_cast<int>(sector) + side * j) % kS + kS) % kS;
      if (room[s] < dist + diameter) break;  // a wall on the way round at the agent's distance
      // A sector is as low as the higher of its neighbours: one low sector in a round pile of
      // mixed kinds is noise (following each such dip kept 10% of the surround scenes' mixed
      // crowd walking round 5 s after it arrived), a side of the pile that is low is not.
      const float hs = std::max({profile[s], profile[(s + 1) % kS], profile[(s + kS - 1) % kS]});
      const float g = from - hs - kLevelArc * static_cast<float>(j) * arc;
      if (g > need && g > best && hs + 2.0f * diameter + t.cs < room[s]) best = g;
    }
  }
  if (gain[0] < 0.0f && gain[1] < 0.0f) return straight;
  const Vec2 u = to_goal * (1.0f / dist);
  // Sector indices grow with the angle of (agent - goal): that way round is (u.y, -u.x). Of two
  // ways as good, the one the agent already walks round.
  const float round_v = v.x * u.y - v.y * u.x;
  const int side = gain[1] > gain[0] || (gain[1] == gain[0] && round_v > 0.0f) ? 1 : -1;
  const Vec2 tangent = side > 0 ? Vec2{u.y, -u.x} : Vec2{-u.y, u.x};
  return normalized_or_zero(arriving ? tangent + u * kLevelFarTilt : tangent - u * kLevelTilt);
}

}  // namespace crowd_detail

// Last tick's pile profile for the steering (see build_pile_profile), and each standing goal's
// rooms: per sector, the clear distance from the goal along the sector's middle, walked in half
// cells up to kPileReachCells (a wall, a barricade: any cell an agent cannot stand on). A goal
// whose rooms are mostly short (a corridor, a door, a corner: fewer than kPileOpenSectors
// sectors with kPileOpenCells of room) gets rooms of 0: the walls shape its pile and the way
// round is theirs. The rooms are kept while the goals stand where they stood on the same map
// revision (a few thousand cell reads per goal otherwise).
void Swarm::prepare_pile_profile(crowd_detail::SwarmTick& t, const NavigationSet* nav) {
  constexpr std::size_t kS = crowd_detail::kPileSectors;
  const std::size_t n = goal_leads_.size();
  if (nav == nullptr || !nav->has_class(1) || t.goal_leads.size() != n || pile_profile_.size() != n * kS) return;
  const std::span<const Vec2> goals = nav->goal_positions(1);
  const GridMap& map = t.map;
  const float cs = map.cell_size();
  const bool same_map = pile_room_map_ == &map && pile_room_revision_ == map.revision() &&
                        pile_room_.size() == n * kS && pile_room_goals_.size() == n;
  pile_room_.resize(n * kS);
  pile_wide_.resize(n * kS);
  pile_room_goals_.resize(n);
  pile_room_map_ = &map;
  pile_room_revision_ = map.revision();
  const float half = 0.5f * cs;
  const int max_steps = static_cast<int>(2.0f * kPileReachCells);
  for (std::size_t g = 0; g < n; ++g) {
    // NaN marks a goal on the move (no rooms: no pile to level round it).
    const Vec2 key = goal_leads_[g].speed == 0.0f ? goals[g] : Vec2{std::numeric_limits<float>::quiet_NaN(), 0.0f};
    if (same_map && pile_room_goals_[g].x == key.x && pile_room_goals_[g].y == key.y) continue;
    pile_room_goals_[g] = key;
    float* room = pile_room_.data() + g * kS;
    float* wide = pile_wide_.data() + g * kS;
    int open = 0;
    for (std::size_t s = 0; s < kS; ++s) {
      const Vec2 u = kPileSectorMiddles[s];
      int walked = 0, wide_walked = -1;
      while (goal_leads_[g].speed == 0.0f && walked < max_steps) {
        const CellCoord c = map.world_to_cell(goals[g] + u * (half * static_cast<float>(walked + 1)));
        if (!map.walkable(c.x, c.y)) break;
        if (wide_walked < 0 && !wide_open(map, c)) wide_walked = walked;
        ++walked;
      }
      room[s] = walked == max_steps ? std::numeric_limits<float>::infinity() : half * static_cast<float>(walked);
      wide[s] = wide_walked < 0 ? room[s] : half * static_cast<float>(wide_walked);
      open += room[s] >= kPileOpenCells * cs ? 1 : 0;
    }
    if (open < kPileOpenSectors) std::fill_n(room, kS, 0.0f);
  }
  t.pile_profile = pile_profile_.data();
  t.pile_room = pile_room_.data();
  t.pile_goals = n;
}

// The pile profile for the next tick: per standing goal in sight and sector round it, the
// farthest agent that rests this tick or moves below kPileSlowSpeed of its top speed (its
// distance at the start of the tick, as the steering measured it). Serial, one pass over the
// agents; a max, so the same for any order or thread count. Agents off wide open ground (the
// 5 x 5 cells round them walkable: a corridor, a street, a door) count only once the wide open
// ground of their sector and its two neighbours is full out to where it ends (within a cell,
// along each sector's middle): a queue in a corridor in
// sight of the goal is not the pile's shape while the room before it has space. Counted, it
// raised its sector's rim to the queue's far end, and the agents out of the corridor's mouth,
// far inside that rim, never levelled: they rested in a line from the mouth to the pile. Round
// a player at a street junction the streets begin a few cells out and count as before.
void Swarm::build_pile_profile(const crowd_detail::SwarmTick& t) {
  constexpr std::size_t kS = crowd_detail::kPileSectors;
  const std::size_t goals = t.goal_leads.size();
  pile_profile_.assign(goals * kS, 0.0f);  // allocates only when the goal count grows
  pile_narrow_.assign(goals * kS, 0.0f);
  bool standing = false;
  for (const crowd_detail::GoalLead& lead : t.goal_leads) standing = standing || lead.speed == 0.0f;
  if (!standing) return;
  for (std::size_t k = 0; k < t.n; ++k) {
    const std::int16_t g = sight_goal_[k];
    if (g < 0 || static_cast<std::size_t>(g) >= goals) continue;
    if (perm_resting_[k] == 0) {
      const float top = kPileSlowSpeed * t.kinds[kinds_[k]].max_step * t.inv_dt;
      if (!(perm_vxs_[k] * perm_vxs_[k] + perm_vys_[k] * perm_vys_[k] < top * top)) continue;
    }
    const std::size_t at = static_cast<std::size_t>(g) * kS + pile_sector_[k];
    float& h = (open_here_[k] & crowd_detail::kWideOpen) != 0 ? pile_profile_[at] : pile_narrow_[at];
    h = std::max(h, pile_dist_[k]);
  }
  const bool measured = pile_wide_.size() == goals * kS;
  for (std::size_t g = 0; g < goals; ++g) {
    const float* wide = measured ? pile_wide_.data() + g * kS : nullptr;
    float* profile = pile_profile_.data() + g * kS;
    const float* narrow = pile_narrow_.data() + g * kS;
    // Whether sector s's wide open ground is full, from the wide agents alone (profile before
    // the narrow ones are merged: narrow[] is kept apart for that).
    const auto full = [&](std::size_t s) { return wide == nullptr || profile[s] >= wide[s] - t.cs; };
    std::array<float, kS> merged;
    for (std::size_t s = 0; s < kS; ++s) {
      if (narrow[s] > profile[s] && full((s + kS - 1) % kS) && full(s) && full((s + 1) % kS)) {
        merged[s] = narrow[s];
      } else {
        merged[s] = profile[s];
      }
    }
    std::copy_n(merged.data(), kS, profile);
  }
}

}  // namespace swarmfield::sim
