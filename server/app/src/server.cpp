// The Server's life: construction, opening the sockets, run() and the graceful stop (server.hpp).
// The tick loop is in server_tick.cpp, the clients' messages in server_clients.cpp, snapshots in
// server_snapshots.cpp, the exit summary in server_summary.cpp, operations in server_operations.cpp.
#include "swarmfield/server/server.hpp"
#include "swarmfield/cli/control_chars.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "server_clock.hpp"
#include "swarmfield/server/ops/agones_client.hpp"     // complete for ~Server
#include "swarmfield/server/ops/operations_http.hpp"  // complete for ~Server
#include "swarmfield/server/net/web_gateway.hpp"    // complete for ~Server
#include "swarmfield/server/replay/replay_playback.hpp"
#include "swarmfield/server/spawn_point.hpp"
#include "swarmfield/server/world_setup.hpp"

namespace swarmfield::server {
namespace {

using server_detail::seconds;

constexpr auto kFlushTimeout = std::chrono::milliseconds(1000);
constexpr auto kFlushGrace = std::chrono::milliseconds(100);
constexpr std::uint32_t kMaxCatchUpTicks = 5;
// Send-queue bound: the configured size, but always room for the whole map transfer (queued
// at once after Welcome) plus some snapshots.
std::size_t queue_bound(const ServerConfig& c, const MapTransfer& t) {
  return std::max<std::size_t>(static_cast<std::size_t>(c.send_queue_kb) * 1024u, t.total_frame_bytes + (64u << 10));
}

}  // namespace

Server::Server(const ServerConfig& config, sim::GridMap map, std::string map_name,
               std::vector<sim::CellCoord> spawn_cells)
    : config_(config),
      world_(std::move(map), world_params(config)),
      map_transfer_(prepare_map_transfer(world_.map(), std::move(map_name))),
      spawn_(centre_most_walkable(world_.map())),
      spawn_cells_(std::move(spawn_cells)),
      clients_(static_cast<std::size_t>(config.max_clients)),
      // Room for every client, plus the pre-Hello connections (capped separately: above the cap
      // the oldest is dropped, so idle connections can not starve real clients), plus 16 so
      // that connections above max_clients can be told "server full" at Hello.
      tcp_(io_, *this,
           static_cast<std::size_t>(config.max_clients) + TcpServer::kDefaultMaxUnauthenticated + 16,
           queue_bound(config, map_transfer_), TcpServer::kDefaultMaxUnauthenticated,
           static_cast<std::size_t>(config.max_connections_per_address), protocol::kMaxClientFrameBytes),
      udp_(io_, clients_,
           [this](ClientState& c, const protocol::Input& input) {
             if (!stopping_) apply_input(c, input, true);
           },
           [this](ClientState& c, const protocol::SnapshotAck& ack) {
             if (!stopping_) on_snapshot_ack(c, ack, true);
           }),
      tick_timer_(io_),
      duration_timer_(io_),
      flush_timer_(io_),
      scheduler_(Clock::now(), std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(1.0 / static_cast<double>(config.tick_hz))),
                 kMaxCatchUpTicks),
      dt_s_(tick_seconds(config)),
      snapshot_period_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(1.0 / static_cast<double>(config.snapshot_hz)))) {
  if (config.threads > 1) snapshot_pool_ = std::make_unique<sim::WorkerPool>(static_cast<std::size_t>(config.threads));
  recent_deaths_ = RecentDeaths(death_horizon_ticks(config.tick_hz, config.snapshot_hz));
  std::string rules_error;
  rules_ = make_rules(config_, rules_error);
  rules_context_ = std::make_unique<rules::RulesContext>(world_, dt_s_);
  if (!rules_error.empty()) {
    spdlog::error("{}; the match goes on without them", cli::printable_ascii(rules_error));
    rules_stop_logged_ = true;
  } else {
    spdlog::info("game rules: {}", rules_->name());
  }
}

Server::~Server() = default;

bool Server::open(std::string& error) {
  // Settings only a port's start would refuse are checked before any port opens.
  if (config_.web_port >= 0) {
    if (error = WebGateway::check_page_folder(web_root()); !error.empty()) return false;
  }
  const auto port = static_cast<std::uint16_t>(config_.port);
  tcp_.set_frames_per_tick(TcpSession::kFramesPerTick);
  if (!tcp_.open(config_.bind, port, error)) return false;
  std::string udp_error;
  const auto receive_buffer = static_cast<std::size_t>(config_.udp_receive_buffer_kb) * 1024u;
  if (!udp_.open(config_.bind, tcp_.port(), receive_buffer, udp_error)) {
    if (port != 0 || !udp_.open(config_.bind, 0, receive_buffer, udp_error)) {
      error = udp_error;
      return false;
    }
  }
  spdlog::info("listening tcp={} udp={} bind={} map='{}' {}x{} agents={} tick_hz={} snapshot_hz={} threads={} "
               "player_speed={:g} field_budget={} udp_rcvbuf_kb={}",
               tcp_.port(), udp_.port(), config_.bind, map_transfer_.info.name, map_transfer_.info.width,
               map_transfer_.info.height, config_.agents, config_.tick_hz, config_.snapshot_hz, config_.threads,
               config_.player_speed, world_.params().field_rebuild_budget, udp_.receive_buffer_bytes() / 1024);
  // Linux reports twice what it granted; less than twice the ask means a cap got in the way.
  if (udp_.receive_buffer_bytes() < 2 * receive_buffer) {
    spdlog::warn("UDP receive buffer granted {} KiB of the {} KiB asked: the kernel caps it at net.core.rmem_max "
                 "(raise it, or run with CAP_NET_ADMIN); a burst of datagrams beyond it is dropped (counted as "
                 "drop_kernel_overflow)",
                 udp_.receive_buffer_bytes() / 2048, config_.udp_receive_buffer_kb);
  }
  return start_operations(error);
}

void Server::run() {
  running_ = true;
  const auto now = Clock::now();
  scheduler_ = TickScheduler(now, scheduler_.period(), kMaxCatchUpTicks);
  last_status_ = now;
  next_status_ = now + seconds(config_.status_interval_s);
  arm_duration_timer("");
  ops_.mark_alive(now);
  schedule_tick();
  io_.run();
  running_ = false;
}

void Server::arm_duration_timer(const char* origin) {
  duration_timer_.cancel();
  if (!(config_.duration_s > 0.0)) return;
  duration_timer_.expires_after(seconds(config_.duration_s));
  duration_timer_.async_wait([this, origin](std::error_code ec) {
    if (!ec) stop(fmt::format("--duration {:g} s reached{}", config_.duration_s, origin));
  });
}

void Server::stop(const std::string& reason) {
  if (finished_) return;
  if (stopping_) {
    spdlog::info("second stop request ({}): closing now", reason);
    finish();
    return;
  }
  stopping_ = true;
  stop_started_ = Clock::now();
  operations_draining();
  spdlog::info("shutting down ({}): saying bye to {} connections", reason, tcp_.session_count());
  tick_timer_.cancel();
  duration_timer_.cancel();
  tcp_.stop_accepting();
  tcp_.close_all_after(make_frame(protocol::Bye{"server shutting down (" + reason + ")"}));
  poll_flush();
}

void Server::poll_flush() {
  if (finished_) return;
  const auto now = Clock::now();
  bool all_written = true;
  for (const auto& [id, sid] : session_of_client_) {
    if (const TcpSession* s = tcp_.find(sid); s != nullptr && !s->closed() && s->queued_bytes() > 0) all_written = false;
  }
  const bool grace_over = now - stop_started_ >= kFlushGrace;
  // Why the stop ends, logged: tests check that a stop ended because its work was done, not
  // at the timeout (no wall-clock assertions in them).
  const char* why = tcp_.session_count() == 0       ? "every connection closed"
                    : all_written && grace_over      ? "every Bye written"
                    : now - stop_started_ >= kFlushTimeout ? "flush timeout: connections still had bytes queued"
                                                      : nullptr;
  if (why != nullptr) {
    spdlog::info("stopped: {} ({} ms after the stop request)", why,
                 std::chrono::duration_cast<std::chrono::milliseconds>(now - stop_started_).count());
    finish();
    return;
  }
  flush_timer_.expires_after(std::chrono::milliseconds(10));
  flush_timer_.async_wait([this](std::error_code ec) {
    if (!ec) poll_flush();
  });
}

void Server::finish() {
  if (finished_) return;
  finished_ = true;
  stopping_ = true;
  tick_timer_.cancel();
  duration_timer_.cancel();
  flush_timer_.cancel();
  tcp_.stop_accepting();
  tcp_.close_all();
  udp_.refresh_kernel_drops();  // the summary's drop_kernel_overflow
  udp_.close();
  stop_operations();
  io_.stop();
}

}  // namespace swarmfield::server
