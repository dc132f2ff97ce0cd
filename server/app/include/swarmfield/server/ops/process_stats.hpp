#pragma once
// The process's own figures for /metrics, under the names every Prometheus client library uses
// for them (process_cpu_seconds_total, process_resident_memory_bytes, ...), read from Linux's
// /proc at scrape time: dashboards and alerts written for any exporter work unchanged.
#include <cstdint>

namespace swarmfield::server {

struct ProcessStats {
  double cpu_seconds = 0.0;            ///< user + system CPU time of all threads, seconds (CLOCK_PROCESS_CPUTIME_ID, exact; /proc's tick-sampled utime + stime if that clock fails)
  std::uint64_t resident_bytes = 0;    ///< resident set size
  std::uint64_t virtual_bytes = 0;     ///< virtual memory size
  std::uint64_t open_fds = 0;          ///< open file descriptors
  std::uint64_t max_fds = 0;           ///< the soft limit on them (RLIMIT_NOFILE)
  double start_time_seconds = 0.0;     ///< start time, seconds since the Unix epoch
};

/// Reads this process's figures from /proc/self (stat, fd/) and /proc/stat (boot time). Returns
/// false, leaving `out` as it was, when /proc cannot be read or parsed (not Linux, /proc not
/// mounted); a partial read is never reported.
[[nodiscard]] bool read_process_stats(ProcessStats& out);

// (render_process_metrics, metrics.hpp, writes them.)

}  // namespace swarmfield::server
