// Delta snapshot encoder (layout: protocol/SNAPSHOTS.md).
#include <algorithm>
#include <array>

#include "snapshot_codec_layout.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

namespace swarmfield::protocol {

using namespace detail;

bool SnapshotEncoder::encode(const SnapshotHeader& header, const AgentFrameView& baseline,
                             const AgentCandidates& candidates, const DensityGrid& grid,
                             std::vector<std::uint8_t>& payload, AgentFrame& frame) {
  frame.grid.clear();
  frame.sequence = header.sequence;
  frame.tick = header.tick;
  // Sized for the worst case; resize() only initializes what grew since the last call, the
  // final resize() shrinks.
  const std::size_t nb = header.baseline_distance == 0 ? 0 : baseline.size();
  frame.agents.resize(nb + candidates.size());
  std::size_t size = 0;
  if (!encode(header, baseline, candidates, grid, payload, frame.agents, size)) return false;
  frame.agents.resize(size);
  frame.grid = grid;
  return true;
}

bool SnapshotEncoder::encode(const SnapshotHeader& header, const AgentFrameView& baseline_in,
                             const AgentCandidates& c, const DensityGrid& grid, std::vector<std::uint8_t>& payload,
                             std::span<AgentState> frame_out, std::size_t& frame_size) {
  stats_ = {};
  frame_size = 0;
  const std::size_t n = c.size();
  if (header.baseline_distance > kSnapshotHistorySize) return false;
  const AgentFrameView b = header.baseline_distance == 0 ? AgentFrameView::empty() : baseline_in;
  if (header.baseline_distance != 0 &&
      (b.sequence != header.sequence - header.baseline_distance || b.tick >= header.tick)) {
    return false;
  }
  const std::uint32_t tick = header.tick;
  const bool predicted = header.predicted;
  const std::size_t nb = b.size();

  if (frame_out.size() < nb + n) return false;
  removed_.clear();
  runs_.clear();
  added_.clear();
  kind_changes_.clear();
  kind_values_.clear();
  escapes_.clear();

  // Candidates strictly increasing by id and in range, checked before anything is written.
  const AgentCandidate* cand = c.data();
  // No early exit: a branch-free pass (x | y exceeds kPositionMax iff x or y does).
  bool bad = n > 0 && (cand[0].x | cand[0].y) > kPositionMax;
  for (std::size_t k = 1; k < n; ++k) {
    bad |= (cand[k].id <= cand[k - 1].id) | ((cand[k].x | cand[k].y) > kPositionMax);
  }
  if (bad) return false;
  // Output written through pointers (no per-agent push_back), entries [0, f) in order and
  // nothing else: a caller may hand in memory that must not be touched beyond the frame.
  if (symbols_.size() < nb + n) symbols_.resize(nb + n);  // never shrunk: no re-initialization
  AgentState* out = frame_out.data();
  std::uint32_t* sym = symbols_.data();
  const AgentState* base = b.agents.data();
  std::size_t f = 0;  // frame entries written
  std::size_t u = 0;  // updated agents (symbols written)
  std::size_t moving = 0, stale = 0;  // locals: the loop's calls would force stats_ through memory

  // ---- Merge the baseline and the candidates (both sorted by id) ----------------------------
  std::size_t i = 0, j = 0;
  bool run_updated = true;  // runs alternate, the first one counting updated agents
  std::uint32_t run = 0;
  std::size_t kept = 0;
  auto add = [&](const AgentCandidate& cj) {
    if (cj.send) {
      added_.push_back(static_cast<std::uint32_t>(&cj - cand));
      out[f++] = AgentState{cj.id, cj.x, cj.y, tick, 0, 0, cj.heading, cj.kind};
    }
  };
  while (i < nb && j < n) {
    const AgentCandidate& cj = cand[j];
    if (base[i].id == cj.id && !cj.send) {
      // A run of kept agents not sent (most of a whole-map view's, whose budget refreshes a
      // few of its tracked agents per snapshot): copied as the baseline has them.
      if (run_updated) {
        runs_.push_back(run);
        run = 0;
        run_updated = false;
      }
      std::size_t s = 0;
      do {
        out[f + s] = base[i + s];
        ++s;
      } while (i + s < nb && j + s < n && base[i + s].id == cand[j + s].id && !cand[j + s].send);
      f += s;
      i += s;
      j += s;
      kept += s;
      stale += s;
      run += static_cast<std::uint32_t>(s);
      continue;
    }
    if (base[i].id < cj.id) {
      removed_.push_back(static_cast<std::uint32_t>(i));
      ++i;
      continue;
    }
    if (cj.id < base[i].id) {
      add(cj);
      ++j;
      continue;
    }
    // Kept: the same id on both sides.
    const AgentState& bi = base[i];
    ++kept;
    const bool update = cj.send != 0;
    if (update != run_updated) {
      runs_.push_back(run);
      run = 0;
      run_updated = update;
    }
    ++run;
    if (update) {
      const std::size_t ctx = speed_class(bi.vx, bi.vy);
      const std::uint32_t pdt = predicted ? prediction_ticks(bi.tick, tick) : 0;
      const std::uint32_t px = predict_coordinate_after(bi.x, bi.vx, pdt);
      const std::uint32_t py = predict_coordinate_after(bi.y, bi.vy, pdt);
      const auto rx = static_cast<std::int32_t>(cj.x) - static_cast<std::int32_t>(px);
      const auto ry = static_cast<std::int32_t>(cj.y) - static_cast<std::int32_t>(py);
      std::uint32_t ps = kPosEscape;
      if (static_cast<std::uint32_t>(rx + kPosRange) <= 2 * kPosRange &&
          static_cast<std::uint32_t>(ry + kPosRange) <= 2 * kPosRange) {
        ps = static_cast<std::uint32_t>(rx + kPosRange) * kPosSide + static_cast<std::uint32_t>(ry + kPosRange);
      } else {
        escapes_.push_back({zigzag_encode(rx), 0});
        escapes_.push_back({zigzag_encode(ry), 0});
      }
      const auto dh = static_cast<std::int32_t>(static_cast<std::int8_t>(cj.heading - bi.heading));
      std::uint32_t hs = kHeadEscape;
      if (static_cast<std::uint32_t>(dh + kHeadRange) <= 2 * kHeadRange) {
        hs = static_cast<std::uint32_t>(dh + kHeadRange);
      } else {
        escapes_.push_back({cj.heading, 1});
      }
      sym[u] = ps | (hs << 8) | (static_cast<std::uint32_t>(ctx) << 16);
      if (cj.kind != bi.kind) {
        kind_changes_.push_back(static_cast<std::uint32_t>(u));
        kind_values_.push_back(cj.kind);
      }
      moving += (cj.x != bi.x || cj.y != bi.y || cj.heading != bi.heading) ? 1 : 0;
      ++u;
      const std::uint32_t vdt = velocity_span_ticks(bi.tick, tick);
      out[f] = AgentState{bi.id,
                          cj.x,
                          cj.y,
                          tick,
                          update_velocity_over(bi.vx, bi.x, cj.x, vdt),
                          update_velocity_over(bi.vy, bi.y, cj.y, vdt),
                          cj.heading,
                          cj.kind};
    } else {
      ++stale;
      out[f] = bi;
    }
    ++f;
    ++i;
    ++j;
  }
  for (; i < nb; ++i) removed_.push_back(static_cast<std::uint32_t>(i));
  for (; j < n; ++j) add(cand[j]);
  if (kept > 0) runs_.push_back(run);
  frame_size = f;
  stats_.updated = u;
  stats_.moving = moving;
  stats_.stale = stale;
  if (f > kMaxFrameAgents) return false;
  stats_.removed = removed_.size();
  stats_.added = added_.size();

  // Symbol counts per speed class.
  std::array<std::array<std::uint32_t, kPosAlphabet>, kSpeedClasses> pos_counts{};
  std::array<std::array<std::uint32_t, kHeadAlphabet>, kSpeedClasses> head_counts{};
  for (std::size_t k = 0; k < u; ++k) {
    const std::uint32_t v = sym[k];
    ++pos_counts[v >> 16][v & 0xFF];
    ++head_counts[v >> 16][(v >> 8) & 0xFF];
  }

  // ---- Header (byte aligned) ---------------------------------------------------------------
  payload.clear();
  const std::size_t players = std::min(header.players.size(), kMaxSnapshotPlayers);
  put_u8(payload, kSnapshotFormat);
  put_u8(payload, static_cast<std::uint8_t>((predicted ? kFlagPredicted : 0) | (grid.empty() ? 0 : kFlagGrid)));
  put_u32(payload, header.sequence);
  put_u32(payload, tick);
  put_u8(payload, static_cast<std::uint8_t>(header.baseline_distance));
  put_u64(payload, header.echo_client_time_us);
  put_u32(payload, header.total_agents);
  put_u64(payload, header.rebuilds);
  put_u8(payload, static_cast<std::uint8_t>(players));
  for (std::size_t p = 0; p < players; ++p) {
    const PlayerState& ps = header.players[p];
    put_u32(payload, ps.id);
    put_f32(payload, ps.x);
    put_f32(payload, ps.y);
    put_u32(payload, ps.contacts);
  }
  stats_.header_bytes = payload.size() + 4;

  // ---- Bit section --------------------------------------------------------------------------
  bits_.clear();
  if (!grid.empty()) {
    write_density_grid(bits_, grid, *b.grid);
    stats_.grid_bits = bits_.bit_count();
  }
  // Removed: baseline indices as gaps.
  bits_.write_exp_golomb(static_cast<std::uint32_t>(removed_.size()), kCountOrder);
  if (!removed_.empty()) {
    std::uint64_t sum = 0;
    for (std::size_t k = 0; k < removed_.size(); ++k) sum += removed_[k] - (k ? removed_[k - 1] + 1 : 0);
    const unsigned order = order_for_mean(sum, removed_.size());
    bits_.write_bits(order, kOrderFieldBits);
    for (std::size_t k = 0; k < removed_.size(); ++k) {
      bits_.write_exp_golomb(removed_[k] - (k ? removed_[k - 1] + 1 : 0), order);
    }
  }
  // Kept agents: alternating runs updated / stale (the decoder knows how many are kept).
  if (kept > 0) {
    std::uint64_t sum = 0;
    for (std::uint32_t r : runs_) sum += r;
    const unsigned order = order_for_mean(sum, runs_.size());
    bits_.write_bits(order, kOrderFieldBits);
    for (std::uint32_t r : runs_) bits_.write_exp_golomb(r, order);
  }
  // Added agents: id gaps, positions in their bounding box, headings, kinds.
  const std::size_t added_from = bits_.bit_count();
  bits_.write_exp_golomb(static_cast<std::uint32_t>(added_.size()), kCountOrder);
  if (!added_.empty()) {
    const std::uint32_t first = c[added_[0]].id;
    std::uint64_t gap_sum = 0;
    std::uint32_t min_x = kPositionMax, min_y = kPositionMax, max_x = 0, max_y = 0;
    std::uint8_t kind0 = c[added_[0]].kind;
    bool one_kind = true;
    for (std::size_t k = 0; k < added_.size(); ++k) {
      const AgentCandidate& a = c[added_[k]];
      if (k > 0) gap_sum += a.id - c[added_[k - 1]].id - 1;
      min_x = std::min(min_x, a.x);
      max_x = std::max(max_x, a.x);
      min_y = std::min(min_y, a.y);
      max_y = std::max(max_y, a.y);
      one_kind = one_kind && a.kind == kind0;
    }
    const unsigned order = order_for_mean(gap_sum, added_.size() > 1 ? added_.size() - 1 : 1);
    bits_.write_bits(first, 32);
    bits_.write_bits(order, kOrderFieldBits);
    for (std::size_t k = 1; k < added_.size(); ++k) {
      bits_.write_exp_golomb(c[added_[k]].id - c[added_[k - 1]].id - 1, order);
    }
    const auto bits_x = static_cast<unsigned>(std::bit_width(max_x - min_x));
    const auto bits_y = static_cast<unsigned>(std::bit_width(max_y - min_y));
    bits_.write_bits(min_x, kPositionBits);
    bits_.write_bits(min_y, kPositionBits);
    bits_.write_bits(bits_x, kBitsFieldBits);
    bits_.write_bits(bits_y, kBitsFieldBits);
    for (std::uint32_t k : added_) {
      bits_.write_bits(c[k].x - min_x, bits_x);
      bits_.write_bits(c[k].y - min_y, bits_y);
      bits_.write_bits(c[k].heading, 8);
    }
    bits_.write_bool(one_kind);
    if (one_kind) {
      bits_.write_bits(kind0, 8);
    } else {
      for (std::uint32_t k : added_) bits_.write_bits(c[k].kind, 8);
    }
  }
  stats_.added_bits = bits_.bit_count() - added_from;
  // Kind changes of updated agents (rare: an agent's kind is usually fixed for life).
  bits_.write_exp_golomb(static_cast<std::uint32_t>(kind_changes_.size()), 0);
  for (std::size_t k = 0; k < kind_changes_.size(); ++k) {
    bits_.write_exp_golomb(kind_changes_[k] - (k ? kind_changes_[k - 1] + 1 : 0), kKindGapOrder);
    bits_.write_bits(kind_values_[k], 8);
  }
  // Frequency tables of the residual symbols, per speed class, then the escaped values.
  for (std::size_t ctx = 0; ctx < kSpeedClasses; ++ctx) {
    const bool used = pos_tables_[ctx].build(pos_counts[ctx]);
    bits_.write_bool(used);
    if (used) {
      pos_tables_[ctx].write(bits_);
      if (!head_tables_[ctx].build(head_counts[ctx])) return false;  // same agents: cannot fail
      head_tables_[ctx].write(bits_);
    }
  }
  const std::size_t escapes_from = bits_.bit_count();
  for (const Escape& e : escapes_) {
    if (e.kind == 0) {
      bits_.write_exp_golomb(e.value, kEscapeOrder);
    } else {
      bits_.write_bits(e.value, 8);
    }
  }
  stats_.escape_bits = bits_.bit_count() - escapes_from;
  const std::span<const std::uint8_t> bit_bytes = bits_.finish();
  put_u32(payload, static_cast<std::uint32_t>(bit_bytes.size()));
  payload.insert(payload.end(), bit_bytes.begin(), bit_bytes.end());
  stats_.bit_bytes = bit_bytes.size();

  // ---- rANS sections: position and heading symbols, coded last to first -------------------
  // Two streams with their own states: the two dependency chains of multiplies run side by side
  // (interleaved rANS, after F. Giesen's rans_byte interleaving).
  if (u > 0) {
    rans_.reset(u);
    rans_head_.reset(u);
    for (std::size_t k = u; k-- > 0;) {
      const std::uint32_t v = symbols_[k];
      const std::size_t ctx = v >> 16;
      rans_.put(pos_tables_[ctx], v & 0xFF);
      rans_head_.put(head_tables_[ctx], (v >> 8) & 0xFF);
    }
    const std::span<const std::uint8_t> rp = rans_.finish();
    const std::span<const std::uint8_t> rh = rans_head_.finish();
    put_u32(payload, static_cast<std::uint32_t>(rp.size()));
    payload.insert(payload.end(), rp.begin(), rp.end());
    payload.insert(payload.end(), rh.begin(), rh.end());
    stats_.rans_bytes = 4 + rp.size() + rh.size();
  }
  return true;
}

}  // namespace swarmfield::protocol
