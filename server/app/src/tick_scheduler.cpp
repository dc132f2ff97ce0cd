#include "swarmfield/server/tick_scheduler.hpp"

namespace swarmfield::server {

TickScheduler::TickScheduler(TimePoint start, Duration period, std::uint32_t max_catch_up) noexcept
    : origin_(start),
      period_(period.count() > 0 ? period : Duration{1}),
      max_catch_up_(max_catch_up > 0 ? max_catch_up : 1) {}

TickScheduler::Decision TickScheduler::poll(TimePoint now) noexcept {
  Decision d;
  if (now < next_deadline()) return d;
  // Ticks whose deadline origin + k*period <= now, for k >= next_tick_.
  const auto elapsed = now - origin_;
  const auto last_due = static_cast<std::uint64_t>(elapsed / period_);  // floor, elapsed >= 0 here
  const std::uint64_t due = last_due + 1 - next_tick_;
  if (due > 1) ++overruns_;
  if (due > max_catch_up_) {
    d.ticks_to_run = max_catch_up_;
    d.skipped_ticks = due - max_catch_up_;
    skipped_ticks_ += d.skipped_ticks;
    ++resyncs_;
  } else {
    d.ticks_to_run = static_cast<std::uint32_t>(due);
  }
  // Either way every due grid point is consumed, so the phase of the schedule is kept.
  next_tick_ += due;
  ticks_run_ += d.ticks_to_run;
  return d;
}

}  // namespace swarmfield::server
