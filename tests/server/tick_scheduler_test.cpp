#include <doctest/doctest.h>

#include "swarmfield/server/tick_scheduler.hpp"

using swarmfield::server::TickScheduler;
using namespace std::chrono_literals;

namespace {
const TickScheduler::TimePoint kStart{std::chrono::seconds(1000)};
// 30 Hz in nanoseconds is not an integer number of ns; the grid must still not drift.
const TickScheduler::Duration kPeriod = std::chrono::nanoseconds(33'333'333);
}  // namespace

TEST_CASE("tick_scheduler: nothing is due before the first deadline, tick 0 is due at start") {
  TickScheduler s(kStart, kPeriod);
  CHECK(s.poll(kStart - 1ns).ticks_to_run == 0);
  CHECK(s.poll(kStart).ticks_to_run == 1);
  CHECK(s.poll(kStart).ticks_to_run == 0);  // already handed out
  CHECK(s.next_deadline() == kStart + kPeriod);
  CHECK(s.poll(kStart + kPeriod - 1ns).ticks_to_run == 0);
  CHECK(s.poll(kStart + kPeriod).ticks_to_run == 1);
  CHECK(s.overruns() == 0);
}

TEST_CASE("tick_scheduler: late wake-ups do not accumulate (deadline = start + n*period)") {
  TickScheduler s(kStart, kPeriod);
  const int n = 10000;
  for (int i = 0; i < n; ++i) {
    // Every wake-up is 0.1..0.9 ms late, as a real timer would be.
    const auto jitter = std::chrono::microseconds(100 + (i * 37) % 800);
    const auto d = s.poll(s.next_deadline() + jitter);
    REQUIRE(d.ticks_to_run == 1);
  }
  CHECK(s.ticks_run() == static_cast<std::uint64_t>(n));
  CHECK(s.next_deadline() == kStart + kPeriod * n);  // exactly on the grid: no drift
  CHECK(s.overruns() == 0);
  CHECK(s.skipped_ticks() == 0);
}

TEST_CASE("tick_scheduler: a slow tick is caught up and counted as an overrun") {
  TickScheduler s(kStart, kPeriod, 5);
  REQUIRE(s.poll(kStart).ticks_to_run == 1);
  // Woken 2.5 periods after tick 1 was due: ticks 1, 2 and 3 are due.
  const auto d = s.poll(kStart + kPeriod + kPeriod * 2 + kPeriod / 2);
  CHECK(d.ticks_to_run == 3);
  CHECK(d.skipped_ticks == 0);
  CHECK(s.overruns() == 1);
  CHECK(s.resyncs() == 0);
  CHECK(s.next_deadline() == kStart + kPeriod * 4);
}

TEST_CASE("tick_scheduler: catch-up is capped, the rest is skipped and the schedule resyncs on its grid") {
  TickScheduler s(kStart, kPeriod, 5);
  REQUIRE(s.poll(kStart).ticks_to_run == 1);
  // A 100-period stall (e.g. the process was stopped): ticks 1..100 are due.
  const auto now = kStart + kPeriod * 100 + 1ms;
  const auto d = s.poll(now);
  CHECK(d.ticks_to_run == 5);
  CHECK(d.skipped_ticks == 95);
  CHECK(s.skipped_ticks() == 95);
  CHECK(s.resyncs() == 1);
  CHECK(s.overruns() == 1);
  CHECK(s.ticks_run() == 6);
  // The next deadline is the first grid point after now, not now + period.
  CHECK(s.next_deadline() == kStart + kPeriod * 101);
  CHECK(s.next_deadline() > now);
  CHECK(s.poll(now).ticks_to_run == 0);
  CHECK(s.poll(s.next_deadline()).ticks_to_run == 1);
  CHECK(s.overruns() == 1);
}

TEST_CASE("tick_scheduler: a cap of 1 never runs two ticks in one poll") {
  TickScheduler s(kStart, kPeriod, 1);
  const auto d = s.poll(kStart + kPeriod * 3);
  CHECK(d.ticks_to_run == 1);
  CHECK(d.skipped_ticks == 3);
}
