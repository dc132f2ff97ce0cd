#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "swarmfield/server/tick_stats.hpp"

using swarmfield::server::TickStats;

TEST_CASE("tick_stats: nearest-rank percentiles") {
  TickStats s(1000);
  CHECK(s.percentile(0.5) == 0.0);  // empty
  // Added out of order so sortedness is not assumed.
  for (int i = 100; i >= 1; --i) s.add(static_cast<double>(i));
  CHECK(s.size() == 100);
  CHECK(s.percentile(0.5) == 50.0);
  CHECK(s.percentile(0.99) == 99.0);
  CHECK(s.percentile(1.0) == 100.0);
  CHECK(s.percentile(0.0) == 1.0);
  CHECK(s.max() == 100.0);
  CHECK(s.mean() == doctest::Approx(50.5));
}

TEST_CASE("tick_stats: only the newest `capacity` samples count") {
  TickStats s(10);
  for (int i = 0; i < 10; ++i) s.add(1000.0);
  for (int i = 1; i <= 10; ++i) s.add(static_cast<double>(i));
  CHECK(s.size() == 10);
  CHECK(s.count() == 20);
  CHECK(s.percentile(1.0) == 10.0);
  CHECK(s.percentile(0.5) == 5.0);
  s.clear();
  CHECK(s.size() == 0);
  CHECK(s.percentile(0.99) == 0.0);
}

TEST_CASE("tick_stats: bad samples become 0 instead of poisoning the percentiles") {
  TickStats s(8);
  s.add(std::numeric_limits<double>::quiet_NaN());
  s.add(-3.0);
  s.add(std::numeric_limits<double>::infinity());
  s.add(2.0);
  CHECK(s.percentile(1.0) == 2.0);
  CHECK(s.percentile(0.5) == 0.0);
  CHECK(std::isfinite(s.mean()));
}
