// Relevance, priority and budget of a client's snapshot (see snapshot_relevance.hpp).
#include "swarmfield/protocol/snapshot/snapshot_relevance.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "swarmfield/protocol/transport/messages.hpp"

namespace swarmfield::protocol {
namespace {

constexpr std::uint32_t kMaxAgeTicks = 1023;
constexpr std::uint32_t kNewAgentAge = 16;   // a new agent starts like one unsent for 16 ticks, then ages
constexpr std::uint32_t kMaxWeight = 8;      // at the view centre; 1 at the corners and beyond
constexpr std::size_t kPriorityBins = 1024;  // priority = age * weight <= 8184, bin = priority / 8
constexpr std::uint16_t kNewFlag = 0x8000;   // in a candidate's priority entry: not in the baseline

}  // namespace

void QuantizedAgents::assign(std::span<const std::uint32_t> ids_in, std::span<const float> xs_in,
                             std::span<const float> ys_in, std::span<const float> headings_in,
                             std::span<const std::uint8_t> kinds_in, float cell_size) {
  const std::size_t n = std::min({ids_in.size(), xs_in.size(), ys_in.size(), headings_in.size()});
  const bool have_kinds = kinds_in.size() >= n;
  order_.resize(n);
  for (std::size_t i = 0; i < n; ++i) order_[i] = static_cast<std::uint32_t>(i);
  bool sorted = std::is_sorted(ids_in.begin(), ids_in.begin() + static_cast<std::ptrdiff_t>(n));
  std::uint32_t max_id = 0;
  if (!sorted) {
    for (std::size_t i = 0; i < n; ++i) max_id = std::max(max_id, ids_in[i]);
  }
  if (!sorted && std::size_t{max_id} < 4 * n + 65536) {
    // Ids dense enough (a swarm's are): a counting sort keyed by the id itself, i.e. each index
    // placed in a table at its id and read back in id order; two sequential passes instead of
    // the radix sort's four with random reads. A repeated id falls back to the radix sort.
    constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
    by_id_.assign(std::size_t{max_id} + 1, kEmpty);
    bool unique = true;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t& slot = by_id_[ids_in[i]];
      unique = unique && slot == kEmpty;
      slot = static_cast<std::uint32_t>(i);
    }
    if (unique) {
      std::size_t k = 0;
      for (const std::uint32_t i : by_id_) {
        if (i != kEmpty) order_[k++] = i;
      }
      sorted = true;
    }
  }
  if (!sorted) {
    // LSD radix sort of the indices by id, two 16-bit digits.
    scratch_.resize(n);
    std::vector<std::uint32_t>& count = radix_count_;
    count.resize(65536);
    for (int pass = 0; pass < 2; ++pass) {
      const int shift = 16 * pass;
      std::fill(count.begin(), count.end(), 0);
      for (std::size_t i = 0; i < n; ++i) ++count[(ids_in[order_[i]] >> shift) & 0xFFFFu];
      std::uint32_t sum = 0;
      for (auto& c : count) {
        const std::uint32_t v = c;
        c = sum;
        sum += v;
      }
      for (std::size_t i = 0; i < n; ++i) scratch_[count[(ids_in[order_[i]] >> shift) & 0xFFFFu]++] = order_[i];
      order_.swap(scratch_);
    }
  }
  ids.resize(n);
  xs.resize(n);
  ys.resize(n);
  headings.resize(n);
  kinds.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t i = order_[k];
    ids[k] = ids_in[i];
    xs[k] = quantize_agent_position(xs_in[i], cell_size);
    ys[k] = quantize_agent_position(ys_in[i], cell_size);
    headings[k] = quantize_heading(headings_in[i]);
    kinds[k] = have_kinds ? kinds_in[i] : 0;
  }
  // Tile index (counting sort of the indices by tile; each tile's list stays in id order).
  std::uint32_t max_x = 0, max_y = 0;
  for (std::size_t k = 0; k < n; ++k) {
    max_x = std::max(max_x, xs[k]);
    max_y = std::max(max_y, ys[k]);
  }
  tile_shift = 10;  // 1024 units = 16 cells
  while (((std::uint64_t{max_x} >> tile_shift) + 1) * ((std::uint64_t{max_y} >> tile_shift) + 1) > 65536) ++tile_shift;
  tiles_x = (max_x >> tile_shift) + 1;
  tiles_y = (max_y >> tile_shift) + 1;
  const std::size_t tiles = std::size_t{tiles_x} * tiles_y;
  tile_start.assign(tiles + 1, 0);
  for (std::size_t k = 0; k < n; ++k) ++tile_start[(ys[k] >> tile_shift) * tiles_x + (xs[k] >> tile_shift) + 1];
  for (std::size_t t = 0; t < tiles; ++t) tile_start[t + 1] += tile_start[t];
  tile_agents.resize(n);
  scratch_.assign(tile_start.begin(), tile_start.end() - 1);  // write cursors
  for (std::size_t k = 0; k < n; ++k) {
    tile_agents[scratch_[(ys[k] >> tile_shift) * tiles_x + (xs[k] >> tile_shift)]++] = static_cast<std::uint32_t>(k);
  }
}

QuantizedRect quantize_view(float x0, float y0, float x1, float y1, float margin, float cell_size) noexcept {
  QuantizedRect r;
  if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1) || !std::isfinite(margin) ||
      !(cell_size > 0.0f)) {
    return r;
  }
  const double scale = kPositionUnitsPerCell / static_cast<double>(cell_size);
  auto q = [&](double w) {
    return static_cast<std::int64_t>(std::clamp(std::floor(w * scale), -1.0, static_cast<double>(kPositionMax) + 1));
  };
  r.x0 = q(static_cast<double>(std::min(x0, x1)) - margin);
  r.y0 = q(static_cast<double>(std::min(y0, y1)) - margin);
  r.x1 = q(static_cast<double>(std::max(x0, x1)) + margin);
  r.y1 = q(static_cast<double>(std::max(y0, y1)) + margin);
  if (x1 <= x0 || y1 <= y0) r = {};  // an empty view wants no agents, margin or not
  return r;
}

std::int64_t intersection_area(const QuantizedRect& a, const QuantizedRect& b) noexcept {
  const std::int64_t w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const std::int64_t h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  return a.empty() || b.empty() || w <= 0 || h <= 0 ? 0 : w * h;
}

QuantizedRect snap_view(const QuantizedRect& view, unsigned min_step_shift, const QuantizedRect& bounds) noexcept {
  QuantizedRect r = clip(view, bounds);
  if (r.empty()) return {};
  // Steps are powers of two, so flooring and ceiling are masks (two's complement: a negative
  // corner, from the margin, floors towards -infinity too).
  auto snap = [min_step_shift](std::int64_t& lo, std::int64_t& hi) {
    const auto extent = static_cast<std::uint64_t>(hi - lo);
    const std::uint64_t step =
        std::bit_ceil(std::max<std::uint64_t>((extent + 15) / 16, std::uint64_t{1} << min_step_shift));
    const auto mask = static_cast<std::int64_t>(step - 1);
    lo &= ~mask;
    hi = (hi + mask) & ~mask;
  };
  snap(r.x0, r.x1);
  snap(r.y0, r.y1);
  return clip(r, bounds);
}

void ViewRelevance::compute(const QuantizedAgents& a, const QuantizedRect& view, const RelevanceParams& params,
                            RelevanceScratch& scratch) {
  std::vector<std::uint64_t>& marked = scratch.marked;
  std::vector<std::uint32_t>& in_view = scratch.in_view;
  std::vector<std::uint64_t>& all_distances = scratch.distances;
  view_ = view;
  max_tracked_ = params.max_tracked;
  density_grid_ = params.density_grid;
  in_view_count_ = 0;
  untracked_ = 0;
  tracked_.clear();
  tracked_valid_ = true;
  distances_.clear();
  weights_.clear();
  in_view.clear();
  all_distances.clear();
  geometry_.clear();
  counts_.clear();
  if (view.empty()) return;
  const std::int64_t cx2 = view.x0 + view.x1, cy2 = view.y0 + view.y1;  // twice the centre

  // Inside the rectangle, in id order: visit the tiles the rectangle overlaps, mark the agents
  // inside in a bitmap over indices (index order is id order), then read the bitmap in order.
  const std::size_t n = a.size();
  marked.assign((n + 63) / 64, 0);
  if (a.tiles_x > 0 && a.tiles_y > 0 && view.x1 > 0 && view.y1 > 0) {
    const std::int64_t side = std::int64_t{1} << a.tile_shift;
    const std::int64_t tx0 = std::max<std::int64_t>(view.x0, 0) >> a.tile_shift;
    const std::int64_t ty0 = std::max<std::int64_t>(view.y0, 0) >> a.tile_shift;
    const std::int64_t tx1 = std::min<std::int64_t>((view.x1 - 1) >> a.tile_shift, a.tiles_x - 1);
    const std::int64_t ty1 = std::min<std::int64_t>((view.y1 - 1) >> a.tile_shift, a.tiles_y - 1);
    for (std::int64_t ty = ty0; ty <= ty1; ++ty) {
      for (std::int64_t tx = tx0; tx <= tx1; ++tx) {
        const std::size_t t = static_cast<std::size_t>(ty * a.tiles_x + tx);
        const std::uint32_t* list = a.tile_agents.data() + a.tile_start[t];
        const std::uint32_t count = a.tile_start[t + 1] - a.tile_start[t];
        const bool inside = tx * side >= view.x0 && (tx + 1) * side <= view.x1 && ty * side >= view.y0 &&
                            (ty + 1) * side <= view.y1;
        for (std::uint32_t k = 0; k < count; ++k) {
          const std::uint32_t i = list[k];
          if (!inside) {
            const std::int64_t x = a.xs[i], y = a.ys[i];
            if (x < view.x0 || x >= view.x1 || y < view.y0 || y >= view.y1) continue;
          }
          marked[i >> 6] |= std::uint64_t{1} << (i & 63);
        }
      }
    }
  }
  for (std::size_t w = 0; w < marked.size(); ++w) {
    for (std::uint64_t bits = marked[w]; bits != 0; bits &= bits - 1) {
      const auto i = static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
      in_view.push_back(i);
      const std::int64_t dx = 2 * std::int64_t{a.xs[i]} - cx2, dy = 2 * std::int64_t{a.ys[i]} - cy2;
      all_distances.push_back(static_cast<std::uint64_t>(dx * dx + dy * dy));
    }
  }
  in_view_count_ = in_view.size();

  // Too many: track the nearest max_tracked (ties by id), count the rest in the grid.
  const std::size_t cap = std::min(params.max_tracked, kMaxFrameAgents);
  std::uint64_t cut = ~std::uint64_t{0};
  std::size_t at_cut_allowed = in_view.size();
  if (in_view.size() > cap) {
    std::vector<std::uint64_t>& selection = scratch.selection;
    selection.assign(all_distances.begin(), all_distances.end());
    if (cap == 0) {
      cut = 0;
      at_cut_allowed = 0;
    } else {
      std::nth_element(selection.begin(), selection.begin() + static_cast<std::ptrdiff_t>(cap - 1), selection.end());
      cut = selection[cap - 1];
      const auto below = static_cast<std::size_t>(
          std::count_if(selection.begin(), selection.end(), [&](std::uint64_t d) { return d < cut; }));
      at_cut_allowed = cap - below;
    }
  }
  if (density_grid_) {
    set_density_grid_geometry(geometry_, static_cast<std::int32_t>(std::max<std::int64_t>(view.x0, 0) / kPositionUnitsPerCell),
                              static_cast<std::int32_t>(std::max<std::int64_t>(view.y0, 0) / kPositionUnitsPerCell),
                              static_cast<std::int32_t>((view.x1 + kPositionUnitsPerCell - 1) / kPositionUnitsPerCell),
                              static_cast<std::int32_t>((view.y1 + kPositionUnitsPerCell - 1) / kPositionUnitsPerCell));
    counts_.assign(geometry_.levels.size(), 0);
  }
  distances_.clear();
  for (std::size_t k = 0; k < in_view.size(); ++k) {
    const std::uint32_t i = in_view[k];
    const std::uint64_t d = all_distances[k];
    bool keep = d < cut;
    if (d == cut && at_cut_allowed > 0) {
      keep = true;
      --at_cut_allowed;
    }
    if (!keep) {
      ++untracked_;
      if (density_grid_) count_density_agent(geometry_, counts_, static_cast<std::int32_t>(a.xs[i] / kPositionUnitsPerCell),
                                             static_cast<std::int32_t>(a.ys[i] / kPositionUnitsPerCell));
      continue;
    }
    tracked_.push_back(AgentCandidate{a.ids[i], a.xs[i], a.ys[i], a.headings[i], a.kinds[i], 1});
    distances_.push_back(d);
  }
  // Nearness weights (the same for every client with this view): 1 + round(7 * closeness),
  // closeness = 1 - distance to the centre / half diagonal.
  const double half_diag2 = static_cast<double>((view.x1 - view.x0) * (view.x1 - view.x0) +
                                                (view.y1 - view.y0) * (view.y1 - view.y0));  // (2h)^2 in d units
  const double inv_half_diag = half_diag2 > 0 ? 1.0 / std::sqrt(half_diag2) : 0.0;
  weights_.resize(distances_.size());
  for (std::size_t k = 0; k < distances_.size(); ++k) {
    const double closeness = std::max(0.0, 1.0 - std::sqrt(static_cast<double>(distances_[k])) * inv_half_diag);
    weights_[k] = static_cast<std::uint8_t>(1 + static_cast<std::uint32_t>(closeness * (kMaxWeight - 1) + 0.5));
  }
  // Once here rather than in every client's encode of the list (SnapshotSelector::choose).
  tracked_valid_ = candidates_valid(tracked_);
}

void SnapshotSelector::select(const QuantizedAgents& a, const QuantizedRect& view, const AgentFrameView& b,
                              std::uint32_t tick, double allowance_bytes, const RelevanceParams& params,
                              AgentCandidates& out, DensityGrid& grid) {
  relevance_.compute(a, view, params);
  select(relevance_, b, tick, allowance_bytes, params, out, grid);
}

void SnapshotSelector::select(const ViewRelevance& relevance, const AgentFrameView& b, std::uint32_t tick,
                              double allowance_bytes, const RelevanceParams& params, AgentCandidates& out,
                              DensityGrid& grid) {
  select(relevance, relevance.view(), b, tick, allowance_bytes, params, out, grid);
}

void SnapshotSelector::select(const ViewRelevance& relevance, const QuantizedRect& view, const AgentFrameView& b,
                              std::uint32_t tick, double allowance_bytes, const RelevanceParams& params,
                              AgentCandidates& out, DensityGrid& grid) {
  const CandidateSelection chosen = choose(relevance, view, b, tick, allowance_bytes, params, grid);
  const std::size_t m = chosen.candidates.size();
  // resize() initializes only what grew; every entry is written below.
  out.resize(m);
  if (m > 0) std::memcpy(out.data(), chosen.candidates.data(), m * sizeof(AgentCandidate));
  for (std::size_t k = 0; k < m; ++k) out[k].send = chosen.send[k];
}

CandidateSelection SnapshotSelector::choose(const ViewRelevance& relevance, const QuantizedRect& view,
                                            const AgentFrameView& b, std::uint32_t tick, double allowance_bytes,
                                            const RelevanceParams& params, DensityGrid& grid) {
  stats_ = {};
  grid.clear();
  const AgentCandidates& tracked = relevance.tracked();
  const QuantizedRect& shared = relevance.view();
  if (view.empty() || shared.empty()) return {};
  const std::vector<std::uint8_t>* weights = &relevance.weights();
  std::span<const AgentCandidate> candidates;
  if (contains(view, shared)) {
    // The shared tracked list itself (its send fields are all 1 and not read).
    candidates = tracked;
    stats_.in_view = relevance.in_view();
  } else {
    // The tracked agents inside the client's own rectangle, with their weights (id order kept).
    const std::vector<std::uint8_t>& shared_weights = relevance.weights();
    own_.resize(tracked.size());
    weights_.resize(tracked.size());
    std::size_t m = 0;
    for (std::size_t k = 0; k < tracked.size(); ++k) {
      const AgentCandidate& c = tracked[k];
      const std::int64_t x = c.x, y = c.y;
      if (x < view.x0 || x >= view.x1 || y < view.y0 || y >= view.y1) continue;
      own_[m] = c;
      weights_[m] = shared_weights[k];
      ++m;
    }
    own_.resize(m);
    weights_.resize(m);
    weights = &weights_;
    candidates = own_;
    stats_.in_view = m + relevance.untracked();
  }
  stats_.untracked = relevance.untracked();
  const bool want_grid = relevance.density_grid();
  if (want_grid) {
    grid = relevance.grid_geometry();
    counts_.assign(relevance.counts().begin(), relevance.counts().end());
  }
  stats_.tracked = candidates.size();
  const std::size_t news = prioritize(*weights, b, tick, candidates);
  spend_budget(news, allowance_bytes, params, want_grid, candidates, grid);
  // A subset of a valid list, in its order, is valid.
  return CandidateSelection{candidates, std::span<const std::uint8_t>(send_.data(), candidates.size()),
                            relevance.tracked_valid()};
}

// ---- Priority: age in the baseline times nearness -------------------------------------------
// One pass: merge with the baseline (both by id), priority, and the histogram of priorities
// (agents per bin, new and known apart: their costs differ). Per candidate one u16: the bin,
// plus kNewFlag for one the client does not have; the new ones' waiting ticks go to new_since_
// in candidate order (few: most of a view's tracked set is in the baseline). Returns the
// candidates new to the client.
std::size_t SnapshotSelector::prioritize(const std::vector<std::uint8_t>& weights, const AgentFrameView& b,
                                         std::uint32_t tick, std::span<const AgentCandidate> candidates) {
  const std::size_t m = candidates.size();
  priority_.resize(m);
  new_since_.clear();
  bin_new_.assign(kPriorityBins, 0);
  bin_known_.assign(kPriorityBins, 0);
  const AgentState* base = b.agents.data();
  const std::size_t nb = b.size();
  const Waiting* waiting = waiting_.data();
  const std::size_t nw = waiting_.size();
  const AgentCandidate* cand = candidates.data();
  std::size_t bi = 0, wi = 0;
  const std::uint8_t* weight = weights.data();
  std::uint16_t* priority = priority_.data();
  std::uint32_t* known_bins = bin_known_.data();
  for (std::size_t k = 0; k < m; ++k) {
    // Fast path: a run of candidates the baseline holds in the same order (most of them: a
    // view's tracked set changes little between snapshots).
    while (k < m && bi < nb && base[bi].id == cand[k].id) {
      const std::uint32_t age = std::min(tick - base[bi].tick, kMaxAgeTicks);
      const auto p = static_cast<std::uint16_t>(std::min<std::uint32_t>(age * weight[k], kPriorityBins * 8 - 1) / 8);
      priority[k] = p;
      ++known_bins[p];
      ++k;
      ++bi;
    }
    if (k == m) break;
    const std::uint32_t id = cand[k].id;
    while (bi < nb && base[bi].id < id) ++bi;
    const bool in_base = bi < nb && base[bi].id == id;
    std::uint32_t age = 0;
    if (in_base) {
      age = std::min(tick - base[bi].tick, kMaxAgeTicks);
    } else {
      while (wi < nw && waiting[wi].id < id) ++wi;
      const bool waited = wi < nw && waiting[wi].id == id && waiting[wi].since <= tick;
      const std::uint32_t since = waited ? waiting[wi].since : tick;
      new_since_.push_back(since);
      age = std::min(kNewAgentAge + (tick - since), kMaxAgeTicks);
    }
    const auto p = static_cast<std::uint16_t>(std::min<std::uint32_t>(age * weights[k], kPriorityBins * 8 - 1) / 8);
    priority[k] = static_cast<std::uint16_t>(p | (in_base ? 0 : kNewFlag));
    ++(in_base ? bin_known_ : bin_new_)[p];
  }
  return new_since_.size();
}

// ---- Budget: highest priority first, as far as the allowance goes ---------------------------
// Bins >= threshold are sent whole; the bin below (partial) gets what is left, in id order.
// Candidates not sent get send = 0; new ones wait (and count in the density grid).
void SnapshotSelector::spend_budget(std::size_t news, double allowance_bytes, const RelevanceParams& params,
                                    bool want_grid, std::span<const AgentCandidate> candidates, DensityGrid& grid) {
  const std::size_t m = candidates.size();
  const AgentCandidate* cand = candidates.data();
  send_.resize(m);
  std::uint8_t* send = send_.data();
  const double total_bits =
      static_cast<double>(news) * params.add_bits + static_cast<double>(m - news) * params.update_bits;
  const double budget_bits = std::max(0.0, allowance_bytes) * 8.0;
  std::size_t threshold = 0;
  std::size_t partial = kPriorityBins;
  double left = 0;
  if (total_bits > budget_bits) {
    stats_.over_budget = true;
    left = budget_bits;
    threshold = kPriorityBins;
    while (threshold > 0) {
      const double bin_bits = static_cast<double>(bin_new_[threshold - 1]) * params.add_bits +
                              static_cast<double>(bin_known_[threshold - 1]) * params.update_bits;
      if (bin_bits > left) break;
      left -= bin_bits;
      --threshold;
    }
    partial = threshold > 0 ? threshold - 1 : kPriorityBins;
  }
  next_waiting_.clear();
  // Everything fits and nobody is new: every candidate is sent and nobody waits.
  if (threshold == 0 && news == 0) {
    stats_.sent = m;
    if (m > 0) std::memset(send, 1, m);
  } else {
    // Without branches on the send decision (about one candidate in seven is sent, in no
    // order the branch predictor could learn): only the partial bin and new candidates, both
    // rare, take a branch.
    const std::uint16_t* priority = priority_.data();
    const auto threshold16 = static_cast<std::uint16_t>(std::min<std::size_t>(threshold, kPriorityBins));
    const auto partial16 = static_cast<std::uint16_t>(partial);  // kPriorityBins: no bin is partial
    std::size_t sent = 0, next_new = 0;
    for (std::size_t k = 0; k < m; ++k) {
      const std::uint16_t pk = priority[k];
      const auto p = static_cast<std::uint16_t>(pk & ~kNewFlag);
      std::uint8_t s = p >= threshold16 ? 1 : 0;
      if (p == partial16) [[unlikely]] {
        const double cost = (pk & kNewFlag) != 0 ? params.add_bits : params.update_bits;
        if (cost <= left) {
          left -= cost;
          s = 1;
        }
      }
      send[k] = s;
      sent += s;
      if ((pk & kNewFlag) != 0) [[unlikely]] {
        const std::uint32_t since = new_since_[next_new++];
        if (s == 0) {
          next_waiting_.push_back({cand[k].id, since});
          ++stats_.untracked;  // not in the client's frame yet: shown by the grid
          if (want_grid) count_density_agent(grid, counts_, static_cast<std::int32_t>(cand[k].x / kPositionUnitsPerCell),
                                             static_cast<std::int32_t>(cand[k].y / kPositionUnitsPerCell));
        }
      }
    }
    stats_.sent = sent;
  }
  waiting_.swap(next_waiting_);
  if (want_grid) {
    if (stats_.untracked == 0) {
      grid.clear();
    } else {
      for (std::size_t i = 0; i < counts_.size(); ++i) grid.levels[i] = density_level(counts_[i]);
    }
  }
}

SnapshotBudget::SnapshotBudget(double bits_per_second, double snapshots_per_second) noexcept
    : per_snapshot_(bits_per_second / 8.0 / std::max(snapshots_per_second, 1e-3)), tokens_(per_snapshot_) {}

double SnapshotBudget::allowance(double fixed_bytes) noexcept {
  tokens_ = std::min(tokens_ + per_snapshot_, 2.0 * per_snapshot_);
  return std::max(0.0, tokens_ - fixed_bytes);
}

void SnapshotBudget::spent(std::size_t payload_bytes, const SnapshotEncodeStats& s) noexcept {
  tokens_ -= static_cast<double>(payload_bytes);
  // Running estimates (weight 1/4 for the newest) from what the encoder reports: an updated
  // agent costs its residual symbols and escapes, an added one its share of the added section.
  constexpr double kWeight = 0.25;
  if (s.updated > 0) {
    const double per =
        (static_cast<double>(s.rans_bytes) * 8.0 + static_cast<double>(s.escape_bits)) / static_cast<double>(s.updated);
    update_bits_ += kWeight * (per - update_bits_);
  }
  if (s.added > 0) {
    const double per = static_cast<double>(s.added_bits) / static_cast<double>(s.added);
    add_bits_ += kWeight * (per - add_bits_);
  }
}

}  // namespace swarmfield::protocol
