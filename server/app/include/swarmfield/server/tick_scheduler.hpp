#pragma once
// Fixed-rate tick schedule: tick n is due at origin + n * period on a steady clock (no drift:
// lateness of one tick never shifts the next deadline). Pure: the caller passes "now", so tests
// drive it with fake time points. Source of the idea: Quake III's server frame / "Fix Your
// Timestep" (Fiedler): a fixed step with capped catch-up.
#include <chrono>
#include <cstdint>

namespace swarmfield::server {

class TickScheduler {
 public:
  using Clock = std::chrono::steady_clock;
  using TimePoint = Clock::time_point;
  using Duration = Clock::duration;

  /// What poll() decided.
  struct Decision {
    std::uint32_t ticks_to_run = 0;  ///< run this many ticks now (0..max_catch_up)
    std::uint64_t skipped_ticks = 0; ///< ticks dropped by the catch-up cap in this poll
  };

  /// `start`: when tick 0 is due. `period` (> 0): tick length. `max_catch_up` (>= 1): most ticks
  /// one poll may ask for; when more are due the rest are dropped and counted (a resync).
  TickScheduler(TimePoint start, Duration period, std::uint32_t max_catch_up = 5) noexcept;

  /// Number of ticks due at `now` (ticks whose deadline <= now and that have not been handed
  /// out yet), capped at max_catch_up. Counts an overrun when the loop is a whole tick or more
  /// behind (more than one tick due), and a resync when the cap dropped ticks. After a resync
  /// the schedule keeps its phase: the next tick is the next grid point after `now`.
  [[nodiscard]] Decision poll(TimePoint now) noexcept;

  /// Deadline of the next tick not yet handed out (origin + next_tick * period).
  [[nodiscard]] TimePoint next_deadline() const noexcept { return origin_ + period_ * static_cast<std::int64_t>(next_tick_); }

  [[nodiscard]] Duration period() const noexcept { return period_; }
  /// Ticks handed out to the caller so far.
  [[nodiscard]] std::uint64_t ticks_run() const noexcept { return ticks_run_; }
  /// Polls that found more than one tick due (the loop fell at least one tick behind).
  [[nodiscard]] std::uint64_t overruns() const noexcept { return overruns_; }
  /// Polls that hit the catch-up cap and dropped ticks.
  [[nodiscard]] std::uint64_t resyncs() const noexcept { return resyncs_; }
  /// Total ticks dropped by the cap (skipped simulated time = skipped_ticks * period).
  [[nodiscard]] std::uint64_t skipped_ticks() const noexcept { return skipped_ticks_; }

 private:
  TimePoint origin_;
  Duration period_;
  std::uint32_t max_catch_up_;
  std::uint64_t next_tick_ = 0;  // index of the next tick on the grid
  std::uint64_t ticks_run_ = 0;
  std::uint64_t overruns_ = 0;
  std::uint64_t resyncs_ = 0;
  std::uint64_t skipped_ticks_ = 0;
};

}  // namespace swarmfield::server
