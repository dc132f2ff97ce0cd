#pragma once
// Agones integration: the game server's side of the Agones SDK, over the SDK sidecar's REST
// gateway on localhost (https://agones.dev/site/docs/guides/client-sdks/rest/): POST /ready,
// /health, /allocate and /shutdown, each with the body "{}"; GET /gameserver for the game port
// and, every watch interval after Ready, for the allocation's match settings; the players as a
// List (Agones' Counters and Lists, Beta, on by default since 1.41; proto/sdk/beta/beta.proto:
// POST /v1beta1/lists/{name}:addValue and :removeValue, body {"value": "..."}). Calls run on
// the client's own thread (never the tick thread), in the order they were asked for; Health is
// sent every health interval while the tick loop is alive (OperationsState::alive), so a stalled
// loop stops the pings and Agones marks the GameServer Unhealthy. Failures are logged (at most
// one warning a second) and do not stop the server.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "swarmfield/server/ops/operations_state.hpp"

namespace swarmfield::server {

class AgonesClient {
 public:
  using Clock = std::chrono::steady_clock;
  /// The SDK sidecar's default REST port (when AGONES_SDK_HTTP_PORT is not set).
  static constexpr std::uint16_t kDefaultPort = 9358;

  /// `port`: the sidecar's REST port on 127.0.0.1. `health_interval`: time between Health
  /// pings (Agones' health.periodSeconds must be longer). `port_name`: the Fleet's name of the
  /// game port (--agones-port-name). `players_list`: the Fleet's List of players
  /// (--agones-players-list; "" = none). `watch_interval`: time between two reads of the
  /// GameServer after Ready (its state and match settings). Starts the thread.
  AgonesClient(std::uint16_t port, Clock::duration health_interval, const OperationsState& state,
               std::string port_name = kDefaultPortName, std::string players_list = kDefaultPlayersList,
               Clock::duration watch_interval = kDefaultWatchInterval);
  /// Stops the thread after the calls already asked for (each bounded by kCallTimeout).
  ~AgonesClient();
  AgonesClient(const AgonesClient&) = delete;
  AgonesClient& operator=(const AgonesClient&) = delete;

  /// Ready: the server listens and takes players. Health pings start after it (tied to the tick
  /// loop's liveness from then on).
  void ready();
  /// Health pings from now on, not tied to the tick loop (none runs yet): while the server loads
  /// its map and builds its world, which on a big map takes longer than the Fleet's health
  /// window (Agones' own examples start Health before Ready the same way). Ready ends it.
  void loading();
  /// Allocate (once; later calls do nothing): a player joined, so the GameServer must not be
  /// scaled down even if no allocation marked it (players can connect directly).
  void allocate_once();
  /// Shutdown: the server drains; no more Health pings.
  void shutdown();
  /// A player joined / left: `value` added to / removed from the players List (AddListValue,
  /// RemoveListValue), so a matchmaker sees the room left (the List's capacity less its
  /// values). Nothing when the List is off; after the sidecar answers that the List does not
  /// exist (the Fleet declares none), one warning and no more List calls.
  void player_joined(const std::string& value);
  void player_left(const std::string& value);

  /// Match settings: the GameServer's labels and annotations whose key starts with
  /// kMatchSettingPrefix (prefix taken off; an annotation wins over a label of the same key),
  /// read once the GameServer is Allocated (a GameServerAllocation's metadata sets them) and
  /// again whenever they change. Returns them once per change (nullopt meanwhile): the tick
  /// thread polls this. The sidecar is trusted, but keys and values are checked: at most
  /// kMaxMatchSettings, keys of [a-z0-9-] up to 63 characters, values of printable ASCII
  /// without quotes up to 256 characters; others are skipped with a warning (once per change).
  [[nodiscard]] std::optional<std::map<std::string, std::string>> take_match_settings();
  static constexpr const char* kMatchSettingPrefix = "swarmfield.dev/";
  static constexpr std::size_t kMaxMatchSettings = 32;
  /// The UDP game port players reach from outside, read with GET /gameserver after Ready: the
  /// GameServer's status.ports entry '<port_name>-udp' (Agones' UDP half of a TCPUDP port), else
  /// '<port_name>'. Behind Agones' port mapping it differs from the port the server binds. 0 until
  /// known (or when no entry matches).
  [[nodiscard]] std::uint16_t public_port() const noexcept { return public_port_.load(); }
  /// The GameServer's status.address (the node's address players reach it at; what an allocation
  /// hands a matchmaker), read with the same GET: "" until known, or when absent or not a plain
  /// host name or address (printable ASCII, no spaces, quotes or colons but an IPv6 literal's, at
  /// most 253 characters). With --auth tokens and no --public-address, a token must name it.
  [[nodiscard]] std::string public_host() const;
  /// The Fleet's name for the game port (docker/agones/fleet.yaml) unless --agones-port-name says otherwise.
  static constexpr const char* kDefaultPortName = "game";
  /// The Fleet's List of players (docker/agones/fleet.yaml) unless --agones-players-list says otherwise.
  static constexpr const char* kDefaultPlayersList = "players";
  static constexpr std::chrono::seconds kDefaultWatchInterval{1};
  /// Waits until every call asked for has been made (or failed), at most `timeout`; Ready's
  /// GET /gameserver included.
  void flush(Clock::duration timeout);

  /// One call's connection + read timeout (each read).
  static constexpr std::chrono::milliseconds kCallTimeout{500};
  /// One call's whole time: a sidecar that trickles its answer a byte at a time (each read
  /// within kCallTimeout) is cut off here, so Health goes on and a stop is never held up.
  static constexpr std::chrono::milliseconds kCallDeadline{1500};
  /// The largest GET /gameserver answer read (a GameServer is a few KiB).
  static constexpr std::size_t kMaxAnswerBytes = 1u << 20;

 private:
  /// One call to the sidecar: POST (or PATCH) `path` with the JSON `body`.
  struct Call {
    std::string path;
    std::string body = "{}";
    /// A call to the players List (AddListValue, RemoveListValue).
    [[nodiscard]] bool list() const noexcept { return path.starts_with("/v1beta1/lists/"); }
  };
  void run();
  /// Cuts the call in flight (httplib::Client::stop) once past its deadline, or at once when
  /// the client is being destroyed.
  void watch_calls();
  /// Registers `client` as the call in flight (nullptr: none) for watch_calls(). False when
  /// the client is being destroyed: then no call is started at all.
  bool set_in_flight(void* client);
  void enqueue(Call call);
  void list_call(const char* verb, const std::string& value);
  bool post(const Call& call);
  /// GET /gameserver; on the first call (after Ready) sets public_port_ from status.ports; after
  /// that reads the state and, once Allocated, the match settings.
  void read_game_server(bool first);
  /// The match settings of a GameServer answer `body` (JSON), once Allocated.
  void read_match_settings(const std::string& body);
  /// Warnings at most one a second (unless `always`); call with mutex_ held. True when this
  /// one is to be logged.
  bool warning_due(bool always);

  const std::uint16_t port_;
  const Clock::duration health_interval_;
  const OperationsState& state_;
  const std::string port_name_;
  const std::string players_list_;
  const Clock::duration watch_interval_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<Call> queue_;  // calls still to make
  bool list_missing_ = false;  // the sidecar said the players List does not exist
  std::string state_seen_;     // the GameServer's status.state last read
  std::map<std::string, std::string> settings_seen_;
  std::vector<std::string> skipped_seen_;  // the keys skipped at the last read
  std::optional<std::map<std::string, std::string>> settings_pending_;
  bool busy_ = false;
  bool ready_sent_ = false;
  bool loading_ = false;
  bool allocate_asked_ = false;
  bool shutdown_asked_ = false;
  bool stop_ = false;
  Clock::time_point next_warning_{};
  std::atomic<std::uint16_t> public_port_{0};
  mutable std::mutex host_mutex_;
  std::string public_host_;  // status.address (guarded by host_mutex_)
  std::mutex in_flight_mutex_;
  std::condition_variable in_flight_wake_;
  void* in_flight_ = nullptr;  // the httplib::Client of the call being made
  Clock::time_point in_flight_deadline_{};
  bool watchdog_stop_ = false;
  bool cut_all_ = false;  // the destructor runs: cut any call at once
  std::thread watchdog_;
  std::thread thread_;
};

/// The sidecar's REST port: `configured` if not 0, else AGONES_SDK_HTTP_PORT if it is a valid
/// port, else kDefaultPort.
[[nodiscard]] std::uint16_t agones_port(std::int64_t configured);

}  // namespace swarmfield::server
