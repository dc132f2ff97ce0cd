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

/// The wall clock in Unix seconds: connect tokens expire by it (the backend that issues them
/// and the server agree on it, not on a steady clock).
[[nodiscard]] inline std::uint64_t unix_seconds() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count());
}

}  // namespace swarmfield::server::server_detail
