#pragma once
// Test helper: runs bin/swarmfield-server as a child process with stdout and stderr sent to
// files in a private temp directory, and reads them back. Every wait is bounded in time.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace swarmfield::test {

class ServerProcess {
 public:
  using Clock = std::chrono::steady_clock;

  /// How the child's standard output is connected.
  enum class Stdout : std::uint8_t {
    kFile,        ///< a file, read back by out()
    kLostReader,  ///< a pipe whose read end is closed (a log collector that went away)
  };

  /// Starts SWARMFIELD_BIN_DIR/swarmfield-server with `args`.
  explicit ServerProcess(const std::vector<std::string>& args, Stdout stdout_to = Stdout::kFile) {
    char dir_template[] = "/tmp/swarmfield-server-test-XXXXXX";
    const char* dir = mkdtemp(dir_template);
    if (dir == nullptr) return;
    dir_ = dir;
    const std::string binary = std::string(SWARMFIELD_BIN_DIR) + "/swarmfield-server";
    const std::string out = dir_ + "/stdout.txt", err = dir_ + "/stderr.txt";
    // Unflushed test output would otherwise be written twice (once by the child).
    std::fflush(stdout);
    std::fflush(stderr);
    pid_ = fork();
    if (pid_ == 0) {
      int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (stdout_to == Stdout::kLostReader) {
        int fds[2];
        if (pipe(fds) != 0) _exit(127);
        close(fds[0]);
        out_fd = fds[1];
      }
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (out_fd < 0 || err_fd < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0) _exit(127);
      ::signal(SIGPIPE, SIG_DFL);  // as a shell starts it, whatever this test process does
      std::vector<char*> argv;
      argv.push_back(const_cast<char*>(binary.c_str()));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
  }
  ~ServerProcess() {
    // SWARMFIELD_TEST_VERBOSE=1 shows the server's log after each test (debugging aid).
    if (const char* v = std::getenv("SWARMFIELD_TEST_VERBOSE"); v != nullptr && *v == '1' && !dir_.empty()) {
      std::fprintf(stderr, "---- server stderr ----\n%s---- server stdout ----\n%s", err().c_str(), out().c_str());
    }
    if (running()) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  [[nodiscard]] bool started() const { return pid_ > 0; }
  [[nodiscard]] pid_t pid() const { return pid_; }
  /// Waits until the server catches `sig` (its handler is installed: /proc/PID/status SigCgt),
  /// at most `timeout`. A signal sent before that meets the default action instead. The
  /// process must be the server already (Name: the kernel's 15-byte comm of swarmfield-server):
  /// between fork and exec the child is a copy of this test process, whose handlers (doctest
  /// catches SIGTERM) it shows until exec resets them.
  [[nodiscard]] bool wait_catching(int sig, std::chrono::milliseconds timeout) const {
    const auto until = std::chrono::steady_clock::now() + timeout;
    do {
      std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
      bool server = false;
      for (std::string line; std::getline(status, line);) {
        if (line.rfind("Name:", 0) == 0) server = line.find("swarmfield-serv") != std::string::npos;
        if (line.rfind("SigCgt:", 0) != 0) continue;
        const unsigned long long caught = std::stoull(line.substr(7), nullptr, 16);
        if (server && ((caught >> (sig - 1)) & 1u) != 0) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } while (std::chrono::steady_clock::now() < until);
    return false;
  }
  /// The process's resident memory now (VmRSS from /proc), MiB; -1 if unknown.
  [[nodiscard]] double rss_mib() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
    }
    return -1.0;
  }
  [[nodiscard]] bool running() const { return pid_ > 0 && !exit_status_; }
  [[nodiscard]] std::string out() const { return slurp(dir_ + "/stdout.txt"); }
  [[nodiscard]] std::string err() const { return slurp(dir_ + "/stderr.txt"); }

  /// Waits until stderr (the log) contains `needle`; returns the text from `needle` to the end of
  /// that line, or nullopt after `timeout` or if the process exited.
  std::optional<std::string> wait_for_log(const std::string& needle, std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      const std::string text = err();
      if (const auto pos = text.find(needle); pos != std::string::npos) {
        const auto end = text.find('\n', pos);
        return text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      }
      if (!poll_exit() || Clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  void signal(int sig) const {
    if (running()) kill(pid_, sig);
  }

  /// Waits for the exit; returns the exit code (128+signal if killed by a signal) or nullopt on
  /// timeout.
  std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (poll_exit() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return exit_status_;
  }

 private:
  // True while still running.
  bool poll_exit() {
    if (pid_ <= 0 || exit_status_) return false;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return false;
    }
    return true;
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_;
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
};

}  // namespace swarmfield::test
