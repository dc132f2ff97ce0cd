// Combat: the parameters' check, the shot's target search and its line of sight.
#include "swarmfield/sim/game/combat.hpp"

#include "agent_blocks.hpp"

#include "../number_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace swarmfield::sim {

namespace {

using sim_detail::number_text;

bool in_range(float v, float lo, float hi) { return std::isfinite(v) && v >= lo && v <= hi; }

}  // namespace

std::string check_combat_params(const CombatParams& p) {
  if (!(in_range(p.player_health, 0.0f, kMaxCombatValue) && p.player_health > 0.0f)) {
    return "combat.player_health " + number_text(p.player_health) + " must be in (0, " + number_text(kMaxCombatValue) + "]";
  }
  if (!in_range(p.respawn_seconds, 0.0f, kMaxCombatValue)) {
    return "combat.respawn_seconds " + number_text(p.respawn_seconds) + " must be in 0.." + number_text(kMaxCombatValue);
  }
  if (!(in_range(p.fire_range, 0.0f, kMaxFireRange) && p.fire_range > 0.0f)) {
    return "combat.fire_range " + number_text(p.fire_range) + " must be in (0, " + number_text(kMaxFireRange) + "]";
  }
  if (!in_range(p.fire_cone, 0.0f, 1.5707964f)) {
    return "combat.fire_cone " + number_text(p.fire_cone) + " must be in 0..1.5708 radians (a half-angle)";
  }
  if (!in_range(p.fire_damage, 0.0f, kMaxCombatValue)) {
    return "combat.fire_damage " + number_text(p.fire_damage) + " must be in 0.." + number_text(kMaxCombatValue);
  }
  if (!(in_range(p.fire_interval, 0.0f, kMaxCombatValue) && p.fire_interval > 0.0f)) {
    return "combat.fire_interval " + number_text(p.fire_interval) + " must be in (0, " + number_text(kMaxCombatValue) + "]";
  }
  if (p.max_hits_per_shot < 1 || p.max_hits_per_shot > kMaxHitsPerShot) {
    return "combat.max_hits_per_shot " + std::to_string(p.max_hits_per_shot) + " must be in 1.." +
           std::to_string(kMaxHitsPerShot);
  }
  const BarricadeParams& b = p.barricade;
  if (!(in_range(b.health, 0.0f, kMaxCombatValue) && b.health > 0.0f)) {
    return "combat.barricade.health " + number_text(b.health) + " must be in (0, " + number_text(kMaxCombatValue) + "]";
  }
  if (!(in_range(b.build_range, 0.0f, kMaxFireRange) && b.build_range > 0.0f)) {
    return "combat.barricade.build_range " + number_text(b.build_range) + " must be in (0, " + number_text(kMaxFireRange) + "]";
  }
  if (b.per_player > kMaxBarricadesPerPlayer) {
    return "combat.barricade.per_player " + std::to_string(b.per_player) + " must be in 0.." +
           std::to_string(kMaxBarricadesPerPlayer);
  }
  if (!in_range(b.attackers, 1.0f, 1024.0f)) {
    return "combat.barricade.attackers " + number_text(b.attackers) + " must be in 1..1024";
  }
  return {};
}

bool segment_clear(const GridMap& map, Vec2 a, Vec2 b) noexcept {
  if (!finite(a) || !finite(b)) return false;
  // Cells as GridMap::world_to_cell finds them (division in double); a point off the map is
  // blocked before any cast (huge coordinates would not fit the integers below).
  const double cs = static_cast<double>(map.cell_size());
  const double ax = static_cast<double>(a.x) / cs, ay = static_cast<double>(a.y) / cs;
  const double bx = static_cast<double>(b.x) / cs, by = static_cast<double>(b.y) / cs;
  const auto on_map = [&](double x, double y) { return x >= 0.0 && y >= 0.0 && x < map.width() && y < map.height(); };
  if (!on_map(ax, ay) || !on_map(bx, by)) return false;
  std::int64_t x = static_cast<std::int64_t>(std::floor(ax)), y = static_cast<std::int64_t>(std::floor(ay));
  const std::int64_t ex = static_cast<std::int64_t>(std::floor(bx)), ey = static_cast<std::int64_t>(std::floor(by));
  const auto open = [&](std::int64_t cx, std::int64_t cy) {
    return cx >= 0 && cy >= 0 && cx < map.width() && cy < map.height() &&
           map.walkable(static_cast<std::int32_t>(cx), static_cast<std::int32_t>(cy));
  };
  if (!open(x, y)) return false;
  const double dx = bx - ax, dy = by - ay;
  const int step_x = dx > 0 ? 1 : (dx < 0 ? -1 : 0), step_y = dy > 0 ? 1 : (dy < 0 ? -1 : 0);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // Parameter t along the segment (0..1) at the next vertical / horizontal cell boundary, and
  // the step in t between two such boundaries.
  const double delta_x = step_x != 0 ? 1.0 / std::abs(dx) : kInf, delta_y = step_y != 0 ? 1.0 / std::abs(dy) : kInf;
  double t_x = step_x > 0 ? (static_cast<double>(x + 1) - ax) * delta_x
               : step_x < 0 ? (ax - static_cast<double>(x)) * delta_x
                            : kInf;
  double t_y = step_y > 0 ? (static_cast<double>(y + 1) - ay) * delta_y
               : step_y < 0 ? (ay - static_cast<double>(y)) * delta_y
                            : kInf;
  // At most one step per cell boundary crossed: bounded even if rounding misses the end cell.
  const std::int64_t max_steps = std::abs(ex - x) + std::abs(ey - y);
  for (std::int64_t s = 0; s < max_steps && (x != ex || y != ey); ++s) {
    if (t_x < t_y) {
      x += step_x;
      t_x += delta_x;
    } else if (t_y < t_x) {
      y += step_y;
      t_y += delta_y;
    } else {
      // Through a cell corner: both neighbours must be open (no shots between diagonal walls).
      if (!open(x + step_x, y) || !open(x, y + step_y)) return false;
      x += step_x;
      y += step_y;
      t_x += delta_x;
      t_y += delta_y;
      ++s;
    }
    if (!open(x, y)) return false;
  }
  return true;
}

void pick_shot_targets(const GridMap& map, Vec2 origin, Vec2 aim, const CombatParams& p, std::span<const float> xs,
                       std::span<const float> ys, std::span<const std::uint8_t> agent_kinds,
                       std::span<const AgentKind> kinds, std::span<const std::uint32_t> ids,
                       std::vector<ShotCandidate>& scratch, std::vector<std::uint32_t>& hits,
                       std::span<const std::uint8_t> skip) {
  hits.clear();
  scratch.clear();
  const float aim_len = length(aim);
  if (!finite(origin) || !(aim_len > 0.0f) || !std::isfinite(aim_len) || kinds.empty()) return;
  const Vec2 u = aim * (1.0f / aim_len);
  const float cos_cone = std::cos(p.fire_cone);
  float max_radius = 0.0f;
  for (const AgentKind& k : kinds) max_radius = std::max(max_radius, k.radius);
  const float outer = p.fire_range + max_radius;
  const float outer2 = outer * outer;
  const std::size_t n = std::min({xs.size(), ys.size(), agent_kinds.size(), ids.size()});
  const bool use_skip = skip.size() >= n;
  const auto consider = [&](std::size_t i) {
    if (use_skip && skip[i] != 0) return;
    const Vec2 d{xs[i] - origin.x, ys[i] - origin.y};
    const float d2 = dot(d, d);
    const float r = agent_kinds[i] < kinds.size() ? kinds[agent_kinds[i]].radius : max_radius;
    const float reach = p.fire_range + r;
    if (!(d2 <= reach * reach)) return;
    const float along = dot(d, u);
    const float dist = std::sqrt(d2);
    const float side = d.x * u.y - d.y * u.x;
    const bool in_cone = along >= dist * cos_cone;
    const bool on_ray = along > 0.0f && std::abs(side) <= r;
    if (in_cone || on_ray || d2 <= r * r) scratch.push_back({d2, ids[i], static_cast<std::uint32_t>(i)});
  };
  game_detail::scan_blocks_near(xs, ys, n, origin, outer2, [&](std::size_t begin, std::size_t end) {
    for (std::size_t j = begin; j < end; ++j) consider(j);
  });
  // Only the nearest kMaxSightChecksPerShot can be used: a partial sort (a total order, so the
  // result is the same on every platform), not a sort of a whole dense crowd in range.
  const auto nearer = [](const ShotCandidate& a, const ShotCandidate& b) {
    return a.distance2 != b.distance2 ? a.distance2 < b.distance2 : a.id < b.id;
  };
  const std::size_t keep = std::min(scratch.size(), kMaxSightChecksPerShot);
  std::partial_sort(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(keep), scratch.end(), nearer);
  scratch.resize(keep);
  for (const ShotCandidate& c : scratch) {  // at most kMaxSightChecksPerShot (resized above)
    if (hits.size() >= p.max_hits_per_shot) break;
    if (segment_clear(map, origin, {xs[c.index], ys[c.index]})) hits.push_back(c.index);
  }
}

}  // namespace swarmfield::sim
