#pragma once
// Internal to swarmfield_server_core: the conversions between seconds (as the settings give
// them) and the Server's steady clock, shared by the Server's files (server.cpp, server_tick.cpp,
// server_snapshots.cpp, server_clients.cpp).
#include <chrono>
#include <cstdint>

#include "swarmfield/server/server.hpp"

namespace swarmfield::server::server_detail {

/// `s` seconds as a Server::Clock duration (truncated to its tick).
[[nodiscard]] inline Server::Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Server::Clock::duration>(std::chrono::duration<double>(s));
}

/// Milliseconds from `t0` to `t1`.
[[nodiscard]] inline double ms_since(Server::Clock::time_point t0, Server::Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace swarmfield::server::server_detail
