// Figure 5: snapshot size and encode cost on real swarm motion. A World on Boston_0_1024 steps
// 100k agents chasing a player who walks between waypoints near the centre; after a warm-up, 20
// snapshots a second (30 Hz ticks) are recorded for a square view that follows the player, sized
// to hold about 10k agents. Each benchmark encodes that sequence for one client:
//   ours/delta_predicted     the codec as shipped (delta against the previous snapshot, i.e. an
//                            ack for every snapshot, velocity prediction, rANS)
//   ours/delta_predicted_view    the same at the precision the server picks for the view's size
//                            (view_precision_shift: 1/8 cell for the ~290-cell view)
//   ours/delta_predicted_rtt100  the same with the baseline 3 snapshots back (100 ms round trip)
//   ours/delta_plain         delta without prediction (what prediction buys)
//   ours/full                every snapshot against the empty baseline (what the delta buys)
//   ours/delta_predicted_zstd    the shipped payload run through zstd level 3 (what zstd buys)
//   baseline/zstd_full       protocol version 2's full snapshot: the same structure of arrays
//                            (ids delta-coded u32, u16 positions at 1/32, u8 headings), zstd
//                            level 3 (version 2 wrapped them in FlatBuffers first: a few bytes)
//   raw floats               x, y, heading as 12 bytes (a counter, nothing to time)
// Counters: bytes_per_agent (payload / agents in view), bytes_per_moving_agent (payload / agents
// whose quantized position or heading changed since the baseline), agents_per_iteration (CPU time
// divided by it = time per agent in view per client; scripts/bench.sh prints it). Also: the
// relevance selection from all 100k agents per client, the shared quantization of all agents per
// snapshot tick, and decoding. The recorded motion is snapshot_trace.cpp's; the server's snapshot
// phase on it is snapshot_server_bench.cpp, issue 22's scenes snapshot_scene_bench.cpp.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "bench_registry.hpp"
#include "snapshot_trace.hpp"
#include "swarmfield/protocol/transport/compression.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_relevance.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"

namespace swarmfield::bench {
namespace {

namespace sp = protocol;

enum class Mode { kDeltaPredicted, kDeltaPredictedView, kDeltaPredictedRtt, kDeltaPlain, kFull, kDeltaPredictedZstd };

/// Encodes the whole trace for one client per iteration.
void encode_trace(benchmark::State& state, const BenchOptions& options, Mode mode) {
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
  if (t == nullptr) return;
  const std::uint32_t distance = mode == Mode::kDeltaPredictedRtt ? 3 : 1;
  const bool full = mode == Mode::kFull;
  const bool predict = mode != Mode::kDeltaPlain;
  const std::size_t n = t->views.size();
  // Frames of the trace as the client would hold them (for the baselines), built once.
  sp::SnapshotEncoder enc;
  std::vector<sp::AgentFrame> frames(n);
  std::vector<std::uint8_t> payload;
  std::size_t bytes = 0, agents = 0, moving = 0, zstd_bytes = 0, measured = 0;
  const std::size_t first = full ? 0 : distance;  // the first snapshots only build baselines
  for (auto _ : state) {
    bytes = agents = moving = zstd_bytes = measured = 0;
    for (std::size_t k = 0; k < n; ++k) {
      sp::SnapshotHeader h;
      h.sequence = static_cast<std::uint32_t>(k + 1);
      h.tick = t->ticks[k];
      h.predicted = predict;
      if (mode == Mode::kDeltaPredictedView) h.precision_shift = sp::view_precision_shift(static_cast<float>(t->view_side));
      sp::AgentFrameView base = sp::AgentFrameView::empty();
      if (!full && k >= distance) {
        h.baseline_distance = distance;
        base = sp::AgentFrameView::of(frames[k - distance]);
      }
      if (!enc.encode(h, base, t->views[k], {}, payload, frames[k])) {
        state.SkipWithError("encode refused the trace");
        return;
      }
      if (k < first) continue;
      bytes += payload.size();
      agents += t->views[k].size();
      moving += full ? t->views[k].size() : enc.stats().moving;
      ++measured;
      if (mode == Mode::kDeltaPredictedZstd) zstd_bytes += sp::zstd_compress(payload, 3).size();
    }
    benchmark::DoNotOptimize(payload.data());
  }
  const double total = static_cast<double>(mode == Mode::kDeltaPredictedZstd ? zstd_bytes : bytes);
  state.counters["bytes_per_agent"] = total / static_cast<double>(std::max<std::size_t>(agents, 1));
  state.counters["bytes_per_moving_agent"] = total / static_cast<double>(std::max<std::size_t>(moving, 1));
  state.counters["moving_fraction"] = static_cast<double>(moving) / static_cast<double>(std::max<std::size_t>(agents, 1));
  state.counters["agents_in_view"] = t->mean_in_view;
  state.counters["bytes_per_snapshot"] = total / static_cast<double>(std::max<std::size_t>(measured, 1));
  state.counters["view_cells"] = t->view_side;
  // Agents encoded per iteration (all snapshots, the first ones included): CPU time / this =
  // time per agent per client.
  std::size_t all_agents = 0;
  for (const auto& v : t->views) all_agents += v.size();
  state.counters["agents_per_iteration"] = static_cast<double>(all_agents);
}

/// Version 2's format: the arrays of every snapshot through zstd, full each time.
void zstd_full_trace(benchmark::State& state, const BenchOptions& options) {
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
  if (t == nullptr) return;
  std::size_t bytes = 0, agents = 0;
  for (auto _ : state) {
    bytes = agents = 0;
    for (std::size_t k = 0; k < t->old_format.size(); ++k) {
      bytes += sp::zstd_compress(t->old_format[k], 3).size();
      agents += t->old_agents[k];
    }
  }
  state.counters["bytes_per_agent"] = static_cast<double>(bytes) / static_cast<double>(std::max<std::size_t>(agents, 1));
  state.counters["raw_float_bytes_per_agent"] = 12.0;
  state.counters["agents_in_view"] = static_cast<double>(agents) / static_cast<double>(t->old_format.size());
  state.counters["agents_per_iteration"] = static_cast<double>(agents);
}

/// Decoding the shipped deltas (client side).
void decode_trace(benchmark::State& state, const BenchOptions& options) {
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
  if (t == nullptr) return;
  const std::size_t n = t->views.size();
  sp::SnapshotEncoder enc;
  std::vector<sp::AgentFrame> frames(n);
  // Filled by push_back, not sized up front: with vector<vector>(n) and the early return below,
  // GCC 12 -O3 reports a false -Wfree-nonheap-object on the destructor.
  std::vector<std::vector<std::uint8_t>> payloads;
  payloads.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    sp::SnapshotHeader h;
    h.sequence = static_cast<std::uint32_t>(k + 1);
    h.tick = t->ticks[k];
    h.baseline_distance = k > 0 ? 1 : 0;
    std::vector<std::uint8_t>& payload = payloads.emplace_back();
    if (!enc.encode(h, k > 0 ? sp::AgentFrameView::of(frames[k - 1]) : sp::AgentFrameView::empty(), t->views[k], {},
                    payload, frames[k])) {
      state.SkipWithError("encode refused the trace");
      return;
    }
  }
  sp::SnapshotDecoder dec;
  sp::SnapshotHeader header;
  sp::AgentFrame out;
  std::size_t agents = 0;
  for (const auto& v : t->views) agents += v.size();
  for (auto _ : state) {
    for (std::size_t k = 1; k < n; ++k) {
      if (!dec.decode(payloads[k], sp::AgentFrameView::of(frames[k - 1]), header, out)) {
        state.SkipWithError("decode failed");
        return;
      }
    }
    benchmark::DoNotOptimize(out.agents.data());
  }
  state.counters["agents_per_iteration"] = static_cast<double>(agents - t->views[0].size());
}

/// Relevance selection from every agent in the world for one client (per snapshot), and the
/// shared per-tick quantization of every agent.
void select_view(benchmark::State& state, const BenchOptions& options, bool whole_map) {
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
  if (t == nullptr) return;
  sp::SnapshotSelector sel;
  sp::AgentCandidates c;
  sp::DensityGrid grid;
  sp::RelevanceParams params;
  const sp::QuantizedRect view = whole_map ? sp::QuantizedRect{0, 0, 1024 * 64, 1024 * 64} : t->last_view;
  for (auto _ : state) {
    // 1 Mbit/s at 20 Hz, with the last frame as baseline: the common steady state.
    sel.select(t->all, view, sp::AgentFrameView::empty(), 1000, 6250, params, c, grid);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["in_view"] = static_cast<double>(sel.stats().in_view);
  state.counters["tracked"] = static_cast<double>(sel.stats().tracked);
  state.counters["sent"] = static_cast<double>(sel.stats().sent);
  state.counters["world_agents"] = static_cast<double>(t->world_agents);
  state.counters["agents_per_iteration"] = static_cast<double>(sel.stats().in_view);
}

/// The shared work of a snapshot tick: every agent quantized, sorted by id and tiled, once for
/// all clients.
void quantize_all(benchmark::State& state, const BenchOptions& options) {
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
  if (t == nullptr) return;
  sp::QuantizedAgents q;
  for (auto _ : state) {
    q.assign(t->raw_ids, t->raw_xs, t->raw_ys, t->raw_headings, {}, 1.0f);
    benchmark::DoNotOptimize(q.xs.data());
  }
  state.counters["world_agents"] = static_cast<double>(t->raw_ids.size());
}

}  // namespace

void register_snapshot_benchmarks(const BenchOptions& options) {
  const std::string prefix = "snapshot/Boston_0_1024/";
  auto reg = [&](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark((prefix + name).c_str(), fn)->Unit(benchmark::kMillisecond);
  };
  reg("encode/ours/delta_predicted", [options](benchmark::State& s) { encode_trace(s, options, Mode::kDeltaPredicted); });
  reg("encode/ours/delta_predicted_view", [options](benchmark::State& s) { encode_trace(s, options, Mode::kDeltaPredictedView); });
  reg("encode/ours/delta_predicted_rtt100",
      [options](benchmark::State& s) { encode_trace(s, options, Mode::kDeltaPredictedRtt); });
  reg("encode/ours/delta_plain", [options](benchmark::State& s) { encode_trace(s, options, Mode::kDeltaPlain); });
  reg("encode/ours/full", [options](benchmark::State& s) { encode_trace(s, options, Mode::kFull); });
  reg("encode/ours/delta_predicted_zstd",
      [options](benchmark::State& s) { encode_trace(s, options, Mode::kDeltaPredictedZstd); });
  reg("encode/baseline/zstd_full", [options](benchmark::State& s) { zstd_full_trace(s, options); });
  reg("decode/ours/delta_predicted", [options](benchmark::State& s) { decode_trace(s, options); });
  reg("quantize/all_agents", [options](benchmark::State& s) { quantize_all(s, options); });
  reg("select/view", [options](benchmark::State& s) { select_view(s, options, false); });
  reg("select/whole_map", [options](benchmark::State& s) { select_view(s, options, true); });
}

}  // namespace swarmfield::bench
