#include "e2e_environment.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace swarmfield::testing {

std::string program_path(const std::string& name) {
  const char* env = std::getenv("SWARMFIELD_BIN_DIR");
  const std::filesystem::path dir = (env && *env) ? std::filesystem::path(env) : std::filesystem::path(SWARMFIELD_BIN_DIR);
  return (dir / name).string();
}

std::filesystem::path maps_dir() {
  const char* env = std::getenv("SWARMFIELD_MAPS_DIR");
  return (env && *env) ? std::filesystem::path(env) : std::filesystem::path(SWARMFIELD_MAPS_DIR);
}

std::filesystem::path make_run_dir(const std::string& name) {
  static std::atomic<int> counter{0};
  const auto root = std::filesystem::current_path() / "e2e-logs";
  // Runs are kept for inspection; folders of this test older than an hour are removed so
  // repeated runs do not pile up (a run lasts about a minute, so no live run is touched).
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    if (entry.path().filename().string().rfind(name + "-", 0) != 0) continue;
    const auto age = std::filesystem::file_time_type::clock::now() - entry.last_write_time(ec);
    if (!ec && age > std::chrono::hours(1)) std::filesystem::remove_all(entry.path(), ec);
  }
  const auto dir = root / (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::optional<ServerPorts> parse_listening_ports(const std::string& log) {
  const std::string line = last_line_containing(log, "listening tcp=");
  if (line.empty()) return std::nullopt;
  // summary_number wants "key=" after a space: cut the line at "listening ".
  const std::string tail = line.substr(line.find("listening tcp=") + std::string("listening ").size());
  const auto tcp = summary_number(tail, "tcp");
  const auto udp = summary_number(tail, "udp");
  if (!tcp || !udp || *tcp < 1 || *tcp > 65535 || *udp < 1 || *udp > 65535) return std::nullopt;
  return ServerPorts{static_cast<std::uint16_t>(*tcp), static_cast<std::uint16_t>(*udp)};
}

std::optional<RunningServer> start_server(const std::vector<std::string>& args, const std::string& log_path,
                                          std::chrono::milliseconds timeout, std::string& error) {
  std::vector<std::string> argv{program_path("swarmfield-server")};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--port", "0"});
  RunningServer server;
  server.process = std::make_unique<Subprocess>(argv, log_path);
  if (!server.process->started()) {
    error = "could not start " + argv.front() + " (not built? set SWARMFIELD_BIN_DIR)";
    return std::nullopt;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto ports = parse_listening_ports(server.process->log())) {
      server.ports = *ports;
      return server;
    }
    if (!server.process->running()) {
      error = "the server exited with status " + std::to_string(server.process->exit_status().value_or(-1)) +
              " before listening\n" + server.process->log_tail();
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  error = "no 'listening tcp=.. udp=..' line from the server within " + std::to_string(timeout.count()) + " ms\n" +
          server.process->log_tail();
  return std::nullopt;
}

}  // namespace swarmfield::testing
