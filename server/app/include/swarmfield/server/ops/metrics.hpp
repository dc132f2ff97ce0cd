#pragma once
// Operations metrics: what the tick thread publishes once per tick (plain data, fixed size, no
// allocation), and its rendering in the Prometheus text exposition format (version 0.0.4,
// https://prometheus.io/docs/instrumenting/exposition_formats/).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "swarmfield/server/ops/process_stats.hpp"

namespace swarmfield::server {

/// A fixed-bucket histogram of durations in seconds (Prometheus `histogram`).
struct DurationHistogram {
  /// Bucket upper bounds, seconds: sub-millisecond ticks up to one-second stalls (a 30 Hz tick
  /// has 33 ms).
  static constexpr std::array<double, 12> kBounds = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.02,
                                                     0.033, 0.05, 0.1, 0.25, 0.5, 1.0};
  std::array<std::uint64_t, kBounds.size() + 1> counts{};  ///< per bucket (not cumulative); last = above 1 s
  double sum_s = 0.0;
  std::uint64_t count = 0;

  /// Counts one duration (seconds; negative or NaN counts as 0).
  void observe(double seconds) noexcept;
};

inline constexpr std::size_t kMaxMetricKinds = 16;   ///< agent kinds reported (sim::kMaxAgentKinds)
inline constexpr std::size_t kMaxDropReasons = 16;   ///< UDP drop reasons reported
/// A tick's phases, as tick_phase_duration_seconds{phase} names them: fields (inputs and the
/// World's field work), swarm (the World's step, the rules, map deltas), snapshots (encoding and
/// sending them, the once-a-second sweeps).
inline constexpr std::array<const char*, 3> kTickPhaseNames = {"fields", "swarm", "snapshots"};

/// Everything /metrics shows, as of the end of one tick. Counters are totals since start.
struct MetricsSnapshot {
  std::uint64_t ticks = 0;
  std::uint64_t overruns = 0;       ///< scheduler polls that found the loop >= 1 tick behind
  std::uint64_t skipped_ticks = 0;  ///< ticks dropped by the catch-up cap
  DurationHistogram tick_duration;  ///< whole tick: inputs, World step, snapshots
  std::uint64_t field_rebuilds = 0; ///< completed field builds
  DurationHistogram rebuild_duration;  ///< World::begin_tick on ticks with rebuild work
  std::array<DurationHistogram, kTickPhaseNames.size()> phase_duration;  ///< every tick, by kTickPhaseNames
  std::array<std::uint64_t, kMaxMetricKinds> agents_by_kind{};  ///< see kind names in render_metrics
  std::size_t kind_count = 1;
  std::uint64_t players = 0;
  std::uint64_t clients = 0;               ///< joined clients now (viewers + players)
  std::uint64_t connections_accepted = 0;  ///< TCP connections accepted since start
  std::uint64_t tcp_bytes_sent = 0;
  std::uint64_t tcp_bytes_received = 0;    ///< complete frames, length prefix included
  std::uint64_t tcp_frames_received = 0;
  std::uint64_t udp_bytes_sent = 0;
  std::uint64_t udp_bytes_received = 0;
  std::uint64_t udp_datagrams_sent = 0;
  std::uint64_t udp_datagrams_received = 0;
  std::array<std::uint64_t, kMaxDropReasons> udp_drops{};  ///< by reason, see drop names
  std::size_t drop_reason_count = 0;
  std::uint64_t evictions = 0;             ///< clients dropped because their send queue overflowed
  std::uint64_t bad_frames = 0;
  std::uint64_t hello_timeouts = 0;
  std::uint64_t idle_timeouts = 0;
  std::uint64_t frame_timeouts = 0;
  std::uint64_t refused_full = 0;
  std::uint64_t refused_per_address = 0;
  bool draining = false;
};

/// Names for the labelled series: agent kinds (index = kind) and UDP drop reasons (index =
/// reason). Label values are escaped as the format requires.
struct MetricsLabels {
  const std::string* kind_names = nullptr;  ///< kind_count names
  const char* const* drop_reasons = nullptr;  ///< drop_reason_count names
};

/// The snapshot in the Prometheus text format. Metric names (all prefixed swarmfield_):
/// ticks_total, tick_duration_seconds (histogram), tick_overruns_total, skipped_ticks_total,
/// field_rebuilds_total, field_rebuild_duration_seconds (histogram),
/// tick_phase_duration_seconds{phase="fields|swarm|snapshots"} (histogram), agents{kind}, players,
/// clients, connections_accepted_total, sent_bytes_total{transport}, received_bytes_total{transport},
/// tcp_frames_received_total, datagrams_sent_total, datagrams_received_total,
/// udp_dropped_total{reason}, evictions_total, tcp_bad_frames_total,
/// connection_timeouts_total{timeout="hello|idle|frame"}, connections_refused_total{reason="full|per_address"},
/// draining.
[[nodiscard]] std::string render_metrics(const MetricsSnapshot& m, const MetricsLabels& labels);

/// The process's figures (read_process_stats) as the standard families, unprefixed as the
/// Prometheus client libraries name them: process_cpu_seconds_total (counter),
/// process_resident_memory_bytes, process_virtual_memory_bytes, process_open_fds,
/// process_max_fds, process_start_time_seconds (gauges).
[[nodiscard]] std::string render_process_metrics(const ProcessStats& s);

}  // namespace swarmfield::server
