#pragma once
// Private to the sim: a number as short "%g" text, for the parameter checks' messages.
#include <cstdio>
#include <string>

namespace swarmfield::sim::sim_detail {

inline std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace swarmfield::sim::sim_detail
