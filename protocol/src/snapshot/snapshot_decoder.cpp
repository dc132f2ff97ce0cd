// Delta snapshot decoder: every value from the wire is range-checked before use (layout:
// protocol/SNAPSHOTS.md). decode() is the list of its steps, one per section of that file, in
// wire order: the header and players, the bit section's parts, the residual streams, then the
// merge that builds the frame.
#include <cmath>
#include <string>

#include "fail.hpp"
#include "snapshot_codec_layout.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

namespace swarmfield::protocol {

using namespace detail;

namespace {

/// Reads `count` (> 0) strictly increasing indices below `limit` as write_index_gaps (the
/// encoder) codes them into `out`. False on a truncated stream or an index out of range.
bool read_index_gaps(BitReader& in, std::uint32_t count, std::size_t limit, std::vector<std::uint32_t>& out) {
  out.clear();
  const unsigned order = in.read_bits(kOrderFieldBits);
  std::uint64_t next = 0;  // smallest index the next one may have
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint64_t index = next + in.read_exp_golomb(order);
    if (in.failed() || index >= limit) return false;
    out.push_back(static_cast<std::uint32_t>(index));
    next = index + 1;
  }
  return true;
}

}  // namespace

bool read_snapshot_prelude(std::span<const std::uint8_t> p, SnapshotPrelude& out) noexcept {
  if (p.size() < kSnapshotHeaderBytes || p[0] != kSnapshotFormat) return false;
  out.sequence = get_u32(p, 2);
  out.tick = get_u32(p, 6);
  out.baseline_distance = p[10];
  return out.baseline_distance <= kSnapshotHistorySize && (out.baseline_distance == 0 || out.sequence > out.baseline_distance);
}

bool set_snapshot_echo(std::span<std::uint8_t> payload, std::uint64_t echo_client_time_us) noexcept {
  SnapshotPrelude prelude;
  if (!read_snapshot_prelude(payload, prelude)) return false;
  for (std::size_t i = 0; i < 8; ++i) payload[kEchoOffset + i] = static_cast<std::uint8_t>(echo_client_time_us >> (8 * i));
  return true;
}

bool SnapshotDecoder::decode(std::span<const std::uint8_t> payload, const AgentFrameView& baseline_in,
                             SnapshotHeader& header, AgentFrame& frame, std::string* error) {
  // ---- Header and players -------------------------------------------------------------------
  SnapshotPrelude prelude;
  if (!read_snapshot_prelude(payload, prelude)) return fail(error, "not a snapshot, or baseline distance out of range");
  const std::uint8_t flags = payload[1];
  if ((flags & ~kKnownFlags) != 0) return fail(error, "unknown snapshot flags");
  const AgentFrameView baseline = prelude.baseline_distance == 0 ? AgentFrameView::empty() : baseline_in;
  if (prelude.baseline_distance != 0) {
    if (baseline.sequence != prelude.sequence - prelude.baseline_distance) return fail(error, "wrong baseline frame");
    if (baseline.tick >= prelude.tick) return fail(error, "tick not after the baseline's");
  }
  std::size_t at = 0;  // first byte after the players
  if (!read_header(payload, prelude, flags, header, at, error)) return false;
  const std::uint32_t bit_len = get_u32(payload, at);
  at += 4;
  if (bit_len > payload.size() - at) return fail(error, "bit section longer than the snapshot");
  BitReader in(payload.subspan(at, bit_len));
  const std::span<const std::uint8_t> rans_bytes = payload.subspan(at + bit_len);

  // ---- Bit section --------------------------------------------------------------------------
  frame.grid.clear();
  frame.sequence = header.sequence;
  frame.tick = header.tick;
  if ((flags & kFlagGrid) != 0) {
    if (!read_density_grid(in, frame.grid, *baseline.grid)) return fail(error, "bad density grid");
  }
  if (!read_removed(in, baseline, error)) return false;
  const std::size_t kept = baseline.size() - removed_.size();
  std::size_t updated = 0;
  if (!read_kept_runs(in, baseline, header.tick, kept, updated, error)) return false;
  if (!read_added(in, kept, header.tick, error)) return false;
  if (!read_kind_changes(in, updated, error)) return false;
  if (!read_tables(in, error)) return false;

  // ---- Residual streams, then the merge into the frame --------------------------------------
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
  frame.agents.resize(kept + added_.size());
  if (!merge(in, rans, rans_head, baseline, header, frame, error)) return false;
  if (in.failed()) return fail(error, "snapshot truncated in the escaped residuals");
  if (in.bits_left() >= 8) return fail(error, "trailing bytes in the bit section");
  if (updated > 0 && (!rans.finished_cleanly() || !rans_head.finished_cleanly())) {
    return fail(error, "residual stream corrupt or with trailing bytes");
  }
  return true;
}

// ---- Header (36 bytes) and players --------------------------------------------------------------
// After the prelude and the baseline were checked; `at` is set to the first byte after the
// players, where at least 4 bytes (the bit section's length) are left.
bool SnapshotDecoder::read_header(std::span<const std::uint8_t> payload, const SnapshotPrelude& prelude,
                                  std::uint8_t flags, SnapshotHeader& header, std::size_t& at, std::string* error) {
  header.sequence = prelude.sequence;
  header.tick = prelude.tick;
  header.baseline_distance = prelude.baseline_distance;
  header.predicted = (flags & kFlagPredicted) != 0;
  header.precision_shift = static_cast<std::uint8_t>((flags & kFlagShiftMask) >> kShiftFlagPos);
  if (header.precision_shift > kMaxPrecisionShift) return fail(error, "precision shift out of range");
  header.echo_client_time_us = get_u64(payload, kEchoOffset);
  header.total_agents = get_u32(payload, 19);
  header.rebuilds = get_u64(payload, 23);
  header.wave = get_u32(payload, 31);
  const std::size_t players = payload[35];  // <= kMaxSnapshotPlayers by its width
  at = kSnapshotHeaderBytes;
  if (payload.size() < at + players * kSnapshotPlayerBytes + 4) return fail(error, "snapshot truncated in the players");
  header.players.resize(players);
  for (std::size_t k = 0; k < players; ++k, at += kSnapshotPlayerBytes) {
    PlayerState& player = header.players[k];
    player.id = get_u32(payload, at);
    player.x = std::bit_cast<float>(get_u32(payload, at + 4));
    player.y = std::bit_cast<float>(get_u32(payload, at + 8));
    player.contacts = get_u32(payload, at + 12);
    player.health = std::bit_cast<float>(get_u32(payload, at + 16));
    player.kills = get_u32(payload, at + 20);
    player.shots = get_u32(payload, at + 24);
    player.score = static_cast<std::int64_t>(get_u64(payload, at + 28));
    player.aim = payload[at + 36];
    if (!std::isfinite(player.x) || !std::isfinite(player.y)) return fail(error, "player position not finite");
    if (!(std::isfinite(player.health) && player.health >= 0.0f)) return fail(error, "player health not finite and >= 0");
  }
  return true;
}

// ---- Bit section 2: removed, and which of them died --------------------------------------------
// Baseline indices into removed_, strictly increasing; the dead among them into deaths_.
bool SnapshotDecoder::read_removed(BitReader& in, const AgentFrameView& baseline, std::string* error) {
  const std::size_t baseline_size = baseline.size();
  const std::uint32_t count = in.read_exp_golomb(kCountOrder);
  if (in.failed() || count > baseline_size) return fail(error, "removed count out of range");
  removed_.clear();
  deaths_.clear();
  if (count == 0) return true;
  if (!read_index_gaps(in, count, baseline_size, removed_)) return fail(error, "removed index out of range");
  const std::uint32_t died = in.read_exp_golomb(kCountOrder);
  if (in.failed() || died > count) return fail(error, "death count out of range");
  if (died == 0) return true;
  if (!read_index_gaps(in, died, count, died_)) return fail(error, "death index out of range");
  for (const std::uint32_t position : died_) deaths_.push_back(baseline.agents[removed_[position]]);
  return true;
}

// ---- Bit section 3: kept agents -----------------------------------------------------------------
// Runs over the `kept` agents (in run_order_key order) into kept_updated_ (id order, 1 = updated);
// `updated` counts them.
bool SnapshotDecoder::read_kept_runs(BitReader& in, const AgentFrameView& baseline, std::uint32_t tick,
                                     std::size_t kept, std::size_t& updated, std::string* error) {
  kept_updated_.resize(kept);
  aged_updated_.resize(kept);
  updated = 0;
  if (kept == 0) return true;
  const unsigned order = in.read_bits(kOrderFieldBits);
  std::size_t filled = 0;
  bool run_updated = true;
  bool first = true;
  while (filled < kept) {
    const std::uint32_t run = in.read_exp_golomb(order);
    // Only the first run may be empty: otherwise zero-length runs could repeat forever.
    if (in.failed() || run > kept - filled || (run == 0 && !first)) return fail(error, "bad update runs");
    for (std::uint32_t r = 0; r < run; ++r) aged_updated_[filled++] = run_updated ? 1 : 0;
    if (run_updated) updated += run;
    run_updated = !run_updated;
    first = false;
  }
  // The runs are in run_order_key's order (oldest update first, ties by id): back to id order.
  // The keys of the baseline agents not removed (removed_ is increasing), in id order:
  kept_key_.resize(kept);
  const AgentState* base = baseline.agents.data();
  for (std::size_t b = 0, r = 0, k = 0; b < baseline.size(); ++b) {
    if (r < removed_.size() && removed_[r] == b) {
      ++r;
      continue;
    }
    kept_key_[k++] = run_order_key(base[b].tick, tick);
  }
  std::array<std::uint32_t, 256> offsets = run_order_offsets(kept_key_);
  for (std::size_t k = 0; k < kept; ++k) kept_updated_[k] = aged_updated_[offsets[kept_key_[k]]++];
  return true;
}

// ---- Bit section 4: added agents ----------------------------------------------------------------
// Into added_, with `tick` and zero velocity; at most kMaxFrameAgents - kept of them.
bool SnapshotDecoder::read_added(BitReader& in, std::size_t kept, std::uint32_t tick, std::string* error) {
  const std::uint32_t count = in.read_exp_golomb(kCountOrder);
  if (in.failed() || count > kMaxFrameAgents - kept) return fail(error, "too many agents");
  added_.resize(count);
  if (count == 0) return true;
  std::uint64_t id = in.read_bits(32);
  const unsigned order = in.read_bits(kOrderFieldBits);
  added_[0].id = static_cast<std::uint32_t>(id);
  for (std::uint32_t k = 1; k < count; ++k) {
    id += std::uint64_t{in.read_exp_golomb(order)} + 1;
    if (in.failed() || id > 0xFFFFFFFFull) return fail(error, "added id out of range");
    added_[k].id = static_cast<std::uint32_t>(id);
  }
  const std::uint32_t min_x = in.read_bits(kPositionBits);
  const std::uint32_t min_y = in.read_bits(kPositionBits);
  const unsigned bits_x = in.read_bits(kBitsFieldBits);
  const unsigned bits_y = in.read_bits(kBitsFieldBits);
  if (in.failed() || bits_x > kPositionBits || bits_y > kPositionBits) return fail(error, "bad added positions");
  for (std::uint32_t k = 0; k < count; ++k) {
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
    for (std::uint32_t k = 0; k < count; ++k) added_[k].kind = kind;
  } else {
    for (std::uint32_t k = 0; k < count; ++k) added_[k].kind = static_cast<std::uint8_t>(in.read_bits(8));
  }
  if (in.failed()) return fail(error, "snapshot truncated in the added agents");
  return true;
}

// ---- Bit section 5: kind changes ----------------------------------------------------------------
// Updated-agent indices (of `updated`) into kind_changes_, their kinds into kind_values_.
bool SnapshotDecoder::read_kind_changes(BitReader& in, std::size_t updated, std::string* error) {
  const std::uint32_t count = in.read_exp_golomb(0);
  if (in.failed() || count > updated) return fail(error, "kind change count out of range");
  kind_changes_.clear();
  kind_values_.clear();
  std::uint64_t next = 0;
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::uint64_t index = next + in.read_exp_golomb(kKindGapOrder);
    if (in.failed() || index >= updated) return fail(error, "kind change index out of range");
    kind_changes_.push_back(static_cast<std::uint32_t>(index));
    kind_values_.push_back(static_cast<std::uint8_t>(in.read_bits(8)));
    next = index + 1;
  }
  return true;
}

// ---- Bit section 6: frequency tables ------------------------------------------------------------
bool SnapshotDecoder::read_tables(BitReader& in, std::string* error) {
  for (std::size_t ctx = 0; ctx < kSpeedClasses; ++ctx) {
    have_table_[ctx] = in.read_bool();
    if (have_table_[ctx] && (!pos_tables_[ctx].read(in, kPosAlphabet) || !head_tables_[ctx].read(in, kHeadAlphabet))) {
      return fail(error, "bad frequency table");
    }
  }
  if (in.failed()) return fail(error, "snapshot truncated in the tables");
  return true;
}

// ---- Merge: baseline minus removed, kept (updated or stale), plus added, by id ------------------
// Writes frame.agents (sized for every kept and added agent) and shrinks it to what was written;
// residual symbols from `rans` / `rans_head`, escapes from bit section 7 (`in`).
bool SnapshotDecoder::merge(BitReader& in, RansDecoder& rans, RansDecoder& rans_head, const AgentFrameView& baseline,
                            const SnapshotHeader& header, AgentFrame& frame, std::string* error) {
  const std::uint32_t tick = header.tick;
  const bool predicted = header.predicted;
  const unsigned hshift = heading_shift(header.precision_shift);
  const std::size_t base_count = baseline.size();
  const std::size_t added_count = added_.size();
  AgentState* out = frame.agents.data();
  const AgentState* base = baseline.agents.data();
  std::size_t written = 0;           // frame entries written
  std::size_t next_removed = 0;      // next entry of removed_
  std::size_t kept_seen = 0;         // kept agents seen
  std::size_t updated_seen = 0;      // updated agents seen
  std::size_t next_kind_change = 0;  // next entry of kind_changes_
  std::size_t next_added = 0;        // next entry of added_
  for (std::size_t base_index = 0; base_index <= base_count; ++base_index) {
    const bool at_end = base_index == base_count;
    // Added agents whose id comes before this baseline agent (or all that remain at the end).
    while (next_added < added_count && (at_end || added_[next_added].id < base[base_index].id)) {
      if (written > 0 && added_[next_added].id <= out[written - 1].id) return fail(error, "added id not increasing");
      out[written++] = added_[next_added++];
    }
    if (at_end) break;
    const AgentState& was = base[base_index];
    if (next_added < added_count && added_[next_added].id == was.id) {
      return fail(error, "added id already in the baseline");
    }
    if (next_removed < removed_.size() && removed_[next_removed] == base_index) {
      ++next_removed;
      continue;
    }
    if (kept_updated_[kept_seen++] == 0) {
      out[written++] = was;
      continue;
    }
    const std::size_t ctx = speed_class(was.vx, was.vy);
    if (!have_table_[ctx]) return fail(error, "residual without a table");
    const std::uint32_t pdt = predicted ? prediction_ticks(was.tick, tick) : 0;
    const std::uint32_t px = predict_coordinate_after(was.x, was.vx, pdt);
    const std::uint32_t py = predict_coordinate_after(was.y, was.vy, pdt);
    std::int32_t rx = 0, ry = 0;
    const std::size_t ps = rans.get(pos_tables_[ctx]);
    if (ps == kPosEscape) {
      rx = in.read_signed_exp_golomb(kEscapeOrder);
      ry = in.read_signed_exp_golomb(kEscapeOrder);
    } else {
      // In the baseline velocity's frame (velocity_frame): back to (rx, ry).
      const auto r = from_velocity_frame(velocity_frame(was.vx, was.vy), static_cast<std::int32_t>(ps / kPosSide) - kPosRange,
                                         static_cast<std::int32_t>(ps % kPosSide) - kPosRange);
      rx = r[0];
      ry = r[1];
    }
    const std::int64_t x = coarse_coordinate(px, rx, header.precision_shift);
    const std::int64_t y = coarse_coordinate(py, ry, header.precision_shift);
    if (x < 0 || y < 0 || x > kPositionMax || y > kPositionMax) return fail(error, "position out of range");
    const std::size_t hs = rans_head.get(head_tables_[ctx]);
    std::uint8_t heading = 0;
    if (hs == kHeadEscape) {
      heading = static_cast<std::uint8_t>(in.read_bits(8));
    } else {
      heading = coarse_heading(was.heading, static_cast<std::int32_t>(hs) - kHeadRange, hshift);
    }
    std::uint8_t kind = was.kind;
    if (next_kind_change < kind_changes_.size() && kind_changes_[next_kind_change] == updated_seen) {
      kind = kind_values_[next_kind_change++];
    }
    ++updated_seen;
    const std::uint32_t vdt = velocity_span_ticks(was.tick, tick);
    const auto ux = static_cast<std::uint32_t>(x), uy = static_cast<std::uint32_t>(y);
    out[written++] = AgentState{was.id,
                                ux,
                                uy,
                                tick,
                                update_velocity_over(was.vx, was.x, ux, vdt),
                                update_velocity_over(was.vy, was.y, uy, vdt),
                                heading,
                                kind};
  }
  frame.agents.resize(written);
  return true;
}

}  // namespace swarmfield::protocol
