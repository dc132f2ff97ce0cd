// Server's operations hooks: the HTTP endpoints and the metrics the tick thread publishes.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include "swarmfield/cli/control_chars.hpp"

#include "swarmfield/server/ops/agones_client.hpp"
#include "swarmfield/server/ops/operations_http.hpp"
#include "swarmfield/server/net/web_gateway.hpp"
#include "swarmfield/server/replay/replay_playback.hpp"
#include "swarmfield/server/server.hpp"

namespace swarmfield::server {

bool Server::start_operations(std::string& error) {
  std::vector<const char*> drops;
  for (std::size_t i = 0; i < static_cast<std::size_t>(UdpDrop::kCount); ++i) drops.push_back(to_string(static_cast<UdpDrop>(i)));
  std::vector<std::string> kinds;
  for (const sim::AgentKind& k : world_.swarm().kind_table()) kinds.push_back(k.name);
  if (kinds.empty()) kinds.emplace_back("default");
  ops_.set_labels(std::move(kinds), std::move(drops));
  if (!config_.record_path.empty()) {
    if (!recorder_.open(config_.record_path, recording_header(), error)) return false;
    spdlog::info("recording to {} (state hash every {} ticks)", config_.record_path, config_.record_hash_every);
  }
  ops_.set_ready(true);
  if (config_.http_port >= 0) {
    const std::string bind = config_.http_bind.empty() ? config_.bind : config_.http_bind;
    http_ = std::make_unique<OperationsHttp>(ops_);
    if (!http_->start(bind, static_cast<std::uint16_t>(config_.http_port), error)) return false;
    spdlog::info("http listening port={} bind={} (/healthz /readyz /metrics)", http_->port(), bind);
  }
  if (config_.web_port >= 0 && !start_web_gateway(error)) return false;
  if (config_.agones) {
    const std::uint16_t port = agones_port(config_.agones_port);
    ops_.mark_alive(Clock::now());  // the first Health may go out before the first tick
    agones_ = std::make_unique<AgonesClient>(
        port, std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config_.agones_health_interval_s)),
        ops_, config_.agones_port_name, config_.agones_players_list == "none" ? "" : config_.agones_players_list);
    spdlog::info("agones: SDK at 127.0.0.1:{}, health every {:g} s, game port '{}'", port, config_.agones_health_interval_s,
                 config_.agones_port_name);
    agones_->ready();
  }
  return true;
}

ReplayHeader Server::recording_header() const {
  ReplayHeader header;
  header.config_toml = config_to_toml(config_);
  header.map_name = map_transfer_.info.name;
  header.width = world_.map().width();
  header.height = world_.map().height();
  header.cell_size = world_.map().cell_size();
  header.costs = world_.map().costs();
  header.dt_s = dt_s_;
  header.hash_interval = static_cast<std::uint32_t>(config_.record_hash_every);
  return header;
}

std::uint64_t Server::recording_header_bytes() const { return encode_replay(Replay{recording_header(), {}}).size(); }

std::uint16_t Server::announced_udp_port() const noexcept {
  if (agones_ && agones_->public_port() != 0) return agones_->public_port();
  if (config_.public_udp_port > 0) return static_cast<std::uint16_t>(config_.public_udp_port);
  return udp_.port();
}

namespace {
// A player's value in the Agones players List: the matchmaker's client id from its connect
// token (what the backend knows it by), else the player id.
std::string players_list_value(const ClientState& client) {
  return client.user_id != 0 ? "client-" + std::to_string(client.user_id) : "player-" + std::to_string(client.player_id);
}
}  // namespace

void Server::operations_player_joined(const ClientState& client) {
  if (!agones_) return;
  agones_->allocate_once();
  agones_->player_joined(players_list_value(client));
}

void Server::operations_player_left(const ClientState& client) {
  if (agones_) agones_->player_left(players_list_value(client));
}

void Server::apply_allocation_settings() {
  if (!agones_) return;
  auto settings = agones_->take_match_settings();
  if (!settings) return;
  const MatchSettings result = apply_match_settings(config_, *settings);
  for (const std::string& e : result.errors) spdlog::warn("agones: match setting {}: not applied", e);
  if (!result.match_id.empty() && result.match_id != match_id_) {
    match_id_ = result.match_id;
    spdlog::info("agones: match-id={}", match_id_);
  }
  if (result.applied.empty()) return;
  const bool duration_changed = result.config.duration_s != config_.duration_s;
  config_.duration_s = result.config.duration_s;
  config_.shutdown_when_empty_s = result.config.shutdown_when_empty_s;
  std::string applied;
  for (const std::string& a : result.applied) applied += (applied.empty() ? "" : " ") + a;
  spdlog::info("agones: match settings from the allocation: {}", applied);
  // The match's length counts from its allocation (a Ready server may have waited for long).
  if (duration_changed) arm_duration_timer(" (set at allocation)");
}

void Server::publish_metrics(double tick_ms, double rebuild_ms, bool rebuilt,
                             const std::array<double, kTickPhaseNames.size()>& phase_ms, Clock::time_point now) {
  MetricsSnapshot& m = metrics_;
  m.tick_duration.observe(tick_ms / 1000.0);
  for (std::size_t p = 0; p < phase_ms.size(); ++p) m.phase_duration[p].observe(phase_ms[p] / 1000.0);
  if (rebuilt) m.rebuild_duration.observe(rebuild_ms / 1000.0);
  const bool first = m.ticks == 0;
  m.ticks = world_.tick();
  m.overruns = scheduler_.overruns();
  m.skipped_ticks = scheduler_.skipped_ticks();
  m.field_rebuilds = world_.rebuild_count();
  // Agents by kind: one pass over a byte per agent (~0.1 ms at 100k), so every 8th tick only.
  if (world_.tick() % 8 == 1 || first) {
    const auto table = world_.swarm().kind_table();
    m.kind_count = std::clamp<std::size_t>(table.size(), 1, kMaxMetricKinds);
    m.agents_by_kind.fill(0);
    const auto kinds = world_.swarm().kinds();
    if (kinds.size() == world_.swarm().size()) {
      for (const std::uint8_t k : kinds) ++m.agents_by_kind[k < m.kind_count ? k : m.kind_count - 1];
    } else {
      m.agents_by_kind[0] = world_.swarm().size();
    }
  }
  m.players = world_.players().size();
  m.clients = clients_.size();
  const TcpCounters& t = tcp_.counters();
  const UdpCounters& u = udp_.counters();
  m.connections_accepted = t.accepted;
  m.tcp_bytes_sent = t.bytes_sent;
  m.tcp_bytes_received = t.bytes_received;
  m.tcp_frames_received = t.frames_received;
  m.udp_bytes_sent = u.bytes_sent;
  m.udp_bytes_received = u.bytes_received;
  m.udp_datagrams_sent = u.sent;
  m.udp_datagrams_received = u.received;
  m.drop_reason_count = std::min(u.dropped.size(), m.udp_drops.size());
  for (std::size_t i = 0; i < m.drop_reason_count; ++i) m.udp_drops[i] = u.dropped[i];
  m.evictions = t.evicted;
  m.bad_frames = t.bad_frames;
  m.hello_timeouts = t.hello_timeouts;
  m.idle_timeouts = idle_timeouts_;
  m.frame_timeouts = t.frame_timeouts;
  m.refused_full = t.refused_full;
  m.refused_per_address = t.refused_per_address;
  ops_.publish(m, now);
}

void Server::operations_draining() {
  ops_.set_draining(true);
  if (agones_) agones_->shutdown();
}

void Server::play(Replay replay) {
  replay_ = std::make_unique<Replay>(std::move(replay));
  playback_ = std::make_unique<ReplayPlayback>(*replay_);
  spdlog::info("serving the recording of '{}': {} ticks, players may not join", replay_->header.map_name,
               playback_->end_tick());
}

void Server::record_input(const ReplayEvent& event) {
  if (recorder_.is_open()) recorder_.record(world_.tick(), event);
}

void Server::after_world_step() {
  if (recorder_.is_open()) {
    const std::uint64_t hash = world_.state_hash();
    recorder_.end_tick(world_.tick(), hash);
    // Past --record-max-mb the recording ends with this tick: a whole recording that replays,
    // at most this tick's records and the end record over the limit. Without it a join-and-Bye
    // loop from one address grew the file by ~750 MB an hour, until the disk was full.
    const double limit = config_.record_max_mb * 1024.0 * 1024.0;
    if (limit > 0.0 && static_cast<double>(recorder_.bytes()) >= limit) {
      std::string error;
      if (recorder_.finish(world_.tick(), hash, error)) {
        spdlog::warn("recording {} stopped at tick {}: {} bytes reached --record-max-mb {:g}; it ends there (a whole "
                     "recording), the match goes on unrecorded",
                     config_.record_path, world_.tick(), recorder_.bytes(), config_.record_max_mb);
      } else {
        spdlog::error("recording {}: {}", config_.record_path, error);
      }
    }
  }
  if (playback_) {
    if (const auto stored = playback_->check_hash(world_); stored && playback_mismatches_++ == 0) {
      spdlog::warn("recording: state hash differs at tick {} (stored {:#018x}, now {:#018x}); this build does not "
                   "re-simulate it exactly (swarmfield-tool replay names the first tick)",
                   world_.tick(), *stored, world_.state_hash());
    }
  }
}

bool Server::play_recorded_inputs() {
  if (std::string e = playback_->apply_inputs(world_); !e.empty() && playback_mismatches_++ == 0) {
    spdlog::warn("recording: {}", e);
  }
  if (playback_->at_end(world_)) {
    stop("end of the recording");
    return false;
  }
  return true;
}

bool Server::refuse_player_in_playback(TcpSession& session, const protocol::Hello& hello) {
  if (!playback_ || hello.role != protocol::Role::kPlayer) return false;
  tcp_.log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() +
                        ") refused: a player while serving a recording");
  tcp_.send_error_and_close(session, protocol::ErrorCode::kBadMessage,
                            "this server plays a recording: join as a viewer, players may not join");
  return true;
}

void Server::stop_operations() {
  if (recorder_.is_open()) {
    const std::uint64_t bytes = recorder_.bytes();
    std::string error;
    if (recorder_.finish(world_.tick(), world_.state_hash(), error)) {
      spdlog::info("recording {} closed: {} ticks, {} bytes", config_.record_path, world_.tick(), bytes);
    } else {
      spdlog::error("recording {}: {}", config_.record_path, error);
    }
  }
  if (agones_) {
    agones_->shutdown();  // also when stopped without a drain
    agones_->flush(std::chrono::milliseconds(600));
    agones_.reset();
  }
  if (http_) http_->stop();
  if (web_) web_->stop();
}

namespace {

/// Where the built page is when --web-root is empty: 'web' beside the executable's folder
/// (build/bin/swarmfield-server -> build/web; /opt/swarmfield/bin -> /opt/swarmfield/web).
std::string default_web_root() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "web";
  return (exe.parent_path().parent_path() / "web").string();
}

}  // namespace

std::string Server::web_root() const { return web_root_of(config_); }

std::string Server::web_root_of(const ServerConfig& config) {
  return config.web_root.empty() ? default_web_root() : config.web_root;
}

bool Server::start_web_gateway(std::string& error) {
  WebGatewayOptions options;
  options.bind = config_.web_bind.empty() ? config_.bind : config_.web_bind;
  options.port = static_cast<std::uint16_t>(config_.web_port);
  options.web_root = web_root();
  // The relays reach the game port where it listens; on every address, through loopback.
  std::error_code ec;
  const asio::ip::address game = asio::ip::make_address(config_.bind, ec);
  options.game_address = ec || game.is_unspecified() ? (game.is_v6() ? "::1" : "127.0.0.1") : config_.bind;
  options.game_port = tcp_.port();
  options.max_connections = static_cast<std::size_t>(config_.max_clients) + TcpServer::kDefaultMaxUnauthenticated;
  options.max_per_address = static_cast<std::size_t>(config_.max_connections_per_address);
  options.max_spectators = web_spectator_slots();
  options.handshake_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(config_.hello_timeout_s * 1000.0));
  tcp_.set_forwarded_peers(&forwarded_peers_);
  web_ = std::make_unique<WebGateway>(options, forwarded_peers_);
  if (!web_->start(error)) {
    web_.reset();
    return false;
  }
  spdlog::info("web listening port={} bind={} max_spectators={} (the spectator page at http://{}:{}/)", web_->port(),
               options.bind, options.max_spectators, options.bind == "0.0.0.0" || options.bind == "::" ? "HOST" : options.bind,
               web_->port());
  return true;
}

}  // namespace swarmfield::server
