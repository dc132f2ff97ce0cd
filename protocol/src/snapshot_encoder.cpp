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
  pos_symbols_.clear();
  head_symbols_.clear();
  contexts_.clear();
  escapes_.clear();
  frame.clear();
  frame.sequence = header.sequence;
  frame.tick = tick;

  std::array<std::array<std::uint32_t, kPosAlphabet>, kSpeedClasses> pos_counts{};
  std::array<std::array<std::uint32_t, kHeadAlphabet>, kSpeedClasses> head_counts{};

  // ---- Merge the baseline and the candidates (both sorted by id) ----------------------------
  std::size_t i = 0, j = 0;
  bool run_updated = true;  // runs alternate, the first one counting updated agents
  std::uint32_t run = 0;
  std::size_t kept = 0;
  while (i < b.size || j < n) {
    if (j < n) {
      if (j > 0 && c.ids[j] <= c.ids[j - 1]) return false;
      if (c.xs[j] > kPositionMax || c.ys[j] > kPositionMax) return false;
    }
    if (j >= n || (i < b.size && b.ids[i] < c.ids[j])) {
      removed_.push_back(static_cast<std::uint32_t>(i));
      ++i;
      continue;
    }
    if (i >= b.size || c.ids[j] < b.ids[i]) {
      if (c.send[j]) {
        added_.push_back(static_cast<std::uint32_t>(j));
        frame.ids.push_back(c.ids[j]);
        frame.xs.push_back(c.xs[j]);
        frame.ys.push_back(c.ys[j]);
        frame.headings.push_back(c.headings[j]);
        frame.kinds.push_back(c.kinds[j]);
        frame.vxs.push_back(0);
        frame.vys.push_back(0);
        frame.ticks.push_back(tick);
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
    frame.ids.push_back(b.ids[i]);
    if (update) {
      const std::size_t ctx = speed_class(b.vxs[i], b.vys[i]);
      const std::uint32_t px = predicted ? predict_coordinate(b.xs[i], b.vxs[i], b.ticks[i], tick) : b.xs[i];
      const std::uint32_t py = predicted ? predict_coordinate(b.ys[i], b.vys[i], b.ticks[i], tick) : b.ys[i];
      const auto rx = static_cast<std::int32_t>(c.xs[j]) - static_cast<std::int32_t>(px);
      const auto ry = static_cast<std::int32_t>(c.ys[j]) - static_cast<std::int32_t>(py);
      std::size_t ps = kPosEscape;
      if (rx >= -kPosRange && rx <= kPosRange && ry >= -kPosRange && ry <= kPosRange) {
        ps = static_cast<std::size_t>(rx + kPosRange) * kPosSide + static_cast<std::size_t>(ry + kPosRange);
      } else {
        escapes_.push_back({zigzag_encode(rx), 0});
        escapes_.push_back({zigzag_encode(ry), 0});
      }
      const auto dh = static_cast<std::int32_t>(static_cast<std::int8_t>(c.headings[j] - b.headings[i]));
      std::size_t hs = kHeadEscape;
      if (dh >= -kHeadRange && dh <= kHeadRange) {
        hs = static_cast<std::size_t>(dh + kHeadRange);
      } else {
        escapes_.push_back({c.headings[j], 1});
      }
      ++pos_counts[ctx][ps];
      ++head_counts[ctx][hs];
      pos_symbols_.push_back(static_cast<std::uint8_t>(ps));
      head_symbols_.push_back(static_cast<std::uint8_t>(hs));
      contexts_.push_back(static_cast<std::uint8_t>(ctx));
      if (c.kinds[j] != b.kinds[i]) {
        kind_changes_.push_back(static_cast<std::uint32_t>(stats_.updated));
        kind_values_.push_back(c.kinds[j]);
      }
      if (c.xs[j] != b.xs[i] || c.ys[j] != b.ys[i] || c.headings[j] != b.headings[i]) ++stats_.moving;
      ++stats_.updated;
      frame.xs.push_back(c.xs[j]);
      frame.ys.push_back(c.ys[j]);
      frame.headings.push_back(c.headings[j]);
      frame.kinds.push_back(c.kinds[j]);
      frame.vxs.push_back(update_velocity(b.vxs[i], b.xs[i], c.xs[j], b.ticks[i], tick));
      frame.vys.push_back(update_velocity(b.vys[i], b.ys[i], c.ys[j], b.ticks[i], tick));
      frame.ticks.push_back(tick);
    } else {
      ++stats_.stale;
      frame.xs.push_back(b.xs[i]);
      frame.ys.push_back(b.ys[i]);
      frame.headings.push_back(b.headings[i]);
      frame.kinds.push_back(b.kinds[i]);
      frame.vxs.push_back(b.vxs[i]);
      frame.vys.push_back(b.vys[i]);
      frame.ticks.push_back(b.ticks[i]);
    }
    ++i;
    ++j;
  }
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

  // ---- rANS section: residual symbols, coded last to first ---------------------------------
  if (!pos_symbols_.empty()) {
    rans_.reset();
    for (std::size_t k = pos_symbols_.size(); k-- > 0;) {
      const std::size_t ctx = contexts_[k];
      rans_.put(head_tables_[ctx], head_symbols_[k]);
      rans_.put(pos_tables_[ctx], pos_symbols_[k]);
    }
    const std::span<const std::uint8_t> r = rans_.finish();
    payload.insert(payload.end(), r.begin(), r.end());
    stats_.rans_bytes = r.size();
  }
  return true;
}

}  // namespace swarmfield::protocol
