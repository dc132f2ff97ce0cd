#include <doctest/doctest.h>

#include <asio/ip/address.hpp>

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

TEST_CASE("per_address_count: an IPv6 address counts as its /64, an IPv4 (or IPv4-mapped) one as itself") {
  // A host is routinely given a whole /64: counted per address, one host could open
  // --max-connections-per-address connections (and hold a share of the slots) from each of its
  // 2^64 addresses, past every per-address limit.
  const auto a = [](const char* text) { return asio::ip::make_address(text); };
  PerAddressCount<asio::ip::address> counts;
  CHECK(counts.add(a("2001:db8:1:2::1")) == 1);
  CHECK(counts.add(a("2001:db8:1:2:ffff:ffff:ffff:ffff")) == 2);
  CHECK(counts.count(a("2001:db8:1:2:abcd::7")) == 2);
  CHECK(counts.add(a("2001:db8:1:3::1")) == 1);  // the next /64: another site
  CHECK(counts.add(a("::ffff:10.0.0.1")) == 1);  // IPv4 on a dual-stack socket: each address its own
  CHECK(counts.add(a("::ffff:10.0.0.2")) == 1);
  CHECK(counts.add(a("10.0.0.1")) == 1);
  CHECK(counts.add(a("10.0.0.2")) == 1);
  counts.remove(a("2001:db8:1:2::1"));
  counts.remove(a("2001:db8:1:2::99"));
  CHECK(counts.count(a("2001:db8:1:2::1")) == 0);
  CHECK(counts.count(a("2001:db8:1:3::1")) == 1);
}
