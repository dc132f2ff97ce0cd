#pragma once
// Where the end-to-end tests find programs and maps, where they write logs, and how they start
// the server and learn its ports.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "subprocess.hpp"

namespace swarmfield::testing {

/// Path of a built program: $SWARMFIELD_BIN_DIR (environment, to test another build) or the
/// build's runtime output directory (compile definition SWARMFIELD_BIN_DIR).
[[nodiscard]] std::string program_path(const std::string& name);
/// The MovingAI maps folder: $SWARMFIELD_MAPS_DIR or the compile definition.
[[nodiscard]] std::filesystem::path maps_dir();

/// A fresh directory for one test run's logs and files: ./e2e-logs/<name>-<pid>-<n> under the
/// current directory (ctest runs tests in their build folder). Never shared between runs, so
/// repeated or parallel runs do not mix logs. Kept after the run; folders of the same test
/// older than an hour are deleted here.
[[nodiscard]] std::filesystem::path make_run_dir(const std::string& name);

struct ServerPorts {
  std::uint16_t tcp = 0;
  std::uint16_t udp = 0;
};
/// Ports from the server's "listening tcp=P udp=Q" log line, or nullopt if there is none yet.
[[nodiscard]] std::optional<ServerPorts> parse_listening_ports(const std::string& log);

/// A running swarmfield-server and its ports.
struct RunningServer {
  std::unique_ptr<Subprocess> process;
  ServerPorts ports;
};
/// Starts swarmfield-server with `args` (plus "--port 0"), output to `log_path`, and waits up to
/// `timeout` for its listening line. nullopt with `error` (including the log tail) on failure;
/// the process is killed then.
[[nodiscard]] std::optional<RunningServer> start_server(const std::vector<std::string>& args,
                                                        const std::string& log_path,
                                                        std::chrono::milliseconds timeout, std::string& error);

}  // namespace swarmfield::testing
