#pragma once
// The MovingAI benchmark maps under ../shared/data/maps (SWARMFIELD_MAPS_DIR), read for tests.
// Needs swarmfield::io linked.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim::test {

/// Reads SWARMFIELD_MAPS_DIR/`relative` (e.g. "street/Boston_0_256.map"); fails the test with
/// the reader's error when it cannot.
inline GridMap read_benchmark_map(std::string_view relative) {
  GridMap m;
  MapError e;
  const bool ok = swarmfield::io::read_map_file(std::string(SWARMFIELD_MAPS_DIR) + "/" + std::string(relative), m, e);
  INFO(e.to_string());
  REQUIRE(ok);
  return m;
}

/// street/Boston_0_256.map: a small real city, unit costs.
inline GridMap boston_256() { return read_benchmark_map("street/Boston_0_256.map"); }

}  // namespace swarmfield::sim::test
