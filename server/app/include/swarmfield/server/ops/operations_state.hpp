#pragma once
// What the operations side (HTTP endpoints, Agones health) reads from the tick thread, shared
// across threads: the tick thread publishes a metrics snapshot once per tick (a mutex-guarded
// copy of fixed-size data: no lock is held across a tick, readers copy it out) and stamps the
// time of its last tick in an atomic; ready/draining are atomics too.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "swarmfield/server/ops/metrics.hpp"

namespace swarmfield::server {

class OperationsState {
 public:
  using Clock = std::chrono::steady_clock;

  /// Longest time without a tick for which the tick loop still counts as alive (/healthz,
  /// Agones Health): a 30 Hz loop ticks every 33 ms; a catch-up batch of slow ticks stays well
  /// below it.
  static constexpr std::chrono::milliseconds kStallLimit{1000};

  /// Names for the labelled series (set once before any reader starts).
  void set_labels(std::vector<std::string> kind_names, std::vector<const char*> drop_reasons);
  /// Tick thread, once per tick: copies `m` for readers and stamps the tick time.
  void publish(const MetricsSnapshot& m, Clock::time_point now);
  /// Stamps "the tick loop is alive" without new metrics (before the first tick).
  void mark_alive(Clock::time_point now) noexcept;
  void set_ready(bool ready) noexcept { ready_.store(ready); }
  void set_draining(bool draining) noexcept { draining_.store(draining); }

  [[nodiscard]] bool ready() const noexcept { return ready_.load() && !draining_.load(); }
  [[nodiscard]] bool draining() const noexcept { return draining_.load(); }
  /// Time since the tick loop was last alive; max() if it never was.
  [[nodiscard]] Clock::duration tick_age(Clock::time_point now) const noexcept;
  /// True while tick_age(now) <= kStallLimit.
  [[nodiscard]] bool alive(Clock::time_point now) const noexcept { return tick_age(now) <= kStallLimit; }
  /// The last published snapshot (a copy).
  [[nodiscard]] MetricsSnapshot snapshot() const;
  /// The last published snapshot in the Prometheus text format.
  [[nodiscard]] std::string metrics_text() const;

 private:
  mutable std::mutex mutex_;
  MetricsSnapshot published_;
  std::vector<std::string> kind_names_;
  std::vector<const char*> drop_reasons_;
  std::atomic<std::int64_t> last_alive_ns_{-1};
  std::atomic<bool> ready_{false};
  std::atomic<bool> draining_{false};
};

}  // namespace swarmfield::server
