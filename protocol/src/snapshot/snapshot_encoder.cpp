// Delta snapshot encoder (layout: protocol/SNAPSHOTS.md). encode() is the list of its steps, one
// per section of that file: the inputs checked, the merge of baseline and candidates (the model),
// the header, the bit section's parts in their order, the residual streams.
#include <algorithm>
#include <array>
#include <span>

#include "snapshot_codec_layout.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

namespace swarmfield::protocol {

using namespace detail;

namespace {

/// A non-empty strictly increasing index list as SNAPSHOTS.md codes it after its count: a 5-bit
/// Exp-Golomb order fitted to the mean gap, then each gap to the previous index + 1.
void write_index_gaps(BitWriter& bits, std::span<const std::uint32_t> indices) {
  std::uint64_t sum = 0;
  for (std::size_t k = 0; k < indices.size(); ++k) sum += indices[k] - (k ? indices[k - 1] + 1 : 0);
  const unsigned order = order_for_mean(sum, indices.size());
  bits.write_bits(order, kOrderFieldBits);
  for (std::size_t k = 0; k < indices.size(); ++k) bits.write_exp_golomb(indices[k] - (k ? indices[k - 1] + 1 : 0), order);
}

}  // namespace

bool candidates_valid(std::span<const AgentCandidate> candidates) noexcept {
  const std::size_t count = candidates.size();
  const AgentCandidate* cand = candidates.data();
  // No early exit: a branch-free pass (x | y exceeds kPositionMax iff x or y does).
  bool bad = count > 0 && (cand[0].x | cand[0].y) > kPositionMax;
  for (std::size_t k = 1; k < count; ++k) {
    bad |= (cand[k].id <= cand[k - 1].id) | ((cand[k].x | cand[k].y) > kPositionMax);
  }
  return !bad;
}

bool SnapshotEncoder::encode(const SnapshotHeader& header, const AgentFrameView& baseline,
                             const AgentCandidates& candidates, const DensityGrid& grid,
                             std::vector<std::uint8_t>& payload, AgentFrame& frame) {
  return encode_into_frame(header, baseline, candidates, candidates.size(), grid, payload, frame);
}

bool SnapshotEncoder::encode(const SnapshotHeader& header, const AgentFrameView& baseline,
                             const CandidateSelection& selection, const DensityGrid& grid,
                             std::vector<std::uint8_t>& payload, AgentFrame& frame) {
  return encode_into_frame(header, baseline, selection, selection.candidates.size(), grid, payload, frame);
}

template <class Candidates>
bool SnapshotEncoder::encode_into_frame(const SnapshotHeader& header, const AgentFrameView& baseline,
                                        const Candidates& candidates, std::size_t count, const DensityGrid& grid,
                                        std::vector<std::uint8_t>& payload, AgentFrame& frame) {
  frame.grid.clear();
  frame.sequence = header.sequence;
  frame.tick = header.tick;
  // Sized for the worst case; resize() only initializes what grew since the last call, the
  // final resize() shrinks.
  const std::size_t base_count = header.baseline_distance == 0 ? 0 : baseline.size();
  frame.agents.resize(base_count + count);
  std::size_t size = 0;
  if (!encode(header, baseline, candidates, grid, payload, frame.agents, size)) return false;
  frame.agents.resize(size);
  frame.grid = grid;
  return true;
}

bool SnapshotEncoder::encode(const SnapshotHeader& header, const AgentFrameView& baseline,
                             const AgentCandidates& candidates, const DensityGrid& grid,
                             std::vector<std::uint8_t>& payload, std::span<AgentState> frame_out,
                             std::size_t& frame_size) {
  const std::uint8_t* send = candidates.empty() ? nullptr : &candidates.data()->send;
  return encode_impl<sizeof(AgentCandidate)>(header, baseline, candidates, send, false, grid, payload, frame_out,
                                             frame_size);
}

bool SnapshotEncoder::encode(const SnapshotHeader& header, const AgentFrameView& baseline,
                             const CandidateSelection& selection, const DensityGrid& grid,
                             std::vector<std::uint8_t>& payload, std::span<AgentState> frame_out,
                             std::size_t& frame_size) {
  if (selection.send.size() != selection.candidates.size()) {
    stats_ = {};
    frame_size = 0;
    return false;
  }
  return encode_impl<1>(header, baseline, selection.candidates, selection.send.data(), selection.checked, grid,
                        payload, frame_out, frame_size);
}

template <std::size_t Stride>
bool SnapshotEncoder::encode_impl(const SnapshotHeader& header, const AgentFrameView& baseline_in,
                                  std::span<const AgentCandidate> candidates, const std::uint8_t* send,
                                  bool checked, const DensityGrid& grid, std::vector<std::uint8_t>& payload,
                                  std::span<AgentState> frame_out, std::size_t& frame_size) {
  stats_ = {};
  frame_size = 0;
  if (header.baseline_distance > kSnapshotHistorySize || header.precision_shift > kMaxPrecisionShift) return false;
  const AgentFrameView baseline = header.baseline_distance == 0 ? AgentFrameView::empty() : baseline_in;
  if (header.baseline_distance != 0 &&
      (baseline.sequence != header.sequence - header.baseline_distance || baseline.tick >= header.tick)) {
    return false;
  }
  if (frame_out.size() < baseline.size() + candidates.size()) return false;
  removed_.clear();
  died_.clear();
  runs_.clear();
  added_.clear();
  kind_changes_.clear();
  kind_values_.clear();
  escapes_.clear();
  if (!checked && !candidates_valid(candidates)) return false;

  // The model: the frame the client will hold, and what the sections below say about it.
  const Merged merged =
      merge<Stride>(baseline, candidates, send, header.tick, header.predicted, header.precision_shift, frame_out.data());
  frame_size = merged.written;
  stats_.updated = merged.updated;
  stats_.moving = merged.moving;
  stats_.stale = merged.stale;
  if (merged.written > kMaxFrameAgents) return false;
  stats_.removed = removed_.size();
  stats_.added = added_.size();

  write_header(header, !grid.empty(), payload);
  // The bit section, in the order of SNAPSHOTS.md.
  bits_.clear();
  if (!grid.empty()) {
    write_density_grid(bits_, grid, *baseline.grid);
    stats_.grid_bits = bits_.bit_count();
  }
  write_removed(baseline);
  if (merged.kept > 0) write_kept_runs(merged.kept);
  write_added(candidates);
  write_kind_changes();
  if (!write_tables(merged.updated)) return false;
  write_escapes();
  const std::span<const std::uint8_t> bit_bytes = bits_.finish();
  put_u32(payload, static_cast<std::uint32_t>(bit_bytes.size()));
  payload.insert(payload.end(), bit_bytes.begin(), bit_bytes.end());
  stats_.bit_bytes = bit_bytes.size();

  if (merged.updated > 0) write_residual_streams(merged.updated, payload);
  return true;
}

// ---- Merge the baseline and the candidates (both sorted by id) ----------------------------------
// Output written through pointers (no per-agent push_back), entries [0, written) in order and
// nothing else: a caller may hand in memory that must not be touched beyond the frame. Fills
// removed_, the kept agents' run keys and flags, added_, kind changes, escapes and one residual
// symbol per updated agent. Send flag k is send[k * Stride] (in the candidates themselves, or a
// separate array).
template <std::size_t Stride>
SnapshotEncoder::Merged SnapshotEncoder::merge(const AgentFrameView& baseline,
                                                std::span<const AgentCandidate> candidates, const std::uint8_t* send,
                                                std::uint32_t tick, bool predicted, unsigned shift, AgentState* out) {
  const std::size_t base_count = baseline.size();
  const std::size_t cand_count = candidates.size();
  // Never shrunk: no re-initialization.
  if (symbols_.size() < base_count + cand_count) symbols_.resize(base_count + cand_count);
  const AgentCandidate* cand = candidates.data();
  std::uint32_t* sym = symbols_.data();
  const AgentState* base = baseline.agents.data();
  std::size_t written = 0;  // frame entries written
  std::size_t updated = 0;  // updated agents (symbols written)
  std::size_t moving = 0, stale = 0;  // locals: the loop's calls would force stats_ through memory

  const unsigned hshift = heading_shift(shift);
  std::size_t base_index = 0, cand_index = 0;
  // Per kept agent in id order: its key in section 3's order and whether it is updated.
  if (kept_key_.size() < base_count) {
    kept_key_.resize(base_count);
    kept_flag_.resize(base_count);
  }
  std::uint8_t* kept_key = kept_key_.data();
  std::uint8_t* kept_flag = kept_flag_.data();
  std::size_t kept = 0;
  const auto sent = [send](std::size_t k) { return send[k * Stride] != 0; };
  auto add = [&](std::size_t k) {
    const AgentCandidate& added = cand[k];
    if (sent(k)) {
      added_.push_back(static_cast<std::uint32_t>(k));
      out[written++] = AgentState{added.id, added.x, added.y, tick, 0, 0, added.heading, added.kind};
    }
  };
  while (base_index < base_count && cand_index < cand_count) {
    const AgentCandidate& next = cand[cand_index];
    if (base[base_index].id == next.id && !sent(cand_index)) {
      // A run of kept agents not sent (most of a whole-map view's, whose budget refreshes a
      // few of its tracked agents per snapshot): copied as the baseline has them.
      std::size_t length = 0;
      do {
        out[written + length] = base[base_index + length];
        kept_key[kept + length] = run_order_key(base[base_index + length].tick, tick);
        kept_flag[kept + length] = 0;
        ++length;
      } while (base_index + length < base_count && cand_index + length < cand_count &&
               base[base_index + length].id == cand[cand_index + length].id && !sent(cand_index + length));
      written += length;
      base_index += length;
      cand_index += length;
      kept += length;
      stale += length;
      continue;
    }
    if (base[base_index].id < next.id) {
      removed_.push_back(static_cast<std::uint32_t>(base_index));
      ++base_index;
      continue;
    }
    if (next.id < base[base_index].id) {
      add(cand_index);
      ++cand_index;
      continue;
    }
    // Kept: the same id on both sides.
    const AgentState& was = base[base_index];
    const bool update = sent(cand_index);
    kept_key[kept] = run_order_key(was.tick, tick);
    kept_flag[kept] = update ? 1 : 0;
    ++kept;
    if (update) {
      const std::size_t ctx = speed_class(was.vx, was.vy);
      const std::uint32_t pdt = predicted ? prediction_ticks(was.tick, tick) : 0;
      const std::uint32_t px = predict_coordinate_after(was.x, was.vx, pdt);
      const std::uint32_t py = predict_coordinate_after(was.y, was.vy, pdt);
      // In steps of 2^shift units: the frame (both ends) holds the prediction plus whole steps.
      const std::int32_t rx = coarse_residual(next.x, px, shift);
      const std::int32_t ry = coarse_residual(next.y, py, shift);
      const auto nx = static_cast<std::uint32_t>(coarse_coordinate(px, rx, shift));
      const auto ny = static_cast<std::uint32_t>(coarse_coordinate(py, ry, shift));
      std::uint32_t ps = kPosEscape;
      if (static_cast<std::uint32_t>(rx + kPosRange) <= 2 * kPosRange &&
          static_cast<std::uint32_t>(ry + kPosRange) <= 2 * kPosRange) {
        // The symbol in the baseline velocity's frame; an escape carries (rx, ry) as they are.
        const auto [a, b] = to_velocity_frame(velocity_frame(was.vx, was.vy), rx, ry);
        ps = static_cast<std::uint32_t>(a + kPosRange) * kPosSide + static_cast<std::uint32_t>(b + kPosRange);
      } else {
        escapes_.push_back({zigzag_encode(rx), 0});
        escapes_.push_back({zigzag_encode(ry), 0});
      }
      // The heading in steps of 2^heading_shift: the frame holds the baseline's plus whole steps.
      const std::int32_t dh = coarse_heading_delta(next.heading, was.heading, hshift);
      const std::uint8_t heading = coarse_heading(was.heading, dh, hshift);
      std::uint32_t hs = kHeadEscape;
      if (static_cast<std::uint32_t>(dh + kHeadRange) <= 2 * kHeadRange) {
        hs = static_cast<std::uint32_t>(dh + kHeadRange);
      } else {
        escapes_.push_back({heading, 1});
      }
      sym[updated] = ps | (hs << 8) | (static_cast<std::uint32_t>(ctx) << 16);
      if (next.kind != was.kind) {
        kind_changes_.push_back(static_cast<std::uint32_t>(updated));
        kind_values_.push_back(next.kind);
      }
      moving += (next.x != was.x || next.y != was.y || next.heading != was.heading) ? 1 : 0;
      ++updated;
      const std::uint32_t vdt = velocity_span_ticks(was.tick, tick);
      out[written] = AgentState{was.id,
                                nx,
                                ny,
                                tick,
                                update_velocity_over(was.vx, was.x, nx, vdt),
                                update_velocity_over(was.vy, was.y, ny, vdt),
                                heading,
                                next.kind};
    } else {
      ++stale;
      out[written] = was;
    }
    ++written;
    ++base_index;
    ++cand_index;
  }
  for (; base_index < base_count; ++base_index) removed_.push_back(static_cast<std::uint32_t>(base_index));
  for (; cand_index < cand_count; ++cand_index) add(cand_index);
  return Merged{written, updated, kept, moving, stale};
}

// ---- Header (byte aligned), then the players ----------------------------------------------------
void SnapshotEncoder::write_header(const SnapshotHeader& header, bool has_grid, std::vector<std::uint8_t>& payload) {
  payload.clear();
  const std::size_t players = std::min(header.players.size(), kMaxSnapshotPlayers);
  put_u8(payload, kSnapshotFormat);
  put_u8(payload, static_cast<std::uint8_t>((header.predicted ? kFlagPredicted : 0) | (has_grid ? kFlagGrid : 0) |
                                            (header.precision_shift << kShiftFlagPos)));
  put_u32(payload, header.sequence);
  put_u32(payload, header.tick);
  put_u8(payload, static_cast<std::uint8_t>(header.baseline_distance));
  put_u64(payload, header.echo_client_time_us);
  put_u32(payload, header.total_agents);
  put_u64(payload, header.rebuilds);
  put_u32(payload, header.wave);
  put_u8(payload, static_cast<std::uint8_t>(players));
  for (std::size_t p = 0; p < players; ++p) {
    const PlayerState& player = header.players[p];
    put_u32(payload, player.id);
    put_f32(payload, player.x);
    put_f32(payload, player.y);
    put_u32(payload, player.contacts);
    put_f32(payload, player.health);
    put_u32(payload, player.kills);
    put_u32(payload, player.shots);
    put_u64(payload, static_cast<std::uint64_t>(player.score));
    put_u8(payload, player.aim);
  }
  stats_.header_bytes = payload.size() + 4;
}

// ---- Bit section 2: removed, and which of them died --------------------------------------------
// Baseline indices as gaps; then the deaths among them as gaps in the removed list.
void SnapshotEncoder::write_removed(const AgentFrameView& baseline) {
  bits_.write_exp_golomb(static_cast<std::uint32_t>(removed_.size()), kCountOrder);
  if (removed_.empty()) return;
  write_index_gaps(bits_, removed_);
  // Both lists are sorted by id (removed_ holds increasing baseline indices): one merge.
  std::size_t d = 0;
  for (std::size_t k = 0; k < removed_.size() && d < recent_deaths_.size(); ++k) {
    const std::uint32_t id = baseline.agents[removed_[k]].id;
    while (d < recent_deaths_.size() && recent_deaths_[d] < id) ++d;
    if (d < recent_deaths_.size() && recent_deaths_[d] == id) died_.push_back(static_cast<std::uint32_t>(k));
  }
  stats_.died = died_.size();
  bits_.write_exp_golomb(static_cast<std::uint32_t>(died_.size()), kCountOrder);
  if (!died_.empty()) write_index_gaps(bits_, died_);
}

// ---- Bit section 3: kept agents -----------------------------------------------------------------
// Alternating runs updated / stale (the decoder knows how many are kept), in the order of
// run_order_key (oldest update first, ties by id).
void SnapshotEncoder::write_kept_runs(std::size_t kept) {
  std::array<std::uint32_t, 256> offsets = run_order_offsets(std::span(kept_key_.data(), kept));
  if (aged_flag_.size() < kept) aged_flag_.resize(kept);
  for (std::size_t k = 0; k < kept; ++k) aged_flag_[offsets[kept_key_[k]]++] = kept_flag_[k];
  runs_.clear();
  bool run_updated = true;  // runs alternate, the first one counting updated agents
  std::uint32_t run = 0;
  for (std::size_t k = 0; k < kept; ++k) {
    const bool update = aged_flag_[k] != 0;
    if (update != run_updated) {
      runs_.push_back(run);
      run = 0;
      run_updated = update;
    }
    ++run;
  }
  runs_.push_back(run);
  std::uint64_t sum = 0;
  for (std::uint32_t r : runs_) sum += r;
  const unsigned order = order_for_mean(sum, runs_.size());
  bits_.write_bits(order, kOrderFieldBits);
  for (std::uint32_t r : runs_) bits_.write_exp_golomb(r, order);
}

// ---- Bit section 4: added agents ----------------------------------------------------------------
// Id gaps, positions in their bounding box, headings, kinds.
void SnapshotEncoder::write_added(std::span<const AgentCandidate> candidates) {
  const std::size_t added_from = bits_.bit_count();
  bits_.write_exp_golomb(static_cast<std::uint32_t>(added_.size()), kCountOrder);
  if (!added_.empty()) {
    const std::uint32_t first = candidates[added_[0]].id;
    std::uint64_t gap_sum = 0;
    std::uint32_t min_x = kPositionMax, min_y = kPositionMax, max_x = 0, max_y = 0;
    std::uint8_t kind0 = candidates[added_[0]].kind;
    bool one_kind = true;
    for (std::size_t k = 0; k < added_.size(); ++k) {
      const AgentCandidate& a = candidates[added_[k]];
      if (k > 0) gap_sum += a.id - candidates[added_[k - 1]].id - 1;
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
      bits_.write_exp_golomb(candidates[added_[k]].id - candidates[added_[k - 1]].id - 1, order);
    }
    const auto bits_x = static_cast<unsigned>(std::bit_width(max_x - min_x));
    const auto bits_y = static_cast<unsigned>(std::bit_width(max_y - min_y));
    bits_.write_bits(min_x, kPositionBits);
    bits_.write_bits(min_y, kPositionBits);
    bits_.write_bits(bits_x, kBitsFieldBits);
    bits_.write_bits(bits_y, kBitsFieldBits);
    for (std::uint32_t k : added_) {
      bits_.write_bits(candidates[k].x - min_x, bits_x);
      bits_.write_bits(candidates[k].y - min_y, bits_y);
      bits_.write_bits(candidates[k].heading, 8);
    }
    bits_.write_bool(one_kind);
    if (one_kind) {
      bits_.write_bits(kind0, 8);
    } else {
      for (std::uint32_t k : added_) bits_.write_bits(candidates[k].kind, 8);
    }
  }
  stats_.added_bits = bits_.bit_count() - added_from;
}

// ---- Bit section 5: kind changes ----------------------------------------------------------------
// Of updated agents (rare: an agent's kind is usually fixed for life).
void SnapshotEncoder::write_kind_changes() {
  bits_.write_exp_golomb(static_cast<std::uint32_t>(kind_changes_.size()), 0);
  for (std::size_t k = 0; k < kind_changes_.size(); ++k) {
    bits_.write_exp_golomb(kind_changes_[k] - (k ? kind_changes_[k - 1] + 1 : 0), kKindGapOrder);
    bits_.write_bits(kind_values_[k], 8);
  }
}

// ---- Bit section 6: frequency tables ------------------------------------------------------------
// Of the residual symbols of the `updated` agents, per speed class (kSpeedClasses).
bool SnapshotEncoder::write_tables(std::size_t updated) {
  std::array<std::array<std::uint32_t, kPosAlphabet>, kSpeedClasses> pos_counts{};
  std::array<std::array<std::uint32_t, kHeadAlphabet>, kSpeedClasses> head_counts{};
  const std::uint32_t* sym = symbols_.data();
  for (std::size_t k = 0; k < updated; ++k) {
    const std::uint32_t v = sym[k];
    ++pos_counts[v >> 16][v & 0xFF];
    ++head_counts[v >> 16][(v >> 8) & 0xFF];
  }
  for (std::size_t ctx = 0; ctx < kSpeedClasses; ++ctx) {
    const bool used = pos_tables_[ctx].build(pos_counts[ctx]);
    bits_.write_bool(used);
    if (used) {
      pos_tables_[ctx].write(bits_);
      if (!head_tables_[ctx].build(head_counts[ctx])) return false;  // same agents: cannot fail
      head_tables_[ctx].write(bits_);
    }
  }
  return true;
}

// ---- Bit section 7: escapes ---------------------------------------------------------------------
// The escaped values, in updated-agent order.
void SnapshotEncoder::write_escapes() {
  const std::size_t escapes_from = bits_.bit_count();
  for (const Escape& e : escapes_) {
    if (e.kind == 0) {
      bits_.write_exp_golomb(e.value, kEscapeOrder);
    } else {
      bits_.write_bits(e.value, 8);
    }
  }
  stats_.escape_bits = bits_.bit_count() - escapes_from;
}

// ---- rANS sections: position and heading symbols, coded last to first ---------------------------
// Two streams with their own states: the two dependency chains of multiplies run side by side
// (interleaved rANS, after F. Giesen's rans_byte interleaving).
void SnapshotEncoder::write_residual_streams(std::size_t updated, std::vector<std::uint8_t>& payload) {
  rans_.reset(updated);
  rans_head_.reset(updated);
  for (std::size_t k = updated; k-- > 0;) {
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

}  // namespace swarmfield::protocol
