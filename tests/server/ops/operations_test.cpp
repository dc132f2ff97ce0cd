// Operations endpoints: /healthz, /readyz, /metrics. In-process tests of the endpoint logic
// (a stalled tick loop, draining), and the real server binary scraped over 127.0.0.1 with a
// joined client, its /metrics parsed by prometheus_client's text parser (parse_metrics.py).
#include <doctest/doctest.h>

#include <httplib.h>

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/ipv6.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "loopback_support.hpp"
#include "skip.hpp"
#include "swarmfield/cli/version.hpp"
#include "swarmfield/server/ops/metrics.hpp"
#include "swarmfield/server/ops/operations_http.hpp"
#include "swarmfield/server/ops/operations_state.hpp"
#include "swarmfield/server/ops/process_stats.hpp"

using namespace std::chrono_literals;
using swarmfield::server::MetricsSnapshot;
using swarmfield::server::OperationsHttp;
using swarmfield::server::OperationsState;

namespace {

// The listen backlog (the kernel's sk_max_ack_backlog) of the IPv4 TCP socket listening on
// `port`, read over NETLINK_SOCK_DIAG as `ss -lt` reads its Send-Q; -1 if none is found.
int listen_backlog(std::uint16_t port) {
  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return -1;
  struct {
    nlmsghdr header;
    inet_diag_req_v2 request;
  } query{};
  query.header.nlmsg_len = sizeof query;
  query.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  query.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  query.request.sdiag_family = AF_INET;
  query.request.sdiag_protocol = IPPROTO_TCP;
  query.request.idiag_states = 1u << TCP_LISTEN;
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  int backlog = -1;
  if (::sendto(fd, &query, sizeof query, 0, reinterpret_cast<const sockaddr*>(&kernel), sizeof kernel) ==
      static_cast<ssize_t>(sizeof query)) {
    alignas(nlmsghdr) char buffer[32768];
    for (bool done = false; !done;) {
      ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
        if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
          done = true;
          break;
        }
        const auto* entry = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
        if (ntohs(entry->id.idiag_sport) == port) backlog = static_cast<int>(entry->idiag_wqueue);
      }
    }
  }
  ::close(fd);
  return backlog;
}

struct Parsed {
  bool ok = false;
  std::string error;
  std::map<std::string, std::string> families;  // name -> type
  std::map<std::string, double> samples;        // "name{k=v,...}" -> value
  [[nodiscard]] double at(const std::string& key) const {
    const auto it = samples.find(key);
    return it == samples.end() ? -1.0 : it->second;
  }
};

// Runs tests/server/ops/parse_metrics.py (prometheus_client's parser) over `text`.
Parsed parse_with_prometheus_client(const std::string& text) {
  Parsed p;
  char in_name[] = "/tmp/swarmfield-metrics-XXXXXX";
  const int fd = mkstemp(in_name);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(in_name) << text;
  const std::string command = std::string("/usr/bin/python3 ") + SWARMFIELD_SOURCE_DIR + "/tests/server/ops/parse_metrics.py " +
                              in_name + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  const int status = pclose(pipe);
  std::remove(in_name);
  p.ok = status == 0;
  if (!p.ok) {
    p.error = out;
    return p;
  }
  std::istringstream lines(out);
  std::string kind, name, rest;
  while (lines >> kind >> name) {
    if (kind == "family") {
      lines >> p.families[name];
    } else {
      std::string labels, value;
      lines >> labels >> value;
      p.samples[name + labels] = std::stod(value);
    }
  }
  return p;
}

// The operations port from the "http listening port=P" log line (0 if it never came).
std::uint16_t wait_http_port(swarmfield::test::ServerProcess& server) {
  const auto line = server.wait_for_log("http listening port=", 5s);
  REQUIRE(line.has_value());
  return static_cast<std::uint16_t>(swarmfield::test::summary_value(*line, "port"));
}

std::pair<int, std::string> get(std::uint16_t port, const char* path) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(2, 0);
  const auto res = client.Get(path);
  if (!res) return {-1, ""};
  return {res->status, res->body};
}

// A raw TCP connection to 127.0.0.1:`port` (-1 on failure), for requests httplib::Client will not send.
int raw_connect(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// `fd` bound to `from` and connected to `to` (sockaddr_in or sockaddr_in6): `fd`, or -1 (closed).
template <typename SockAddr>
int bind_and_connect(int fd, const SockAddr& from, const SockAddr& to) {
  if (fd < 0) return -1;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0 ||
      ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A raw TCP connection to 127.0.0.1:`port` from the local address `source` (another 127/8
// address stands for another peer; an IPv6 `source` connects to ::1), -1 on failure.
int raw_connect_from(const char* source, std::uint16_t port) {
  if (std::string_view(source).find(':') != std::string_view::npos) {
    sockaddr_in6 from{};
    from.sin6_family = AF_INET6;
    ::inet_pton(AF_INET6, source, &from.sin6_addr);
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_port = htons(port);
    addr.sin6_addr = in6addr_loopback;
    return bind_and_connect(::socket(AF_INET6, SOCK_STREAM, 0), from, addr);
  }
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return bind_and_connect(::socket(AF_INET, SOCK_STREAM, 0), from, addr);
}

// Moves the calling thread into a network namespace of its own, its loopback up and holding
// `addresses` (IPv6, each a /64), so that a test can connect from several addresses of one /64.
// "" on success, else why not (no CAP_SYS_ADMIN, or no IPv6).
std::string own_network_with(const std::vector<const char*>& addresses) {
  if (::unshare(CLONE_NEWNET) != 0) return std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
  const int v4 = ::socket(AF_INET, SOCK_DGRAM, 0);
  const int v6 = ::socket(AF_INET6, SOCK_DGRAM, 0);
  std::string why;
  ifreq lo{};
  std::strncpy(lo.ifr_name, "lo", IFNAMSIZ - 1);
  if (v4 < 0 || v6 < 0 || ::ioctl(v4, SIOCGIFFLAGS, &lo) != 0) {
    why = std::string("loopback flags: ") + std::strerror(errno);
  } else {
    lo.ifr_flags = static_cast<short>(lo.ifr_flags | IFF_UP);
    if (::ioctl(v4, SIOCSIFFLAGS, &lo) != 0) why = std::string("loopback up: ") + std::strerror(errno);
  }
  for (const char* text : addresses) {
    if (!why.empty()) break;
    in6_ifreq request{};
    ::inet_pton(AF_INET6, text, &request.ifr6_addr);
    request.ifr6_prefixlen = 64;
    request.ifr6_ifindex = static_cast<int>(::if_nametoindex("lo"));
    if (::ioctl(v6, SIOCSIFADDR, &request) != 0) why = std::string("add ") + text + " to lo: " + std::strerror(errno);
  }
  // A new address is tentative until the kernel's address work has run (asynchronously, even on
  // lo, which skips duplicate detection): binding to it fails with EADDRNOTAVAIL meanwhile. Once
  // every connection of a test came out -1 that way. Wait (at most 2 s) until each one binds.
  for (const char* text : addresses) {
    if (!why.empty()) break;
    sockaddr_in6 at{};
    at.sin6_family = AF_INET6;
    ::inet_pton(AF_INET6, text, &at.sin6_addr);
    bool bound = false;
    for (int attempt = 0; attempt < 200 && !bound; ++attempt) {
      const int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
      bound = probe >= 0 && ::bind(probe, reinterpret_cast<const sockaddr*>(&at), sizeof at) == 0;
      if (probe >= 0) ::close(probe);
      if (!bound) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!bound) why = std::string(text) + " on lo never became usable: " + std::strerror(errno);
  }
  if (v4 >= 0) ::close(v4);
  if (v6 >= 0) ::close(v6);
  return why;
}

// GET `path` over a raw connection from `source`: the head of the answer (status line and
// headers, up to its blank line), "" if none within `wait`.
std::string raw_get_head(const char* source, std::uint16_t port, const char* path, std::chrono::milliseconds wait) {
  const int fd = raw_connect_from(source, port);
  if (fd < 0) return "";
  const std::string request = std::string("GET ") + path + " HTTP/1.0\r\n\r\n";
  std::string answer;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    const auto end = std::chrono::steady_clock::now() + wait;
    pollfd p{fd, POLLIN, 0};
    while (answer.find("\r\n\r\n") == std::string::npos && std::chrono::steady_clock::now() < end) {
      if (::poll(&p, 1, 20) <= 0) continue;
      char buffer[512];
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      answer.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer.substr(0, answer.find("\r\n\r\n"));
}

// The status code of an answer's head ("HTTP/1.1 200 OK..."), -1 if it is none.
int status_of(const std::string& head) {
  return head.rfind("HTTP/1.", 0) == 0 && head.size() >= 12 ? std::atoi(head.c_str() + 9) : -1;
}

// GET `path` over a raw connection from `source`: the status code of the answer (-1 if none
// within `wait`).
int raw_get_status(const char* source, std::uint16_t port, const char* path, std::chrono::milliseconds wait) {
  return status_of(raw_get_head(source, port, path, wait));
}

// Writes `request` as is to 127.0.0.1:`port` and reads the whole answer (the port closes the
// connection after it), for at most 3 s; "" if none.
std::string raw_exchange(std::uint16_t port, const std::string& request) {
  const int fd = raw_connect(port);
  if (fd < 0) return "";
  std::string answer;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size())) {
    const auto end = std::chrono::steady_clock::now() + 3s;
    pollfd p{fd, POLLIN, 0};
    while (std::chrono::steady_clock::now() < end) {
      if (::poll(&p, 1, 20) <= 0) continue;
      char buffer[4096];
      const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      answer.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  return answer;
}

// True once the peer has closed `fd` (recv gives 0 or an error; what it answered is read away).
bool peer_closed(int fd, std::chrono::milliseconds wait) {
  pollfd p{fd, POLLIN, 0};
  const auto end = std::chrono::steady_clock::now() + wait;
  while (std::chrono::steady_clock::now() < end) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(1, left.count()))) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
  }
  return false;
}

// How many of the /healthz probes a client at 127.0.0.9 sent during a trickle were answered.
struct ProbeCount {
  int answered = 0, probes = 0;
};

/// For 5 s keeps one connection open per address of `sources` to `port` (a fresh one as soon as
/// the server cuts the old off; `open(i, fd)` sends what a fresh one sends first and says whether
/// to feed it in this round), calls `feed(i, fd)` on each every 100 ms to send a little more,
/// and probes /healthz from 127.0.0.9 every 300 ms (answered = a 200 within 1 s).
ProbeCount probe_while_trickling(std::uint16_t port, const std::vector<std::string>& sources,
                                 const std::function<bool(std::size_t, int)>& open,
                                 const std::function<void(std::size_t, int)>& feed) {
  std::vector<int> slow(sources.size(), -1);
  ProbeCount count;
  const auto start = std::chrono::steady_clock::now();
  auto next_probe = start + 300ms;
  while (std::chrono::steady_clock::now() - start < 5s) {
    for (std::size_t i = 0; i < slow.size(); ++i) {
      if (slow[i] >= 0 && peer_closed(slow[i], 1ms)) {
        ::close(slow[i]);
        slow[i] = -1;
      }
      if (slow[i] < 0) {  // a fresh connection as soon as the old one is cut off
        slow[i] = raw_connect_from(sources[i].c_str(), port);
        if (slow[i] < 0 || !open(i, slow[i])) continue;
      }
      feed(i, slow[i]);
    }
    if (std::chrono::steady_clock::now() >= next_probe) {
      ++count.probes;
      if (raw_get_status("127.0.0.9", port, "/healthz", 1000ms) == 200) ++count.answered;
      next_probe = std::chrono::steady_clock::now() + 300ms;
    }
    std::this_thread::sleep_for(100ms);
  }
  for (const int fd : slow) {
    if (fd >= 0) ::close(fd);
  }
  return count;
}

// This process's resident memory, KiB (-1 if unknown).
long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
    status.ignore(1 << 20, '\n');
  }
  return -1;
}

}  // namespace

TEST_CASE("metrics: the text format parses with prometheus_client, histograms cumulative, labels escaped") {
  MetricsSnapshot m;
  m.ticks = 90;
  m.tick_duration.observe(0.0004);
  m.tick_duration.observe(0.004);
  m.tick_duration.observe(2.0);  // above the last bound: +Inf only
  m.kind_count = 2;
  m.agents_by_kind = {7, 3};
  m.drop_reason_count = 1;
  m.udp_drops[0] = 5;
  const std::string kinds[] = {"runner", "we\"ird\\kind"};
  const char* drops[] = {"malformed"};
  const auto parsed = parse_with_prometheus_client(swarmfield::server::render_metrics(m, {kinds, drops}));
  REQUIRE_MESSAGE(parsed.ok, parsed.error);
  CHECK(parsed.families.at("swarmfield_tick_duration_seconds") == "histogram");
  CHECK(parsed.families.at("swarmfield_ticks") == "counter");
  CHECK(parsed.at("swarmfield_ticks_total{}") == 90);
  CHECK(parsed.at("swarmfield_tick_duration_seconds_bucket{le=0.0005}") == 1);
  CHECK(parsed.at("swarmfield_tick_duration_seconds_bucket{le=0.005}") == 2);
  CHECK(parsed.at("swarmfield_tick_duration_seconds_bucket{le=1}") == 2);
  CHECK(parsed.at("swarmfield_tick_duration_seconds_bucket{le=+Inf}") == 3);
  CHECK(parsed.at("swarmfield_tick_duration_seconds_count{}") == 3);
  CHECK(parsed.at("swarmfield_tick_duration_seconds_sum{}") == doctest::Approx(2.0044));
  CHECK(parsed.at("swarmfield_agents{kind=runner}") == 7);
  CHECK(parsed.at("swarmfield_agents{kind=we\"ird\\kind}") == 3);
  CHECK(parsed.at("swarmfield_udp_dropped_total{reason=malformed}") == 5);
  CHECK(parsed.families.at("swarmfield_build_info") == "gauge");
  CHECK(parsed.families.at("swarmfield_tick_phase_duration_seconds") == "histogram");
  CHECK(parsed.at("swarmfield_tick_phase_duration_seconds_count{phase=fields}") == 0);
  const std::string text = swarmfield::server::render_metrics(m, {kinds, drops});
  CHECK(text.find("swarmfield_build_info{version=\"" + std::string(swarmfield::cli::kVersion) + "\",protocol=\"3\"} 1\n") !=
        std::string::npos);
}

TEST_CASE("metrics: tick phases as one histogram family labelled by phase") {
  MetricsSnapshot m;
  m.phase_duration[0].observe(0.0003);  // fields
  m.phase_duration[1].observe(0.004);   // swarm
  m.phase_duration[1].observe(0.040);
  m.phase_duration[2].observe(0.0015);  // snapshots
  const std::string kinds[] = {"walker"};
  const auto parsed = parse_with_prometheus_client(swarmfield::server::render_metrics(m, {kinds, nullptr}));
  REQUIRE_MESSAGE(parsed.ok, parsed.error);
  CHECK(parsed.families.at("swarmfield_tick_phase_duration_seconds") == "histogram");
  CHECK(parsed.at("swarmfield_tick_phase_duration_seconds_count{phase=fields}") == 1);
  CHECK(parsed.at("swarmfield_tick_phase_duration_seconds_count{phase=swarm}") == 2);
  CHECK(parsed.at("swarmfield_tick_phase_duration_seconds_count{phase=snapshots}") == 1);
  CHECK(parsed.at("swarmfield_tick_phase_duration_seconds_bucket{le=0.005,phase=swarm}") == 1);
  CHECK(parsed.at("swarmfield_tick_phase_duration_seconds_bucket{le=0.05,phase=swarm}") == 2);
  CHECK(parsed.at("swarmfield_tick_phase_duration_seconds_bucket{le=0.001,phase=snapshots}") == 0);
  CHECK(parsed.at("swarmfield_tick_phase_duration_seconds_sum{phase=swarm}") == doctest::Approx(0.044));
}

TEST_CASE("process metrics: read from /proc, under the client libraries' names") {
  swarmfield::server::ProcessStats before;
  REQUIRE(swarmfield::server::read_process_stats(before));
  CHECK(before.resident_bytes > 1024 * 1024);
  CHECK(before.virtual_bytes >= before.resident_bytes);
  CHECK(before.max_fds > 0);
  CHECK(before.cpu_seconds >= 0.0);
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  CHECK(before.start_time_seconds <= now + 5.0);  // btime: whole seconds, moved by clock adjustments
  CHECK(before.start_time_seconds > now - 3600.0);  // a test program started within the hour
  // One more open file is one more descriptor.
  const int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  swarmfield::server::ProcessStats with_file;
  REQUIRE(swarmfield::server::read_process_stats(with_file));
  ::close(fd);
  CHECK(with_file.open_fds == before.open_fds + 1);
  // Busy for 3 ms of CPU: the figure grows by that, not in /proc's clock ticks (1/100 s: a
  // server that had run a few ms read 0, and a scrape of one just started failed its check).
  const auto process_cpu = [] {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  };
  volatile double sink = 0.0;
  const double busy_from = process_cpu();
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  while (process_cpu() - busy_from < 0.003 && std::chrono::steady_clock::now() < give_up) sink = sink + 1.0;
  swarmfield::server::ProcessStats later;
  REQUIRE(swarmfield::server::read_process_stats(later));
  CHECK(later.cpu_seconds - before.cpu_seconds >= 0.003);
  CHECK(later.cpu_seconds - before.cpu_seconds < 5.0);
  const auto parsed = parse_with_prometheus_client(swarmfield::server::render_process_metrics(later));
  REQUIRE_MESSAGE(parsed.ok, parsed.error);
  CHECK(parsed.families.at("process_cpu_seconds") == "counter");
  for (const char* gauge : {"process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds",
                            "process_max_fds", "process_start_time_seconds"}) {
    CHECK_MESSAGE(parsed.families.count(gauge) == 1, gauge);
  }
  CHECK(parsed.at("process_open_fds{}") == static_cast<double>(later.open_fds));
  CHECK(parsed.at("process_start_time_seconds{}") == doctest::Approx(later.start_time_seconds));
}

TEST_CASE("operations http: /healthz fails once the tick loop stalls > 1 s; /readyz follows ready and draining") {
  OperationsState state;
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  CHECK(get(http.port(), "/healthz").first == 503);  // never ticked
  state.publish(MetricsSnapshot{}, OperationsState::Clock::now());
  CHECK(get(http.port(), "/healthz") == std::pair<int, std::string>{200, "ok\n"});
  state.publish(MetricsSnapshot{}, OperationsState::Clock::now() - 1500ms);  // last tick 1.5 s ago
  const auto stalled = get(http.port(), "/healthz");
  CHECK(stalled.first == 503);
  CHECK(stalled.second.find("stalled for 1.5 s") != std::string::npos);
  CHECK(get(http.port(), "/readyz").first == 503);
  state.set_ready(true);
  CHECK(get(http.port(), "/readyz") == std::pair<int, std::string>{200, "ready\n"});
  state.set_draining(true);
  CHECK(get(http.port(), "/readyz") == std::pair<int, std::string>{503, "draining\n"});
  CHECK(get(http.port(), "/nothing").first == 404);
  http.stop();
  CHECK(get(http.port(), "/healthz").first == -1);  // closed
}

TEST_CASE("operations http: another method than GET/HEAD is 405 with Allow on the paths served; any is 404 elsewhere") {
  // Before: a GET of an unknown path was 404 but POST, PUT, DELETE, PATCH, OPTIONS, TRACE or a
  // made-up method got 400 on any path, with no Allow.
  OperationsState state;
  state.publish(MetricsSnapshot{}, OperationsState::Clock::now());
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  for (const std::string method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "FROB"}) {
    for (const std::string path : {"/healthz", "/readyz", "/metrics?x=1"}) {
      const std::string answer = raw_exchange(http.port(), method + " " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
      INFO(method << " " << path << ": " << answer);
      CHECK(answer.rfind("HTTP/1.1 405 ", 0) == 0);
      CHECK(answer.find("\r\nAllow: GET, HEAD\r\n") != std::string::npos);
    }
    const std::string answer = raw_exchange(http.port(), method + " /nothing HTTP/1.1\r\nHost: x\r\n\r\n");
    INFO(method << " /nothing: " << answer);
    CHECK(answer.rfind("HTTP/1.1 404 ", 0) == 0);
    CHECK(answer.find("not found") != std::string::npos);
  }
  // Answered at once: a POST without a body was read to the end of the stream, answered 400 at
  // the request deadline (2 s).
  const auto start = std::chrono::steady_clock::now();
  CHECK(raw_exchange(http.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 405 ", 0) == 0);
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  // A body is read before the answer (at most 1 KiB, as before).
  const std::string post =
      raw_exchange(http.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  CHECK(post.rfind("HTTP/1.1 405 ", 0) == 0);
  CHECK(post.find("\r\nAllow: GET, HEAD\r\n") != std::string::npos);
  const std::string post_elsewhere =
      raw_exchange(http.port(), "DELETE /nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  CHECK(post_elsewhere.rfind("HTTP/1.1 404 ", 0) == 0);
  CHECK(post_elsewhere.find("not found") != std::string::npos);
  state.publish(MetricsSnapshot{}, OperationsState::Clock::now());  // healthy (a tick within 1 s)
  CHECK(raw_exchange(http.port(), "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n").rfind("HTTP/1.1 200 ", 0) == 0);
  CHECK(raw_exchange(http.port(), "GET /nothing HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 404 ", 0) == 0);
  // Malformed request lines are still 400, whatever their method.
  CHECK(raw_exchange(http.port(), "FROB /healthz\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(raw_exchange(http.port(), "FROB /healthz HTTP/9.9\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(raw_exchange(http.port(), "GET /healthz HTTP/9.9\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  // A GET whose line is malformed is a 400, not "GET or HEAD only" (a 405 named its own method).
  CHECK(raw_exchange(http.port(), "GET /healthz HTTP/1.1 extra junk\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(raw_exchange(http.port(), "HEAD /metrics HTTP/1.1 extra\r\n\r\n").rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(get(http.port(), "/readyz").first == 503);  // still served: not ready yet
  http.stop();
}

TEST_CASE("operations http: a Range header is ignored: the whole answer, once, not a copy per range") {
  // Before: 1,000 ranges on /metrics came back as a 206 multipart body of 1,000 copies.
  OperationsState state;
  state.publish(MetricsSnapshot{}, OperationsState::Clock::now());
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  const auto plain = get(http.port(), "/metrics");
  REQUIRE(plain.first == 200);
  REQUIRE(plain.second.size() > 100);
  std::string ranges = "bytes=";
  for (int i = 0; i < 1000; ++i) ranges += "0-,";
  ranges += "0-";
  for (const std::string& range : {ranges, std::string("bytes=0-9"), std::string("bytes=0-9,20-29")}) {
    httplib::Client client("127.0.0.1", http.port());
    client.set_connection_timeout(2, 0);
    client.set_read_timeout(2, 0);
    const auto res = client.Get("/metrics", httplib::Headers{{"Range", range}});
    REQUIRE(res);
    CHECK(res->status == 200);
    // The same text (its counters may move between the two requests), not 1,000 copies of it.
    CHECK(res->body.size() + 256 > plain.second.size());
    CHECK(res->body.size() < plain.second.size() + 256);
    CHECK_FALSE(res->has_header("Content-Range"));
  }
  CHECK(get(http.port(), "/healthz").first == 200);
  http.stop();
}

TEST_CASE("operations http: a request whose headers never end is cut off at a byte budget, not buffered") {
  // Before: httplib kept every header line of one request (no count limit): one connection
  // streaming header lines grew the game server by ~1.5 bytes per byte sent (200 MiB -> +310 MiB
  // RSS), without end. The server runs in this process: its growth is ours. (What was sent says
  // little: loopback socket buffers hold tens of MiB.)
  OperationsState state;
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  const long rss_before = rss_kib();
  const int fd = raw_connect(http.port());
  REQUIRE(fd >= 0);
  const std::string line = "X-Filler: " + std::string(1000, 'a') + "\r\n";
  std::string chunk = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  std::size_t sent = 0;
  bool cut = false;
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (sent < (std::size_t{16} << 20) && std::chrono::steady_clock::now() < end) {
    while (chunk.size() < 16384) chunk += line;
    const ssize_t n = ::send(fd, chunk.data(), chunk.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (peer_closed(fd, 20ms)) {
        cut = true;
        break;
      }
      continue;
    }
    if (n < 0) {  // EPIPE / ECONNRESET: closed
      cut = true;
      break;
    }
    sent += static_cast<std::size_t>(n);
    chunk.erase(0, static_cast<std::size_t>(n));
  }
  std::this_thread::sleep_for(300ms);  // let the server read what is buffered
  const long grown_kib = rss_kib() - rss_before;
  INFO("sent " << sent << " bytes, RSS grew " << grown_kib << " KiB");
  CHECK(cut);
  CHECK(grown_kib < 4096);
  ::close(fd);
  CHECK(get(http.port(), "/healthz").first == 503);  // still serving
}

TEST_CASE("operations http: a head over the byte budget is answered 431, a body over 1 KiB 413 at once") {
  // Before: a head over kMaxRequestBytes was closed with no answer (the web port answers 431),
  // and a POST declaring a 100 MB body got its 413 only at the request deadline (2 s), after
  // httplib had waited to skip a body that was never coming.
  OperationsState state;
  state.publish(MetricsSnapshot{}, OperationsState::Clock::now() + 60s);  // healthy throughout
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  std::string long_lines = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  while (long_lines.size() <= OperationsHttp::kMaxRequestBytes) long_lines += "X-Filler: " + std::string(1000, 'a') + "\r\n";
  std::string many_lines = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 3000; ++i) many_lines += "X-" + std::to_string(i) + ": b\r\n";
  for (const std::string& head : {long_lines + "\r\n", many_lines + "\r\n", long_lines /* never ends */}) {
    const auto start = std::chrono::steady_clock::now();
    const std::string answer = raw_exchange(http.port(), head);
    INFO("a head of " << head.size() << " bytes: " << answer);
    CHECK(answer.rfind("HTTP/1.1 431 Request Header Fields Too Large\r\n", 0) == 0);
    CHECK(answer.find("\r\nConnection: close\r\n") != std::string::npos);
    CHECK(answer.find("request head too large") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < 1s);
  }
  for (const std::string path : {"/healthz", "/nothing"}) {
    const auto start = std::chrono::steady_clock::now();
    const std::string answer = raw_exchange(
        http.port(), "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n" + std::string(4096, 'b'));
    INFO("POST " << path << ": " << answer);
    CHECK(answer.rfind("HTTP/1.1 413 ", 0) == 0);
    CHECK(answer.find("\r\nConnection: close\r\n") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < 1s);
  }
  // Past 2^64 is too large too; a body of 1 KiB is still read and answered by the method (405).
  CHECK(raw_exchange(http.port(), "PUT /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n")
            .rfind("HTTP/1.1 413 ", 0) == 0);
  CHECK(raw_exchange(http.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1024\r\n\r\n" + std::string(1024, 'b'))
            .rfind("HTTP/1.1 405 ", 0) == 0);
  CHECK(raw_exchange(http.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1025\r\n\r\n" + std::string(1025, 'b'))
            .rfind("HTTP/1.1 413 ", 0) == 0);
  // Two Content-Lengths that differ leave the request's end unknowable (RFC 9112 6.3): 400, body
  // unread (it was read by the first and answered 405). Two that agree are one.
  CHECK(raw_exchange(http.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 500\r\n\r\nhello")
            .rfind("HTTP/1.1 400 ", 0) == 0);
  CHECK(raw_exchange(http.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello")
            .rfind("HTTP/1.1 405 ", 0) == 0);
  CHECK(get(http.port(), "/healthz").first == 200);
  http.stop();
}

TEST_CASE("operations http: requests trickled a line at a time are cut off by a deadline; /healthz answers meanwhile") {
  // Before: the 2 s read timeout was per read, so a header line every 0.4 s held a worker thread
  // for ever, and kThreads such connections took /healthz down (a liveness probe failing).
  OperationsState state;
  state.publish(swarmfield::server::MetricsSnapshot{}, OperationsState::Clock::now() + 60s);  // healthy throughout
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  std::vector<int> slow;
  for (int i = 0; i < OperationsHttp::kThreads; ++i) {
    const int fd = raw_connect(http.port());
    REQUIRE(fd >= 0);
    const std::string head = "GET /healthz HTTP/1.1\r\nHost: x\r\n";
    REQUIRE(::send(fd, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size()));
    slow.push_back(fd);
  }
  std::vector<bool> closed(slow.size(), false);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < 6s &&
         std::find(closed.begin(), closed.end(), false) != closed.end()) {
    std::this_thread::sleep_for(400ms);
    for (std::size_t i = 0; i < slow.size(); ++i) {
      const std::string more = "X-Slow: " + std::to_string(i) + "\r\n";
      if (!closed[i] && (::send(slow[i], more.data(), more.size(), MSG_NOSIGNAL) < 0 || peer_closed(slow[i], 1ms)))
        closed[i] = true;
    }
  }
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(get(http.port(), "/healthz").first == 200);  // before the trickling sockets are closed here
  for (std::size_t i = 0; i < slow.size(); ++i) {
    CHECK_MESSAGE(closed[i], "connection " << i << " still open after " << std::chrono::duration<double>(took).count() << " s");
    ::close(slow[i]);
  }
}

TEST_CASE("operations http: connections that send nothing hold no worker; they are closed at the deadline") {
  // Before: each accepted connection went to a worker, which then waited for its request: 40
  // idle connections kept /healthz failing for ~20 s (and a few more every 2 s kept it failing,
  // so a liveness probe restarted the pod).
  OperationsState state;
  state.publish(swarmfield::server::MetricsSnapshot{}, OperationsState::Clock::now() + 60s);
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  std::vector<int> idle;
  for (const char* source : {"127.0.0.2", "127.0.0.3"}) {
    for (int i = 0; i < OperationsHttp::kMaxPerAddress; ++i) {
      const int fd = raw_connect_from(source, http.port());
      REQUIRE(fd >= 0);
      idle.push_back(fd);
    }
  }
  std::this_thread::sleep_for(100ms);  // accepted and waiting
  for (int i = 0; i < 3; ++i) CHECK(raw_get_status("127.0.0.1", http.port(), "/healthz", 1500ms) == 200);
  std::size_t closed = 0;
  const auto end = std::chrono::steady_clock::now() + OperationsHttp::kRequestDeadline + 3s;
  std::vector<bool> seen(idle.size(), false);
  while (closed < idle.size() && std::chrono::steady_clock::now() < end) {
    for (std::size_t i = 0; i < idle.size(); ++i) {
      if (!seen[i] && peer_closed(idle[i], 1ms)) {
        seen[i] = true;
        ++closed;
      }
    }
    std::this_thread::sleep_for(50ms);
  }
  CHECK(closed == idle.size());
  for (const int fd : idle) ::close(fd);
}

TEST_CASE("operations http: one address gets kMaxPerAddress connections; others are still served") {
  OperationsState state;
  state.publish(swarmfield::server::MetricsSnapshot{}, OperationsState::Clock::now() + 60s);
  // A long deadline: connecting 33 sockets can take seconds on a busy machine (httplib listens
  // with a backlog of 5; a dropped SYN is sent again after 1 s), and the idle ones must still be
  // open when the last one arrives.
  OperationsHttp http(state, 30s);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  std::vector<int> held;
  for (int i = 0; i < OperationsHttp::kMaxPerAddress; ++i) {
    const int fd = raw_connect_from("127.0.0.4", http.port());
    REQUIRE(fd >= 0);
    held.push_back(fd);
  }
  std::this_thread::sleep_for(100ms);
  const int extra = raw_connect_from("127.0.0.4", http.port());
  REQUIRE(extra >= 0);
  CHECK(peer_closed(extra, 5000ms));                // refused at once, long before the deadline
  CHECK_FALSE(peer_closed(held.front(), 1ms));      // the ones before it still wait
  // Still full, and told so (was silence, then 503: the status /healthz gives a stalled tick
  // loop, so a liveness probe sharing the address read a healthy server as stalled).
  const std::string refused = raw_get_head("127.0.0.4", http.port(), "/healthz", 500ms);
  INFO("refused: " << refused);
  CHECK(status_of(refused) == 429);
  CHECK(refused.find("\r\nRetry-After: 1\r\n") != std::string::npos);
  CHECK(raw_get_status("127.0.0.5", http.port(), "/healthz", 1500ms) == 200);
  ::close(extra);
  for (const int fd : held) ::close(fd);
  // Closed by the peer: the room notices, and the address may connect again.
  std::this_thread::sleep_for(200ms);
  CHECK(raw_get_status("127.0.0.4", http.port(), "/healthz", 1500ms) == 200);
}

TEST_CASE("operations http: an IPv6 peer counts as its /64 in the per-address limit") {
  // A host is routinely given a whole /64, and the game ports count an IPv6 address as its /64
  // (counted_address). This port counted each address whole: a host got kMaxPerAddress
  // connections from each of its 2^64 addresses (a third address of the /64 below was still
  // served, 200, with 32 held open). Lo gets addresses of two /64s in a network namespace of this
  // thread's own (root): a ctest entry of its own (server_operations_ipv6_test), skipped without.
  std::string cannot;
  int same_64 = -1, other_64 = -1, after_close = -1;
  bool extra_refused = false;
  std::thread([&] {
    cannot = own_network_with({"2001:db8:1:2::a", "2001:db8:1:2::b", "2001:db8:1:2::c", "2001:db8:1:3::a"});
    if (!cannot.empty()) return;
    OperationsState state;
    state.publish(swarmfield::server::MetricsSnapshot{}, OperationsState::Clock::now() + 60s);
    OperationsHttp http(state, 30s);  // the held connections must outlast their connecting
    if (std::string error; !http.start("::1", 0, error)) {
      cannot = error;
      return;
    }
    std::vector<int> held;  // kMaxPerAddress, half from each of two addresses of the /64
    for (int i = 0; i < OperationsHttp::kMaxPerAddress; ++i) {
      const int fd = raw_connect_from(i % 2 == 0 ? "2001:db8:1:2::a" : "2001:db8:1:2::b", http.port());
      if (fd >= 0) held.push_back(fd);
    }
    std::this_thread::sleep_for(100ms);  // accepted and waiting
    if (held.size() == static_cast<std::size_t>(OperationsHttp::kMaxPerAddress)) {
      same_64 = raw_get_status("2001:db8:1:2::c", http.port(), "/healthz", 1500ms);
      const int extra = raw_connect_from("2001:db8:1:2::c", http.port());
      extra_refused = extra >= 0 && peer_closed(extra, 5000ms);
      if (extra >= 0) ::close(extra);
      other_64 = raw_get_status("2001:db8:1:3::a", http.port(), "/healthz", 1500ms);
    }
    for (const int fd : held) ::close(fd);
    std::this_thread::sleep_for(200ms);  // closed by the peer: the /64 may connect again
    after_close = raw_get_status("2001:db8:1:2::c", http.port(), "/healthz", 1500ms);
  }).join();
  if (!cannot.empty()) swarmfield::test::skip_test("no network namespace with IPv6 addresses on lo: " + cannot);
  CHECK(same_64 == 429);  // over the /64's limit, and told so (was 200; then 503, a stalled loop's status)
  CHECK(extra_refused);
  CHECK(other_64 == 200);  // the next /64: another host
  CHECK(after_close == 200);
}

TEST_CASE("operations http: many addresses trickling bytes hold no worker; /healthz answers meanwhile") {
  // Before: a connection went to a worker as soon as it sent one byte, and the worker then
  // waited up to the request deadline for the rest: a few more addresses than kThreads /
  // kMaxBusyPerAddress, each trickling a byte now and then on fresh connections, kept every
  // worker waiting and /healthz unanswered. Now the room reads the request heads itself.
  OperationsState state;
  state.publish(swarmfield::server::MetricsSnapshot{}, OperationsState::Clock::now() + 60s);
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  constexpr int kAddresses = 3 * OperationsHttp::kThreads;  // 3 connections per worker
  std::vector<std::string> sources;
  for (int i = 0; i < kAddresses; ++i) sources.push_back("127.0.1." + std::to_string(10 + i));
  const std::string request = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  std::vector<std::size_t> sent(sources.size(), 0);
  const ProbeCount count = probe_while_trickling(
      http.port(), sources,
      [&](std::size_t i, int) {
        sent[i] = 0;
        return true;
      },
      [&](std::size_t i, int fd) {
        // One byte at a time, never the end of the head.
        if (sent[i] + 4 < request.size() && ::send(fd, request.data() + sent[i], 1, MSG_NOSIGNAL) == 1) ++sent[i];
      });
  INFO(count.answered << " of " << count.probes << " probes answered within 1 s");
  CHECK(count.probes >= 4);
  CHECK(count.answered == count.probes);
}

TEST_CASE("operations http: request bodies trickled from a few addresses hold no worker; /healthz answers meanwhile") {
  // Before: the room handed a connection to a worker once its head had arrived, and the worker
  // then waited up to the request deadline for the body a POST declared (at most 1 KiB is
  // taken). Three addresses, each holding kMaxBusyPerAddress workers with a body sent a byte at
  // a time on fresh connections, kept all of them busy: about half the probes went unanswered
  // for 1 s (a liveness probe's default timeout: the pod restarted). Now a connection waits in
  // the room until its declared body has arrived too, and a body that can not be waited for
  // whole (chunked, a length that is no plain number) is refused unread.
  OperationsState state;
  state.publish(swarmfield::server::MetricsSnapshot{}, OperationsState::Clock::now() + 60s);
  OperationsHttp http(state);
  std::string error;
  REQUIRE_MESSAGE(http.start("127.0.0.1", 0, error), error);
  constexpr int kAddresses = OperationsHttp::kThreads / OperationsHttp::kMaxBusyPerAddress + 1;
  std::vector<std::string> sources;
  for (int a = 0; a < kAddresses; ++a) {
    for (int i = 0; i < OperationsHttp::kMaxBusyPerAddress; ++i) sources.push_back("127.0.2." + std::to_string(10 + a));
  }
  // Bodies httplib would wait for: declared by a length (1000 bytes; as its strtoull reads "+900"
  // and "-1": 900 bytes and 2^64 - 1, skipped to the end), or chunked, a chunk of one byte at a
  // time, never the last.
  const std::vector<std::string> heads = {
      "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
      "POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
      "PUT /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: +900\r\n\r\n",
      "DELETE /readyz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n"};
  const ProbeCount count = probe_while_trickling(
      http.port(), sources,
      [&](std::size_t i, int fd) {
        const std::string& head = heads[i % heads.size()];
        return ::send(fd, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size());
      },
      [&](std::size_t i, int fd) {
        const std::string more = i % heads.size() == 1 ? "1\r\nb\r\n" : "b";
        static_cast<void>(::send(fd, more.data(), more.size(), MSG_NOSIGNAL));
      });
  INFO(count.answered << " of " << count.probes << " probes answered within 1 s");
  CHECK(count.probes >= 4);
  CHECK(count.answered == count.probes);
  // A body that arrives whole is still read and answered as before; the others are refused unread.
  CHECK(raw_exchange(http.port(), "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello").rfind("HTTP/1.1 405", 0) == 0);
  CHECK(raw_exchange(http.port(), heads[1] + "5\r\nhello\r\n0\r\n\r\n").rfind("HTTP/1.1 400", 0) == 0);
  CHECK(raw_exchange(http.port(), heads[2]).rfind("HTTP/1.1 400", 0) == 0);
}

TEST_CASE("operations http: the port listens with a backlog of kListenBacklog, not httplib's 5") {
  OperationsState state;
  OperationsHttp http(state);
  std::string error;
  REQUIRE(http.start("127.0.0.1", 0, error));
  std::ifstream somaxconn("/proc/sys/net/core/somaxconn");
  int cap = OperationsHttp::kListenBacklog;
  somaxconn >> cap;  // the kernel caps the backlog there
  CHECK(listen_backlog(http.port()) == std::min(OperationsHttp::kListenBacklog, cap));
  CHECK(std::min(OperationsHttp::kListenBacklog, cap) > 5);
}

TEST_CASE("operations http: a port in use is an error naming it") {
  OperationsState state;
  OperationsHttp first(state), second(state);
  std::string error;
  REQUIRE(first.start("127.0.0.1", 0, error));
  CHECK_FALSE(second.start("127.0.0.1", first.port(), error));
  CHECK(error.find(std::to_string(first.port())) != std::string::npos);
  CHECK(error.find("Address already in use") != std::string::npos);  // the reason, as the game ports say
}

TEST_CASE("operations: the server's /metrics, /healthz and /readyz with a joined player, parsed by prometheus_client") {
  using namespace swarmfield;
  test::ServerProcess server(test::small_city({"--agents", "300", "--http-port", "0", "--http-bind", "127.0.0.1"}));
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  const std::uint16_t http_port = wait_http_port(server);
  test::RawClient client;
  REQUIRE(test::join(client, ports->tcp, protocol::Role::kPlayer).has_value());
  REQUIRE(client.udp_open());
  REQUIRE(client.udp_confirm(ports->udp, 5s));
  std::this_thread::sleep_for(500ms);  // some ticks and snapshots

  CHECK(get(http_port, "/healthz") == std::pair<int, std::string>{200, "ok\n"});
  CHECK(get(http_port, "/readyz") == std::pair<int, std::string>{200, "ready\n"});
  const auto [status, body] = get(http_port, "/metrics");
  REQUIRE(status == 200);
  const auto parsed = parse_with_prometheus_client(body);
  REQUIRE_MESSAGE(parsed.ok, parsed.error << body);
  for (const char* family : {"swarmfield_ticks", "swarmfield_tick_overruns", "swarmfield_field_rebuilds",
                             "swarmfield_sent_bytes", "swarmfield_received_bytes", "swarmfield_datagrams_sent",
                             "swarmfield_datagrams_received", "swarmfield_udp_dropped", "swarmfield_evictions"}) {
    CHECK_MESSAGE(parsed.families.count(family) == 1, family);
    CHECK(parsed.families.at(family) == "counter");
  }
  CHECK(parsed.families.at("swarmfield_tick_duration_seconds") == "histogram");
  CHECK(parsed.families.at("swarmfield_field_rebuild_duration_seconds") == "histogram");
  const double ticks = parsed.at("swarmfield_ticks_total{}");
  CHECK(ticks >= 10);
  CHECK(parsed.at("swarmfield_tick_duration_seconds_count{}") == ticks);  // one observation per tick
  CHECK(parsed.at("swarmfield_field_rebuilds_total{}") >= 1);
  CHECK(parsed.at("swarmfield_field_rebuild_duration_seconds_count{}") >= 1);
  // Agents by kind (the default set: runner, walker, brute spawned 3 : 6 : 1).
  const double runners = parsed.at("swarmfield_agents{kind=runner}");
  const double walkers = parsed.at("swarmfield_agents{kind=walker}");
  const double brutes = parsed.at("swarmfield_agents{kind=brute}");
  CHECK(runners + walkers + brutes == 300);
  CHECK(walkers > runners);
  CHECK(runners > brutes);
  CHECK(brutes > 0);
  CHECK(parsed.at("swarmfield_players{}") == 1);
  CHECK(parsed.at("swarmfield_clients{}") == 1);
  CHECK(parsed.at("swarmfield_connections_accepted_total{}") == 1);
  CHECK(parsed.at("swarmfield_received_bytes_total{transport=tcp}") > 0);  // the Hello frame
  CHECK(parsed.at("swarmfield_sent_bytes_total{transport=tcp}") > 0);      // Welcome + map
  CHECK(parsed.at("swarmfield_datagrams_received_total{}") >= 2);          // connect request + response
  CHECK(parsed.at("swarmfield_received_bytes_total{transport=udp}") >= 1200);
  CHECK(parsed.at("swarmfield_datagrams_sent_total{}") >= 1);
  CHECK(parsed.at("swarmfield_sent_bytes_total{transport=udp}") > 0);
  CHECK(parsed.at("swarmfield_udp_dropped_total{reason=malformed}") == 0);
  CHECK(parsed.at("swarmfield_draining{}") == 0);
  // A tick's phases, one observation each per tick (published with the tick's).
  for (const char* phase : {"fields", "swarm", "snapshots"}) {
    CHECK(parsed.at(std::string("swarmfield_tick_phase_duration_seconds_count{phase=") + phase + "}") == ticks);
  }
  // The process's own figures (the server's, read from its /proc).
  CHECK(parsed.families.at("process_cpu_seconds") == "counter");
  CHECK(parsed.at("process_cpu_seconds_total{}") > 0.0);
  CHECK(parsed.at("process_resident_memory_bytes{}") > 1024.0 * 1024.0);
  CHECK(parsed.at("process_open_fds{}") >= 4.0);  // stdio, listeners, the client's socket
  CHECK(parsed.at("process_max_fds{}") > 0.0);
  // Boot time (whole seconds, /proc/stat btime, which moves when the wall clock is adjusted) plus
  // the start in clock ticks: good to a few seconds, as in every client library.
  const double started = parsed.at("process_start_time_seconds{}");
  const double now_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  INFO(std::fixed << "started " << started << " now " << now_s);
  CHECK(started <= now_s + 5.0);
  CHECK(started > now_s - 120.0);

  // Garbage datagrams show up as drops by reason.
  for (int i = 0; i < 5; ++i) {
    const std::uint8_t junk[3] = {1, 2, 3};
    client.udp_send(ports->udp, junk);
  }
  // The tick thread publishes the counters: wait until they show the five (bounded), then
  // check that it is five, not more.
  auto after = parse_with_prometheus_client(get(http_port, "/metrics").second);
  for (int i = 0; i < 100 && after.ok && after.at("swarmfield_udp_dropped_total{reason=malformed}") < 5; ++i) {
    std::this_thread::sleep_for(50ms);
    after = parse_with_prometheus_client(get(http_port, "/metrics").second);
  }
  REQUIRE(after.ok);
  CHECK(after.at("swarmfield_udp_dropped_total{reason=malformed}") == 5);
  CHECK(after.at("swarmfield_ticks_total{}") > ticks);

  server.signal(SIGTERM);
  CHECK(server.wait_exit(30s) == 0);
}

TEST_CASE("drain: SIGTERM stops accepting, says why, /readyz turns 503; a second signal exits at once") {
  using namespace swarmfield;
  // A 512 city: its map transfer (Welcome + chunks) is larger than what a client that never
  // reads can take in its small receive buffer, so the drain waits for that client's queue
  // (up to 1 s) and can be watched.
  test::ServerProcess server(
      {"--port", "0", "--bind", "127.0.0.1", "--city-size", "512", "--agents", "100", "--http-port", "0"});
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  const std::uint16_t http_port = wait_http_port(server);
  test::RawClient player;
  REQUIRE(test::join(player, ports->tcp, protocol::Role::kPlayer).has_value());
  test::RawClient stuck;  // says Hello, then never reads
  REQUIRE(stuck.connect(ports->tcp, 2048));
  REQUIRE(stuck.send(test::hello(protocol::Role::kViewer)));
  REQUIRE(server.wait_for_log("joined as viewer", 5s).has_value());
  CHECK(get(http_port, "/readyz").first == 200);

  server.signal(SIGTERM);
  const auto bye = player.read_until<protocol::Bye>(2s);
  REQUIRE(bye.has_value());
  CHECK(bye->reason == "server shutting down (SIGTERM)");
  // Draining: not ready, still alive, new clients get nowhere.
  const auto ready = get(http_port, "/readyz");
  CHECK(ready == std::pair<int, std::string>{503, "draining\n"});
  test::RawClient late;
  if (late.connect(ports->tcp)) {
    late.send(test::hello(protocol::Role::kPlayer));
    CHECK_FALSE(late.read_until<protocol::Welcome>(300ms).has_value());
  }
  server.signal(SIGTERM);  // the second: no more waiting for the stuck client
  const auto code = server.wait_exit(10s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  // It closed at the second request, not when the stuck client's bytes were written or the
  // flush timed out.
  CHECK(server.err().find("second stop request (SIGTERM): closing now") != std::string::npos);
  CHECK(server.err().find("stopped: ") == std::string::npos);
  CHECK(server.out().rfind("ticks=", 0) == 0);  // the summary line still printed
}
