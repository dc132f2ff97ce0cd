// Delta snapshot encoder (layout: protocol/SNAPSHOTS.md).
#include <algorithm>
#include <array>

#include "snapshot_codec_layout.hpp"
#include "swarmfield/protocol/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot_history.hpp"

namespace swarmfield::protocol {

using namespace detail;

void AgentCandidates::clear() noexcept {
  ids.clear();
  xs.clear();
  ys.clear();
  headings.clear();
  kinds.clear();
  send.clear();
}

void AgentCandidates::resize(std::size_t n) {
  ids.resize(n);
  xs.resize(n);
  ys.resize(n);
  headings.resize(n);
  kinds.resize(n);
  send.resize(n);
}

bool SnapshotEncoder::encode(const SnapshotHeader& header, const AgentFrameView& baseline_in,
                             const AgentCandidates& c, const DensityGrid& grid, std::vector<std::uint8_t>& payload,
                             AgentFrame& frame) {
  stats_ = {};
  const std::size_t n = c.ids.size();
  if (c.xs.size() != n || c.ys.size() != n || c.headings.size() != n || c.kinds.size() != n || c.send.size() != n) {
    return false;
  }
  if (header.baseline_distance > kSnapshotHistorySize) return false;
  const AgentFrameView b = header.baseline_distance == 0 ? AgentFrameView::empty() : baseline_in;
  if (header.baseline_distance != 0 &&
      (b.sequence != header.sequence - header.baseline_distance || b.tick >= header.tick)) {
    return false;
  }
  const std::uint32_t tick = header.tick;
  const bool predicted = header.predicted;

  removed_.clear();
  runs_.clear();
  added_.clear();
  kind_changes_.clear();
  kind_values_.clear();
  escapes_.clear();
  frame.grid.clear();
  frame.sequence = header.sequence;
  frame.tick = tick;

  std::array<std::array<std::uint32_t, kPosAlphabet>, kSpeedClasses> pos_counts{};
  std::array<std::array<std::uint32_t, kHeadAlphabet>, kSpeedClasses> head_counts{};

  // Output arrays sized for the worst case and written through pointers (no per-agent
  // push_back); resize() only initializes what grew since the last call, and the final
  // resize() shrinks without cost.
  const std::size_t worst = b.size + n;
  frame.resize(worst);
  pos_symbols_.resize(worst);
  head_symbols_.resize(worst);
  contexts_.resize(worst);
  std::uint32_t* f_ids = frame.ids.data();
  std::uint32_t* f_xs = frame.xs.data();
  std::uint32_t* f_ys = frame.ys.data();
  std::uint8_t* f_hs = frame.headings.data();
  std::uint8_t* f_ks = frame.kinds.data();
  std::int16_t* f_vxs = frame.vxs.data();
  std::int16_t* f_vys = frame.vys.data();
  std::uint32_t* f_ts = frame.ticks.data();
  std::uint8_t* ps_out = pos_symbols_.data();
  std::uint8_t* hs_out = head_symbols_.data();
  std::uint8_t* ctx_out = contexts_.data();
  std::size_t f = 0;  // frame entries written
  std::size_t u = 0;  // updated agents (symbols written)

  // ---- Merge the baseline and the candidates (both sorted by id) ----------------------------
  std::size_t i = 0, j = 0;
  bool run_updated = true;  // runs alternate, the first one counting updated agents
  std::uint32_t run = 0;
  std::size_t kept = 0;
  while (i < b.size || j < n) {
    if (j < n) {
      if ((j > 0 && c.ids[j] <= c.ids[j - 1]) || c.xs[j] > kPositionMax || c.ys[j] > kPositionMax) return false;
    }
    if (j >= n || (i < b.size && b.ids[i] < c.ids[j])) {
      removed_.push_back(static_cast<std::uint32_t>(i));
      ++i;
      continue;
    }
    if (i >= b.size || c.ids[j] < b.ids[i]) {
      if (c.send[j]) {
        added_.push_back(static_cast<std::uint32_t>(j));
        f_ids[f] = c.ids[j];
        f_xs[f] = c.xs[j];
        f_ys[f] = c.ys[j];
        f_hs[f] = c.headings[j];
        f_ks[f] = c.kinds[j];
        f_vxs[f] = 0;
        f_vys[f] = 0;
        f_ts[f] = tick;
        ++f;
      }
      ++j;
      continue;
    }
    // Kept: the same id on both sides.
    ++kept;
    const bool update = c.send[j] != 0;
    if (update != run_updated) {
      runs_.push_back(run);
      run = 0;
      run_updated = update;
    }
    ++run;
    f_ids[f] = b.ids[i];
    if (update) {
      const std::int16_t bvx = b.vxs[i], bvy = b.vys[i];
      const std::uint32_t bx = b.xs[i], by = b.ys[i], bt = b.ticks[i];
      const std::uint32_t cxv = c.xs[j], cyv = c.ys[j];
      const std::size_t ctx = speed_class(bvx, bvy);
      const std::uint32_t pdt = predicted ? prediction_ticks(bt, tick) : 0;
      const std::uint32_t px = predict_coordinate_after(bx, bvx, pdt);
      const std::uint32_t py = predict_coordinate_after(by, bvy, pdt);
      const auto rx = static_cast<std::int32_t>(cxv) - static_cast<std::int32_t>(px);
      const auto ry = static_cast<std::int32_t>(cyv) - static_cast<std::int32_t>(py);
      std::size_t ps = kPosEscape;
      if (static_cast<std::uint32_t>(rx + kPosRange) <= 2 * kPosRange &&
          static_cast<std::uint32_t>(ry + kPosRange) <= 2 * kPosRange) {
        ps = static_cast<std::size_t>(rx + kPosRange) * kPosSide + static_cast<std::size_t>(ry + kPosRange);
      } else {
        escapes_.push_back({zigzag_encode(rx), 0});
        escapes_.push_back({zigzag_encode(ry), 0});
      }
      const std::uint8_t ch = c.headings[j], bh = b.headings[i];
      const auto dh = static_cast<std::int32_t>(static_cast<std::int8_t>(ch - bh));
      std::size_t hs = kHeadEscape;
      if (static_cast<std::uint32_t>(dh + kHeadRange) <= 2 * kHeadRange) {
        hs = static_cast<std::size_t>(dh + kHeadRange);
      } else {
        escapes_.push_back({ch, 1});
      }
      ps_out[u] = static_cast<std::uint8_t>(ps);
      hs_out[u] = static_cast<std::uint8_t>(hs);
      ctx_out[u] = static_cast<std::uint8_t>(ctx);
      const std::uint8_t ck = c.kinds[j];
      if (ck != b.kinds[i]) {
        kind_changes_.push_back(static_cast<std::uint32_t>(u));
        kind_values_.push_back(ck);
      }
      stats_.moving += (cxv != bx || cyv != by || ch != bh) ? 1 : 0;
      ++u;
      f_xs[f] = cxv;
      f_ys[f] = cyv;
      f_hs[f] = ch;
      f_ks[f] = ck;
      const std::uint32_t vdt = velocity_span_ticks(bt, tick);
      f_vxs[f] = update_velocity_over(bvx, bx, cxv, vdt);
      f_vys[f] = update_velocity_over(bvy, by, cyv, vdt);
      f_ts[f] = tick;
    } else {
      ++stats_.stale;
      f_xs[f] = b.xs[i];
      f_ys[f] = b.ys[i];
      f_hs[f] = b.headings[i];
      f_ks[f] = b.kinds[i];
      f_vxs[f] = b.vxs[i];
      f_vys[f] = b.vys[i];
      f_ts[f] = b.ticks[i];
    }
    ++f;
    ++i;
    ++j;
  }
  // Symbol counts (a pass of their own keeps the merge loop short).
  for (std::size_t k = 0; k < u; ++k) {
    ++pos_counts[ctx_out[k]][ps_out[k]];
    ++head_counts[ctx_out[k]][hs_out[k]];
  }
  frame.resize(f);
  pos_symbols_.resize(u);
  head_symbols_.resize(u);
  contexts_.resize(u);
  stats_.updated = u;
  if (kept > 0) runs_.push_back(run);
  if (frame.ids.size() > kMaxFrameAgents) return false;
  frame.grid = grid;
  stats_.removed = removed_.size();
  stats_.added = added_.size();

  // ---- Header (byte aligned) ---------------------------------------------------------------
  payload.clear();
  const std::size_t players = std::min(header.players.size(), kMaxPlayersPerSnapshot);
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
  bits_.write_exp_golomb(static_cast<std::uint32_t>(added_.size()), kCountOrder);
  if (!added_.empty()) {
    const std::uint32_t first = c.ids[added_[0]];
    std::uint64_t gap_sum = 0;
    std::uint32_t min_x = kPositionMax, min_y = kPositionMax, max_x = 0, max_y = 0;
    std::uint8_t kind0 = c.kinds[added_[0]];
    bool one_kind = true;
    for (std::size_t k = 0; k < added_.size(); ++k) {
      const std::uint32_t a = added_[k];
      if (k > 0) gap_sum += c.ids[a] - c.ids[added_[k - 1]] - 1;
      min_x = std::min(min_x, c.xs[a]);
      max_x = std::max(max_x, c.xs[a]);
      min_y = std::min(min_y, c.ys[a]);
      max_y = std::max(max_y, c.ys[a]);
      one_kind = one_kind && c.kinds[a] == kind0;
    }
    const unsigned order = order_for_mean(gap_sum, added_.size() > 1 ? added_.size() - 1 : 1);
    bits_.write_bits(first, 32);
    bits_.write_bits(order, kOrderFieldBits);
    for (std::size_t k = 1; k < added_.size(); ++k) {
      bits_.write_exp_golomb(c.ids[added_[k]] - c.ids[added_[k - 1]] - 1, order);
    }
    const auto bits_x = static_cast<unsigned>(std::bit_width(max_x - min_x));
    const auto bits_y = static_cast<unsigned>(std::bit_width(max_y - min_y));
    bits_.write_bits(min_x, kPositionBits);
    bits_.write_bits(min_y, kPositionBits);
    bits_.write_bits(bits_x, kBitsFieldBits);
    bits_.write_bits(bits_y, kBitsFieldBits);
    for (std::uint32_t a : added_) {
      bits_.write_bits(c.xs[a] - min_x, bits_x);
      bits_.write_bits(c.ys[a] - min_y, bits_y);
      bits_.write_bits(c.headings[a], 8);
    }
    bits_.write_bool(one_kind);
    if (one_kind) {
      bits_.write_bits(kind0, 8);
    } else {
      for (std::uint32_t a : added_) bits_.write_bits(c.kinds[a], 8);
    }
  }
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
  for (const Escape& e : escapes_) {
    if (e.kind == 0) {
      bits_.write_exp_golomb(e.value, kEscapeOrder);
    } else {
      bits_.write_bits(e.value, 8);
    }
  }
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
      const std::size_t ctx = ctx_out[k];
      rans_.put(pos_tables_[ctx], ps_out[k]);
      rans_head_.put(head_tables_[ctx], hs_out[k]);
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
