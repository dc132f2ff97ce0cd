#include "swarmfield/server/ops/agones_client.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "swarmfield/cli/control_chars.hpp"
#include "swarmfield/server/config/server_config.hpp"

namespace swarmfield::server {

AgonesClient::AgonesClient(std::uint16_t port, Clock::duration health_interval, const OperationsState& state,
                           std::string port_name, std::string players_list, Clock::duration watch_interval)
    : port_(port),
      health_interval_(health_interval),
      state_(state),
      port_name_(std::move(port_name)),
      players_list_(std::move(players_list)),
      watch_interval_(watch_interval) {
  watchdog_ = std::thread([this] { watch_calls(); });
  thread_ = std::thread([this] { run(); });
}

AgonesClient::~AgonesClient() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  {
    // The owner's flush() gave the calls asked for (Shutdown) their time: a call still in
    // flight is cut now, and the ones still queued are not made.
    const std::lock_guard lock(in_flight_mutex_);
    cut_all_ = true;
  }
  in_flight_wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  {
    const std::lock_guard lock(in_flight_mutex_);
    watchdog_stop_ = true;
  }
  in_flight_wake_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void AgonesClient::watch_calls() {
  std::unique_lock lock(in_flight_mutex_);
  while (!watchdog_stop_) {
    if (in_flight_ != nullptr && (cut_all_ || Clock::now() >= in_flight_deadline_)) {
      // Shuts the socket down under the lock: the caller clears in_flight_ under it before its
      // client goes away, so the client is alive here. Again every 50 ms until the caller is
      // out of the call: a stop() that came before the request opened its socket does nothing.
      static_cast<httplib::Client*>(in_flight_)->stop();
      in_flight_wake_.wait_for(lock, std::chrono::milliseconds(50));
      continue;
    }
    if (in_flight_ != nullptr) {
      in_flight_wake_.wait_until(lock, in_flight_deadline_);
    } else {
      in_flight_wake_.wait(lock);
    }
  }
}

bool AgonesClient::set_in_flight(void* client) {
  {
    const std::lock_guard lock(in_flight_mutex_);
    if (client != nullptr && cut_all_) return false;
    in_flight_ = client;
    in_flight_deadline_ = Clock::now() + kCallDeadline;
  }
  in_flight_wake_.notify_all();
  return true;
}

bool AgonesClient::warning_due(bool always) {
  const auto now = Clock::now();
  if (!always && now < next_warning_) return false;
  next_warning_ = now + std::chrono::seconds(1);
  return true;
}

void AgonesClient::enqueue(Call call) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(call));
  }
  wake_.notify_all();
}

void AgonesClient::ready() { enqueue({"/ready"}); }

void AgonesClient::player_joined(const std::string& value) { list_call("addValue", value); }

void AgonesClient::player_left(const std::string& value) { list_call("removeValue", value); }

void AgonesClient::list_call(const char* verb, const std::string& value) {
  if (players_list_.empty()) return;
  {
    // After Shutdown the GameServer goes away with its Lists: the players leaving while the
    // server drains are not worth a call each.
    const std::lock_guard lock(mutex_);
    if (shutdown_asked_ || list_missing_) return;
    queue_.push_back({"/v1beta1/lists/" + players_list_ + ":" + verb, nlohmann::json{{"value", value}}.dump()});
  }
  wake_.notify_all();
}

std::optional<std::map<std::string, std::string>> AgonesClient::take_match_settings() {
  const std::lock_guard lock(mutex_);
  auto out = std::move(settings_pending_);
  settings_pending_.reset();
  return out;
}

void AgonesClient::loading() {
  {
    const std::lock_guard lock(mutex_);
    loading_ = true;
  }
  wake_.notify_all();
}

void AgonesClient::allocate_once() {
  {
    const std::lock_guard lock(mutex_);
    if (allocate_asked_ || shutdown_asked_) return;
    allocate_asked_ = true;
    queue_.push_back({"/allocate"});
  }
  wake_.notify_all();
}

void AgonesClient::shutdown() {
  {
    const std::lock_guard lock(mutex_);
    if (shutdown_asked_) return;
    shutdown_asked_ = true;
    queue_.push_back({"/shutdown"});
  }
  wake_.notify_all();
}

void AgonesClient::flush(Clock::duration timeout) {
  std::unique_lock lock(mutex_);
  idle_.wait_for(lock, timeout, [this] { return queue_.empty() && !busy_; });
}

void AgonesClient::run() {
  Clock::time_point next_health = Clock::now();
  Clock::time_point next_watch = Clock::time_point::max();
  std::unique_lock lock(mutex_);
  for (;;) {
    // Queued calls first, in order; then the Health ping and the GameServer's read when due.
    if (!queue_.empty()) {
      const Call call = queue_.front();
      queue_.pop_front();
      const bool is_ready = call.path == "/ready";
      if (call.list() && list_missing_) continue;
      busy_ = true;
      lock.unlock();
      const bool ok = post(call);
      if (is_ready && ok) read_game_server(true);  // still busy: flush() waits for it too
      lock.lock();
      busy_ = false;
      if (is_ready && ok) {
        ready_sent_ = true;
        loading_ = false;
        next_health = Clock::now();
        next_watch = Clock::now() + watch_interval_;
      } else if (is_ready && !stop_ && !shutdown_asked_) {
        // The sidecar may start after us: ask again every second until it answers.
        queue_.push_front(call);
        wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_ || shutdown_asked_; });
        if (stop_ || shutdown_asked_) {
          queue_.erase(std::find_if(queue_.begin(), queue_.end(), [](const Call& c) { return c.path == "/ready"; }));
        }
        continue;
      }
      if (queue_.empty()) idle_.notify_all();
      continue;
    }
    if (stop_) return;
    const bool pinging = (ready_sent_ || loading_) && !shutdown_asked_;
    const Clock::time_point now = Clock::now();
    if (pinging && now >= next_health) {
      next_health += health_interval_;
      if (next_health < now) next_health = now + health_interval_;
      // Health comes from the tick loop once it runs: no ping while it is stalled.
      if (loading_ || state_.alive(now)) {
        lock.unlock();
        post({"/health"});
        lock.lock();
      }
      continue;
    }
    const bool watching = ready_sent_ && !shutdown_asked_;
    if (watching && now >= next_watch) {
      next_watch = now + watch_interval_;
      lock.unlock();
      read_game_server(false);
      lock.lock();
      continue;
    }
    if (pinging || watching) {
      wake_.wait_until(lock, std::min(pinging ? next_health : Clock::time_point::max(),
                                      watching ? next_watch : Clock::time_point::max()));
    } else {
      wake_.wait(lock);
    }
  }
}

namespace {
// A client of the sidecar on 127.0.0.1:`port`, every wait bounded by kCallTimeout.
httplib::Client sidecar_client(std::uint16_t port) {
  httplib::Client client("127.0.0.1", port);
  const auto timeout_us = std::chrono::duration_cast<std::chrono::microseconds>(AgonesClient::kCallTimeout).count();
  client.set_connection_timeout(0, static_cast<time_t>(timeout_us));
  client.set_read_timeout(0, static_cast<time_t>(timeout_us));
  client.set_write_timeout(0, static_cast<time_t>(timeout_us));
  return client;
}

// A host name or address a token can name (see AgonesClient::public_host): printable ASCII
// without spaces or quotes, colons only in an IPv6 literal (hex digits, dots and colons).
bool plain_host(const std::string& host) {
  if (host.empty() || host.size() > 253) return false;
  const bool ipv6 = host.find(':') != std::string::npos;
  return std::all_of(host.begin(), host.end(), [ipv6](char c) {
    if (ipv6) return std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == ':' || c == '.';
    return c > 0x20 && c < 0x7f && c != '\'' && c != '"' && c != '[' && c != ']' && c != '/' && c != '@';
  });
}
}  // namespace

bool AgonesClient::post(const Call& call) {
  httplib::Client client = sidecar_client(port_);
  if (!set_in_flight(&client)) return false;
  const auto res = client.Post(call.path, call.body, "application/json");
  set_in_flight(nullptr);
  const bool ok = res && res->status >= 200 && res->status <= 299;
  if (ok) {
    if (call.path != "/health") spdlog::info("agones: {} ok", call.path);
    return true;
  }
  const std::lock_guard lock(mutex_);
  if (call.list() && call.path.ends_with(":addValue") && res && res->status == 404) {
    // AddListValue answers NOT_FOUND only when the List does not exist (a value already there
    // is ALREADY_EXISTS, a full List OUT_OF_RANGE): the Fleet declares none, so stop asking.
    // (RemoveListValue's NOT_FOUND may also be a value that was never added: warned below.)
    if (!list_missing_) {
      list_missing_ = true;
      spdlog::warn("agones: POST {} answered 404: the GameServer has no List '{}' (declare it under spec.lists "
                   "in the Fleet, or --agones-players-list none); no more List calls",
                   call.path, players_list_);
    }
    return false;
  }
  if (warning_due(call.path != "/health")) {
    spdlog::warn("agones: POST {} to 127.0.0.1:{} failed: {}", call.path, port_,
                 res ? "HTTP " + std::to_string(res->status) : httplib::to_string(res.error()));
  }
  return false;
}

void AgonesClient::read_game_server(bool first) {
  httplib::Client client = sidecar_client(port_);
  std::string body;
  bool too_big = false;
  if (!set_in_flight(&client)) return;
  auto res = client.Get("/gameserver", [&](const char* data, std::size_t n) {
    if (body.size() + n > kMaxAnswerBytes) {
      too_big = true;
      return false;  // cancels the request
    }
    body.append(data, n);
    return true;
  });
  set_in_flight(nullptr);
  if (too_big) {
    spdlog::warn("agones: GET /gameserver answered more than {} bytes; ignored", kMaxAnswerBytes);
    return;
  }
  if (res) res->body = std::move(body);
  if (!res || res->status != 200) {
    const std::lock_guard lock(mutex_);
    if (warning_due(first)) {
      spdlog::warn("agones: GET /gameserver failed ({}){}",
                   res ? "HTTP " + std::to_string(res->status) : httplib::to_string(res.error()),
                   first ? "; Welcome announces the bound UDP port" : "");
    }
    return;
  }
  if (!first) {
    read_match_settings(res->body);
    return;
  }
  // The sidecar is trusted, but its JSON is still checked: no exceptions, every field's type.
  // A Fleet port with protocol TCPUDP is two status.ports entries: Agones' port allocator
  // (pkg/portallocator/portallocator.go, portRangeAllocator.Allocate: "create a port for TCP when
  // using TCPUDP protocol") renames the port p.Name + "-tcp" and appends a copy named
  // p.Name + "-udp" with protocol UDP ("create the UDP port when using TCPUDP protocol"; Static
  // ports likewise in pkg/gameservers/controller.go, syncGameServerCreatingState), and status.ports
  // takes those names (GameServerPort.Status(), pkg/apis/agones/v1/gameserver.go). A port
  // declared alone (protocol UDP) keeps its name. So: '<name>-udp', else '<name>'.
  const std::string udp_name = port_name_ + "-udp";
  std::string found_name;
  std::int64_t found_port = 0;
  std::string present;  // the names seen, for the warning
  const nlohmann::json doc = nlohmann::json::parse(res->body, nullptr, false);
  if (doc.is_object() && doc.contains("status") && doc["status"].is_object() && doc["status"].contains("address") &&
      doc["status"]["address"].is_string()) {
    const auto address = doc["status"]["address"].get<std::string>();
    if (plain_host(address)) {
      {
        const std::lock_guard lock(host_mutex_);
        public_host_ = address;
      }
      spdlog::info("agones: public address '{}' (status.address); a connect token must name it", address);
    } else {
      spdlog::warn("agones: status.address '{}' is no plain host name or address; tokens are not pinned to a host",
                   cli::printable_ascii(address));
    }
  }
  if (doc.is_object() && doc.contains("status") && doc["status"].is_object() && doc["status"].contains("ports") &&
      doc["status"]["ports"].is_array()) {
    for (const auto& p : doc["status"]["ports"]) {
      if (!p.is_object() || !p.contains("name") || !p["name"].is_string()) continue;
      const auto name = p["name"].get<std::string>();
      present += (present.empty() ? "'" : ", '") + cli::printable_ascii(name) + "'";
      if (!p.contains("port") || !p["port"].is_number_integer()) continue;
      const auto port = p["port"].get<std::int64_t>();
      if (port < 1 || port > 65535 || (name != udp_name && name != port_name_)) continue;
      if (found_name != udp_name) {  // '<name>-udp' wins over '<name>', whichever comes first
        found_name = name;
        found_port = port;
      }
    }
  }
  if (found_port != 0) {
    public_port_.store(static_cast<std::uint16_t>(found_port));
    spdlog::info("agones: public game port {} (status.ports '{}'); Welcome announces it for UDP", found_port, found_name);
    return;
  }
  spdlog::warn("agones: GET /gameserver has no status.ports entry named '{}' or '{}' (present: {}); Welcome announces "
               "the bound UDP port",
               udp_name, port_name_, present.empty() ? "none" : present);
}

std::string AgonesClient::public_host() const {
  const std::lock_guard lock(host_mutex_);
  return public_host_;
}

namespace {
// Printable ASCII without quotes: a value is logged inside quotes ('...'), so a quote in it
// would close them and add log fields of its own.
bool valid_setting_value(const std::string& value) {
  return value.size() <= 256 && std::all_of(value.begin(), value.end(), [](char c) {
           return c >= 0x20 && c < 0x7f && c != '\'' && c != '"';
         });
}
}  // namespace

void AgonesClient::read_match_settings(const std::string& body) {
  // The SDK's GameServer (proto/sdk/sdk.proto: GameServer.object_meta.labels / .annotations,
  // GameServer.status.state) as the REST gateway writes it (field names as in the proto).
  const nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  if (!doc.is_object()) {
    const std::lock_guard lock(mutex_);
    if (warning_due(false)) spdlog::warn("agones: GET /gameserver answered no JSON object; its settings are not read");
    return;
  }
  std::string state;
  if (doc.contains("status") && doc["status"].is_object() && doc["status"].contains("state") &&
      doc["status"]["state"].is_string()) {
    state = doc["status"]["state"].get<std::string>();
  }
  std::map<std::string, std::string> settings;
  std::vector<std::string> skipped;
  const std::string prefix = kMatchSettingPrefix;
  if (doc.contains("object_meta") && doc["object_meta"].is_object()) {
    const nlohmann::json& meta = doc["object_meta"];
    // Labels first, annotations over them.
    for (const char* part : {"labels", "annotations"}) {
      if (!meta.contains(part) || !meta[part].is_object()) continue;
      for (const auto& [k, v] : meta[part].items()) {
        if (k.rfind(prefix, 0) != 0) continue;
        const std::string key = k.substr(prefix.size());
        if (!v.is_string() || !is_fleet_name(key) || !valid_setting_value(v.get<std::string>())) {
          skipped.push_back(cli::quotable_ascii(k.substr(0, 80)));
          continue;
        }
        if (settings.size() >= kMaxMatchSettings && settings.count(key) == 0) {
          skipped.push_back(key);
          continue;
        }
        settings[key] = v.get<std::string>();
      }
    }
  }
  const std::lock_guard lock(mutex_);
  if (state != state_seen_) {
    spdlog::info("agones: GameServer state {}", cli::printable_ascii(state.substr(0, 40)));
    state_seen_ = state;
  }
  // Settings count from the allocation on (a Ready GameServer's labels are the Fleet's).
  if (state != "Allocated") return;
  // Said once per change of what is skipped, also when nothing valid is left.
  if (skipped != skipped_seen_ && !skipped.empty()) {
    std::string names;
    for (std::size_t i = 0; i < skipped.size() && i < 10; ++i) names += (names.empty() ? "" : ", ") + skipped[i];
    if (skipped.size() > 10) names += " and " + std::to_string(skipped.size() - 10) + " more";
    spdlog::warn("agones: match settings skipped (keys of [a-z0-9-] after '{}', values of printable ASCII without quotes up to 256 "
                 "characters, at most {}): {}",
                 prefix, kMaxMatchSettings, names);
  }
  skipped_seen_ = skipped;
  if (settings == settings_seen_) return;
  settings_seen_ = settings;
  settings_pending_ = std::move(settings);
}

std::uint16_t agones_port(std::int64_t configured) {
  if (configured > 0 && configured <= 65535) return static_cast<std::uint16_t>(configured);
  if (const char* env = std::getenv("AGONES_SDK_HTTP_PORT"); env != nullptr) {
    unsigned v = 0;
    const auto [end, ec] = std::from_chars(env, env + std::strlen(env), v);
    if (ec == std::errc{} && *end == '\0' && v >= 1 && v <= 65535) return static_cast<std::uint16_t>(v);
  }
  return AgonesClient::kDefaultPort;
}

}  // namespace swarmfield::server
