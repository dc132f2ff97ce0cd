// Issue 22, item 5: snapshots on the scenes users meet, through the server's path
// (SnapshotWorldState once per snapshot tick, then a ClientSnapshotStream per viewer with the
// server's defaults: 1 Mbit/s at 20 Hz, each snapshot acknowledged at once as a loopback client
// does). The first snapshots of a stream (full, then filling its tracked set) are not counted.
//   scene/crowded_whole_map      Boston_0_256: 20k agents of the server's default kinds, stepped
//                                by the real World while they crowd round a player walking
//                                between waypoints near the centre (20 s, as long as
//                                `server_load.sh --seconds 20` runs), then one whole-map viewer.
//                                The scene of the server's bytes_per_agent=1.504 (issue 22).
//   scene/crowded_whole_map_rtt  the same, each snapshot acknowledged one snapshot late (coded
//                                against the one two back): what a round trip costs the view.
//   scene/follow_camera          Boston_0_1024: the 100k horde of the recorded trace
//                                (snapshot_trace.hpp), a 60 x 34-cell window (1920 x 1080 at 32
//                                pixels a cell) centred on the player as it walks.
//   scene/extra_whole_map_viewer/N  the trace's 100k agents: 1 whole-map viewer and N whole-map
//                                viewers, the two taking turns tick by tick in one run (so the
//                                machine's load weighs on both alike); ms_per_extra_viewer =
//                                (N viewers' CPU - 1 viewer's) / (N - 1) per snapshot tick.
// Counters, not assertions: scripts/bench.sh prints them against issue 22's targets.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_registry.hpp"
#include "bench_support.hpp"
#include "setup_or_skip.hpp"
#include "snapshot_trace.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/server/snapshot_builder.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::bench {
namespace {

constexpr const char* kCrowdedMap = "street/Boston_0_256.map";
constexpr std::uint32_t kCrowdedAgents = 20000;
// A follow camera's window, cells: 1920 x 1080 pixels at 32 pixels a cell.
constexpr float kFollowWidth = 60.0f;
constexpr float kFollowHeight = 34.0f;
// Snapshot ticks a stream fills before it is counted: its first is full, the next ones add
// agents until the tracked set is full (at 6250 bytes a snapshot, ~15 for a 16k-agent view).
constexpr std::size_t kStreamWarmup = 20;

/// 20k agents crowding round a player on Boston_0_256, whole-world samples at 20 Hz.
struct CrowdedScene {
  std::vector<WorldSample> samples;
  std::int32_t map_width = 0, map_height = 0;  // cells
  std::size_t world_agents = 0;
  double near_player = 0;  // fraction of the agents within 32 cells of the player, last sample
};

/// Steps the scene once (seconds of simulation: 600 ticks of 20k agents; 90 with --quick).
const CrowdedScene& crowded_scene(const BenchOptions& options) {
  static std::unique_ptr<CrowdedScene> cached;
  if (cached) return *cached;
  auto s = std::make_unique<CrowdedScene>();
  const sim::GridMap& map = load_map(kCrowdedMap);  // throws with a readable message
  s->map_width = map.width();
  s->map_height = map.height();
  sim::WorldParams wp;
  wp.kinds = sim::default_agent_kinds();  // the server's: the kind is part of each added entry
  wp.spawner.initial_agents = kCrowdedAgents;  // --quick too: the crowd is the scene
  wp.worker_threads = 2;
  sim::World world(map, wp);
  const sim::CellCoord centre = nearest_walkable(map, {map.width() / 2, map.height() / 2});
  WanderingPlayer wanderer(world, centre, 40.0f, 5);
  auto step = [&](int tick) { wanderer.step(tick); };
  const int warmup = options.quick ? 90 : 600;
  const std::size_t snapshots = options.quick ? 12 : kStreamWarmup + 60;
  int tick = 0;
  for (; tick < warmup; ++tick) step(tick);
  while (s->samples.size() < snapshots) {
    step(tick);
    ++tick;
    if ((tick * 2) / 3 == ((tick - 1) * 2) / 3) continue;  // 20 Hz snapshots of a 30 Hz world
    const sim::Swarm& sw = world.swarm();
    WorldSample& w = s->samples.emplace_back();
    w.tick = static_cast<std::uint32_t>(world.tick());
    w.ids.assign(sw.ids().begin(), sw.ids().end());
    shown_positions(sw, w.xs, w.ys);  // as the server sends them
    w.headings.assign(sw.headings().begin(), sw.headings().end());
    w.kinds.assign(sw.kinds().begin(), sw.kinds().end());
    w.players.assign(world.players().begin(), world.players().end());
  }
  s->world_agents = world.swarm().size();
  const sim::Vec2 at = world.find_player(wanderer.player())->position;
  std::size_t near = 0;
  for (std::size_t i = 0; i < world.swarm().size(); ++i) {
    near += std::hypot(world.swarm().xs()[i] - at.x, world.swarm().ys()[i] - at.y) < 32.0f ? 1 : 0;
  }
  s->near_player = static_cast<double>(near) / static_cast<double>(std::max<std::size_t>(s->world_agents, 1));
  cached = std::move(s);  // only a complete scene is kept: a failed set-up is tried again
  return *cached;
}

/// What one viewer's stream sent over the counted snapshots.
struct StreamTotals {
  std::size_t bytes = 0, entries = 0, moving = 0, tracked = 0, visible = 0, snapshots = 0;
  // Where the bytes go (SnapshotEncodeStats): header + players, the bit section (structure:
  // removed and kept runs, added agents, grid, tables, escapes), the rANS residual streams.
  std::size_t header_bytes = 0, bit_bytes = 0, rans_bytes = 0, added = 0;
  std::size_t grid_bits = 0, added_bits = 0, escape_bits = 0;
  double build_s = 0;  // thread CPU of prepare + build (the shared assign excluded)
};

/// Replays `samples` through one fresh stream looking at `view_of(sample)`; the samples from
/// `warmup` on are counted into `totals`. Each snapshot is acknowledged `ack_delay` snapshots
/// after it was built (0: at once, as a loopback client; 1: before the next but one, as a client
/// whose round trip is about one snapshot interval, so its baseline is 2 back). False if the
/// stream refused a snapshot.
template <class ViewOf>
bool replay_stream(const std::vector<WorldSample>& samples, std::size_t warmup, std::int32_t map_width,
                   std::int32_t map_height, ViewOf view_of, StreamTotals& totals, std::size_t ack_delay = 0) {
  server::SnapshotWorldState world;
  server::ClientSnapshotStream stream{server::ClientSnapshotParams{}};
  std::vector<std::uint8_t> payload;
  std::vector<std::uint32_t> sent;  // sequences built, by snapshot
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const WorldSample& w = samples[k];
    if (ack_delay > 0 && k >= ack_delay + 1) {
      protocol::SnapshotAck ack;
      ack.add(sent[k - ack_delay - 1]);
      static_cast<void>(stream.on_ack(ack));
    }
    world.assign(server::AgentArrays{w.ids, w.xs, w.ys, w.headings, w.kinds}, w.players, w.tick, 1, 1.0f);
    world.set_map_size(map_width, map_height);  // as assign(World) does
    const server::ViewRect view = view_of(w);
    const double t0 = thread_cpu_seconds();
    stream.prepare(world, view);
    if (!stream.build(world, view, 0, payload)) return false;
    const double t1 = thread_cpu_seconds();
    sent.push_back(stream.last_sequence());
    if (ack_delay == 0) {
      protocol::SnapshotAck ack;
      ack.add(stream.last_sequence());
      static_cast<void>(stream.on_ack(ack));
    }
    if (k < warmup) continue;
    totals.build_s += t1 - t0;
    totals.bytes += payload.size();
    totals.entries += stream.last_stats().updated + stream.last_stats().added;
    totals.moving += stream.last_stats().moving;
    const protocol::SnapshotEncodeStats& es = stream.last_stats();
    totals.header_bytes += es.header_bytes;
    totals.bit_bytes += es.bit_bytes;
    totals.rans_bytes += es.rans_bytes;
    totals.added += es.added;
    totals.grid_bits += es.grid_bits;
    totals.added_bits += es.added_bits;
    totals.escape_bits += es.escape_bits;
    totals.tracked += stream.last_relevance().tracked;
    for (std::size_t i = 0; i < w.xs.size(); ++i) {
      totals.visible += w.xs[i] >= view.x0 && w.xs[i] < view.x1 && w.ys[i] >= view.y0 && w.ys[i] < view.y1 ? 1 : 0;
    }
    ++totals.snapshots;
  }
  return true;
}

void stream_counters(benchmark::State& state, const StreamTotals& t) {
  const double n = static_cast<double>(std::max<std::size_t>(t.snapshots, 1));
  const auto per = [](std::size_t a, std::size_t b) {
    return static_cast<double>(a) / static_cast<double>(std::max<std::size_t>(b, 1));
  };
  // bytes_per_entry is what the server's summary calls bytes_per_agent (payload bytes per agent
  // entry sent: updated + added).
  state.counters["bytes_per_entry"] = per(t.bytes, t.entries);
  state.counters["bytes_per_moving_entry"] = per(t.bytes, t.moving);
  state.counters["bytes_per_visible_agent"] = per(t.bytes, t.visible);
  state.counters["bytes_per_snapshot"] = static_cast<double>(t.bytes) / n;
  state.counters["entries_per_snapshot"] = static_cast<double>(t.entries) / n;
  state.counters["visible_agents"] = static_cast<double>(t.visible) / n;
  state.counters["tracked"] = static_cast<double>(t.tracked) / n;
  state.counters["kbit_per_s"] = static_cast<double>(t.bytes) / n * 20.0 * 8.0 / 1000.0;  // at 20 Hz
  state.counters["encode_ms"] = t.build_s * 1e3 / n;
  // The breakdown of bytes_per_entry (bytes per entry each): the residual streams, escaped
  // residuals, the added agents' absolute values, the density grid, the rest of the bit section
  // (which kept agents are updated, which removed; tables), header and players.
  const auto bits_per = [&](std::size_t bits) { return static_cast<double>(bits) / 8.0 / static_cast<double>(std::max<std::size_t>(t.entries, 1)); };
  const std::size_t structure_bits = t.bit_bytes * 8 > t.grid_bits + t.added_bits + t.escape_bits
                                         ? t.bit_bytes * 8 - t.grid_bits - t.added_bits - t.escape_bits
                                         : 0;
  state.counters["residual_bytes_per_entry"] = bits_per(t.rans_bytes * 8);
  state.counters["escape_bytes_per_entry"] = bits_per(t.escape_bits);
  state.counters["added_bytes_per_entry"] = bits_per(t.added_bits);
  state.counters["grid_bytes_per_entry"] = bits_per(t.grid_bits);
  state.counters["structure_bytes_per_entry"] = bits_per(structure_bits);
  state.counters["header_bytes_per_entry"] = bits_per(t.header_bytes * 8);
  state.counters["added_share"] = per(t.added, t.entries);
  state.counters["snapshots"] = static_cast<double>(t.snapshots);
}

void crowded_whole_map(benchmark::State& state, const BenchOptions& options, std::size_t ack_delay) {
  const CrowdedScene* s = setup_or_skip(state, [&]() -> const CrowdedScene& { return crowded_scene(options); });
  if (s == nullptr) return;
  const std::size_t warmup = std::min(kStreamWarmup, s->samples.size() / 2);
  const server::ViewRect whole{0.0f, 0.0f, static_cast<float>(s->map_width), static_cast<float>(s->map_height)};
  StreamTotals totals;
  for (auto _ : state) {
    totals = {};
    if (!replay_stream(s->samples, warmup, s->map_width, s->map_height, [&](const WorldSample&) { return whole; },
                       totals, ack_delay)) {
      state.SkipWithError("the stream refused a snapshot");
      return;
    }
  }
  stream_counters(state, totals);
  state.counters["world_agents"] = static_cast<double>(s->world_agents);
  state.counters["near_player"] = s->near_player;
}

void follow_camera(benchmark::State& state, const BenchOptions& options) {
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
  if (t == nullptr) return;
  const std::size_t warmup = std::min<std::size_t>(options.quick ? 4 : 10, t->samples.size() / 2);
  const auto window = [](const WorldSample& w) {
    const sim::Vec2 at = w.players.empty() ? sim::Vec2{512.0f, 512.0f} : w.players.front().position;
    return server::ViewRect::from_corners(at.x - kFollowWidth / 2, at.y - kFollowHeight / 2, at.x + kFollowWidth / 2,
                                          at.y + kFollowHeight / 2);
  };
  StreamTotals totals;
  for (auto _ : state) {
    totals = {};
    if (!replay_stream(t->samples, warmup, t->map_width, t->map_height, window, totals)) {
      state.SkipWithError("the stream refused a snapshot");
      return;
    }
  }
  stream_counters(state, totals);
  state.counters["world_agents"] = static_cast<double>(t->world_agents);
}

/// 1 whole-map viewer and `viewers` of them on the trace's whole-world samples, taking turns.
void extra_whole_map_viewers(benchmark::State& state, const BenchOptions& options) {
  const SnapshotTrace* t = snapshot_trace_or_skip(state, options);
  if (t == nullptr) return;
  const auto viewers = static_cast<std::size_t>(state.range(0));
  const std::size_t warmup = std::min<std::size_t>(options.quick ? 4 : 10, t->samples.size() / 2);
  const server::ViewRect whole{0.0f, 0.0f, static_cast<float>(t->map_width), static_cast<float>(t->map_height)};
  struct Viewers {
    std::vector<std::unique_ptr<server::ClientSnapshotStream>> streams;
    double seconds = 0;
  };
  server::SnapshotWorldState world;
  std::vector<std::uint8_t> payload;
  // A phase as the server runs it (serial prepare, then the builds) on one thread; the world
  // assigned afresh for each set, so that neither finds the other's relevance cached.
  auto phase = [&](Viewers& set, const WorldSample& w, bool timed) -> bool {
    world.assign(server::AgentArrays{w.ids, w.xs, w.ys, w.headings, w.kinds}, w.players, w.tick, 1, 1.0f);
    world.set_map_size(t->map_width, t->map_height);
    const double t0 = thread_cpu_seconds();
    for (auto& s : set.streams) s->prepare(world, whole);
    for (auto& s : set.streams) {
      if (!s->build(world, whole, 0, payload)) return false;
      protocol::SnapshotAck ack;
      ack.add(s->last_sequence());
      static_cast<void>(s->on_ack(ack));
    }
    if (timed) set.seconds += thread_cpu_seconds() - t0;
    return true;
  };
  Viewers one, many;
  for (auto _ : state) {
    for (Viewers* set : {&one, &many}) {
      set->streams.clear();
      const std::size_t n = set == &one ? 1 : viewers;
      for (std::size_t v = 0; v < n; ++v) {
        set->streams.push_back(std::make_unique<server::ClientSnapshotStream>(server::ClientSnapshotParams{}));
      }
    }
    for (std::size_t k = 0; k < t->samples.size(); ++k) {
      Viewers& first = k % 2 == 0 ? one : many;
      Viewers& second = k % 2 == 0 ? many : one;
      if (!phase(first, t->samples[k], k >= warmup) || !phase(second, t->samples[k], k >= warmup)) {
        state.SkipWithError("a stream refused a snapshot");
        return;
      }
    }
  }
  const double ticks = static_cast<double>(state.iterations()) * static_cast<double>(t->samples.size() - warmup);
  const double one_ms = one.seconds * 1e3 / ticks, many_ms = many.seconds * 1e3 / ticks;
  state.counters["viewers"] = static_cast<double>(viewers);
  state.counters["world_agents"] = static_cast<double>(t->world_agents);
  state.counters["one_viewer_ms"] = one_ms;
  state.counters["viewers_ms"] = many_ms;
  state.counters["ms_per_extra_viewer"] = viewers > 1 ? (many_ms - one_ms) / static_cast<double>(viewers - 1) : 0.0;
  // What an extra viewer costs against the first (which also pays the shared relevance).
  state.counters["extra_vs_first"] = one_ms > 0 && viewers > 1 ? (many_ms - one_ms) / static_cast<double>(viewers - 1) / one_ms : 0.0;
}

}  // namespace

void register_snapshot_scene_benchmarks(const BenchOptions& options) {
  benchmark::RegisterBenchmark("snapshot/Boston_0_256/scene/crowded_whole_map",
                               [options](benchmark::State& s) { crowded_whole_map(s, options, 0); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("snapshot/Boston_0_256/scene/crowded_whole_map_rtt",
                               [options](benchmark::State& s) { crowded_whole_map(s, options, 1); })
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("snapshot/Boston_0_1024/scene/follow_camera",
                               [options](benchmark::State& s) { follow_camera(s, options); })
      ->Unit(benchmark::kMillisecond);
  for (const int viewers : {16, 64}) {
    benchmark::RegisterBenchmark("snapshot/Boston_0_1024/scene/extra_whole_map_viewer",
                                 [options](benchmark::State& s) { extra_whole_map_viewers(s, options); })
        ->Arg(viewers)
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace swarmfield::bench
