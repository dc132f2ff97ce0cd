// Delta snapshot decoder: every value from the wire is range-checked before use (layout:
// protocol/SNAPSHOTS.md).
#include <cmath>
#include <string>

#include "fail.hpp"
#include "snapshot_codec_layout.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

namespace swarmfield::protocol {

using namespace detail;

bool read_snapshot_prelude(std::span<const std::uint8_t> p, SnapshotPrelude& out) noexcept {
  if (p.size() < kSnapshotHeaderBytes || p[0] != kSnapshotFormat) return false;
  out.sequence = get_u32(p, 2);
  out.tick = get_u32(p, 6);
  out.baseline_distance = p[10];
  return out.baseline_distance <= kSnapshotHistorySize && (out.baseline_distance == 0 || out.sequence > out.baseline_distance);
}

bool SnapshotDecoder::decode(std::span<const std::uint8_t> p, const AgentFrameView& baseline_in, SnapshotHeader& header,
                             AgentFrame& frame, std::string* error) {
  // ---- Header -------------------------------------------------------------------------------
  SnapshotPrelude prelude;
  if (!read_snapshot_prelude(p, prelude)) return fail(error, "not a snapshot, or baseline distance out of range");
  const std::uint8_t flags = p[1];
  if ((flags & ~kKnownFlags) != 0) return fail(error, "unknown snapshot flags");
  const AgentFrameView b = prelude.baseline_distance == 0 ? AgentFrameView::empty() : baseline_in;
  if (prelude.baseline_distance != 0) {
    if (b.sequence != prelude.sequence - prelude.baseline_distance) return fail(error, "wrong baseline frame");
    if (b.tick >= prelude.tick) return fail(error, "tick not after the baseline's");
  }
  header.sequence = prelude.sequence;
  header.tick = prelude.tick;
  header.baseline_distance = prelude.baseline_distance;
  header.predicted = (flags & kFlagPredicted) != 0;
  header.echo_client_time_us = get_u64(p, 11);
  header.total_agents = get_u32(p, 19);
  header.rebuilds = get_u64(p, 23);
  const std::size_t players = p[31];  // <= kMaxSnapshotPlayers by its width
  std::size_t at = kSnapshotHeaderBytes;
  if (p.size() < at + players * kSnapshotPlayerBytes + 4) return fail(error, "snapshot truncated in the players");
  header.players.resize(players);
  for (std::size_t k = 0; k < players; ++k, at += kSnapshotPlayerBytes) {
    PlayerState& ps = header.players[k];
    ps.id = get_u32(p, at);
    ps.x = std::bit_cast<float>(get_u32(p, at + 4));
    ps.y = std::bit_cast<float>(get_u32(p, at + 8));
    ps.contacts = get_u32(p, at + 12);
    if (!std::isfinite(ps.x) || !std::isfinite(ps.y)) return fail(error, "player position not finite");
  }
  const std::uint32_t bit_len = get_u32(p, at);
  at += 4;
  if (bit_len > p.size() - at) return fail(error, "bit section longer than the snapshot");
  BitReader in(p.subspan(at, bit_len));
  const std::span<const std::uint8_t> rans_bytes = p.subspan(at + bit_len);
  const std::uint32_t tick = header.tick;
  const bool predicted = header.predicted;

  // ---- Bit section --------------------------------------------------------------------------
  frame.grid.clear();
  frame.sequence = header.sequence;
  frame.tick = tick;
  if ((flags & kFlagGrid) != 0) {
    if (!read_density_grid(in, frame.grid, *b.grid)) return fail(error, "bad density grid");
  }
  // Removed.
  const std::uint32_t n_removed = in.read_exp_golomb(kCountOrder);
  if (in.failed() || n_removed > b.size()) return fail(error, "removed count out of range");
  removed_.clear();
  if (n_removed > 0) {
    const unsigned order = in.read_bits(kOrderFieldBits);
    std::uint64_t next = 0;  // smallest index the next removal may have
    for (std::uint32_t k = 0; k < n_removed; ++k) {
      const std::uint64_t index = next + in.read_exp_golomb(order);
      if (in.failed() || index >= b.size()) return fail(error, "removed index out of range");
      removed_.push_back(static_cast<std::uint32_t>(index));
      next = index + 1;
    }
  }
  // Runs over kept agents.
  const std::size_t kept = b.size() - n_removed;
  kept_updated_.resize(kept);
  std::size_t updated = 0;
  if (kept > 0) {
    const unsigned order = in.read_bits(kOrderFieldBits);
    std::size_t filled = 0;
    bool run_updated = true;
    bool first = true;
    while (filled < kept) {
      const std::uint32_t run = in.read_exp_golomb(order);
      // Only the first run may be empty: otherwise zero-length runs could repeat forever.
      if (in.failed() || run > kept - filled || (run == 0 && !first)) return fail(error, "bad update runs");
      for (std::uint32_t r = 0; r < run; ++r) kept_updated_[filled++] = run_updated ? 1 : 0;
      if (run_updated) updated += run;
      run_updated = !run_updated;
      first = false;
    }
  }
  // Added.
  const std::uint32_t n_added = in.read_exp_golomb(kCountOrder);
  if (in.failed() || n_added > kMaxFrameAgents - kept) return fail(error, "too many agents");
  added_.resize(n_added);
  if (n_added > 0) {
    std::uint64_t id = in.read_bits(32);
    const unsigned order = in.read_bits(kOrderFieldBits);
    added_[0].id = static_cast<std::uint32_t>(id);
    for (std::uint32_t k = 1; k < n_added; ++k) {
      id += std::uint64_t{in.read_exp_golomb(order)} + 1;
      if (in.failed() || id > 0xFFFFFFFFull) return fail(error, "added id out of range");
      added_[k].id = static_cast<std::uint32_t>(id);
    }
    const std::uint32_t min_x = in.read_bits(kPositionBits);
    const std::uint32_t min_y = in.read_bits(kPositionBits);
    const unsigned bits_x = in.read_bits(kBitsFieldBits);
    const unsigned bits_y = in.read_bits(kBitsFieldBits);
    if (in.failed() || bits_x > kPositionBits || bits_y > kPositionBits) return fail(error, "bad added positions");
    for (std::uint32_t k = 0; k < n_added; ++k) {
      const std::uint64_t x = std::uint64_t{min_x} + in.read_bits(bits_x);
      const std::uint64_t y = std::uint64_t{min_y} + in.read_bits(bits_y);
      if (x > kPositionMax || y > kPositionMax) return fail(error, "added position out of range");
      AgentState& a = added_[k];
      a.x = static_cast<std::uint32_t>(x);
      a.y = static_cast<std::uint32_t>(y);
      a.heading = static_cast<std::uint8_t>(in.read_bits(8));
      a.tick = tick;
      a.vx = 0;
      a.vy = 0;
    }
    if (in.read_bool()) {
      const auto kind = static_cast<std::uint8_t>(in.read_bits(8));
      for (std::uint32_t k = 0; k < n_added; ++k) added_[k].kind = kind;
    } else {
      for (std::uint32_t k = 0; k < n_added; ++k) added_[k].kind = static_cast<std::uint8_t>(in.read_bits(8));
    }
    if (in.failed()) return fail(error, "snapshot truncated in the added agents");
  }
  // Kind changes.
  const std::uint32_t n_kinds = in.read_exp_golomb(0);
  if (in.failed() || n_kinds > updated) return fail(error, "kind change count out of range");
  kind_changes_.clear();
  kind_values_.clear();
  {
    std::uint64_t next = 0;
    for (std::uint32_t k = 0; k < n_kinds; ++k) {
      const std::uint64_t index = next + in.read_exp_golomb(kKindGapOrder);
      if (in.failed() || index >= updated) return fail(error, "kind change index out of range");
      kind_changes_.push_back(static_cast<std::uint32_t>(index));
      kind_values_.push_back(static_cast<std::uint8_t>(in.read_bits(8)));
      next = index + 1;
    }
  }
  // Tables.
  for (std::size_t ctx = 0; ctx < kSpeedClasses; ++ctx) {
    have_table_[ctx] = in.read_bool();
    if (have_table_[ctx] && (!pos_tables_[ctx].read(in, kPosAlphabet) || !head_tables_[ctx].read(in, kHeadAlphabet))) {
      return fail(error, "bad frequency table");
    }
  }
  if (in.failed()) return fail(error, "snapshot truncated in the tables");

  // ---- Merge: baseline minus removed, kept (updated or stale), plus added, by id -----------
  RansDecoder rans, rans_head;
  if (updated > 0) {
    if (rans_bytes.size() < 4) return fail(error, "residual streams missing");
    const std::uint32_t pos_len = get_u32(rans_bytes, 0);
    if (pos_len > rans_bytes.size() - 4) return fail(error, "residual stream longer than the snapshot");
    if (!rans.init(rans_bytes.subspan(4, pos_len)) || !rans_head.init(rans_bytes.subspan(4 + pos_len))) {
      return fail(error, "bad residual stream");
    }
  } else if (!rans_bytes.empty()) {
    return fail(error, "trailing bytes after the snapshot");
  }
  const std::size_t nb = b.size();
  frame.agents.resize(kept + n_added);
  AgentState* out = frame.agents.data();
  const AgentState* base = b.agents.data();
  std::size_t f = 0;        // frame entries written
  std::size_t ri = 0;       // next removed entry
  std::size_t ki = 0;       // kept agents seen
  std::size_t ui = 0;       // updated agents seen
  std::size_t kc = 0;       // next kind change
  std::size_t ai = 0;       // next added agent
  for (std::size_t i = 0; i <= nb; ++i) {
    const bool at_end = i == nb;
    // Added agents whose id comes before this baseline agent (or all that remain at the end).
    while (ai < n_added && (at_end || added_[ai].id < base[i].id)) {
      if (f > 0 && added_[ai].id <= out[f - 1].id) return fail(error, "added id not increasing");
      out[f++] = added_[ai++];
    }
    if (at_end) break;
    const AgentState& bi = base[i];
    if (ai < n_added && added_[ai].id == bi.id) return fail(error, "added id already in the baseline");
    if (ri < removed_.size() && removed_[ri] == i) {
      ++ri;
      continue;
    }
    if (kept_updated_[ki++] == 0) {
      out[f++] = bi;
      continue;
    }
    const std::size_t ctx = speed_class(bi.vx, bi.vy);
    if (!have_table_[ctx]) return fail(error, "residual without a table");
    const std::uint32_t pdt = predicted ? prediction_ticks(bi.tick, tick) : 0;
    const std::uint32_t px = predict_coordinate_after(bi.x, bi.vx, pdt);
    const std::uint32_t py = predict_coordinate_after(bi.y, bi.vy, pdt);
    std::int32_t rx = 0, ry = 0;
    const std::size_t ps = rans.get(pos_tables_[ctx]);
    if (ps == kPosEscape) {
      rx = in.read_signed_exp_golomb(kEscapeOrder);
      ry = in.read_signed_exp_golomb(kEscapeOrder);
    } else {
      rx = static_cast<std::int32_t>(ps / kPosSide) - kPosRange;
      ry = static_cast<std::int32_t>(ps % kPosSide) - kPosRange;
    }
    const std::int64_t x = std::int64_t{px} + rx, y = std::int64_t{py} + ry;
    if (x < 0 || y < 0 || x > kPositionMax || y > kPositionMax) return fail(error, "position out of range");
    const std::size_t hs = rans_head.get(head_tables_[ctx]);
    std::uint8_t heading = 0;
    if (hs == kHeadEscape) {
      heading = static_cast<std::uint8_t>(in.read_bits(8));
    } else {
      heading = static_cast<std::uint8_t>(bi.heading + static_cast<std::int32_t>(hs) - kHeadRange);
    }
    std::uint8_t kind = bi.kind;
    if (kc < kind_changes_.size() && kind_changes_[kc] == ui) kind = kind_values_[kc++];
    ++ui;
    const std::uint32_t vdt = velocity_span_ticks(bi.tick, tick);
    const auto ux = static_cast<std::uint32_t>(x), uy = static_cast<std::uint32_t>(y);
    out[f++] = AgentState{bi.id,
                          ux,
                          uy,
                          tick,
                          update_velocity_over(bi.vx, bi.x, ux, vdt),
                          update_velocity_over(bi.vy, bi.y, uy, vdt),
                          heading,
                          kind};
  }
  frame.agents.resize(f);
  if (in.failed()) return fail(error, "snapshot truncated in the escaped residuals");
  if (in.bits_left() >= 8) return fail(error, "trailing bytes in the bit section");
  if (updated > 0 && (!rans.finished_cleanly() || !rans_head.finished_cleanly())) {
    return fail(error, "residual stream corrupt or with trailing bytes");
  }
  return true;
}

}  // namespace swarmfield::protocol
