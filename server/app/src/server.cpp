#include "swarmfield/server/server.hpp"

#include <sys/resource.h>

#include <asio/post.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

#include "swarmfield/protocol/datagram.hpp"
#include "swarmfield/protocol/packet.hpp"
#include "swarmfield/protocol/sequence.hpp"
#include "swarmfield/protocol/snapshot_fragments.hpp"
#include "swarmfield/server/handshake.hpp"
#include "swarmfield/server/agones_client.hpp"
#include "swarmfield/server/operations_http.hpp"
#include "swarmfield/server/replay_playback.hpp"
#include "swarmfield/server/spawn_point.hpp"
#include "swarmfield/server/world_setup.hpp"
#include "swarmfield/sim/crowd/density_limit.hpp"

namespace swarmfield::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kClosingTimeout = std::chrono::seconds(2);
constexpr auto kFlushTimeout = std::chrono::milliseconds(1000);
constexpr auto kFlushGrace = std::chrono::milliseconds(100);
constexpr std::uint32_t kMaxCatchUpTicks = 5;
// Send-queue bound: the configured size, but always room for the whole map transfer (queued
// at once after Welcome) plus some snapshots.
std::size_t queue_bound(const ServerConfig& c, const MapTransfer& t) {
  return std::max<std::size_t>(static_cast<std::size_t>(c.send_queue_kb) * 1024u, t.total_frame_bytes + (64u << 10));
}

// Names come from the wire: keep log lines printable.
std::string printable(const std::string& s) {
  std::string out;
  for (char ch : s) out += (static_cast<unsigned char>(ch) >= 0x20 && static_cast<unsigned char>(ch) < 0x7f) ? ch : '?';
  return out;
}

const char* message_name(const protocol::TcpMessage& m) {
  static constexpr const char* kNames[] = {"Hello", "Welcome", "MapChunk", "Error", "Bye", "Input", "SnapshotData"};
  return m.index() < std::size(kNames) ? kNames[m.index()] : "?";
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

double ms_since(Clock::time_point t0, Clock::time_point t1) {
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace

std::string ServerSummary::line() const {
  std::ostringstream ss;
  ss << "ticks=" << ticks << " rebuilds=" << rebuilds << " overruns=" << overruns << " clients=" << clients
     << " bytes_sent=" << bytes_sent << " bad_frames=" << bad_frames << " bad_datagrams=" << bad_datagrams
     << " skipped_ticks=" << skipped_ticks << " evicted=" << evicted;
  ss.setf(std::ios::fixed);
  ss.precision(3);
  ss << " tick_p50_ms=" << tick_p50_ms << " tick_p99_ms=" << tick_p99_ms << " step_p50_ms=" << step_p50_ms
     << " step_p99_ms=" << step_p99_ms << " rebuild_p50_ms=" << rebuild_p50_ms << " rebuild_p99_ms=" << rebuild_p99_ms
     << " tick_max_ms=" << tick_max_ms << " swarm_p50_ms=" << swarm_p50_ms << " swarm_p99_ms=" << swarm_p99_ms
     << " snapshot_p50_ms=" << snapshot_p50_ms << " snapshot_p99_ms=" << snapshot_p99_ms
     << " builds_started=" << builds_started << " goal_changes=" << goal_changes << " stale_ticks=" << stale_ticks;
  for (const auto* by_class : {&rebuilds_by_class, &builds_started_by_class}) {
    ss << (by_class == &rebuilds_by_class ? " rebuilds_by_class=" : " builds_started_by_class=");
    for (std::size_t c = 0; c < by_class->size(); ++c) ss << (c == 0 ? "" : ",") << (*by_class)[c];
  }
  ss.precision(1);
  ss << " peak_rss_mib=" << peak_rss_mib;
  ss << " udp_received=" << udp_received << " udp_challenges=" << udp_challenges
     << " udp_challenge_bytes=" << udp_challenge_bytes << " udp_confirmed=" << udp_confirmed
     << " udp_unbound=" << udp_unbound << " udp_inputs=" << udp_inputs << " tcp_inputs=" << tcp_inputs
     << " hello_timeouts=" << hello_timeouts << " idle_timeouts=" << idle_timeouts
     << " frame_timeouts=" << frame_timeouts << " refused_per_address=" << refused_per_address
     << " udp_rcvbuf_kb=" << udp_rcvbuf_kb;
  for (std::size_t i = 0; i < udp_drops.size(); ++i) {
    ss << " drop_" << to_string(static_cast<UdpDrop>(i)) << "=" << udp_drops[i];
  }
  ss << " snapshots_sent=" << snapshots_sent << " snapshots_tcp=" << snapshots_tcp
     << " snapshots_deferred=" << snapshots_deferred << " snapshot_bytes=" << snapshot_bytes
     << " snapshot_agents=" << snapshot_agents;
  ss.precision(3);
  ss << " bytes_per_agent=" << bytes_per_agent << " max_datagram=" << max_datagram;
  ss << " spawns_held_back=" << spawns_held_back;
  return ss.str();
}

Server::Server(const ServerConfig& config, sim::GridMap map, std::string map_name)
    : config_(config),
      world_(std::move(map), world_params(config)),
      map_transfer_(prepare_map_transfer(world_.map(), std::move(map_name))),
      spawn_(centre_most_walkable(world_.map())),
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
             if (!stopping_) apply_input(c, input);
           },
           [this](ClientState& c, const protocol::SnapshotAck& ack) {
             if (!stopping_) on_snapshot_ack(c, ack);
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
}

Server::~Server() = default;

bool Server::open(std::string& error) {
  const auto port = static_cast<std::uint16_t>(config_.port);
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
  if (config_.duration_s > 0.0) {
    duration_timer_.expires_after(seconds(config_.duration_s));
    duration_timer_.async_wait([this](std::error_code ec) {
      if (!ec) stop(fmt::format("--duration {:g} s reached", config_.duration_s));
    });
  }
  ops_.mark_alive(now);
  schedule_tick();
  io_.run();
  running_ = false;
}

void Server::schedule_tick() {
  tick_timer_.expires_at(scheduler_.next_deadline());
  tick_timer_.async_wait([this](std::error_code ec) {
    if (ec || stopping_) return;
    on_tick_timer();
  });
}

void Server::on_tick_timer() {
  const auto now = Clock::now();
  const auto decision = scheduler_.poll(now);
  if (decision.skipped_ticks > 0) {
    // At most one warning per status interval: an overloaded server must not also flood its log.
    resyncs_since_warning_ += 1;
    skipped_since_warning_ += decision.skipped_ticks;
    if (now >= next_resync_warning_) {
      spdlog::warn("tick loop behind: {} resync(s) dropped {} tick(s) ({} ms of simulated time) since the last warning",
                   resyncs_since_warning_, skipped_since_warning_,
                   static_cast<long long>(static_cast<double>(skipped_since_warning_) * 1000.0 / static_cast<double>(config_.tick_hz)));
      resyncs_since_warning_ = 0;
      skipped_since_warning_ = 0;
      next_resync_warning_ = now + seconds(config_.status_interval_s);
    }
  }
  batch_remaining_ = decision.ticks_to_run;
  run_batch_step();
}

void Server::run_batch_step() {
  if (stopping_) return;
  if (batch_remaining_ > 0) {
    --batch_remaining_;
    run_tick(batch_remaining_ == 0);
    if (stopping_) return;
  }
  if (batch_remaining_ > 0) {
    // Catch-up ticks are posted one at a time rather than run back to back: the socket
    // handlers that became ready meanwhile (TCP reads, UDP readiness, write completions) run
    // in between, so an overloaded server keeps reading and writing instead of starving its
    // io_context for max_catch_up ticks at a time.
    asio::post(io_, [this] { run_batch_step(); });
    return;
  }
  const auto after = Clock::now();
  if (after >= next_status_) log_status(after);
  schedule_tick();
}

void Server::run_tick(bool last_of_batch) {
  const auto t0 = Clock::now();
  // Every input datagram waiting in the kernel, read now rather than whenever the io_context
  // gets to it: under overload the tick timer is always due and the newest inputs would
  // otherwise wait behind ticks. apply_input keeps the newest per client (by sequence).
  udp_.drain();
  // A recording being served: its inputs, not the clients' (false: its end, stopping).
  if (playback_ && !play_recorded_inputs()) return;
  // Inputs recorded by socket handlers since the last tick; the World clamps and collides them.
  for (auto& [id, c] : clients_.clients()) {
    if (c.pending_intent && c.player_id != 0) {
      const sim::Vec2 intent{c.pending_intent->first, c.pending_intent->second};
      world_.set_player_intent(c.player_id, intent);
      record_input({ReplayEvent::Kind::kIntent, c.player_id, intent});
    }
    c.pending_intent.reset();
  }
  const bool rebuilt = world_.begin_tick(dt_s_);
  const auto t_fields = Clock::now();
  world_.finish_tick(dt_s_);
  after_world_step();
  if (world_.spawns_held_back() > 0 && !density_limit_logged_) {
    // Once: every later wave stops there too (the count is the summary's spawns_held_back).
    density_limit_logged_ = true;
    spdlog::warn("spawn at tick {} stopped at the density limit with {} agents: {}; {} agents not spawned, later waves "
                 "stop there too (counted as spawns_held_back in the exit summary)",
                 world_.tick(), world_.swarm().size(),
                 sim::describe_density_limit(world_.map(), world_.swarm().kind_table()), world_.spawns_held_back());
  }
  if (config_.slow_tick_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(config_.slow_tick_ms));
  const auto t1 = Clock::now();
  if (rebuilt) rebuild_stats_.add(ms_since(t0, t_fields));
  swarm_stats_.add(ms_since(t_fields, t1));
  count_goal_change();
  // Snapshots at snapshot_hz out of tick_hz ticks (an accumulator spreads them evenly). While
  // catching up, a due snapshot waits for the last tick of the batch (older states are stale)
  // unless that tick is estimated (from this tick's length) to be a snapshot period or more
  // away: when the ticks themselves are slow, waiting for the end of the batch would add up to
  // max_catch_up ticks of latency and cut the snapshot rate.
  snapshot_accumulator_ += static_cast<std::uint32_t>(config_.snapshot_hz);
  if (snapshot_accumulator_ >= static_cast<std::uint32_t>(config_.tick_hz)) {
    snapshot_accumulator_ -= static_cast<std::uint32_t>(config_.tick_hz);
    snapshot_due_ = true;
  }
  const auto wait_for_last = (t1 - t0) * static_cast<std::int64_t>(batch_remaining_);
  if (snapshot_due_ && (last_of_batch || wait_for_last >= snapshot_period_)) {
    snapshot_due_ = false;
    send_snapshots();
  }
  // Once a second: drop connections that never said Hello, that trickle a frame, that stopped
  // reading while closing, or that went quiet after joining.
  if (world_.tick() % static_cast<std::uint64_t>(config_.tick_hz) == 0) {
    tcp_.sweep(t1, TcpServer::Timeouts{seconds(config_.hello_timeout_s), seconds(config_.frame_timeout_s), kClosingTimeout});
    close_idle_clients(t1);
  }
  const auto t2 = Clock::now();
  const double step_ms = ms_since(t0, t1);
  const double tick_ms = ms_since(t0, t2);
  step_stats_.add(step_ms);
  tick_stats_.add(tick_ms);
  snapshot_stats_.add(ms_since(t1, t2));
  window_step_stats_.add(step_ms);
  window_tick_stats_.add(tick_ms);
  publish_metrics(tick_ms, rebuilt ? ms_since(t0, t_fields) : 0.0, rebuilt, t2);
}

void Server::count_goal_change() {
  // The same inputs World gives NavigationFields: every player's cell, in player order.
  goal_cells_.clear();
  for (const sim::Player& pl : world_.players()) goal_cells_.push_back(world_.map().world_to_cell(pl.position));
  if (world_.tick() > 1 && goal_cells_ != prev_goal_cells_) ++goal_changes_;
  goal_cells_.swap(prev_goal_cells_);
  if (world_.fields().front_stale()) ++stale_ticks_;
}

void Server::send_snapshots() {
  const auto now = Clock::now();
  const auto ack_timeout = seconds(config_.ack_timeout_s);
  if (snapshot_routes_.empty()) return;
  // Once for every client: all agents quantized, sorted by id and indexed by tiles.
  snapshot_world_.assign(world_);
  const std::size_t budget_bytes =
      static_cast<std::size_t>(config_.client_kbps) * 125u / static_cast<std::size_t>(config_.snapshot_hz);
  // 1. Who gets a snapshot, over which transport (serial: sockets and shared state).
  snapshot_jobs_.clear();
  for (auto& [id, c] : clients_.clients()) {
    const auto sit = session_of_client_.find(id);
    TcpSession* session = sit == session_of_client_.end() ? nullptr : tcp_.find(sit->second);
    const auto rit = snapshot_routes_.find(id);
    if (session == nullptr || !session->is_open() || rit == snapshot_routes_.end()) continue;
    SnapshotRoute& route = *rit->second;
    if (c.udp_endpoint && c.acks.stalled(now, ack_timeout)) {
      // Nothing we sent for ack_timeout was acknowledged: the client left that address, or the
      // address never wanted the stream. Stop sending there; TCP (flow-controlled, bounded
      // queue) carries the snapshots until the client confirms an address again.
      spdlog::info("client {}: no UDP acks for {:g} s; streaming over TCP until it confirms an address again", id,
                   config_.ack_timeout_s);
      c.udp_endpoint.reset();
      ++udp_unbound_;
    }
    const bool udp = c.udp_endpoint.has_value();
    if (!udp && session->latest_waiting()) {
      // Over TCP each snapshot is a delta against the previous one, so none may be replaced
      // while queued: skip this one (it counts towards eviction like a replaced one).
      ++snapshots_deferred_;
      tcp_.skip_latest(*session, budget_bytes);
      continue;
    }
    route.stream.set_reliable(!udp);
    route.stream.prepare(snapshot_world_, c.view);  // shared view relevance, computed once
    snapshot_jobs_.push_back(SnapshotJob{&c, session, &route, udp, false});
  }
  // 2. Select and encode, one client per chunk, on the pool.
  sim::parallel_for(snapshot_pool_.get(), snapshot_jobs_.size(), 1, [this](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t j = begin; j < end; ++j) {
      SnapshotJob& job = snapshot_jobs_[j];
      job.built = job.route->stream.build(snapshot_world_, job.client->view, job.client->echo_client_time_us,
                                          job.route->payload);
    }
  });
  // 3. Send (serial).
  for (SnapshotJob& job : snapshot_jobs_) {
    ClientState& c = *job.client;
    SnapshotRoute& route = *job.route;
    if (!job.built) {
      if (snapshots_refused_++ == 0) spdlog::warn("snapshot for client {} refused by the encoder; skipped", c.id);
      continue;
    }
    const std::uint32_t sequence = route.stream.last_sequence();
    const protocol::SnapshotEncodeStats& stats = route.stream.last_stats();
    ++snapshots_sent_;
    snapshot_bytes_ += route.payload.size();
    snapshot_agents_ += stats.updated + stats.added;
    if (job.udp) {
      const std::size_t n = protocol::split_snapshot(route.payload, sequence, snapshot_fragments_);
      const std::uint64_t first_packet = c.channel.next_send_sequence();
      route.first_packet[sequence % route.first_packet.size()] = {sequence, first_packet};
      c.acks.on_sent(first_packet, now);
      for (std::size_t i = 0; i < n; ++i) {
        if (udp_.send_data(c, snapshot_fragments_[i])) {
          c.bytes_sent += snapshot_fragments_[i].size() + protocol::kPacketOverheadBytes;
        }
      }
    } else {
      Frame frame = make_frame(protocol::SnapshotData{route.payload});
      if (!frame) continue;  // cannot happen: payloads are far below the frame limit
      c.bytes_sent += frame->size();
      ++snapshots_tcp_;
      tcp_.send_latest(*job.session, std::move(frame));
    }
    ++c.snapshots_sent;
  }
}

void Server::on_snapshot_ack(ClientState& client, const protocol::SnapshotAck& ack) {
  const auto it = snapshot_routes_.find(client.id);
  if (it == snapshot_routes_.end() || ack.latest == 0) return;
  SnapshotRoute& route = *it->second;
  if (!route.stream.on_ack(ack)) return;  // a sequence never sent: ignored
  const auto& [sequence, packet] = route.first_packet[ack.latest % route.first_packet.size()];
  if (sequence == ack.latest) client.acks.on_ack(packet);
}

void Server::log_status(Clock::time_point now) {
  const std::uint64_t bytes = tcp_.counters().bytes_sent + udp_.counters().bytes_sent;
  const double secs = std::chrono::duration<double>(now - last_status_).count();
  const double kbit_s = secs > 0.0 ? static_cast<double>(bytes - last_status_bytes_) * 8.0 / 1000.0 / secs : 0.0;
  spdlog::info("status tick={} agents={} players={} clients={} tick_ms p50={:.3f} p99={:.3f} step_ms p50={:.3f} "
               "p99={:.3f} out={:.1f} kbit/s overruns={} rebuilds={} field_stale={} udp_max_batch={}",
               world_.tick(), world_.swarm().size(), world_.players().size(), clients_.size(),
               window_tick_stats_.percentile(0.5), window_tick_stats_.percentile(0.99),
               window_step_stats_.percentile(0.5), window_step_stats_.percentile(0.99), kbit_s, scheduler_.overruns(),
               world_.all_rebuild_count(), world_.fields().front_stale(),
               // Most input datagrams one drain read since start: a large value means inputs had
               // piled up in the kernel between two drains.
               udp_.counters().max_drained);
  window_tick_stats_.clear();
  window_step_stats_.clear();
  last_status_ = now;
  last_status_bytes_ = bytes;
  // On the grid of the interval, but never a loop: a long stall skips the missed lines.
  const auto interval = seconds(config_.status_interval_s);
  next_status_ = now - next_status_ < interval ? next_status_ + interval : now + interval;
}

void Server::on_message(TcpSession& session, protocol::TcpMessage& message) {
  if (stopping_) return;
  if (const auto* hello = std::get_if<protocol::Hello>(&message)) {
    if (session.client_id != 0) {
      tcp_.reject_bad_message(session, "unexpected Hello: the handshake is already done");
      return;
    }
    handle_hello(session, *hello);
    return;
  }
  if (session.client_id == 0) {
    tcp_.reject_bad_message(session, std::string("expected Hello first, got ") + message_name(message));
    return;
  }
  ClientState* client = clients_.find(session.client_id);
  if (client == nullptr) return;  // being removed
  client->last_activity = Clock::now();
  if (const auto* input = std::get_if<protocol::Input>(&message)) {
    ++tcp_inputs_;
    apply_input(*client, *input);
  } else if (const auto* bye = std::get_if<protocol::Bye>(&message)) {
    spdlog::info("client {} says bye: {}", client->id, printable(bye->reason));
    session.close();
  } else {
    tcp_.reject_bad_message(session, std::string("unexpected message ") + message_name(message) + " from a client");
  }
}

void Server::handle_hello(TcpSession& session, const protocol::Hello& hello) {
  if (auto error = check_hello(hello, clients_.full())) {
    tcp_.log_rate_limited("connection " + std::to_string(session.id()) + " (" + session.remote() + ") refused: " + error->reason);
    tcp_.send_error_and_close(session, error->code, error->reason);
    return;
  }
  if (refuse_player_in_playback(session, hello)) return;
  std::uint32_t player_id = 0;
  if (hello.role == protocol::Role::kPlayer) {
    player_id = world_.add_player(spawn_);
    record_input({ReplayEvent::Kind::kAddPlayer, player_id, spawn_});
  }
  ClientState* client = clients_.add(hello.role, hello.name, player_id);
  if (client == nullptr) {  // check_hello saw room, so this is only defensive
    if (player_id != 0) {
      world_.remove_player(player_id);
      record_input({ReplayEvent::Kind::kRemovePlayer, player_id, {}});
    }
    tcp_.send_error_and_close(session, protocol::ErrorCode::kServerFull, "server full");
    return;
  }
  session.client_id = client->id;
  session_of_client_[client->id] = session.id();
  ClientSnapshotParams snapshot_params;
  snapshot_params.bits_per_second = static_cast<double>(config_.client_kbps) * 1000.0;
  snapshot_params.snapshots_per_second = static_cast<double>(config_.snapshot_hz);
  snapshot_routes_[client->id] = std::make_unique<SnapshotRoute>(snapshot_params);

  protocol::Welcome welcome;
  welcome.client_id = client->id;
  welcome.udp = client->credentials;
  welcome.tick_hz = static_cast<std::uint16_t>(config_.tick_hz);
  welcome.snapshot_hz = static_cast<std::uint16_t>(config_.snapshot_hz);
  welcome.udp_port = announced_udp_port();
  welcome.player_id = player_id;
  welcome.map = map_transfer_.info;
  welcome.kinds = kind_infos(world_.swarm().kind_table());
  if (tcp_.send(session, make_frame(welcome)) != TcpSession::SendResult::kQueued) return;
  for (const Frame& chunk : map_transfer_.chunks) {
    if (tcp_.send(session, chunk) != TcpSession::SendResult::kQueued) return;
  }
  if (player_id != 0) operations_player_joined();
  const sim::Player* player = world_.find_player(player_id);
  spdlog::info("client {} '{}' joined as {} from {} (player {} at {:.1f},{:.1f}); {} clients", client->id,
               printable(client->name), hello.role == protocol::Role::kPlayer ? "player" : "viewer", session.remote(),
               player_id, player ? player->position.x : 0.0f, player ? player->position.y : 0.0f, clients_.size());
}

void Server::apply_input(ClientState& client, const protocol::Input& input) {
  // Acks are cumulative facts about what the client decoded: any input's count, late or not.
  on_snapshot_ack(client, input.snapshot_ack);
  // Only an input that moves the sequence forward by a bounded step counts (equal is accepted:
  // idempotent). Older ones arrived out of order; one far ahead is hostile or broken, and
  // taking it would make every later genuine input look old (a jump of ~2^31 froze a player).
  if (client.has_input && input.sequence != client.last_input_sequence &&
      !protocol::sequence_advances(input.sequence, client.last_input_sequence)) {
    return;
  }
  client.has_input = true;
  client.last_input_sequence = input.sequence;
  if (client.player_id != 0) client.pending_intent = std::make_pair(input.move_x, input.move_y);
  client.view = ViewRect::from_corners(input.view_x0, input.view_y0, input.view_x1, input.view_y1);
  client.echo_client_time_us = input.client_time_us;
}

void Server::close_idle_clients(Clock::time_point now) {
  const auto limit = seconds(config_.idle_timeout_s);
  for (auto& [id, c] : clients_.clients()) {
    if (now - c.last_activity <= limit) continue;
    const auto sit = session_of_client_.find(id);
    TcpSession* session = sit == session_of_client_.end() ? nullptr : tcp_.find(sit->second);
    if (session == nullptr || !session->is_open()) continue;
    ++idle_timeouts_;
    tcp_.log_rate_limited("client " + std::to_string(id) + " (" + session->remote() + ") sent nothing for " +
                          fmt::format("{:g}", config_.idle_timeout_s) + " s; closing");
    // The slot is free for someone else now; a peer that does not read is cut by the closing timeout.
    tcp_.send_error_and_close(*session, protocol::ErrorCode::kBadMessage,
                              fmt::format("idle for {:g} s (--idle-timeout)", config_.idle_timeout_s));
  }
}

void Server::on_disconnected(TcpSession& session) {
  if (session.client_id == 0) return;
  const std::uint32_t id = session.client_id;
  session_of_client_.erase(id);
  snapshot_routes_.erase(id);
  if (ClientState* c = clients_.find(id)) {
    if (c->player_id != 0) {
      world_.remove_player(c->player_id);
      record_input({ReplayEvent::Kind::kRemovePlayer, c->player_id, {}});
    }
    spdlog::info("client {} '{}' left (snapshots sent {}, bytes {}); {} clients", id, printable(c->name),
                 c->snapshots_sent, c->bytes_sent, clients_.size() - 1);
    clients_.remove(id);
  }
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
  if (tcp_.session_count() == 0 || (all_written && grace_over) || now - stop_started_ >= kFlushTimeout) {
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

ServerSummary Server::summary() const {
  ServerSummary s;
  s.ticks = world_.tick();
  // Every size class's fields (class 1 and those of bigger kinds rebuild on the same goal changes).
  const sim::NavigationSet& nav = world_.navigation();
  for (int c = 1; c <= sim::kMaxSizeClass; ++c) {
    const auto i = static_cast<std::size_t>(c - 1);
    s.rebuilds_by_class[i] = nav.fields(c).rebuild_count();
    s.builds_started_by_class[i] = nav.fields(c).builds_started();
    s.rebuilds += s.rebuilds_by_class[i];
    s.builds_started += s.builds_started_by_class[i];
  }
  s.overruns = scheduler_.overruns();
  s.skipped_ticks = scheduler_.skipped_ticks();
  s.clients = tcp_.counters().accepted;
  s.bytes_sent = tcp_.counters().bytes_sent + udp_.counters().bytes_sent;
  s.bad_frames = tcp_.counters().bad_frames;
  const UdpCounters& u = udp_.counters();
  s.bad_datagrams = u.total_dropped();
  s.evicted = tcp_.counters().evicted;
  s.tick_p50_ms = tick_stats_.percentile(0.5);
  s.tick_p99_ms = tick_stats_.percentile(0.99);
  s.step_p50_ms = step_stats_.percentile(0.5);
  s.step_p99_ms = step_stats_.percentile(0.99);
  s.rebuild_p50_ms = rebuild_stats_.percentile(0.5);
  s.rebuild_p99_ms = rebuild_stats_.percentile(0.99);
  s.tick_max_ms = tick_stats_.max();
  s.swarm_p50_ms = swarm_stats_.percentile(0.5);
  s.swarm_p99_ms = swarm_stats_.percentile(0.99);
  s.snapshot_p50_ms = snapshot_stats_.percentile(0.5);
  s.snapshot_p99_ms = snapshot_stats_.percentile(0.99);
  s.goal_changes = goal_changes_;
  s.stale_ticks = stale_ticks_;
  s.udp_received = u.received;
  s.udp_challenges = u.challenges_sent;
  s.udp_challenge_bytes = u.challenge_bytes_sent;
  s.udp_confirmed = u.confirmed;
  s.udp_unbound = udp_unbound_;
  s.udp_inputs = u.inputs;
  s.tcp_inputs = tcp_inputs_;
  s.hello_timeouts = tcp_.counters().hello_timeouts;
  s.idle_timeouts = idle_timeouts_;
  s.frame_timeouts = tcp_.counters().frame_timeouts;
  s.refused_per_address = tcp_.counters().refused_per_address;
  s.udp_rcvbuf_kb = udp_.receive_buffer_bytes() / 1024;
  s.udp_drops = u.dropped;
  s.snapshots_sent = snapshots_sent_;
  s.snapshots_tcp = snapshots_tcp_;
  s.snapshots_deferred = snapshots_deferred_;
  s.snapshot_bytes = snapshot_bytes_;
  s.snapshot_agents = snapshot_agents_;
  s.bytes_per_agent =
      snapshot_agents_ > 0 ? static_cast<double>(snapshot_bytes_) / static_cast<double>(snapshot_agents_) : 0.0;
  s.max_datagram = u.max_datagram;
  s.spawns_held_back = world_.spawns_held_back();
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) s.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  return s;
}

}  // namespace swarmfield::server
