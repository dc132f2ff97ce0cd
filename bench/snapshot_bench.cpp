// Figure 5: snapshot size and encode cost on real swarm motion. A World on Boston_0_1024 steps
// 100k agents chasing a player who walks between waypoints near the centre; after a warm-up, 20
// snapshots a second (30 Hz ticks) are recorded for a square view that follows the player, sized
// to hold about 10k agents. Each benchmark encodes that sequence for one client:
//   ours/delta_predicted     the codec as shipped (delta against the previous snapshot, i.e. an
//                            ack for every snapshot, velocity prediction, rANS)
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
// divided by it = time per agent in view per client; scripts/bench.sh prints it). Also: the relevance selection from all 100k agents per client, the shared
// quantization of all agents per snapshot tick, and decoding.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <exception>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "swarmfield/protocol/transport/compression.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_relevance.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"
#include "swarmfield/server/snapshot_builder.hpp"
#include "swarmfield/sim/world.hpp"

// The server benchmark switches callgrind's instrumentation on for its snapshot phase only.
#include "callgrind_markers.hpp"
#include "setup_or_skip.hpp"

namespace swarmfield::bench {
namespace {

namespace sp = protocol;

constexpr const char* kMap = "street/Boston_0_1024.map";
constexpr std::size_t kTargetInView = 10000;
// Snapshot ticks of the whole world kept for the server benchmark (100k agents: 16 bytes each).
constexpr std::size_t kServerSnapshots = 30;

/// The world as the swarm holds it at one snapshot tick (for the server benchmark).
struct WorldSample {
  std::uint32_t tick = 0;
  std::vector<std::uint32_t> ids;
  std::vector<float> xs, ys, headings;
  std::vector<sim::Player> players;
};

struct Trace {
  std::vector<std::uint32_t> ticks;
  std::vector<WorldSample> samples;  // the first kServerSnapshots snapshot ticks, whole world
  std::vector<sp::AgentCandidates> views;  // agents in the view at each snapshot, all to send
  std::vector<std::vector<std::uint8_t>> old_format;  // the same agents as version 2's arrays (uncompressed)
  std::vector<std::size_t> old_agents;                // agents in each of them
  sp::QuantizedAgents all;                  // every agent at the last snapshot
  std::vector<std::uint32_t> raw_ids;       // ... and as the swarm holds them
  std::vector<float> raw_xs, raw_ys, raw_headings;
  sp::QuantizedRect last_view;
  std::size_t world_agents = 0;
  double mean_in_view = 0;
  float view_side = 0;
  std::int32_t map_width = 0, map_height = 0;  // cells
};

/// Records the trace once (a few seconds of simulation; less with --quick).
const Trace& trace(const BenchOptions& options) {
  static std::unique_ptr<Trace> t;
  if (t) return *t;
  t = std::make_unique<Trace>();
  const sim::GridMap& map = load_map(kMap);  // throws with a readable message
  t->map_width = map.width();
  t->map_height = map.height();
  sim::WorldParams wp;
  wp.spawner.initial_agents = options.quick ? 20000 : 100000;
  wp.worker_threads = 2;
  wp.field_rebuild_budget = 200000;
  sim::World world(map, wp);
  const sim::CellCoord centre = nearest_walkable(map, {map.width() / 2, map.height() / 2});
  const std::uint32_t player = world.add_player(map.cell_center(centre));
  std::mt19937_64 rng(3);
  sim::Vec2 target = world.find_player(player)->position;
  const int warmup = options.quick ? 60 : 450;
  const int snapshots = options.quick ? 12 : 60;
  auto step = [&](int tick) {
    const sim::Vec2 p = world.find_player(player)->position;
    const sim::Vec2 d{target.x - p.x, target.y - p.y};
    const float len = std::sqrt(d.x * d.x + d.y * d.y);
    if (len < 2.0f || tick % 150 == 0) {
      for (;;) {  // a new waypoint within 60 cells of the centre
        std::uniform_real_distribution<float> u(-60.0f, 60.0f);
        const sim::Vec2 c{static_cast<float>(centre.x) + u(rng), static_cast<float>(centre.y) + u(rng)};
        if (world.map().walkable_at(c)) {
          target = c;
          break;
        }
      }
    } else {
      world.set_player_intent(player, {d.x / len, d.y / len});
    }
    world.step(1.0f / 30.0f);
  };
  int tick = 0;
  for (; tick < warmup; ++tick) step(tick);
  const float cell = map.cell_size();
  sp::SnapshotSelector selector;
  sp::DensityGrid grid;
  sp::RelevanceParams params;
  params.max_tracked = sp::kMaxFrameAgents;
  params.density_grid = false;
  double in_view_sum = 0;
  while (static_cast<int>(t->views.size()) < snapshots) {
    step(tick);
    ++tick;
    if ((tick * 2) / 3 == ((tick - 1) * 2) / 3) continue;  // 20 Hz snapshots of a 30 Hz world
    const auto& s = world.swarm();
    t->all.assign(s.ids(), s.xs(), s.ys(), s.headings(), {}, cell);
    if (t->samples.size() < kServerSnapshots) {
      WorldSample w;
      w.tick = static_cast<std::uint32_t>(world.tick());
      w.ids.assign(s.ids().begin(), s.ids().end());
      w.xs.assign(s.xs().begin(), s.xs().end());
      w.ys.assign(s.ys().begin(), s.ys().end());
      w.headings.assign(s.headings().begin(), s.headings().end());
      w.players.assign(world.players().begin(), world.players().end());
      t->samples.push_back(std::move(w));
    }
    const sim::Vec2 at = world.find_player(player)->position;
    if (t->view_side == 0) {
      // The smallest square view around the player holding kTargetInView agents.
      std::vector<float> d;
      for (std::size_t i = 0; i < s.size(); ++i) d.push_back(std::max(std::fabs(s.xs()[i] - at.x), std::fabs(s.ys()[i] - at.y)));
      const std::size_t k = std::min(kTargetInView, d.size()) - 1;
      std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k), d.end());
      t->view_side = 2.0f * d[k];
    }
    const float h = t->view_side / 2;
    t->last_view = sp::quantize_view(at.x - h, at.y - h, at.x + h, at.y + h, 0.0f, cell);
    sp::AgentCandidates c;
    selector.select(t->all, t->last_view, sp::AgentFrameView::empty(), static_cast<std::uint32_t>(world.tick()), 1e12,
                    params, c, grid);
    in_view_sum += static_cast<double>(c.size());
    // Version 2's arrays, each column contiguous (ids, then xs, ys, headings), as its
    // FlatBuffers table laid them out.
    std::vector<std::uint32_t> ids;
    std::vector<std::uint16_t> xs, ys;
    std::vector<std::uint8_t> headings;
    std::uint32_t previous = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (std::fabs(s.xs()[i] - at.x) < h && std::fabs(s.ys()[i] - at.y) < h) {
        ids.push_back(s.ids()[i] - previous);
        previous = s.ids()[i];
        xs.push_back(static_cast<std::uint16_t>(std::clamp(std::lround(s.xs()[i] * 32.0f), 0L, 65535L)));
        ys.push_back(static_cast<std::uint16_t>(std::clamp(std::lround(s.ys()[i] * 32.0f), 0L, 65535L)));
        headings.push_back(sp::quantize_heading(s.headings()[i]));
      }
    }
    std::vector<std::uint8_t> old;
    const auto append = [&old](const auto& column) {
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(column.data());
      old.insert(old.end(), bytes, bytes + column.size() * sizeof(column[0]));
    };
    append(ids);
    append(xs);
    append(ys);
    append(headings);
    t->old_format.push_back(std::move(old));
    t->old_agents.push_back(ids.size());
    t->ticks.push_back(static_cast<std::uint32_t>(world.tick()));
    t->views.push_back(std::move(c));
  }
  t->world_agents = world.swarm().size();
  const auto& sw = world.swarm();
  t->raw_ids.assign(sw.ids().begin(), sw.ids().end());
  t->raw_xs.assign(sw.xs().begin(), sw.xs().end());
  t->raw_ys.assign(sw.ys().begin(), sw.ys().end());
  t->raw_headings.assign(sw.headings().begin(), sw.headings().end());
  t->mean_in_view = in_view_sum / static_cast<double>(t->views.size());
  return *t;
}

/// The trace, or nullptr after marking the benchmark skipped with the reason (e.g. a missing map).
const Trace* trace_or_skip(benchmark::State& state, const BenchOptions& options) {
  return setup_or_skip(state, [&]() -> const Trace& { return trace(options); });
}

enum class Mode { kDeltaPredicted, kDeltaPredictedRtt, kDeltaPlain, kFull, kDeltaPredictedZstd };

/// Encodes the whole trace for one client per iteration.
void encode_trace(benchmark::State& state, const BenchOptions& options, Mode mode) {
  const Trace* t = trace_or_skip(state, options);
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
  const Trace* t = trace_or_skip(state, options);
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
  const Trace* t = trace_or_skip(state, options);
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
  const Trace* t = trace_or_skip(state, options);
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
  const Trace* t = trace_or_skip(state, options);
  if (t == nullptr) return;
  sp::QuantizedAgents q;
  for (auto _ : state) {
    q.assign(t->raw_ids, t->raw_xs, t->raw_ys, t->raw_headings, {}, 1.0f);
    benchmark::DoNotOptimize(q.xs.data());
  }
  state.counters["world_agents"] = static_cast<double>(t->raw_ids.size());
}

/// The server's snapshot phase for `viewers` whole-map viewers (Boston_0_1024 is 1024 cells a
/// side): per snapshot tick, the shared SnapshotWorldState::assign (quantize, sort and tile every
/// agent), then per viewer ClientSnapshotStream::prepare + build (relevance, priorities against
/// the viewer's baseline, budget of 1 Mbit/s at 20 Hz, encode), each snapshot acknowledged at
/// once as a loopback client does. One thread (the server spreads the builds over --threads).
/// Fresh streams each iteration; the first kWarmup snapshots (full, then filling the tracked set)
/// are not timed. CPU time / (snapshots_per_iteration * viewers) = cost per viewer per snapshot.
void server_viewers(benchmark::State& state, const BenchOptions& options) {
  const Trace* t = trace_or_skip(state, options);
  if (t == nullptr) return;
  const auto viewers = static_cast<std::size_t>(state.range(0));
  const std::size_t warmup = std::min<std::size_t>(options.quick ? 4 : 10, t->samples.size() / 2);
  const server::ViewRect whole{0.0f, 0.0f, 1024.0f, 1024.0f};
  server::SnapshotWorldState world;
  std::vector<std::unique_ptr<server::ClientSnapshotStream>> streams;
  std::vector<std::uint8_t> payload;
  std::size_t bytes = 0, entries = 0, sent_snapshots = 0, tracked = 0, untracked = 0, grid_bytes = 0;
  double shared_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    streams.clear();
    for (std::size_t v = 0; v < viewers; ++v) {
      streams.push_back(std::make_unique<server::ClientSnapshotStream>(server::ClientSnapshotParams{}));
    }
    bytes = entries = sent_snapshots = tracked = untracked = grid_bytes = 0;
    for (std::size_t k = 0; k < t->samples.size(); ++k) {
      const WorldSample& w = t->samples[k];
      if (k == warmup) {
        state.ResumeTiming();
        SWARMFIELD_CALLGRIND_ON();
      }
      const auto t0 = std::chrono::steady_clock::now();
      world.assign(server::AgentArrays{w.ids, w.xs, w.ys, w.headings, {}}, w.players, w.tick, 1, 1.0f);
      world.set_map_size(t->map_width, t->map_height);  // as assign(World) does
      if (k >= warmup) shared_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (auto& s : streams) s->prepare(world, whole);
      for (auto& s : streams) {
        if (!s->build(world, whole, 0, payload)) {
          state.SkipWithError("the stream refused a snapshot");
          return;
        }
        protocol::SnapshotAck ack;
        ack.add(s->last_sequence());
        static_cast<void>(s->on_ack(ack));
        if (k < warmup) continue;
        bytes += payload.size();
        entries += s->last_stats().updated + s->last_stats().added;
        tracked += s->last_relevance().tracked;
        untracked += s->last_relevance().untracked;
        grid_bytes += (s->last_stats().grid_bits + 7) / 8;
        ++sent_snapshots;
      }
    }
    SWARMFIELD_CALLGRIND_OFF();
  }
  const double n = static_cast<double>(std::max<std::size_t>(sent_snapshots, 1));
  state.counters["viewers"] = static_cast<double>(viewers);
  state.counters["snapshots_per_iteration"] = static_cast<double>(t->samples.size() - warmup);
  state.counters["world_agents"] = static_cast<double>(t->world_agents);
  state.counters["bytes_per_snapshot"] = static_cast<double>(bytes) / n;
  state.counters["entries_per_snapshot"] = static_cast<double>(entries) / n;
  state.counters["bytes_per_entry"] = static_cast<double>(bytes) / static_cast<double>(std::max<std::size_t>(entries, 1));
  state.counters["tracked"] = static_cast<double>(tracked) / n;
  state.counters["untracked"] = static_cast<double>(untracked) / n;
  state.counters["grid_bytes"] = static_cast<double>(grid_bytes) / n;
  state.counters["shared_ms_per_snapshot"] =
      shared_s * 1e3 / static_cast<double>(state.iterations()) / static_cast<double>(t->samples.size() - warmup);
}

/// One player's viewer through the server's path (SnapshotWorldState + ClientSnapshotStream,
/// 1 Mbit/s at 20 Hz, each snapshot acknowledged): the trace's square view (~10k agents) around
/// the player, over the whole-world samples. What a normal viewer receives: bytes per snapshot,
/// entries (updated + added) per snapshot, bytes per entry, bytes per agent of the viewer's own
/// rectangle + margin (own_in_view), agents tracked (the shared rectangle's, issue 22).
void server_player_view(benchmark::State& state, const BenchOptions& options) {
  const Trace* t = trace_or_skip(state, options);
  if (t == nullptr) return;
  const std::size_t warmup = std::min<std::size_t>(options.quick ? 4 : 10, t->samples.size() / 2);
  server::SnapshotWorldState world;
  std::unique_ptr<server::ClientSnapshotStream> stream;
  std::vector<std::uint8_t> payload;
  std::size_t bytes = 0, entries = 0, tracked = 0, own = 0, snapshots = 0;
  for (auto _ : state) {
    stream = std::make_unique<server::ClientSnapshotStream>(server::ClientSnapshotParams{});
    bytes = entries = tracked = own = snapshots = 0;
    for (std::size_t k = 0; k < t->samples.size(); ++k) {
      const WorldSample& w = t->samples[k];
      world.assign(server::AgentArrays{w.ids, w.xs, w.ys, w.headings, {}}, w.players, w.tick, 1, 1.0f);
      world.set_map_size(t->map_width, t->map_height);  // as assign(World) does
      const float h = t->view_side / 2;
      const sim::Vec2 at = w.players.empty() ? sim::Vec2{512.0f, 512.0f} : w.players.front().position;
      const server::ViewRect view = server::ViewRect::from_corners(at.x - h, at.y - h, at.x + h, at.y + h);
      if (!stream->build(world, view, 0, payload)) {
        state.SkipWithError("the stream refused a snapshot");
        return;
      }
      protocol::SnapshotAck ack;
      ack.add(stream->last_sequence());
      static_cast<void>(stream->on_ack(ack));
      if (k < warmup) continue;
      const sp::QuantizedRect r = sp::quantize_view(view.x0, view.y0, view.x1, view.y1, server::kAoiMarginWorld, 1.0f);
      for (std::size_t i = 0; i < world.agents.size(); ++i) {
        const std::int64_t x = world.agents.xs[i], y = world.agents.ys[i];
        own += x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1 ? 1 : 0;
      }
      bytes += payload.size();
      entries += stream->last_stats().updated + stream->last_stats().added;
      tracked += stream->last_relevance().tracked;
      ++snapshots;
    }
  }
  const double n = static_cast<double>(std::max<std::size_t>(snapshots, 1));
  state.counters["bytes_per_snapshot"] = static_cast<double>(bytes) / n;
  state.counters["entries_per_snapshot"] = static_cast<double>(entries) / n;
  state.counters["bytes_per_entry"] =
      static_cast<double>(bytes) / static_cast<double>(std::max<std::size_t>(entries, 1));
  state.counters["own_in_view"] = static_cast<double>(own) / n;
  state.counters["bytes_per_own_agent"] =
      static_cast<double>(bytes) / static_cast<double>(std::max<std::size_t>(own, 1));
  state.counters["tracked"] = static_cast<double>(tracked) / n;
}

/// CPU time of the calling thread (the phase timed alone, whatever else the machine runs).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Issue 22, item 4: the server's snapshot phase for `viewers` whole-map viewers whose rectangles
/// are one cell apart (viewer v looks at [v, 1024 + v) x [0, 1024)) against as many viewers
/// sharing one rectangle, in the same run on the same trace: thread CPU time of prepare + build
/// for every viewer (the shared assign excluded: the same for both), the two sets of viewers
/// taking turns tick by tick so that the machine's load weighs on both alike. `world_agents` 0
/// keeps every agent of the trace; N keeps about N (the agents whose id % 100 is below N's
/// percentage of the trace: ids are spread over the map). Counters: same_ms, apart_ms (per
/// snapshot tick, all viewers), apart_vs_same (target: within 1.2x), *_prepare_ms (the serial
/// part: relevances), relevances computed per tick in each case.
void server_viewers_apart(benchmark::State& state, const BenchOptions& options) {
  const Trace* t = trace_or_skip(state, options);
  if (t == nullptr) return;
  const auto viewers = static_cast<std::size_t>(state.range(0));
  const auto keep = static_cast<std::size_t>(state.range(1));
  const std::size_t warmup = std::min<std::size_t>(options.quick ? 4 : 10, t->samples.size() / 2);
  // The trace cut to about `keep` agents (every agent of a sample whose id % 100 is below the
  // kept percentage), once.
  std::vector<WorldSample> cut;
  const std::vector<WorldSample>* samples = &t->samples;
  if (keep > 0 && keep < t->world_agents) {
    const std::size_t percent = std::max<std::size_t>(1, keep * 100 / t->world_agents);
    for (const WorldSample& w : t->samples) {
      WorldSample& c = cut.emplace_back();
      c.tick = w.tick;
      c.players = w.players;
      for (std::size_t i = 0; i < w.ids.size(); ++i) {
        if (w.ids[i] % 100 >= percent) continue;
        c.ids.push_back(w.ids[i]);
        c.xs.push_back(w.xs[i]);
        c.ys.push_back(w.ys[i]);
        c.headings.push_back(w.headings[i]);
      }
    }
    samples = &cut;
  }
  // Two sets of viewers fed the same trace tick by tick, the two phases of a tick timed back to
  // back (in alternating order), so that the machine's load weighs on both alike.
  struct Viewers {
    std::vector<std::unique_ptr<server::ClientSnapshotStream>> streams;
    std::vector<server::ViewRect> views;
    double seconds = 0, prepare_seconds = 0;  // the phase; its serial part (the relevances)
    std::size_t relevances = 0;
  };
  server::SnapshotWorldState world;
  std::vector<std::uint8_t> payload;
  auto phase = [&](Viewers& set, const WorldSample& w, bool timed) -> bool {
    world.assign(server::AgentArrays{w.ids, w.xs, w.ys, w.headings, {}}, w.players, w.tick, 1, 1.0f);
    world.set_map_size(t->map_width, t->map_height);  // as assign(World) does
    const double t0 = thread_cpu_seconds();
    for (std::size_t v = 0; v < viewers; ++v) set.streams[v]->prepare(world, set.views[v]);
    if (timed) set.prepare_seconds += thread_cpu_seconds() - t0;
    for (std::size_t v = 0; v < viewers; ++v) {
      if (!set.streams[v]->build(world, set.views[v], 0, payload)) return false;
      protocol::SnapshotAck ack;
      ack.add(set.streams[v]->last_sequence());
      static_cast<void>(set.streams[v]->on_ack(ack));
    }
    if (timed) {
      set.seconds += thread_cpu_seconds() - t0;
      set.relevances += world.relevances_computed();
    }
    return true;
  };
  Viewers same, apart;
  for (auto _ : state) {
    for (Viewers* set : {&same, &apart}) {
      set->streams.clear();
      set->views.clear();
      for (std::size_t v = 0; v < viewers; ++v) {
        set->streams.push_back(std::make_unique<server::ClientSnapshotStream>(server::ClientSnapshotParams{}));
        const float shift = set == &apart ? static_cast<float>(v) : 0.0f;
        set->views.push_back(server::ViewRect::from_corners(shift, 0.0f, 1024.0f + shift, 1024.0f));
      }
    }
    for (std::size_t k = 0; k < samples->size(); ++k) {
      const WorldSample& w = (*samples)[k];
      Viewers& first = k % 2 == 0 ? same : apart;
      Viewers& second = k % 2 == 0 ? apart : same;
      if (!phase(first, w, k >= warmup) || !phase(second, w, k >= warmup)) {
        state.SkipWithError("a stream refused a snapshot");
        return;
      }
    }
  }
  const double same_s = same.seconds, apart_s = apart.seconds;
  const std::size_t same_relevances = same.relevances, apart_relevances = apart.relevances;
  const double ticks = static_cast<double>(state.iterations()) * static_cast<double>(samples->size() - warmup);
  state.counters["viewers"] = static_cast<double>(viewers);
  state.counters["world_agents"] = static_cast<double>(samples->empty() ? 0 : samples->front().ids.size());
  state.counters["same_ms"] = same_s * 1e3 / ticks;
  state.counters["apart_ms"] = apart_s * 1e3 / ticks;
  state.counters["apart_vs_same"] = same_s > 0 ? apart_s / same_s : 0.0;
  state.counters["same_prepare_ms"] = same.prepare_seconds * 1e3 / ticks;
  state.counters["apart_prepare_ms"] = apart.prepare_seconds * 1e3 / ticks;
  state.counters["same_relevances"] = static_cast<double>(same_relevances) / ticks;
  state.counters["apart_relevances"] = static_cast<double>(apart_relevances) / ticks;
}

}  // namespace

void register_snapshot_benchmarks(const BenchOptions& options) {
  const std::string prefix = "snapshot/Boston_0_1024/";
  auto reg = [&](const std::string& name, auto fn) {
    benchmark::RegisterBenchmark((prefix + name).c_str(), fn)->Unit(benchmark::kMillisecond);
  };
  reg("encode/ours/delta_predicted", [options](benchmark::State& s) { encode_trace(s, options, Mode::kDeltaPredicted); });
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
  for (const int viewers : {1, 16, 64}) {
    benchmark::RegisterBenchmark((prefix + "server/whole_map_viewers").c_str(),
                                 [options](benchmark::State& s) { server_viewers(s, options); })
        ->Arg(viewers)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark((prefix + "server/player_view").c_str(),
                               [options](benchmark::State& s) { server_player_view(s, options); })
      ->Unit(benchmark::kMillisecond);
  // 60 viewers one cell apart vs sharing a rectangle: the whole trace and ~15k agents (the
  // load test's world, below the 16384 tracked cap).
  for (const int agents : {0, 15000}) {
    benchmark::RegisterBenchmark((prefix + "server/viewers_one_cell_apart_vs_same").c_str(),
                                 [options](benchmark::State& s) { server_viewers_apart(s, options); })
        ->Args({60, agents})
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace swarmfield::bench
