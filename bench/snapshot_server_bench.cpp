// Figure 5, the server's side: the snapshot phase as the server runs it (SnapshotWorldState +
// ClientSnapshotStream per client, 1 Mbit/s at 20 Hz, each snapshot acknowledged at once) on the
// whole-world samples of the recorded trace (snapshot_trace.hpp): N whole-map viewers, one
// player's view, and viewers whose rectangles are one cell apart against viewers sharing one
// (issue 22, item 4). The scenes of issue 22, item 5 are in snapshot_scene_bench.cpp.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "snapshot_trace.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/server/snapshot_builder.hpp"

// The server benchmark switches callgrind's instrumentation on for its snapshot phase only.
#include "callgrind_markers.hpp"

namespace swarmfield::bench {
namespace {

namespace sp = protocol;

/// The server's snapshot phase for `viewers` whole-map viewers (Boston_0_1024 is 1024 cells a
/// side): per snapshot tick, the shared SnapshotWorldState::assign (quantize, sort and tile every
/// agent), then per viewer ClientSnapshotStream::prepare + build (relevance, priorities against
/// the viewer's baseline, budget of 1 Mbit/s at 20 Hz, encode), each snapshot acknowledged at
/// once as a loopback client does. One thread (the server spreads the builds over --threads).
/// Fresh streams each iteration; the first kWarmup snapshots (full, then filling the tracked set)
/// are not timed. CPU time / (snapshots_per_iteration * viewers) = cost per viewer per snapshot.
void server_viewers(benchmark::State& state, const BenchOptions& options) {
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
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
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
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
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
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

void register_snapshot_server_benchmarks(const BenchOptions& options) {
  const std::string prefix = "snapshot/Boston_0_1024/";
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
