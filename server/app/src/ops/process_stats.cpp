#include "swarmfield/server/ops/process_stats.hpp"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace swarmfield::server {

namespace {

// The fields of /proc/self/stat after the command name, whose parentheses may hold spaces and
// parentheses of their own (proc(5)): the text after the last ')'. Index 0 is field 3 (state).
bool stat_fields(std::vector<std::string>& fields) {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(line.substr(close + 1));
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields.size() >= 22;  // up to field 24 (rss)
}

bool boot_time(double& seconds) {
  std::ifstream in("/proc/stat");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("btime ", 0) == 0) {
      try {
        seconds = std::stod(line.substr(6));
      } catch (...) {
        return false;
      }
      return true;
    }
  }
  return false;
}

}  // namespace

bool read_process_stats(ProcessStats& out) {
  std::vector<std::string> f;
  double boot = 0.0;
  if (!stat_fields(f) || !boot_time(boot)) return false;
  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  if (ticks <= 0 || page <= 0) return false;
  ProcessStats s;
  try {
    // proc(5) numbers fields from 1; f[0] is field 3: utime 14, stime 15, starttime 22, vsize 23, rss 24.
    const auto field = [&](int n) { return f[static_cast<std::size_t>(n - 3)]; };
    // The scheduler's own runtime of every thread of the process, exact to the nanosecond;
    // /proc's utime + stime only where that clock fails: they are sampled at clock ticks (1/100 s
    // here), so a server that ran a few ms (a small map just started, or one the scheduler kept
    // waiting) read 0.
    timespec cpu{};
    s.cpu_seconds = clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) == 0
                        ? static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) * 1e-9
                        : (std::stod(field(14)) + std::stod(field(15))) / static_cast<double>(ticks);
    s.start_time_seconds = boot + std::stod(field(22)) / static_cast<double>(ticks);
    s.virtual_bytes = std::stoull(field(23));
    s.resident_bytes = std::stoull(field(24)) * static_cast<std::uint64_t>(page);
  } catch (...) {
    return false;
  }
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++s.open_fds;
  if (ec) return false;
  if (s.open_fds > 0) --s.open_fds;  // the directory iterator's own descriptor
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) s.max_fds = limit.rlim_cur == RLIM_INFINITY ? 0 : limit.rlim_cur;
  out = s;
  return true;
}

}  // namespace swarmfield::server
