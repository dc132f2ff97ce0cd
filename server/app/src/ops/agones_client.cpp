#include "swarmfield/server/ops/agones_client.hpp"

#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "swarmfield/cli/control_chars.hpp"

namespace swarmfield::server {

AgonesClient::AgonesClient(std::uint16_t port, Clock::duration health_interval, const OperationsState& state,
                           std::string port_name)
    : port_(port), health_interval_(health_interval), state_(state), port_name_(std::move(port_name)) {
  thread_ = std::thread([this] { run(); });
}

AgonesClient::~AgonesClient() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AgonesClient::ready() {
  {
    const std::lock_guard lock(mutex_);
    queue_.emplace_back("/ready");
  }
  wake_.notify_all();
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
    queue_.emplace_back("/allocate");
  }
  wake_.notify_all();
}

void AgonesClient::shutdown() {
  {
    const std::lock_guard lock(mutex_);
    if (shutdown_asked_) return;
    shutdown_asked_ = true;
    queue_.emplace_back("/shutdown");
  }
  wake_.notify_all();
}

void AgonesClient::flush(Clock::duration timeout) {
  std::unique_lock lock(mutex_);
  idle_.wait_for(lock, timeout, [this] { return queue_.empty() && !busy_; });
}

void AgonesClient::run() {
  Clock::time_point next_health = Clock::now();
  std::unique_lock lock(mutex_);
  for (;;) {
    // Queued calls first, in order; then the Health ping when due.
    if (!queue_.empty()) {
      const std::string path = queue_.front();
      queue_.pop_front();
      busy_ = true;
      lock.unlock();
      const bool ok = post(path);
      if (path == "/ready" && ok) read_game_server();  // still busy: flush() waits for it too
      lock.lock();
      busy_ = false;
      if (path == "/ready" && ok) {
        ready_sent_ = true;
        loading_ = false;
        next_health = Clock::now();
      } else if (path == "/ready" && !stop_ && !shutdown_asked_) {
        // The sidecar may start after us: ask again every second until it answers.
        queue_.push_front(path);
        wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_ || shutdown_asked_; });
        if (stop_ || shutdown_asked_) queue_.erase(std::find(queue_.begin(), queue_.end(), std::string("/ready")));
        continue;
      }
      if (queue_.empty()) idle_.notify_all();
      continue;
    }
    if (stop_) return;
    const bool pinging = (ready_sent_ || loading_) && !shutdown_asked_;
    if (pinging && Clock::now() >= next_health) {
      next_health += health_interval_;
      if (next_health < Clock::now()) next_health = Clock::now() + health_interval_;
      // Health comes from the tick loop once it runs: no ping while it is stalled.
      if (loading_ || state_.alive(Clock::now())) {
        lock.unlock();
        post("/health");
        lock.lock();
      }
      continue;
    }
    if (pinging) {
      wake_.wait_until(lock, next_health);
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
}  // namespace

bool AgonesClient::post(const std::string& path) {
  httplib::Client client = sidecar_client(port_);
  const auto res = client.Post(path, "{}", "application/json");
  const bool ok = res && res->status >= 200 && res->status <= 299;
  if (ok) {
    if (path != "/health") spdlog::info("agones: {} ok", path);
    return true;
  }
  const auto now = Clock::now();
  const std::lock_guard lock(mutex_);
  if (now >= next_warning_ || path != "/health") {
    next_warning_ = now + std::chrono::seconds(1);
    spdlog::warn("agones: POST {} to 127.0.0.1:{} failed: {}", path, port_,
                 res ? "HTTP " + std::to_string(res->status) : httplib::to_string(res.error()));
  }
  return false;
}

void AgonesClient::read_game_server() {
  httplib::Client client = sidecar_client(port_);
  const auto res = client.Get("/gameserver");
  if (!res || res->status != 200) {
    spdlog::warn("agones: GET /gameserver failed ({}); Welcome announces the bound UDP port",
                 res ? "HTTP " + std::to_string(res->status) : httplib::to_string(res.error()));
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
