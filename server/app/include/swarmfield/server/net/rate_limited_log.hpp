#pragma once
// One info line a second at most for refusals and drops (a flood of refused connections must not
// become a flood of log lines): the lines held back meanwhile are counted and reported with the
// next line, or by flush() once a second has passed. Used by the game port (TcpServer) and the
// browser spectator's port (WebGateway). Not thread-safe: one per io thread.
#include <spdlog/spdlog.h>

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

}  // namespace swarmfield::server
