#pragma once
// The programs' version (--version on every program, swarmfield_build_info on /metrics): the
// project version from CMake and the wire protocol version, which is what decides who can talk
// to whom.
#include <CLI/CLI.hpp>

#include <string>

#ifndef SWARMFIELD_VERSION
#define SWARMFIELD_VERSION "unknown"
#endif

namespace swarmfield::cli {

/// The project version (CMake's project(VERSION)), e.g. "0.1.0".
inline constexpr const char* kVersion = SWARMFIELD_VERSION;
/// Keep equal to protocol::kProtocolVersion (checked where both are visible: the server).
inline constexpr int kWireProtocolVersion = 3;

/// "<program> <version> (protocol <n>)".
[[nodiscard]] inline std::string version_line(const std::string& program) {
  return program + " " + kVersion + " (protocol " + std::to_string(kWireProtocolVersion) + ")";
}

/// Adds --version to `app`: prints version_line(program) and exits 0 (CLI11's CallForVersion).
inline void add_version_flag(CLI::App& app, const std::string& program) {
  app.set_version_flag("--version", version_line(program), "Print the program's version and protocol version, and exit");
}

}  // namespace swarmfield::cli
