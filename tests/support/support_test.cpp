// The test helpers of tests/support: TempDir, summary-line values, the skip rule.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "skip.hpp"
#include "summary_line.hpp"
#include "temp_dir.hpp"

using namespace swarmfield::test;

TEST_CASE("TempDir: a fresh private directory, removed with its files at scope exit") {
  std::string path;
  {
    const TempDir a("swarmfield-support-test");
    const TempDir b("swarmfield-support-test");
    path = a.path;
    CHECK(a.path != b.path);
    CHECK(a.path.rfind("/tmp/swarmfield-support-test-", 0) == 0);
    REQUIRE(std::filesystem::is_directory(a.path));
    std::ofstream(a / "file.txt") << "x";
    CHECK(std::filesystem::exists(a.path + "/file.txt"));
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("summary_line: a key starts the text or follows a space; the first such match decides") {
  const std::string line = "ticks=600 skipped_ticks=3 rebuilds=13 peak_rss_mib=48.9 tcp=7777 empty= neg=-2";
  CHECK(summary_value(line, "ticks") == 600);
  CHECK(summary_value(line, "skipped_ticks") == 3);
  CHECK(summary_value(line, "rebuilds") == 13);
  CHECK(summary_value(line, "peak_rss_mib") == 48);  // the digits only
  CHECK(summary_value(line, "missing") == -1);
  CHECK(summary_value(line, "empty") == -1);
  CHECK(summary_value(line, "neg") == -1);
  CHECK(summary_value("skipped_ticks=3", "ticks") == -1);  // not a key of its own
  CHECK(summary_number(line, "peak_rss_mib") == doctest::Approx(48.9));
  CHECK(summary_number(line, "ticks") == 600.0);
  CHECK(summary_number(line, "neg") == -2.0);
  CHECK_FALSE(summary_number(line, "empty").has_value());
  CHECK_FALSE(summary_number(line, "missing").has_value());
  CHECK(summary_number("a=1 b=2.5\nc=3", "b") == 2.5);
}

namespace {

/// Exit status of skip_test("reason") in a child process, with SWARMFIELD_REQUIRE_ALL set to
/// `require_all` ("" = unset).
int skip_status(const char* require_all) {
  std::fflush(stdout);  // the child must not repeat what the parent has buffered
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    // Its "SKIPPED:" / "FAILED:" line is not this test's outcome: keep it out of the log.
    (void)std::freopen("/dev/null", "w", stdout);
    (void)std::freopen("/dev/null", "w", stderr);
    if (*require_all != '\0') {
      setenv("SWARMFIELD_REQUIRE_ALL", require_all, 1);
    } else {
      unsetenv("SWARMFIELD_REQUIRE_ALL");
    }
    skip_test("no such device");
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("skip_test: exit 77 (skipped), or 1 (failed) under SWARMFIELD_REQUIRE_ALL=1") {
  CHECK(skip_status("") == kSkipReturnCode);
  CHECK(skip_status("0") == kSkipReturnCode);
  CHECK(skip_status("1") == 1);
}
