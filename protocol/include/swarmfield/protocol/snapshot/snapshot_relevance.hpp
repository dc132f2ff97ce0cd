#pragma once
// Which agents a client's snapshot carries (protocol/SNAPSHOTS.md, "Relevance and budget"):
//  - relevance: the agents inside the client's view rectangle grown by a margin, at most
//    max_tracked of them (the nearest to the view centre); the others inside the view are
//    counted in a coarse density grid instead;
//  - budget: of the relevant agents, the ones sent this snapshot, by a priority that grows with
//    the ticks since the client's baseline last had the agent's values and with nearness to the
//    view centre (the priority accumulator of G. Fiedler, "State Synchronization", 2015: an
//    agent's accumulator is its age times its weight, reset when sent), as many as the byte
//    allowance pays for at the estimated cost per agent.
// Pure: spans in, candidates and grid out; scratch reused (no allocation once warm).
#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/protocol/snapshot/agent_frame.hpp"
#include "swarmfield/protocol/snapshot/density_grid.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"

namespace swarmfield::protocol {

/// Every agent of the world, quantized once per snapshot tick and sorted by id, shared by all
/// clients' selections.
struct QuantizedAgents {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint32_t> xs;  ///< 1/64 cell
  std::vector<std::uint32_t> ys;
  std::vector<std::uint8_t> headings;
  std::vector<std::uint8_t> kinds;

  [[nodiscard]] std::size_t size() const noexcept { return ids.size(); }
  /// Rebuilds from world arrays (parallel, any order; ids unique): positions in world units
  /// quantized with quantize_agent_position(cell_size), headings in radians with
  /// quantize_heading; `kinds` may be empty (all 0). Sorted by id: skipped when the input is
  /// sorted, a counting sort keyed by the id when ids are below 4 n + 65536 (a swarm's), else a
  /// two-pass radix sort. Arrays of unequal length are cut to the shortest.
  /// Also indexes the agents by square tiles of 16 cells (more when the map would need over
  /// 65536 tiles), so a client's selection visits only the tiles its view overlaps.
  void assign(std::span<const std::uint32_t> ids_in, std::span<const float> xs_in, std::span<const float> ys_in,
              std::span<const float> headings_in, std::span<const std::uint8_t> kinds_in, float cell_size);

  /// Tile index: tile (tx, ty) holds agent indices tile_agents[tile_start[t] .. tile_start[t+1])
  /// with t = ty * tiles_x + tx; a tile is 2^tile_shift position units a side.
  unsigned tile_shift = 10;
  std::uint32_t tiles_x = 0, tiles_y = 0;
  std::vector<std::uint32_t> tile_start;
  std::vector<std::uint32_t> tile_agents;

 private:
  std::vector<std::uint32_t> order_, scratch_, radix_count_, by_id_;
};

/// A view rectangle in quantized position units (1/64 cell), [x0, x1) x [y0, y1).
struct QuantizedRect {
  std::int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  [[nodiscard]] constexpr bool empty() const noexcept { return x1 <= x0 || y1 <= y0; }
  /// Field by field (x0, y0, x1, y1): equal rectangles, and an order for sorting them.
  friend constexpr auto operator<=>(const QuantizedRect&, const QuantizedRect&) = default;
};
/// A view rectangle in world units grown by `margin` world units on every side, quantized
/// (non-finite values give an empty rectangle).
[[nodiscard]] QuantizedRect quantize_view(float x0, float y0, float x1, float y1, float margin, float cell_size) noexcept;

/// Whether `outer` contains `inner` (an empty `inner` is contained in anything).
[[nodiscard]] constexpr bool contains(const QuantizedRect& outer, const QuantizedRect& inner) noexcept {
  return inner.empty() ||
         (inner.x0 >= outer.x0 && inner.y0 >= outer.y0 && inner.x1 <= outer.x1 && inner.y1 <= outer.y1);
}
/// `r` clipped to `bounds` (an empty `bounds` = unknown: `r` unchanged); may come out empty.
[[nodiscard]] constexpr QuantizedRect clip(QuantizedRect r, const QuantizedRect& bounds) noexcept {
  if (bounds.empty()) return r;
  r.x0 = r.x0 > bounds.x0 ? r.x0 : bounds.x0;
  r.y0 = r.y0 > bounds.y0 ? r.y0 : bounds.y0;
  r.x1 = r.x1 < bounds.x1 ? r.x1 : bounds.x1;
  r.y1 = r.y1 < bounds.y1 ? r.y1 : bounds.y1;
  return r;
}
/// Area of the intersection of two rectangles, in square position units (0 if disjoint).
[[nodiscard]] std::int64_t intersection_area(const QuantizedRect& a, const QuantizedRect& b) noexcept;

/// The rectangle whose relevance a client's view shares with other clients' (SNAPSHOTS.md,
/// "Wiring"): `view` clipped to `bounds` (where every agent lies; empty = unknown, no
/// clipping), then grown outward, per axis, to multiples of a step, the power of two (position
/// units) that is at least 1/16 of the clipped extent on that axis and at least 2^min_step_shift
/// (pass QuantizedAgents::tile_shift: the shared relevance then visits whole tiles only), then
/// clipped to `bounds` again. Views a few cells apart, or differing only outside the bounds, snap
/// to the same rectangle, whatever their size: for an extent E the step is E/16 to E/8, so the
/// snapped rectangle is at most E/4 larger per axis (a whole 1024-cell map: 128-cell steps,
/// clipped to the map). The second clipping changes no agent's membership but keeps a whole-map
/// view's centre (the cap's and the weights' reference) at the map's centre. An empty result
/// is QuantizedRect{}.
[[nodiscard]] QuantizedRect snap_view(const QuantizedRect& view, unsigned min_step_shift,
                                      const QuantizedRect& bounds = {}) noexcept;

struct RelevanceParams {
  std::size_t max_tracked = 16384;  ///< agents tracked individually per client at most
  /// Estimated bits per updated and per added agent (the caller refines them from the encoder's
  /// stats, see SnapshotBudget).
  double update_bits = 6.0;
  double add_bits = 56.0;
  bool density_grid = true;  ///< count the untracked agents in the view in a density grid
};

struct RelevanceStats {
  std::size_t in_view = 0;     ///< agents inside the grown rectangle
  std::size_t tracked = 0;     ///< candidates (<= max_tracked)
  std::size_t sent = 0;        ///< candidates flagged to send
  std::size_t untracked = 0;   ///< in view but not in the client's frame after this snapshot (in the grid)
  bool over_budget = false;    ///< the allowance did not cover every candidate
};

/// Working memory of ViewRelevance::compute, O(agents in the world): one may serve every
/// relevance computed one after the other (the server's per tick), so that what each relevance
/// keeps is O(its tracked agents) only.
struct RelevanceScratch {
  std::vector<std::uint64_t> marked;     // bitmap over agent indices: inside the view
  std::vector<std::uint32_t> in_view;    // indices into the agents, id order
  std::vector<std::uint64_t> distances;  // per in_view
  std::vector<std::uint64_t> selection;  // nth_element's copy of distances, for the cap
};

/// What one view rectangle makes relevant, independent of any client's state, so that clients
/// with the same rectangle (e.g. every whole-map viewer) share it: the agents inside it, the
/// max_tracked of them nearest its centre (by id, with their distances), and the density counts
/// of the others. Computed once per snapshot tick and view; O(agents in view) (a bitmap over
/// tiles, then nth_element for the cap). Reused scratch: no allocation once warm.
class ViewRelevance {
 public:
  void compute(const QuantizedAgents& agents, const QuantizedRect& view, const RelevanceParams& params) {
    compute(agents, view, params, scratch_);
  }
  /// The same with working memory the caller shares between relevances.
  void compute(const QuantizedAgents& agents, const QuantizedRect& view, const RelevanceParams& params,
               RelevanceScratch& scratch);

  [[nodiscard]] const QuantizedRect& view() const noexcept { return view_; }
  [[nodiscard]] std::size_t max_tracked() const noexcept { return max_tracked_; }
  [[nodiscard]] bool density_grid() const noexcept { return density_grid_; }
  [[nodiscard]] std::size_t in_view() const noexcept { return in_view_count_; }
  /// In the view but beyond the cap (counted in counts()).
  [[nodiscard]] std::size_t untracked() const noexcept { return untracked_; }
  /// The tracked agents, by id, each with send = 1.
  [[nodiscard]] const AgentCandidates& tracked() const noexcept { return tracked_; }
  /// Whether tracked() passes candidates_valid() (checked once per compute(); false only when
  /// the agents' ids were not unique).
  [[nodiscard]] bool tracked_valid() const noexcept { return tracked_valid_; }
  /// Per tracked agent: squared distance to the view centre (in doubled position units).
  [[nodiscard]] const std::vector<std::uint64_t>& distances() const noexcept { return distances_; }
  /// Per tracked agent: its priority weight, 1 + round(7 x closeness to the centre) (1..8).
  [[nodiscard]] const std::vector<std::uint8_t>& weights() const noexcept { return weights_; }
  /// The density grid's geometry over the view (levels all 0) and the counts of the untracked
  /// agents laid out like its levels (empty when density_grid() is false).
  [[nodiscard]] const DensityGrid& grid_geometry() const noexcept { return geometry_; }
  [[nodiscard]] const std::vector<std::uint32_t>& counts() const noexcept { return counts_; }

 private:
  QuantizedRect view_;
  std::size_t max_tracked_ = 0;
  bool density_grid_ = true;
  std::size_t in_view_count_ = 0;
  std::size_t untracked_ = 0;
  AgentCandidates tracked_;
  bool tracked_valid_ = true;
  std::vector<std::uint64_t> distances_;
  std::vector<std::uint8_t> weights_;
  DensityGrid geometry_;
  std::vector<std::uint32_t> counts_;
  RelevanceScratch scratch_;  // for the first compute() form (empty otherwise)
};

/// One per client: besides scratch memory it remembers since when each relevant agent the client
/// does not have yet has been waiting, so that waiting agents age like unsent ones do and the
/// tracked set fills up however busy the budget is with updates.
class SnapshotSelector {
 public:
  /// Fills `out` with the candidates for one client (sorted by id) and their send flags, and
  /// `grid` with the density of the in-view agents the client will not hold. `baseline` is the
  /// frame the next snapshot is encoded against (SnapshotSender::next_baseline()); `tick` the
  /// snapshot's tick; `allowance_bytes` what this snapshot may spend on agents.
  void select(const QuantizedAgents& agents, const QuantizedRect& view, const AgentFrameView& baseline,
              std::uint32_t tick, double allowance_bytes, const RelevanceParams& params, AgentCandidates& out,
              DensityGrid& grid);
  /// The same from a view's relevance computed beforehand (shared by clients with that view;
  /// `params` must be the ones it was computed with): only the per-client part (priorities
  /// against the baseline, the budget, the client's waiting agents) runs here.
  void select(const ViewRelevance& relevance, const AgentFrameView& baseline, std::uint32_t tick,
              double allowance_bytes, const RelevanceParams& params, AgentCandidates& out, DensityGrid& grid);
  /// The same for a client whose own rectangle `view` lies inside the shared relevance's (see
  /// snap_view): the candidates are the relevance's tracked agents inside `view` (one pass over
  /// them; a plain copy when `view` contains the relevance's rectangle), so the client gets what
  /// a relevance of its own rectangle would give it, except that the cap (max_tracked nearest
  /// the centre), the nearness weights and the density grid are the shared rectangle's. A
  /// `view` not inside the relevance's rectangle gets the part the two share.
  void select(const ViewRelevance& relevance, const QuantizedRect& view, const AgentFrameView& baseline,
              std::uint32_t tick, double allowance_bytes, const RelevanceParams& params, AgentCandidates& out,
              DensityGrid& grid);
  /// The last form without copying the candidates: the relevance's tracked list itself when
  /// `view` contains the relevance's rectangle (else the selector's own list of those inside
  /// `view`) and the send flags apart. Valid until the next call or until the relevance
  /// changes. The same choice as select(), which copies it into `out` with the flags.
  [[nodiscard]] CandidateSelection choose(const ViewRelevance& relevance, const QuantizedRect& view,
                                          const AgentFrameView& baseline, std::uint32_t tick, double allowance_bytes,
                                          const RelevanceParams& params, DensityGrid& grid);
  [[nodiscard]] const RelevanceStats& stats() const noexcept { return stats_; }

 private:
  // select()'s two steps (snapshot_relevance.cpp, SNAPSHOTS.md "Relevance and budget", 3 and 4).
  std::size_t prioritize(const std::vector<std::uint8_t>& weights, const AgentFrameView& baseline, std::uint32_t tick,
                         std::span<const AgentCandidate> candidates);
  void spend_budget(std::size_t news, double allowance_bytes, const RelevanceParams& params, bool want_grid,
                    std::span<const AgentCandidate> candidates, DensityGrid& grid);

  RelevanceStats stats_;
  ViewRelevance relevance_;               // for the first select() form
  std::vector<std::uint16_t> priority_;   // per candidate: its bin, | 0x8000 if not in the baseline
  std::vector<std::uint8_t> send_;        // per candidate: sent this snapshot
  AgentCandidates own_;                   // the tracked agents inside a client's own rectangle
  std::vector<std::uint32_t> bin_new_, bin_known_;  // candidates per priority bin
  std::vector<std::uint32_t> counts_;     // density grid counts
  std::vector<std::uint8_t> weights_;     // per candidate, when a shared relevance was filtered to the view
  struct Waiting {
    std::uint32_t id;
    std::uint32_t since;  // tick it was first a candidate the client did not have
  };
  std::vector<Waiting> waiting_, next_waiting_;  // sorted by id
  std::vector<std::uint32_t> new_since_;         // per new candidate, in order: tick it started waiting
};

/// Per-client byte budget: a token bucket filled at the client's bit rate, spent by each
/// snapshot's real size, so a misestimate in one snapshot is paid back in the next; plus running
/// estimates of the bits per updated and per added agent from the encoder's stats.
class SnapshotBudget {
 public:
  /// `bits_per_second` (> 0) and `snapshots_per_second` (> 0). The bucket holds at most two
  /// snapshots' worth.
  SnapshotBudget(double bits_per_second, double snapshots_per_second) noexcept;
  /// Bytes the next snapshot may spend on agents (after `fixed_bytes` of header and grid).
  [[nodiscard]] double allowance(double fixed_bytes) noexcept;
  /// Records a snapshot of `payload_bytes` and what it carried.
  void spent(std::size_t payload_bytes, const SnapshotEncodeStats& stats) noexcept;
  /// The estimates for RelevanceParams.
  [[nodiscard]] double update_bits() const noexcept { return update_bits_; }
  [[nodiscard]] double add_bits() const noexcept { return add_bits_; }
  [[nodiscard]] double per_snapshot_bytes() const noexcept { return per_snapshot_; }

 private:
  double per_snapshot_;
  double tokens_;
  double update_bits_ = 6.0;
  double add_bits_ = 56.0;
};

}  // namespace swarmfield::protocol
