// Agones: the server against a local stand-in for the SDK sidecar's REST gateway that records
// every call and when it came; checks the order (Ready, Health..., Allocate on the first
// player, Shutdown on SIGTERM, nothing after it) and the timing. In-process: Health pings stop
// while the tick loop is stalled. Which status.ports entry Welcome announces: Agones' TCPUDP
// shape ('game-tcp', 'game-udp'), a port declared alone ('game'), --agones-port-name, no match.
#include <doctest/doctest.h>

#include <future>

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "loopback_support.hpp"
#include "swarmfield/protocol/transport/connect_token.hpp"
#include "swarmfield/server/ops/agones_client.hpp"
#include "temp_dir.hpp"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// status.ports of a Fleet port 'game' declared alone (protocol UDP): one entry, the game port
// mapped to 40123.
const std::string kPlainPorts = R"({"name":"http","port":40999},{"name":"game","port":40123})";
// status.ports of a Fleet port 'game' with protocol TCPUDP (docker/agones/fleet.yaml) as Agones
// writes them: the port renamed 'game-tcp' in its place, a copy 'game-udp' appended
// (pkg/portallocator/portallocator.go, portRangeAllocator.Allocate). Agones gives both the same
// host port; here they differ so that the test sees which one was taken.
const std::string kTcpUdpPorts =
    R"({"name":"http","port":40999},{"name":"game-tcp","port":40200},{"name":"game-udp","port":40201})";

// The SDK sidecar's REST gateway, recording calls.
class AgonesStandIn {
 public:
  struct Call {
    std::string path;
    std::string body;
    Clock::time_point at;
  };
  /// On `port` (0 = a free one); GET /gameserver answers with these status.ports entries.
  explicit AgonesStandIn(int port = 0, std::string status_ports = kPlainPorts) {
    server_.Get("/gameserver", [this, status_ports](const httplib::Request& req, httplib::Response& res) {
      {
        const std::lock_guard lock(mutex_);
        calls_.push_back({req.path, req.body, Clock::now()});
      }
      // What the sidecar answers (grpc-gateway JSON of the GameServer: proto/sdk/sdk.proto's
      // field names, as in Agones' REST guide's GET /gameserver example).
      std::string meta;
      std::string state;
      {
        const std::lock_guard lock(mutex_);
        meta = meta_;
        state = state_;
      }
      res.set_content(R"({"object_meta":)" + meta + R"(,"status":{"state":")" + state +
                          R"(","address":"10.0.0.7","ports":[)" + status_ports + "]}}",
                      "application/json");
    });
    // Agones' Lists (proto/sdk/beta/beta.proto: AddListValue, RemoveListValue): only the List
    // 'players' exists (as the Fleet declares it); others answer 404 as the gateway does for
    // NOT_FOUND. Values are kept, so a value added twice is ALREADY_EXISTS (409).
    server_.Post(R"(/v1beta1/lists/([^/:]+):(addValue|removeValue))", [this](const httplib::Request& req,
                                                                              httplib::Response& res) {
      const std::lock_guard lock(mutex_);
      calls_.push_back({req.path, req.body, Clock::now()});
      if (req.matches[1] != "players") {
        res.status = 404;
        res.set_content(R"({"code":5,"message":"not found"})", "application/json");
        return;
      }
      const std::string value = list_value(req.body);
      const auto at = std::find(players_.begin(), players_.end(), value);
      if (req.matches[2] == "addValue") {
        if (at != players_.end()) {
          res.status = 409;
          return;
        }
        players_.push_back(value);
      } else {
        if (at == players_.end()) {
          res.status = 404;
          return;
        }
        players_.erase(at);
      }
      res.set_content(R"({"name":"players","capacity":"8"})", "application/json");
    });
    for (const char* path : {"/ready", "/health", "/allocate", "/shutdown"}) {
      server_.Post(path, [this](const httplib::Request& req, httplib::Response& res) {
        {
          const std::lock_guard lock(mutex_);
          calls_.push_back({req.path, req.body, Clock::now()});
        }
        res.set_content("{}", "application/json");
      });
    }
    port_ = port == 0 ? server_.bind_to_any_port("127.0.0.1") : (server_.bind_to_port("127.0.0.1", port) ? port : -1);
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(1ms);
  }
  ~AgonesStandIn() {
    server_.stop();
    thread_.join();
  }
  [[nodiscard]] int port() const { return port_; }
  /// What GET /gameserver answers from now on: status.state and object_meta (JSON object).
  void set_game_server(const std::string& state, const std::string& object_meta) {
    const std::lock_guard lock(mutex_);
    state_ = state;
    meta_ = object_meta;
  }
  /// The values in the List 'players' now.
  [[nodiscard]] std::vector<std::string> players() {
    const std::lock_guard lock(mutex_);
    return players_;
  }
  /// The "value" of a List call's JSON body ("" when there is none).
  static std::string list_value(const std::string& body) {
    const auto key = body.find("\"value\":\"");
    if (key == std::string::npos) return {};
    const auto start = key + 9;
    return body.substr(start, body.find('"', start) - start);
  }
  [[nodiscard]] std::vector<Call> calls() {
    const std::lock_guard lock(mutex_);
    return calls_;
  }
  [[nodiscard]] std::size_t count(const std::string& path) {
    const auto c = calls();
    return static_cast<std::size_t>(std::count_if(c.begin(), c.end(), [&](const Call& x) { return x.path == path; }));
  }
  bool wait_for(const std::string& path, std::size_t n, std::chrono::milliseconds timeout) {
    const auto end = Clock::now() + timeout;
    while (Clock::now() < end) {
      if (count(path) >= n) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mutex_;
  std::vector<Call> calls_;
  std::string state_ = "Ready";
  std::string meta_ = R"({"name":"gs-1"})";
  std::vector<std::string> players_;
};

}  // namespace

TEST_CASE("agones client: Health only while the tick loop is alive; Ready first, Shutdown last, Allocate once") {
  AgonesStandIn sidecar;
  swarmfield::server::OperationsState state;
  state.publish({}, Clock::now() - 5s);  // stalled: the last tick was 5 s ago
  {
    swarmfield::server::AgonesClient client(static_cast<std::uint16_t>(sidecar.port()), 50ms, state);
    client.ready();
    REQUIRE(sidecar.wait_for("/ready", 1, 2s));
    std::this_thread::sleep_for(400ms);
    CHECK(sidecar.count("/health") == 0);  // no pings from a stalled loop
    // The loop ticks again.
    std::atomic<bool> ticking{true};
    std::thread ticker([&] {
      while (ticking) {
        state.mark_alive(Clock::now());
        std::this_thread::sleep_for(10ms);
      }
    });
    std::this_thread::sleep_for(500ms);
    const std::size_t pings = sidecar.count("/health");
    CHECK(pings >= 5);    // every 50 ms over 500 ms: ~10
    CHECK(pings <= 14);
    client.allocate_once();
    client.allocate_once();
    client.shutdown();
    client.flush(2s);
    ticking = false;
    ticker.join();
    std::this_thread::sleep_for(200ms);
  }
  const auto calls = sidecar.calls();
  REQUIRE(!calls.empty());
  CHECK(calls.front().path == "/ready");
  CHECK(calls.back().path == "/shutdown");
  CHECK(sidecar.count("/allocate") == 1);
  CHECK(sidecar.count("/shutdown") == 1);
  for (const auto& c : calls)
    if (c.path != "/gameserver") CHECK(c.body == "{}");
}

TEST_CASE("agones client: Ready is retried until the sidecar answers (it may start after the server)") {
  swarmfield::server::OperationsState state;
  state.mark_alive(Clock::now());
  int port = 0;
  {  // a free port with nobody behind it yet
    AgonesStandIn probe;
    port = probe.port();
  }
  swarmfield::server::AgonesClient client(static_cast<std::uint16_t>(port), 1h, state);
  client.ready();
  std::this_thread::sleep_for(1200ms);  // the first Ready (and maybe a retry) is refused
  AgonesStandIn sidecar(port);
  REQUIRE(sidecar.port() == port);
  CHECK(sidecar.wait_for("/ready", 1, 3s));
  client.shutdown();
  client.flush(2s);
  CHECK(sidecar.count("/ready") == 1);
  CHECK(sidecar.calls().back().path == "/shutdown");
  // A client whose sidecar never answers stops retrying on shutdown (no hang at exit): its
  // destructor returns (the bound only turns a hang into a failure).
  auto done = std::async(std::launch::async, [&state] {
    swarmfield::server::AgonesClient refused(std::uint16_t{1}, 1h, state);
    refused.ready();
    std::this_thread::sleep_for(100ms);
    refused.shutdown();
  });
  REQUIRE(done.wait_for(30s) == std::future_status::ready);
}

TEST_CASE("agones: the server calls Ready, Health, Allocate (first player), Shutdown (SIGTERM) in order and in time") {
  using namespace swarmfield;
  AgonesStandIn sidecar;
  // The sidecar convention: AGONES_SDK_HTTP_PORT names the port (no --agones-port given).
  setenv("AGONES_SDK_HTTP_PORT", std::to_string(sidecar.port()).c_str(), 1);
  test::ServerProcess server(test::small_city({"--agents", "200", "--agones", "--agones-health-interval", "0.1"}));
  unsetenv("AGONES_SDK_HTTP_PORT");
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  const auto listening_at = Clock::now();
  REQUIRE(sidecar.wait_for("/ready", 1, 2s));
  for (const auto& c : sidecar.calls()) {
    if (c.path == "/ready") CHECK(c.at - listening_at < 1s);
  }
  REQUIRE(sidecar.wait_for("/health", 5, 3s));
  CHECK(sidecar.count("/allocate") == 0);  // nobody played yet

  CHECK(sidecar.count("/gameserver") >= 1);  // read after Ready (then every second: the allocation's settings)
  test::RawClient viewer, player, second;
  const auto welcome = test::join(viewer, ports->tcp, protocol::Role::kViewer);
  REQUIRE(welcome.has_value());
  CHECK(welcome->udp_port == 40123);  // the GameServer's public port, not the bound one
  std::this_thread::sleep_for(200ms);
  CHECK(sidecar.count("/allocate") == 0);  // a viewer does not allocate
  REQUIRE(test::join(player, ports->tcp, protocol::Role::kPlayer).has_value());
  REQUIRE(sidecar.wait_for("/allocate", 1, 2s));
  REQUIRE(test::join(second, ports->tcp, protocol::Role::kPlayer).has_value());
  std::this_thread::sleep_for(300ms);

  const auto term_at = Clock::now();
  server.signal(SIGTERM);
  const auto code = server.wait_exit(10s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
  // It stopped once its Byes were written, not at the flush timeout.
  CHECK(server.err().find("stopped: every Bye written") != std::string::npos);

  const auto calls = sidecar.calls();
  REQUIRE(calls.size() >= 8);
  CHECK(calls.back().path == "/shutdown");
  CHECK(calls.back().at >= term_at);  // Shutdown came with the stop (an order, not a duration)
  CHECK(sidecar.count("/allocate") == 1);  // once, for the first player
  CHECK(sidecar.count("/shutdown") == 1);
  // Health every ~0.1 s (while the world loads, then from the tick loop), Ready the first call
  // of any other kind, and nothing after Shutdown.
  std::vector<Clock::time_point> pings;
  for (const auto& c : calls) {
    if (c.path == "/health") pings.push_back(c.at);
    if (c.path != "/gameserver" && c.path.rfind("/v1beta1/", 0) != 0) CHECK(c.body == "{}");
  }
  REQUIRE(pings.size() >= 5);
  const auto first_other = std::find_if(calls.begin(), calls.end(), [](const auto& c) { return c.path != "/health"; });
  REQUIRE(first_other != calls.end());
  CHECK(first_other->path == "/ready");
  CHECK(pings.back() <= calls.back().at);
  std::vector<double> gaps;
  for (std::size_t i = 1; i < pings.size(); ++i) gaps.push_back(std::chrono::duration<double>(pings[i] - pings[i - 1]).count());
  std::sort(gaps.begin(), gaps.end());
  const double median = gaps[gaps.size() / 2];
  INFO("median health gap " << median << " s over " << pings.size() << " pings");
  CHECK(median > 0.07);  // not faster than the interval (a slow machine only makes gaps longer)
  CHECK(server.err().find("agones: /shutdown ok") != std::string::npos);
}

TEST_CASE("agones: Health pings while a big world loads, before Ready (the Fleet's health window)") {
  using namespace swarmfield;
  AgonesStandIn sidecar;
  setenv("AGONES_SDK_HTTP_PORT", std::to_string(sidecar.port()).c_str(), 1);
  // A 3072 city: seconds of map and world set-up before it listens.
  test::ServerProcess server({"--city-seed", "1", "--city-size", "3072", "--agents", "1000", "--port", "0", "--bind",
                              "127.0.0.1", "--agones", "--agones-health-interval", "0.1"});
  unsetenv("AGONES_SDK_HTTP_PORT");
  const auto ports = test::wait_listening(server, 60s);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  REQUIRE(sidecar.wait_for("/ready", 1, 5s));
  const auto calls = sidecar.calls();
  std::size_t before_ready = 0;
  Clock::time_point first{}, last{};
  for (const auto& c : calls) {
    if (c.path == "/ready") break;
    CHECK(c.path == "/health");  // nothing but Health before Ready
    if (before_ready == 0) first = c.at;
    last = c.at;
    ++before_ready;
  }
  INFO("Health pings before Ready: " << before_ready << " over "
                                     << std::chrono::duration<double>(last - first).count() << " s");
  CHECK(before_ready >= 5);
  // Evenly spread over the set-up (every ~0.1 s), not a burst at the end.
  CHECK(last - first >= 400ms);
  CHECK(server.err().find("agones: Health every 0.1 s while the world loads") != std::string::npos);
  server.signal(SIGTERM);
  CHECK(server.wait_exit(30s) == std::optional<int>(0));
  CHECK(sidecar.calls().back().path == "/shutdown");
}

// ---- which status.ports entry is announced (--agones-port-name) --------------------------------
namespace {

// The public port an AgonesClient reads from a sidecar answering with `status_ports`.
std::uint16_t public_port_from(const std::string& status_ports, const std::string& port_name = "game") {
  AgonesStandIn sidecar(0, status_ports);
  swarmfield::server::OperationsState state;
  state.mark_alive(Clock::now());
  swarmfield::server::AgonesClient client(static_cast<std::uint16_t>(sidecar.port()), 1h, state, port_name);
  client.ready();
  client.flush(3s);  // Ready and its GET /gameserver
  CHECK(sidecar.count("/gameserver") == 1);
  const std::uint16_t port = client.public_port();
  client.shutdown();
  client.flush(2s);
  return port;
}

// An environment variable for the scope (unset at its end, also when a REQUIRE throws).
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const std::string& value) : name(n) { setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

struct Announced {
  std::uint16_t welcome_udp = 0;  // the UDP port Welcome announced
  std::uint16_t bound_udp = 0;    // the UDP port the server bound
  std::string log_line;           // the log line holding `needle`
};

// The server with --agones (and `extra` flags) against `sidecar`: waits for the log line holding
// `needle`, then joins a viewer and reads the UDP port its Welcome announces.
Announced announced_by_server(AgonesStandIn& sidecar, std::vector<std::string> extra, const std::string& needle) {
  using namespace swarmfield;
  std::vector<std::string> args = {"--agents", "50", "--agones"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::optional<ScopedEnv> sdk_port;
  sdk_port.emplace("AGONES_SDK_HTTP_PORT", std::to_string(sidecar.port()));
  test::ServerProcess server(test::small_city(args));
  sdk_port.reset();
  Announced out;
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  out.bound_udp = ports->udp;
  const auto line = server.wait_for_log(needle, 5s);
  REQUIRE_MESSAGE(line.has_value(), server.err());
  out.log_line = *line;
  test::RawClient viewer;
  const auto welcome = test::join(viewer, ports->tcp, protocol::Role::kViewer);
  REQUIRE(welcome.has_value());
  out.welcome_udp = welcome->udp_port;
  server.signal(SIGTERM);
  CHECK(server.wait_exit(30s) == std::optional<int>(0));
  return out;
}

}  // namespace

TEST_CASE("agones client: Agones' TCPUDP shape ('game-tcp', 'game-udp'): the UDP entry's port is announced") {
  CHECK(public_port_from(kTcpUdpPorts) == 40201);
  // In either order.
  CHECK(public_port_from(R"({"name":"game-udp","port":40201},{"name":"game-tcp","port":40200})") == 40201);
  // '<name>-udp' is preferred to '<name>' wherever each stands.
  CHECK(public_port_from(R"({"name":"game","port":40123},{"name":"game-udp","port":40201})") == 40201);
  // Entries that do not qualify are skipped, not taken: a bad 'game-udp' leaves 'game'.
  CHECK(public_port_from(R"({"name":"game-udp","port":0},{"name":"game-udp","port":"x"},{"name":"game","port":40123})") ==
        40123);
}

TEST_CASE("agones: a plain 'game' entry (a port declared alone), name given as SWARMFIELD_AGONES_PORT_NAME") {
  // The name through the environment, as a Fleet's container env would set it.
  AgonesStandIn sidecar(0, kPlainPorts);
  std::optional<ScopedEnv> port_name;
  port_name.emplace("SWARMFIELD_AGONES_PORT_NAME", "game");
  const Announced a = announced_by_server(sidecar, {}, "agones: public game port");
  port_name.reset();
  CHECK(a.welcome_udp == 40123);
  CHECK(a.log_line.find("public game port 40123 (status.ports 'game')") != std::string::npos);
}

TEST_CASE("agones: --agones-port-name picks the Fleet's own port name, '<name>-udp' first") {
  AgonesStandIn sidecar(0, std::string(kTcpUdpPorts) +
                               R"(,{"name":"play-tcp","port":40300},{"name":"play-udp","port":40301})");
  const Announced a = announced_by_server(sidecar, {"--agones-port-name", "play"}, "agones: public game port");
  CHECK(a.welcome_udp == 40301);
  CHECK(a.log_line.find("public game port 40301 (status.ports 'play-udp')") != std::string::npos);
  // A port 'play' declared alone.
  CHECK(public_port_from(R"({"name":"game","port":40123},{"name":"play","port":40400})", "play") == 40400);
}

TEST_CASE("agones: no status.ports entry of that name: a warning naming the entries present, the bound port announced") {
  AgonesStandIn sidecar(0, R"({"name":"http","port":40999},{"name":"gameport","port":40123})");
  const Announced a = announced_by_server(sidecar, {}, "has no status.ports entry");
  CHECK(a.welcome_udp == a.bound_udp);
  INFO(a.log_line);
  CHECK(a.log_line.find("named 'game-udp' or 'game' (present: 'http', 'gameport')") != std::string::npos);
  CHECK(a.log_line.find("Welcome announces the bound UDP port") != std::string::npos);
  CHECK(public_port_from(R"({"name":"game-tcp","port":40200})") == 0);  // TCP alone is not the UDP port
}

// Under Agones two GameServers on two nodes may be given one host port, and the fleet shares one
// token key: a token naming the other's address took a slot here too (found by a hostile
// trial). Without --public-address the host a token names must now be the GameServer's
// status.address, once the sidecar has said it.
TEST_CASE("agones: with --auth tokens a token must name the GameServer's status.address, not only its port") {
  using namespace swarmfield;
  AgonesStandIn sidecar(0, kPlainPorts);  // status.address 10.0.0.7, game port 40123
  test::TempDir dir{"swarmfield-agones-test"};
  const protocol::TokenKey key = protocol::make_token_key();
  std::ofstream(dir / "key.hex") << protocol::format_token_key(key) << "\n";
  std::optional<ScopedEnv> sdk_port;
  sdk_port.emplace("AGONES_SDK_HTTP_PORT", std::to_string(sidecar.port()));
  test::ServerProcess server(test::small_city(
      {"--agents", "50", "--agones", "--auth", "tokens", "--key-file", (dir / "key.hex").string()}));
  sdk_port.reset();
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  REQUIRE_MESSAGE(server.wait_for_log("public address '10.0.0.7'", 5s).has_value(), server.err());
  CHECK(server.err().find("--public-address is not set") == std::string::npos);
  const auto now = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  // The server's first answer to a Hello with a token for `address`: an Error, or the clear
  // salt of a session it admitted.
  const auto admitted = [&](const std::string& address, std::string* refusal) {
    protocol::TokenGrant grant;
    grant.role = protocol::Role::kViewer;
    grant.name = "guest";
    grant.server_addresses = {address};
    const auto token = protocol::issue_connect_token(key, grant, now, 60);
    REQUIRE(token);
    test::RawClient c;
    REQUIRE(c.connect(ports->tcp));
    protocol::Hello hello = test::hello(protocol::Role::kViewer);
    hello.connect_token = protocol::hello_token_bytes(*token);
    REQUIRE(c.send(hello));
    const auto message = c.read(5s);
    REQUIRE(message.has_value());
    if (const auto* error = std::get_if<protocol::Error>(&*message)) {
      *refusal = error->reason;
      return false;
    }
    return std::holds_alternative<protocol::SessionSalt>(*message);
  };
  std::string why;
  CHECK(admitted("10.0.0.7:40123", &why));  // what an allocation hands the matchmaker
  CHECK_FALSE(admitted("10.0.0.8:40123", &why));  // another node, the same host port
  CHECK(why.find("wrong server") != std::string::npos);
  CHECK_FALSE(admitted("127.0.0.1:" + std::to_string(ports->tcp), &why));  // any host with the bound port
  server.signal(SIGTERM);
  CHECK(server.wait_exit(30s) == std::optional<int>(0));
}

TEST_CASE("agones client: match settings are read once the GameServer is Allocated, and again when they change") {
  AgonesStandIn sidecar;
  // A Ready GameServer's labels are the Fleet's: not yet a match's settings.
  sidecar.set_game_server("Ready", R"({"name":"gs-1","labels":{"swarmfield.dev/duration":"5"}})");
  swarmfield::server::OperationsState state;
  state.mark_alive(Clock::now());
  swarmfield::server::AgonesClient client(static_cast<std::uint16_t>(sidecar.port()), 1s, state, "game", "players", 40ms);
  client.ready();
  REQUIRE(sidecar.wait_for("/gameserver", 4, 3s));  // the read after Ready and three watches
  CHECK_FALSE(client.take_match_settings().has_value());

  // The allocation: an annotation wins over a label of the same key; keys without the prefix, a
  // key with a capital letter and a value with a control character are skipped.
  sidecar.set_game_server(
      "Allocated",
      R"({"name":"gs-1","labels":{"swarmfield.dev/duration":"5","agones.dev/fleet":"swarmfield"},)"
      R"("annotations":{"swarmfield.dev/duration":"600","swarmfield.dev/match-id":"m-42","mode":"x",)"
      R"("swarmfield.dev/Mode":"hard","swarmfield.dev/note":"a\u0007b","swarmfield.dev/who":"x' tick=5 '"}})");
  std::optional<std::map<std::string, std::string>> settings;
  for (int i = 0; i < 100 && !settings; ++i) {
    std::this_thread::sleep_for(20ms);
    settings = client.take_match_settings();
  }
  REQUIRE(settings.has_value());
  CHECK(*settings == std::map<std::string, std::string>{{"duration", "600"}, {"match-id", "m-42"}});
  // Once per change.
  std::this_thread::sleep_for(200ms);
  CHECK_FALSE(client.take_match_settings().has_value());
  sidecar.set_game_server("Allocated", R"({"name":"gs-1","annotations":{"swarmfield.dev/duration":"900"}})");
  settings.reset();
  for (int i = 0; i < 100 && !settings; ++i) {
    std::this_thread::sleep_for(20ms);
    settings = client.take_match_settings();
  }
  REQUIRE(settings.has_value());
  CHECK(*settings == std::map<std::string, std::string>{{"duration", "900"}});
  client.shutdown();
  client.flush(2s);
}

TEST_CASE("agones client: players join and leave the players List; a List the Fleet lacks gets one call, no more") {
  AgonesStandIn sidecar;
  swarmfield::server::OperationsState state;
  state.mark_alive(Clock::now());
  {
    swarmfield::server::AgonesClient client(static_cast<std::uint16_t>(sidecar.port()), 1s, state);
    client.ready();
    client.player_joined("player-1");
    client.player_joined("client-77");
    client.player_left("player-1");
    client.flush(3s);
    CHECK(sidecar.players() == std::vector<std::string>{"client-77"});
    CHECK(sidecar.count("/v1beta1/lists/players:addValue") == 2);
    CHECK(sidecar.count("/v1beta1/lists/players:removeValue") == 1);
    for (const auto& c : sidecar.calls()) {
      if (c.path == "/v1beta1/lists/players:addValue") CHECK(AgonesStandIn::list_value(c.body) != "");
    }
    // A value the List does not hold (404 from RemoveListValue) does not end the List calls.
    client.player_left("never-added");
    client.player_joined("player-9");
    client.flush(3s);
    CHECK(sidecar.players() == std::vector<std::string>{"client-77", "player-9"});
    client.player_left("player-9");
    client.shutdown();
    client.player_left("client-77");  // after Shutdown: no call
    client.flush(2s);
    CHECK(sidecar.count("/v1beta1/lists/players:removeValue") == 3);
  }
  {
    swarmfield::server::AgonesClient client(static_cast<std::uint16_t>(sidecar.port()), 1s, state, "game", "team-red");
    client.ready();
    client.player_joined("player-2");
    client.flush(3s);
    client.player_joined("player-3");
    client.player_left("player-2");
    client.flush(3s);
    CHECK(sidecar.count("/v1beta1/lists/team-red:addValue") == 1);  // answered 404: no more calls
    CHECK(sidecar.count("/v1beta1/lists/team-red:removeValue") == 0);
  }
  {
    // --agones-players-list none (the client gets ""): no List calls at all.
    swarmfield::server::AgonesClient client(static_cast<std::uint16_t>(sidecar.port()), 1s, state, "game", "");
    client.ready();
    client.player_joined("player-4");
    client.flush(3s);
    CHECK(sidecar.players() == std::vector<std::string>{"client-77"});
  }
}

TEST_CASE("agones: an allocation's match settings end the match (shutdown-when-empty, duration); the players List follows") {
  using namespace swarmfield;
  AgonesStandIn sidecar;
  sidecar.set_game_server("Allocated", R"({"name":"gs-1","annotations":{"swarmfield.dev/shutdown-when-empty":"0.5",)"
                                       R"("swarmfield.dev/match-id":"m-7","swarmfield.dev/agents":"5",)"
                                       R"("swarmfield.dev/duration":"-3"}})");
  test::ServerProcess server(test::small_city(
      {"--agents", "50", "--agones", "--agones-port", std::to_string(sidecar.port()), "--agones-health-interval", "0.2",
       "--reconnect-grace", "0"}));
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  // The settings come with the first watch (1 s after Ready); a player joins after them.
  REQUIRE(sidecar.wait_for("/gameserver", 2, 5s));
  std::this_thread::sleep_for(300ms);
  {
    test::RawClient player;
    const auto welcome = test::join(player, ports->tcp, protocol::Role::kPlayer);
    REQUIRE(welcome.has_value());
    const std::string value = "player-" + std::to_string(welcome->player_id);
    for (int i = 0; i < 100 && sidecar.players().empty(); ++i) std::this_thread::sleep_for(20ms);
    CHECK(sidecar.players() == std::vector<std::string>{value});
    REQUIRE(player.send(protocol::Bye{"done"}));
    CHECK(player.wait_closed(5s));
  }
  // No player for 0.5 s: the server ends the match by itself (no signal).
  const auto code = server.wait_exit(10s);
  REQUIRE_MESSAGE(code.has_value(), server.err());
  CHECK(*code == 0);
  const std::string err = server.err();
  INFO(err);
  CHECK(sidecar.players().empty());  // removed when it left
  CHECK(sidecar.count("/shutdown") == 1);
  CHECK(err.find("match settings from the allocation: shutdown-when-empty=0.5") != std::string::npos);
  CHECK(err.find("no players for 0.5 s") != std::string::npos);
  // Refused with a reason each: a setting fixed at start-up, a value out of range.
  CHECK(err.find("'agents' is not a match setting") != std::string::npos);
  CHECK(err.find("'duration': --duration") != std::string::npos);
  CHECK(test::summary_value(server.out(), "ticks") > 0);
  CHECK(server.out().find("match_id=m-7") != std::string::npos);
}

TEST_CASE("agones: a match length set at allocation counts from the allocation") {
  using namespace swarmfield;
  AgonesStandIn sidecar;
  test::ServerProcess server(test::small_city({"--agents", "20", "--agones", "--agones-port",
                                               std::to_string(sidecar.port()), "--agones-health-interval", "0.2"}));
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  REQUIRE(sidecar.wait_for("/gameserver", 2, 5s));  // Ready: no settings yet
  const auto allocated_at = Clock::now();
  sidecar.set_game_server("Allocated", R"({"name":"gs-1","annotations":{"swarmfield.dev/duration":"1.5"}})");
  const auto code = server.wait_exit(10s);
  REQUIRE_MESSAGE(code.has_value(), server.err());
  CHECK(*code == 0);
  const double after = std::chrono::duration<double>(Clock::now() - allocated_at).count();
  INFO(server.err());
  CHECK(server.err().find("--duration 1.5 s reached (set at allocation)") != std::string::npos);
  CHECK(after > 1.5);  // at most a watch interval (1 s) later than 1.5 s, plus the drain
  CHECK(sidecar.count("/shutdown") == 1);
}

namespace {

// A sidecar that answers every request with a 200 whose 2000-byte body comes one byte every
// 300 ms: each read within the client's read timeout, the whole answer never (an attack on,
// or a fault of, the pod's own sidecar).
class TricklingSidecar {
 public:
  TricklingSidecar() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TricklingSidecar() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (std::thread& t : peers_) t.join();
  }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] int accepted() const { return accepted_.load(); }

 private:
  void serve() {
    while (!stop_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      ++accepted_;
      peers_.emplace_back([this, c] {
        char buf[4096];
        (void)::recv(c, buf, sizeof buf, 0);
        const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n";
        (void)::send(c, head.data(), head.size(), MSG_NOSIGNAL);
        for (int i = 0; i < 2000 && !stop_; ++i) {
          if (::send(c, " ", 1, MSG_NOSIGNAL) != 1) break;
          for (int k = 0; k < 30 && !stop_; ++k) std::this_thread::sleep_for(10ms);
        }
        ::close(c);
      });
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
  std::vector<std::thread> peers_;
};

}  // namespace

TEST_CASE("agones: a sidecar that trickles its answers holds up neither Ready's retries nor SIGTERM") {
  using namespace swarmfield;
  TricklingSidecar sidecar;
  test::ServerProcess server(test::small_city({"--agents", "20", "--agones", "--agones-port",
                                               std::to_string(sidecar.port()), "--agones-health-interval", "0.2"}));
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  // Each Ready is cut at its deadline (1.5 s) and tried again a second later.
  for (int i = 0; i < 100 && sidecar.accepted() < 4; ++i) std::this_thread::sleep_for(50ms);
  CHECK(sidecar.accepted() >= 4);
  server.signal(SIGTERM);
  const auto code = server.wait_exit(8s);  // before: no exit at all (a call with no deadline)
  REQUIRE_MESSAGE(code.has_value(), server.err());
  CHECK(*code == 0);
  CHECK(server.out().find("ticks=") != std::string::npos);  // the summary line
}
