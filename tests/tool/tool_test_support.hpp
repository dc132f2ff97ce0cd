#pragma once
// Running swarmfield-tool as a user does, for the tool's end-to-end tests.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace swarmfield::tool::test {

struct Run {
  int status = -1;
  std::string out;  // stdout + stderr
};

/// Runs the tool through the shell; stderr joins stdout unless `merge_stderr` is false (then
/// it is discarded).
inline Run run_tool(const std::string& args, bool merge_stderr = true) {
  const std::string cmd =
      std::string(SWARMFIELD_BIN_DIR) + "/swarmfield-tool " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// This test program's private temporary directory, removed when the program ends.
inline std::filesystem::path temp_dir() {
  static const ::swarmfield::test::TempDir dir("swarmfield-tool-test");
  return dir.path;
}

}  // namespace swarmfield::tool::test
