#pragma once
// Child processes for end-to-end tests: spawn with stdout+stderr to a log file, signal,
// wait with a deadline. POSIX only. Every wait is bounded.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

#include "summary_line.hpp"

namespace swarmfield::testing {

class Subprocess {
 public:
  /// Starts `argv[0]` (a path) with `argv`, output (stdout and stderr) appended to `log_path`.
  /// Extra environment entries ("NAME=value") are added to the parent's environment.
  /// started() is false when the program could not be started (missing file, not executable).
  Subprocess(std::vector<std::string> argv, std::string log_path, std::vector<std::string> extra_env = {});
  ~Subprocess();  ///< kills (SIGKILL) and reaps a child still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  [[nodiscard]] bool started() const noexcept { return pid_ > 0; }
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  /// The command line, space-separated (for messages).
  [[nodiscard]] const std::string& command_line() const noexcept { return command_line_; }
  [[nodiscard]] const std::string& log_path() const noexcept { return log_path_; }
  /// Sends `sig` to the child (nothing once it has been reaped).
  void signal(int sig) const noexcept;
  /// Waits up to `timeout` for exit; returns the exit status (or 128+signal), nullopt on timeout.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  /// Exit status once reaped by wait_for()/running(), else nullopt. Does not wait.
  [[nodiscard]] std::optional<int> exit_status() const noexcept { return status_; }
  [[nodiscard]] bool running();
  /// Whole log so far.
  [[nodiscard]] std::string log() const;
  /// The last `max_lines` lines of the log (for failure messages), prefixed by the command line.
  [[nodiscard]] std::string log_tail(std::size_t max_lines = 40) const;
  /// Waits until the log contains `needle` or the timeout passes / the child exits.
  bool wait_for_log(const std::string& needle, std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  std::string log_path_;
  std::string command_line_;
  std::optional<int> status_;
};

/// Last line of `text` starting with `prefix`, or "" if none.
[[nodiscard]] std::string last_line_starting_with(const std::string& text, const std::string& prefix);
/// Last line of `text` containing `needle` anywhere (log lines carry a timestamp prefix), or "".
[[nodiscard]] std::string last_line_containing(const std::string& text, const std::string& needle);
/// Value of `key=` in a `k=v k=v` summary line, or nullopt (tests/support/summary_line.hpp).
using swarmfield::test::summary_number;

}  // namespace swarmfield::testing
