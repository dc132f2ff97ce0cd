#pragma once
// One info line a second at most for refusals and drops (a flood of refused connections must not
// become a flood of log lines): the lines held back meanwhile are counted and reported with the
// next line, or by flush() once a second has passed. Used by the game port (TcpServer) and the
// browser spectator's port (WebGateway). Not thread-safe: one per io thread.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

namespace swarmfield::server {

class RateLimitedLog {
 public:
  using Clock = std::chrono::steady_clock;

  /// Logs `what` at info unless a line went out less than a second ago (then it is counted).
  void log(const std::string& what, Clock::time_point now = Clock::now()) {
    ++not_logged_;
    if (last_ != Clock::time_point{} && now - last_ < std::chrono::seconds(1)) return;
    if (not_logged_ > 1) {
      spdlog::info("{} (and {} more refused/dropped since the last such message)", what, not_logged_ - 1);
    } else {
      spdlog::info("{}", what);
    }
    not_logged_ = 0;
    last_ = now;
  }

  /// Reports the lines held back, once a second has passed since the last line.
  void flush(Clock::time_point now) {
    if (not_logged_ == 0 || now - last_ < std::chrono::seconds(1)) return;
    spdlog::info("{} more connection(s) refused/dropped since the last such message", not_logged_);
    not_logged_ = 0;
    last_ = now;
  }

 private:
  Clock::time_point last_{};
  std::uint64_t not_logged_ = 0;
};

/// The lines each client's session writes (joined, says bye, left, lost its connection, resumed):
/// written as they come up to `burst` in a row, then `per_second` (a token bucket); the lines
/// over it are counted and reported by flush() once there is room again. A client joining and
/// leaving in a loop (--auth open: connect, Hello, Bye) wrote three lines a cycle, 6,100 cycles
/// and 1.9 MB of log a second from one address. Not thread-safe: the tick thread's.
class LineBudget {
 public:
  using Clock = std::chrono::steady_clock;

  /// `what`: the lines, as the report of those held back names them.
  LineBudget(double per_second, double burst, const char* what = "client session")
      : per_second_(per_second), burst_(burst), tokens_(burst), what_(what) {}

  /// True when a line may be written now; else it is counted as held back.
  bool take(Clock::time_point now = Clock::now()) {
    refill(now);
    if (tokens_ >= 1.0) {
      tokens_ -= 1.0;
      return true;
    }
    ++held_back_;
    return false;
  }

  /// Reports the lines held back, once a line may be written again.
  void flush(Clock::time_point now) {
    if (held_back_ == 0) return;
    refill(now);
    if (tokens_ < 1.0) return;
    tokens_ -= 1.0;
    spdlog::info("{} {} line(s) held back (more than {:g} a second)", held_back_, what_, per_second_);
    held_back_ = 0;
  }

 private:
  void refill(Clock::time_point now) {
    if (last_ != Clock::time_point{}) {
      tokens_ = std::min(burst_, tokens_ + per_second_ * std::chrono::duration<double>(now - last_).count());
    }
    last_ = now;
  }

  double per_second_;
  double burst_;
  double tokens_;
  const char* what_;
  Clock::time_point last_{};
  std::uint64_t held_back_ = 0;
};

}  // namespace swarmfield::server
