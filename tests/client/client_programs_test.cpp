// The viewer and bot programs as a user runs them, against no server: they must fail cleanly
// (exit code 1, the connect error on stderr, no crash), headless with no display at all and
// windowed with no display (the windowed viewer under xvfb-run: tests/integration/viewer_xvfb_test).
// Bounded: every run has --seconds and a connect timeout.
#include <doctest/doctest.h>

#include "swarmfield/cli/version.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

struct RunResult {
  int exit_code = -1;  ///< -1: killed by a signal (a crash)
  int signal = 0;
  std::string output;  ///< stdout + stderr
};

RunResult run(const std::string& command) {
  RunResult r;
  const std::string full = command + " 2>&1";
  FILE* pipe = popen(full.c_str(), "r");
  REQUIRE(pipe);
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// A 127.0.0.1 port where nothing listens (bound, then released).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

// A 127.0.0.1 listener that never accepts: the kernel completes TCP handshakes (backlog) but
// nothing is ever sent back, like a hung server. Closed at scope exit.
struct SilentListener {
  int fd = -1;
  int port = 0;
  SilentListener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(fd, 64) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port = ntohs(addr.sin_port);
  }
  ~SilentListener() { close(fd); }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

const std::string kBin = SWARMFIELD_BIN_DIR;

}  // namespace

TEST_CASE("headless viewer with no server and no DISPLAY fails with the connect error") {
  const int port = free_port();
  const auto r = run("env -u DISPLAY -u WAYLAND_DISPLAY " + kBin + "/swarmfield-viewer --headless --seconds 2 --port " +
                     std::to_string(port));
  INFO(r.output);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("error: could not connect to 127.0.0.1:" + std::to_string(port)) != std::string::npos);
}

TEST_CASE("windowed viewer without any display says so instead of crashing") {
  const auto r = run("env -u DISPLAY -u WAYLAND_DISPLAY SDL_VIDEODRIVER=x11 " + kBin +
                     "/swarmfield-viewer --seconds 1 --port 1");
  INFO(r.output);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 3);
  CHECK(r.output.find("error: could not start SDL video") != std::string::npos);
}

TEST_CASE("windowed viewer with no display and no SDL_VIDEODRIVER exits 3 (SDL's offscreen fallback is no window)") {
  const auto r = run("env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER " + kBin +
                     "/swarmfield-viewer --seconds 1 --port 1");
  INFO(r.output);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 3);
  CHECK(r.output.find("error: could not start SDL video: no display found") != std::string::npos);
  CHECK(r.output.find("viewer: connected=") == std::string::npos);  // stopped before connecting
}

TEST_CASE("bot with no server prints the error and a summary line, exit 1") {
  const int port = free_port();
  const auto r = run(kBin + "/swarmfield-bot --seconds 2 --count 3 --port " + std::to_string(port));
  INFO(r.output);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("error: bot-2: could not connect to 127.0.0.1:" + std::to_string(port)) != std::string::npos);
  CHECK(r.output.find("bots=3 connected=0 snapshots=0") != std::string::npos);
  // The last keys, after the older ones.
  CHECK(r.output.find(" role=player shots=0 builds=0 deaths_seen=0 score=0 reconnects=0\n") != std::string::npos);
}

TEST_CASE("bot --name: a name the server would refuse or cut is refused before connecting (exit 2)") {
  CHECK(run(kBin + "/swarmfield-bot --port 1 --name ''").exit_code == 2);  // "value is empty"
  for (const std::string& name : {std::string(65, 'a'), std::string("tab\there"), std::string("rl\xe2\x80\xaeo")}) {
    const auto r = run(kBin + "/swarmfield-bot --port 1 --name '" + name + "'");
    INFO(name << ": " << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.rfind("error: --name must be 1..64 bytes", 0) == 0);
  }
  // 62 bytes fit alone, not with "-10".
  CHECK(run(kBin + "/swarmfield-bot --port 1 --count 10 --name " + std::string(62, 'a')).exit_code == 2);
  const auto fits = run(kBin + "/swarmfield-bot --seconds 1 --connect-timeout-ms 200 --name " + std::string(64, 'a') +
                        " --port " + std::to_string(free_port()));
  INFO(fits.output);
  CHECK(fits.exit_code == 1);  // no server: the connect error, not a flag error
}

TEST_CASE("bot --fire: in --help, refused for viewers (exit 2), a plain flag for players") {
  const auto help = run(kBin + "/swarmfield-bot --help");
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("--fire") != std::string::npos);
  const auto viewer = run(kBin + "/swarmfield-bot --role viewer --fire --port 1");
  INFO(viewer.output);
  CHECK(viewer.exit_code == 2);
  CHECK(viewer.output.rfind("error: --fire needs --role player", 0) == 0);
  const auto player = run(kBin + "/swarmfield-bot --fire --seconds 1 --connect-timeout-ms 200 --port " +
                          std::to_string(free_port()));
  INFO(player.output);
  CHECK(player.exit_code == 1);  // no server: the connect error, not a flag error
  CHECK(player.output.find("shots=0") != std::string::npos);
}

TEST_CASE("bot with a bad script names file:line and exits 2 before connecting") {
  const std::string path = "client_programs_test_bad.bot";
  {
    std::ofstream out(path);
    out << "# fine\ngoto 3 4\nwalk 1 2\n";
  }
  const auto r = run(kBin + "/swarmfield-bot --port 1 --script " + path);
  std::remove(path.c_str());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("error: " + path + ":3: unknown command 'walk'") != std::string::npos);
}

TEST_CASE("bot with a bad build line names file:line and exits 2 before connecting") {
  const std::string path = "client_programs_test_bad_build.bot";
  {
    std::ofstream out(path);
    out << "build 3 4\nwait 1\nbuild -1 2\n";
  }
  const auto r = run(kBin + "/swarmfield-bot --port 1 --script " + path);
  std::remove(path.c_str());
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("error: " + path + ":3: cell X '-1' must be >= 0 and <= 8191 (map cells)") != std::string::npos);
}

TEST_CASE("--version prints the program, its version and the protocol, and exits 0") {
  for (const std::string program : {"swarmfield-bot", "swarmfield-viewer"}) {
    const auto r = run(kBin + "/" + program + " --version");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.rfind(program + " " + swarmfield::cli::kVersion + " (protocol 3)", 0) == 0);
  }
}

TEST_CASE("bad flags exit 2 with 'error: ... (see --help)', not CLI11's own codes") {
  for (const std::string& cmd : {kBin + "/swarmfield-bot --count 0", kBin + "/swarmfield-bot --no-such-flag",
                                kBin + "/swarmfield-bot --port x", kBin + "/swarmfield-viewer --headless --fps 0",
                                kBin + "/swarmfield-viewer --bogus"}) {
    const auto r = run(cmd);
    INFO(cmd << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.rfind("error: ", 0) == 0);
    CHECK(r.output.find("(see --help)") != std::string::npos);
  }
  // A port out of range is named as such (it was CLI11's "Could not convert: --port = 70000").
  for (const std::string& cmd : {kBin + "/swarmfield-bot --port 70000", kBin + "/swarmfield-viewer --headless --port 70000",
                                kBin + "/swarmfield-bot --port 0", kBin + "/swarmfield-viewer --headless --port 0"}) {
    const auto r = run(cmd);
    INFO(cmd << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.rfind("error: --port must be in 1..65535 (got ", 0) == 0);  // as the server words it
  }
  // A floating-point range as a person writes it (it was "must be in 0.000000..10000000.000000").
  for (const auto& [cmd, said] : {std::pair<std::string, std::string>{kBin + "/swarmfield-viewer --headless --seconds -1",
                                                                      "error: --seconds must be in 0..10000000 (got -1)"},
                                  {kBin + "/swarmfield-viewer --headless --zoom 500",
                                   "error: --zoom must be in 0..200 (got 500)"}}) {
    const auto r = run(cmd);
    INFO(cmd << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.rfind(said, 0) == 0);
  }
  for (const std::string& cmd : {kBin + "/swarmfield-bot --help", kBin + "/swarmfield-viewer --help"}) {
    const auto r = run(cmd);
    INFO(cmd << "\n" << r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("--data-timeout-ms") != std::string::npos);
  }
  // A typo names the flag meant (CLI11 said "The following arguments were not expected: x
  // --scirpt"), and a flag given twice says so (it said "At Most 1 required but received 2").
  const std::pair<std::string, std::string> typos[] = {
      {kBin + "/swarmfield-bot --scirpt x.bot --fier",
       "error: unknown option '--scirpt' (did you mean '--script'?); unknown option '--fier' (did you mean '--fire'?) "
       "(see --help)"},
      {kBin + "/swarmfield-viewer --hedless", "error: unknown option '--hedless' (did you mean '--headless'?) (see --help)"},
      {kBin + "/swarmfield-bot --port 7000 --port 7001", "error: --port is given 2 times; give it once (see --help)"},
      {kBin + "/swarmfield-viewer --headless=nope",
       "error: --headless is a flag: give it alone, or =true/=false (got 'nope') (see --help)"},
  };
  for (const auto& [cmd, line] : typos) {
    const auto r = run(cmd);
    INFO(cmd << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(line) != std::string::npos);
  }
}

TEST_CASE("bot and viewer give up on a server that accepts but never answers within --connect-timeout-ms") {
  SilentListener silent;
  const std::string port = std::to_string(silent.port);
  {
    const auto r = run(kBin + "/swarmfield-bot --seconds 3 --connect-timeout-ms 1000 --port " + port);
    INFO(r.output);
    CHECK(r.exit_code == 1);  // failed (--seconds running out would exit 0), by the connect timeout:
    CHECK(r.output.find("did not answer within 1000 ms") != std::string::npos);
  }
  {
    const auto r = run("env -u DISPLAY " + kBin + "/swarmfield-viewer --headless --seconds 10 --connect-timeout-ms 1000 --port " + port);
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("did not answer within 1000 ms") != std::string::npos);
  }
}

TEST_CASE("viewer with an unwritable --screenshot path exits 4 at once, before connecting") {
  const int port = free_port();
  const auto r = run("env -u DISPLAY " + kBin + "/swarmfield-viewer --headless --seconds 10 --port " +
                     std::to_string(port) + " --screenshot /nonexistent-dir/never.png");
  INFO(r.output);
  CHECK(r.exit_code == 4);
  CHECK(r.output.find("error: can not write the screenshot '/nonexistent-dir/never.png'") != std::string::npos);
  CHECK(r.output.find("could not connect") == std::string::npos);  // checked before connecting
}

TEST_CASE("viewer's screenshot check leaves no file behind when the run fails") {
  const std::string path = "client_programs_test_probe.png";
  std::remove(path.c_str());
  const auto r = run("env -u DISPLAY " + kBin + "/swarmfield-viewer --headless --seconds 1 --port " +
                     std::to_string(free_port()) + " --screenshot " + path);
  INFO(r.output);
  CHECK(r.exit_code == 1);  // no server
  std::ifstream probe(path);
  CHECK_FALSE(probe.good());
}

TEST_CASE("bot and viewer: NaN/inf, empty values and negative seeds are rejected at once, exit 2") {
  // Before: --seconds nan ran forever (CLI::Range lets NaN through), --zoom nan /
  // --interp-snapshots nan reached the renderer, "" became 0 and --seed -1 became 2^64-1.
  // No server runs: a rejected flag must exit 2 before any connect attempt.
  struct Case {
    std::string args;
    std::string needle;
  };
  const std::string bot = kBin + "/swarmfield-bot --connect-timeout-ms 200 --port " + std::to_string(free_port());
  const std::string viewer =
      kBin + "/swarmfield-viewer --headless --connect-timeout-ms 200 --port " + std::to_string(free_port());
  const std::vector<Case> cases = {
      {bot + " --seconds nan", "--seconds: must be a finite number (got nan)"},
      {bot + " --seconds inf", "--seconds: must be a finite number (got inf)"},
      {bot + " --view nan", "--view: must be a finite number"},
      {bot + " --input-hz NaN", "--input-hz: must be a finite number"},
      // Hexadecimal, which strtold reads ("0x10" = 16), as the integer flags refuse it.
      {bot + " --seconds 0x10", "--seconds: must be a decimal number (got 0x10)"},
      {bot + " --count 0x2", "--count: must be a decimal integer (got 0x2)"},
      {bot + " --seed -1", "--seed: must not be negative (got -1)"},
      {bot + " --count ''", "--count: value is empty"},
      {bot + " --host ''", "--host: value is empty"},
      {bot + " --script ''", "--script: value is empty"},
      {bot + " --seconds ''", "--seconds: value is empty"},
      {viewer + " --seconds nan", "--seconds: must be a finite number (got nan)"},
      {viewer + " --zoom nan", "--zoom: must be a finite number"},
      {viewer + " --zoom -inf", "--zoom: must be a finite number"},
      {viewer + " --interp-snapshots nan", "--interp-snapshots: must be a finite number"},
      {viewer + " --zoom 0x1p2", "--zoom: must be a decimal number (got 0x1p2)"},
      {viewer + " --fps ''", "--fps: value is empty"},
      {viewer + " --screenshot ''", "--screenshot: value is empty"},
      {viewer + " --name ''", "--name: value is empty"},
  };
  for (const auto& c : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = run(c.args);
    INFO(c.args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(c.needle) != std::string::npos);
    CHECK(seconds_since(t0) < 10.0);
  }
}
