#include <doctest/doctest.h>

#include <string>

#include "swarmfield/server/net/per_address_count.hpp"

using swarmfield::server::PerAddressCount;

TEST_CASE("per_address_count: counts per address, drops an address at zero, never below") {
  PerAddressCount<std::string> counts;
  CHECK(counts.count("10.0.0.1") == 0);
  CHECK(counts.add("10.0.0.1") == 1);
  CHECK(counts.add("10.0.0.1") == 2);
  CHECK(counts.add("10.0.0.2") == 1);
  counts.remove("10.0.0.1");
  CHECK(counts.count("10.0.0.1") == 1);
  counts.remove("10.0.0.1");
  counts.remove("10.0.0.1");  // none counted: nothing happens
  CHECK(counts.count("10.0.0.1") == 0);
  CHECK(counts.add("10.0.0.1") == 1);
  CHECK(counts.count("10.0.0.2") == 1);
}

TEST_CASE("per_address_count: add_below admits up to the limit and counts nothing beyond it") {
  PerAddressCount<std::string> counts;
  CHECK(counts.add_below("a", 2));
  CHECK(counts.add_below("a", 2));
  CHECK_FALSE(counts.add_below("a", 2));
  CHECK(counts.count("a") == 2);
  CHECK_FALSE(counts.add_below("b", 0));
  CHECK(counts.count("b") == 0);
  counts.remove("a");
  CHECK(counts.add_below("a", 2));
}
