// Per-sector fields on demand (hierarchical navigation, layers 3 and 4).
#include "swarmfield/sim/nav/hierarchical/sector_fields.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "swarmfield/sim/huge_pages.hpp"
#include "world_cell.hpp"

namespace swarmfield::sim {

using nav_detail::cell_at;

namespace {

constexpr std::uint32_t kInf = kUnreachable;

}  // namespace

void SectorFields::set_routes(const SectorGraph& graph, const PortalRoutes& routes) {
  const bool same_layout = graph_ != nullptr && graph.sectors_x() == sectors_x_ && graph.sectors_y() == sectors_y_ &&
                           graph.sector_side() == side_ && slot_of_.size() == graph.sector_count();
  graph_ = &graph;
  routes_ = &routes;
  ++generation_;
  // The goals by sector for steer() (a lookup per agent on the fallback instead of a scan of
  // every goal: a server with 64 players has 64); routes' order kept within a sector.
  goal_sectors_.clear();
  for (const CellCoord goal : routes.goals()) {
    // Insertion by sector, after equal ones (stable; a few goals, and no allocation once warm).
    const GoalSector e{graph.sector_of(goal), goal};
    goal_sectors_.push_back(e);
    std::size_t j = goal_sectors_.size() - 1;
    for (; j > 0 && goal_sectors_[j - 1].sector > e.sector; --j) goal_sectors_[j] = goal_sectors_[j - 1];
    goal_sectors_[j] = e;
  }
  if (same_layout) return;
  for (std::uint32_t slot = 0; slot < fields_.size(); ++slot) {
    if (fields_[slot].sector != kNoField) drop(slot);
  }
  sectors_x_ = graph.sectors_x();
  sectors_y_ = graph.sectors_y();
  side_ = graph.sector_side();
  side_shift_ = side_ > 0 && (side_ & (side_ - 1)) == 0 ? std::countr_zero(static_cast<std::uint32_t>(side_)) : -1;
  width_ = height_ = 0;
  if (graph.sector_count() > 0) {  // the last sector's rectangle ends where the map does
    const SectorGraph::Rect last = graph.sector_rect(static_cast<std::uint32_t>(graph.sector_count() - 1));
    width_ = last.x0 + last.w;
    height_ = last.y0 + last.h;
  }
  // Slabs for the new layout: up to 2 MiB of fields each (one huge page), on big maps advised
  // for huge pages (when every sector's field would fill kHugePageMinBytes).
  fields_.clear();
  free_.clear();
  slabs_.clear();
  live_ = 0;
  slot_bytes_ = static_cast<std::size_t>(side_) * static_cast<std::size_t>(side_);
  constexpr std::size_t kSlabBytes = std::size_t{2} << 20;
  slab_slots_ = std::clamp<std::size_t>(slot_bytes_ > 0 ? kSlabBytes / slot_bytes_ : 1, 1,
                                        std::max<std::size_t>(graph.sector_count(), 1));
  huge_slabs_ = graph.sector_count() * slot_bytes_ >= kHugePageMinBytes;
  slot_of_.assign(graph.sector_count(), kNoField);
  sector_dirs_.assign(graph.sector_count(), nullptr);
  fallback_targets_.clear();
  fallback_nodes_.clear();
  fallback_range_.assign(graph.sector_count(), TargetRange{});
  fallback_gen_.assign(graph.sector_count(), kNoGeneration);
  agents_.assign(graph.sector_count(), 0);
  waiting_since_.assign(graph.sector_count(), 0);
  occupied_.clear();
}

void SectorFields::begin_tick() {
  ++tick_;
  for (const std::uint32_t s : occupied_) agents_[s] = 0;
  occupied_.clear();
}

std::uint8_t* SectorFields::slot_dirs(std::uint32_t slot) {
  const std::size_t slab = slot / slab_slots_;
  while (slabs_.size() <= slab) {
    const std::size_t bytes = slab_slots_ * slot_bytes_;
    const std::align_val_t align{huge_slabs_ ? std::size_t{2} << 20 : alignof(std::max_align_t)};
    slabs_.emplace_back(static_cast<std::uint8_t*>(::operator new[](bytes, align)), SlabFree{align});
    if (huge_slabs_) advise_huge_pages(slabs_.back().get(), bytes);
  }
  return slabs_[slab].get() + (slot % slab_slots_) * slot_bytes_;
}

bool SectorFields::has_field(std::uint32_t s) const noexcept { return s < slot_of_.size() && slot_of_[s] != kNoField; }

bool SectorFields::field_current(std::uint32_t s) const noexcept {
  return has_field(s) && fields_[slot_of_[s]].generation == generation_;
}

std::uint32_t SectorFields::take_slot() {
  if (!free_.empty()) {
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  fields_.emplace_back();
  return static_cast<std::uint32_t>(fields_.size() - 1);
}

void SectorFields::drop(std::uint32_t slot) {
  Field& f = fields_[slot];
  if (f.sector == kNoField) return;
  slot_of_[f.sector] = kNoField;
  sector_dirs_[f.sector] = nullptr;
  f.sector = kNoField;
  free_.push_back(slot);
  --live_;
  ++drops_;
}

void SectorFields::drop_sector(std::uint32_t s) {
  if (has_field(s)) drop(slot_of_[s]);
}

void SectorFields::build_sector(const GridMap& map, std::uint32_t s) {
  if (graph_ == nullptr || s >= slot_of_.size()) return;
  const SectorGraph& g = *graph_;
  const PortalRoutes& routes = *routes_;
  std::uint32_t slot = slot_of_[s];
  if (slot == kNoField) {
    slot = take_slot();
    slot_of_[s] = slot;
    fields_[slot].sector = s;
    ++live_;
  }
  waiting_since_[s] = 0;
  Field& f = fields_[slot];
  f.generation = generation_;
  f.last_tick = tick_;
  ++builds_;

  const SectorGraph::Rect r = g.sector_rect(s);
  const auto lw = static_cast<std::size_t>(r.w) + 2;  // local grid: the sector and a ring
  const auto lh = static_cast<std::size_t>(r.h) + 2;
  const auto local = [&](CellCoord c) {
    return static_cast<std::uint32_t>(static_cast<std::size_t>(c.y - r.y0 + 1) * lw + static_cast<std::size_t>(c.x - r.x0 + 1));
  };
  open_.assign(lw * lh, 0);
  // Values in the field when kept (keep_values()), else in scratch: only directions stay.
  std::vector<std::uint32_t>& vals = keep_values_ ? f.values : scratch_values_;
  if (!keep_values_) f.values = {};
  vals.resize(lw * lh);  // search_ fills it
  seeds_.clear();
  // open_: SectorSearch's cell kinds: inner for the sector's walkable cells (the only ones
  // relaxed), seed for the ring's open cells, else blocked; step_ the cost of entering each
  // inner cell (its map cost). Seeds (value << 32 | local cell) for search_, unsorted.
  step_.resize(lw * lh);
  bool unit_cost = true;
  const bool on_map = r.x0 >= 0 && r.y0 >= 0 && r.x0 + r.w <= map.width() && r.y0 + r.h <= map.height();
  for (std::int32_t y = 0; y < r.h; ++y) {
    const std::size_t row = static_cast<std::size_t>(y + 1) * lw + 1;
    const std::uint8_t* costs = nullptr;
    if (on_map) {
      costs = map.costs().data() + map.index(r.x0, r.y0 + y);
    } else {  // a map other than the graph's (misuse): off-map cells read as blocked
      row_costs_.resize(static_cast<std::size_t>(r.w));
      for (std::int32_t x = 0; x < r.w; ++x) row_costs_[static_cast<std::size_t>(x)] = map.cost(r.x0 + x, r.y0 + y);
      costs = row_costs_.data();
    }
    std::uint8_t* const open_row = open_.data() + row;
    std::uint8_t* const step_row = step_.data() + row;
    bool unit_row = true;
    for (std::int32_t x = 0; x < r.w; ++x) {
      const std::uint8_t cost = costs[x];
      open_row[x] = cost != kBlockedCost ? kInner : SectorSearch::kBlockedCell;
      step_row[x] = cost;
      unit_row &= cost == 1 || cost == kBlockedCost;
    }
    unit_cost &= unit_row;
  }
  const auto seed = [&](std::uint32_t cell, std::uint32_t v) {
    if (v != kInf) seeds_.push_back(std::uint64_t{v} << 32 | cell);
  };
  // The sector's portals and the neighbour portals they cross to (the ring's only open cells).
  for (const std::uint32_t n : g.sector_nodes(s)) {
    seed(local(g.node_cell(n)), routes.node_cost(n));
    for (const SectorEdge& e : g.edges(n)) {
      if (g.node_sector(e.to) == s) continue;
      const std::uint32_t cell = local(g.node_cell(e.to));
      open_[cell] = SectorSearch::kSeedCell;
      seed(cell, routes.node_cost(e.to));
    }
  }
  for (const CellCoord goal : routes.goals()) {
    if (g.sector_of(goal) == s) seed(local(goal), 0);
  }
  search_.run(lw, lh, open_.data(), step_.data(), unit_cost, seeds_, vals.data());
  // Flow: FlowField's rules on the local grid (ring cells included as neighbours): the lowest
  // neighbour, orthogonal ones first (E, S, W, N), then diagonals (SE, SW, NW, NE) past two
  // open corners; ties keep the first found. A blocked neighbour holds kUnreachable, never
  // lower than a cell's own value, so needs no test of its own, unless a seed sat on a blocked
  // cell (a goal on a wall before the routes caught up; checked then, as FlowField does).
  const auto st = static_cast<std::ptrdiff_t>(lw);
  if (f.dirs == nullptr) f.dirs = slot_dirs(slot);
  std::fill_n(f.dirs, static_cast<std::size_t>(r.w) * static_cast<std::size_t>(r.h),
              static_cast<std::uint8_t>(FlowDirection::kNone));
  bool blocked_seed = false;
  for (const std::uint64_t sd : seeds_) blocked_seed |= open_[static_cast<std::size_t>(sd & 0xFFFFFFFFu)] == 0;
  const std::uint8_t* const open = open_.data();
  const std::uint32_t* const value = vals.data();
  for (std::size_t y = 1; y + 1 < lh; ++y) {
    std::uint8_t* const out = f.dirs + (y - 1) * static_cast<std::size_t>(r.w) - 1;
    for (std::size_t x = 1; x + 1 < lw; ++x) {
      const std::size_t u = y * lw + x;
      if (open[u] == 0) continue;
      const std::uint8_t* const o = open + u;
      const std::uint32_t* const v = value + u;
      std::uint32_t best = v[0];
      std::uint8_t dir = static_cast<std::uint8_t>(FlowDirection::kNone);
      const auto take = [&](std::ptrdiff_t off, FlowDirection d, bool allowed) __attribute__((always_inline)) {
        const std::uint32_t n = v[off];
        const bool better = allowed && (!blocked_seed || o[off] != 0) && n < best;
        best = better ? n : best;
        dir = better ? static_cast<std::uint8_t>(d) : dir;
      };
      const bool e = o[1] != 0, so = o[st] != 0, w = o[-1] != 0, no = o[-st] != 0;
      take(1, FlowDirection::kE, true);
      take(st, FlowDirection::kS, true);
      take(-1, FlowDirection::kW, true);
      take(-st, FlowDirection::kN, true);
      take(st + 1, FlowDirection::kSE, e && so);
      take(st - 1, FlowDirection::kSW, w && so);
      take(-st - 1, FlowDirection::kNW, w && no);
      take(-st + 1, FlowDirection::kNE, e && no);
      if (v[0] == 0) dir = kGoalCode;  // a goal: no direction, but routed
      out[x] = dir;
    }
  }
  sector_dirs_[s] = f.dirs;
}

std::uint64_t SectorFields::update(const GridMap& map, std::uint64_t budget) {
  if (graph_ == nullptr) return 0;
  order_.clear();
  stale_.clear();
  std::uint64_t cheapest = ~std::uint64_t{0};  // the smallest build charge among the candidates
  const auto charge = [&](std::uint32_t s) {
    const SectorGraph::Rect r = graph_->sector_rect(s);
    return kWorkUnitsPerCell * static_cast<std::uint64_t>(r.w + 2) * static_cast<std::uint64_t>(r.h + 2);
  };
  for (const std::uint32_t s : occupied_) {
    if (slot_of_[s] != kNoField) fields_[slot_of_[s]].last_tick = tick_;
    if (slot_of_[s] == kNoField || !field_current(s)) cheapest = std::min(cheapest, charge(s));
    if (slot_of_[s] == kNoField) {
      order_.push_back(s);
      if (waiting_since_[s] == 0) waiting_since_[s] = tick_;
    } else if (!field_current(s)) {
      stale_.push_back(s);
    }
  }
  // Most agents first; sector index breaks ties (deterministic). Sectors without any field and
  // sectors with one for older routes take turns: when the goals move every tick (players
  // walking), every field is out of date after each route build, and by population alone the
  // same busiest sectors were rebuilt tick after tick while agents in sectors without a field
  // stayed on the portal fallback for good (on Boston_0_1024 with 8 walking players, 100k
  // agents: 38% of the swarm step's instructions went to steer()).
  const auto busiest_first = [&](std::uint32_t a, std::uint32_t b) {
    return agents_[a] != agents_[b] ? agents_[a] > agents_[b] : a < b;
  };
  const auto waited_busiest_first = [&](std::uint32_t a, std::uint32_t b) {
    const std::uint64_t ka = agents_[a] + (tick_ - waiting_since_[a]) / kAgingTicks;
    const std::uint64_t kb = agents_[b] + (tick_ - waiting_since_[b]) / kAgingTicks;
    return ka != kb ? ka > kb : a < b;
  };
  // The loop below builds at most `most` sectors (it stops once the budget is spent, the last
  // build overshooting), so each list needs only its first `most` in order: on an 8192 map
  // that is ~8 of ~23,000 occupied sectors, and sorting them all took ~1 ms a tick.
  const std::uint64_t most = budget == 0 || cheapest == 0 ? ~std::uint64_t{0} : budget / cheapest + 1;
  const auto sort_first = [most](std::vector<std::uint32_t>& list, auto&& before) {
    if (most < list.size()) {
      std::partial_sort(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(most), list.end(), before);
    } else {
      std::sort(list.begin(), list.end(), before);
    }
  };
  sort_first(order_, waited_busiest_first);
  sort_first(stale_, busiest_first);
  const std::size_t missing = order_.size();
  order_.resize(missing + stale_.size());
  // Interleave in place from the back: missing[i] goes to 2i, stale[i] to 2i + 1 while both
  // last, then the longer list's rest in its own order.
  {
    std::size_t out = order_.size(), m = missing, t = stale_.size();
    while (m > 0 || t > 0) {
      const std::size_t pairs = std::min(m, t);
      if (m > pairs) {
        order_[--out] = order_[--m];
      } else if (t > pairs) {
        order_[--out] = stale_[--t];
      } else {
        order_[--out] = stale_[--t];
        order_[--out] = order_[--m];
      }
    }
  }
  std::uint64_t spent = 0;
  std::size_t done = 0;
  for (const std::uint32_t s : order_) {
    if (budget != 0 && spent >= budget) break;
    if (slot_of_[s] == kNoField && live_ >= max_fields_) {
      // Evict the least recently occupied field not in use this tick, if any.
      std::uint32_t victim = kNoField;
      for (std::uint32_t slot = 0; slot < fields_.size(); ++slot) {
        const Field& f = fields_[slot];
        if (f.sector == kNoField || f.last_tick == tick_) continue;
        if (victim == kNoField || f.last_tick < fields_[victim].last_tick) victim = slot;
      }
      if (victim == kNoField) break;  // every kept field is in use: the rest steer to portals
      drop(victim);
    }
    build_sector(map, s);
    spent += charge(s);
    ++done;
  }
  pending_ = order_.size() - done;
  refresh_fallback();
  // Drop the fields of sectors nobody was in for keep_ticks_ ticks.
  for (std::uint32_t slot = 0; slot < fields_.size(); ++slot) {
    const Field& f = fields_[slot];
    if (f.sector != kNoField && tick_ - f.last_tick > keep_ticks_) drop(slot);
  }
  return spent;
}

const SectorFields::Field* SectorFields::field_of(CellCoord c, SectorGraph::Rect& r) const noexcept {
  if (graph_ == nullptr || c.x < 0 || c.y < 0 || c.x >= sectors_x_ * side_ || c.y >= sectors_y_ * side_) return nullptr;
  const std::uint32_t s = graph_->sector_of(c);
  if (s >= slot_of_.size() || slot_of_[s] == kNoField) return nullptr;
  r = graph_->sector_rect(s);
  if (c.x >= r.x0 + r.w || c.y >= r.y0 + r.h) return nullptr;
  return &fields_[slot_of_[s]];
}

std::uint32_t SectorFields::value(CellCoord c) const noexcept {
  SectorGraph::Rect r{};
  const Field* f = field_of(c, r);
  if (f == nullptr) return kInf;
  if (f->values.empty()) {
    const std::uint8_t code = f->dirs[static_cast<std::size_t>(c.y - r.y0) * static_cast<std::size_t>(r.w) +
                                      static_cast<std::size_t>(c.x - r.x0)];
    return code == kGoalCode ? 0 : kInf;
  }
  return f->values[static_cast<std::size_t>(c.y - r.y0 + 1) * static_cast<std::size_t>(r.w + 2) +
                   static_cast<std::size_t>(c.x - r.x0 + 1)];
}

FlowDirection SectorFields::direction(CellCoord c) const noexcept {
  SectorGraph::Rect r{};
  const Field* f = field_of(c, r);
  if (f == nullptr) return FlowDirection::kNone;
  const std::uint8_t code =
      f->dirs[static_cast<std::size_t>(c.y - r.y0) * static_cast<std::size_t>(r.w) + static_cast<std::size_t>(c.x - r.x0)];
  return code == kGoalCode ? FlowDirection::kNone : static_cast<FlowDirection>(code);
}

std::uint8_t SectorFields::code_at(CellCoord c) const noexcept {
  SectorGraph::Rect r{};
  const Field* f = field_of(c, r);
  if (f == nullptr) return static_cast<std::uint8_t>(FlowDirection::kNone);
  return f->dirs[static_cast<std::size_t>(c.y - r.y0) * static_cast<std::size_t>(r.w) + static_cast<std::size_t>(c.x - r.x0)];
}

NavSample SectorFields::sample(const GridMap& map, std::span<const Vec2> goals, Vec2 p) const noexcept {
  NavSample out;
  if (graph_ == nullptr || !std::isfinite(p.x) || !std::isfinite(p.y)) return out;
  const CellCoord own = cell_at(map, p);
  const bool own_walkable = map.walkable(own);
  // field_of(own) != nullptr, without the slot, Field and rectangle (see code_fast()).
  const bool own_has_field = static_cast<std::uint32_t>(own.x) < static_cast<std::uint32_t>(width_) &&
                             static_cast<std::uint32_t>(own.y) < static_cast<std::uint32_t>(height_) &&
                             sector_dirs_[sector_index(own.x, own.y)] != nullptr;
  if (own_walkable && !own_has_field) {
    const Steer s = steer(map, p);
    out.direction = s.direction;
    out.target = p + s.direction;
    out.status = s.direction.x != 0.0f || s.direction.y != 0.0f ? NavStatus::kFollowFlow : NavStatus::kNoRoute;
    return out;
  }
  const std::uint8_t own_code = code_fast(own.x, own.y);
  if (own_walkable && own_code == kGoalCode) {
    float best = std::numeric_limits<float>::infinity();
    for (std::size_t i = 0; i < goals.size(); ++i) {
      if (!(map.world_to_cell(goals[i]) == own)) continue;
      const Vec2 d = goals[i] - p;
      const float len = std::sqrt(d.x * d.x + d.y * d.y);
      if (len < best) {
        best = len;
        out.goal = static_cast<std::int32_t>(i);
        out.target = goals[i];
      }
    }
    if (out.goal >= 0) {
      const Vec2 d = out.target - p;
      if (best <= kAtGoalCells * map.cell_size()) {
        out.status = NavStatus::kAtGoal;
      } else {
        out.direction = d * (1.0f / best);
        out.status = NavStatus::kGoalInSight;
      }
      return out;
    }
    out.target = map.cell_center(own);  // a goal cell whose goal moved on: hold at its centre
    out.status = NavStatus::kAtGoal;
    return out;
  }
  // The bilinear blend of sample_flow(), each sample from its own sector's field.
  const float u = p.x / map.cell_size() - 0.5f, v = p.y / map.cell_size() - 0.5f;
  const float fu = std::floor(u), fv = std::floor(v);
  if (std::fabs(fu) > 1.0e9f || std::fabs(fv) > 1.0e9f) return out;
  const auto x0 = static_cast<std::int32_t>(fu), y0 = static_cast<std::int32_t>(fv);
  const float tx = u - fu, ty = v - fv;
  // The four cells' codes and walkable flags: read straight from one sector's directions and
  // two rows of map costs when the square lies inside one sector with a field (nearly always),
  // else cell by cell. `ox`, `oy`: own's place in the square in the first case.
  std::uint8_t codes[4];
  bool walk[4];
  std::int32_t ox = -1, oy = -1;
  bool square = false;
  if (side_shift_ >= 0 && map.width() == width_ && map.height() == height_ && x0 >= 0 && y0 >= 0 &&
      x0 + 1 < width_ && y0 + 1 < height_ && (x0 >> side_shift_) == ((x0 + 1) >> side_shift_) &&
      (y0 >> side_shift_) == ((y0 + 1) >> side_shift_)) {
    const std::uint8_t* dirs = sector_dirs_[sector_index(x0, y0)];
    ox = own.x - x0;
    oy = own.y - y0;
    if (dirs != nullptr && (ox == 0 || ox == 1) && (oy == 0 || oy == 1)) {
      square = true;
      const std::int32_t lx = x0 & (side_ - 1), ly = y0 & (side_ - 1);
      const auto w = static_cast<std::size_t>(std::min(side_, width_ - (x0 - lx)));
      const std::uint8_t* d = dirs + static_cast<std::size_t>(ly) * w + static_cast<std::size_t>(lx);
      const std::uint8_t* c = map.costs().data() + map.index(x0, y0);
      const auto mw = static_cast<std::size_t>(width_);
      codes[0] = d[0];
      codes[1] = d[1];
      codes[2] = d[w];
      codes[3] = d[w + 1];
      walk[0] = c[0] != kBlockedCost;
      walk[1] = c[1] != kBlockedCost;
      walk[2] = c[mw] != kBlockedCost;
      walk[3] = c[mw + 1] != kBlockedCost;
    }
  }
  if (!square) {
    for (int k = 0; k < 4; ++k) {
      const std::int32_t cx = x0 + (k & 1), cy = y0 + (k >> 1);
      walk[k] = map.walkable(cx, cy);
      codes[k] = code_fast(cx, cy);
    }
  }
  Vec2 sum{};
  for (int k = 0; k < 4; ++k) {
    const std::int32_t cx = x0 + (k & 1), cy = y0 + (k >> 1);
    if (!walk[k]) continue;
    const std::uint8_t code = codes[k];
    if (code == kGoalCode || code == static_cast<std::uint8_t>(FlowDirection::kNone)) continue;
    const auto d = static_cast<FlowDirection>(code);
    if (own_walkable && cx != own.x && cy != own.y) {
      // The corner cells (cx, own.y) and (own.x, cy), both in the square in the first case.
      const bool open = square ? walk[(k & 1) | (oy << 1)] && walk[ox | (k & 2)]
                               : map.walkable(cx, own.y) && map.walkable(own.x, cy);
      if (!open) continue;
    }
    const float wx = (k & 1) != 0 ? tx : 1.0f - tx;
    const float wy = (k >> 1) != 0 ? ty : 1.0f - ty;
    sum += direction_vector(d) * (wx * wy);
  }
  const float len = std::sqrt(sum.x * sum.x + sum.y * sum.y);
  const auto own_dir = own_code == kGoalCode ? FlowDirection::kNone : static_cast<FlowDirection>(own_code);
  out.direction = len >= 1.0e-3f ? sum * (1.0f / len) : direction_vector(own_dir);
  out.target = p + out.direction;
  const bool routed = own_walkable && own_code != static_cast<std::uint8_t>(FlowDirection::kNone);
  out.status = routed && (out.direction.x != 0.0f || out.direction.y != 0.0f) ? NavStatus::kFollowFlow : NavStatus::kNoRoute;
  return out;
}

std::size_t SectorFields::memory_bytes() const noexcept {
  std::size_t bytes = sector_dirs_.capacity() * sizeof(const std::uint8_t*) +
                      (slot_of_.capacity() + agents_.capacity() + occupied_.capacity() + free_.capacity() +
                       order_.capacity()) * sizeof(std::uint32_t) +
                      open_.capacity() + step_.capacity() + seeds_.capacity() * sizeof(std::uint64_t) +
                      fields_.capacity() * sizeof(Field) + scratch_values_.capacity() * sizeof(std::uint32_t);
  for (const Field& f : fields_) bytes += f.values.capacity() * sizeof(std::uint32_t);
  bytes += slabs_.size() * slab_slots_ * slot_bytes_;
  bytes += search_.memory_bytes();
  bytes += stale_.capacity() * sizeof(std::uint32_t) + fallback_targets_.capacity() * sizeof(Target) +
           fallback_nodes_.capacity() * sizeof(std::uint32_t) + goal_sectors_.capacity() * sizeof(GoalSector) +
           fallback_range_.capacity() * sizeof(TargetRange) + fallback_gen_.capacity() * sizeof(std::uint64_t) +
           compact_order_.capacity() * sizeof(std::uint32_t);
  return bytes;
}

}  // namespace swarmfield::sim
