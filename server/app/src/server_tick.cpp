// The Server's tick loop (server.hpp): the fixed tick from the TickScheduler, catch-up batches,
// one tick (inputs, World step, snapshots when due, the once-a-second sweeps) and the status log.
#include <asio/post.hpp>
#include <spdlog/spdlog.h>

#include <thread>

#include "server_clock.hpp"
#include "swarmfield/cli/control_chars.hpp"
#include "swarmfield/server/replay/replay_playback.hpp"
#include "swarmfield/server/server.hpp"
#include "swarmfield/sim/crowd/density_limit.hpp"

namespace swarmfield::server {
namespace {

using server_detail::ms_since;
using server_detail::seconds;

constexpr auto kClosingTimeout = std::chrono::seconds(2);

}  // namespace

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
  // Each connection may hand over TcpSession::kFramesPerTick frames until the next tick.
  tcp_.refill_frame_budgets();
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
    if (config_.combat && c.player_id != 0 && c.pending_fire != c.applied_fire) {
      const sim::Vec2 aim{c.pending_fire.aim_x, c.pending_fire.aim_y};
      if (world_.set_player_fire(c.player_id, c.pending_fire.held, aim)) {
        record_input({c.pending_fire.held ? ReplayEvent::Kind::kFire : ReplayEvent::Kind::kCeaseFire, c.player_id,
                      c.pending_fire.held ? aim : sim::Vec2{}});
      } else {
        ++actions_refused_;  // an aim with no direction: the trigger stays as it was
      }
      c.applied_fire = c.pending_fire;
    }
    for (const sim::CellCoord cell : c.pending_builds) {
      const sim::BuildResult built = world_.build_barricade(c.player_id, cell);
      if (built == sim::BuildResult::kBuilt) {
        record_input({ReplayEvent::Kind::kBuild, c.player_id, {static_cast<float>(cell.x), static_cast<float>(cell.y)}});
      } else {
        ++actions_refused_;
        spdlog::debug("player {} may not build at cell {},{}: {}", c.player_id, cell.x, cell.y, sim::build_result_name(built));
      }
    }
    c.pending_builds.clear();
  }
  const bool rebuilt = world_.begin_tick(dt_s_);
  const auto t_fields = Clock::now();
  world_.finish_tick(dt_s_);
  recent_deaths_.add(static_cast<std::uint32_t>(world_.tick()), world_.agent_deaths());
  run_rules();
  after_world_step();
  send_map_deltas();
  apply_allocation_settings();
  check_empty(t0);
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
    session_lines_.flush(t1);
    close_idle_clients(t1);
    expire_detached(t1);
  }
  const auto t2 = Clock::now();
  const double step_ms = ms_since(t0, t1);
  const double tick_ms = ms_since(t0, t2);
  step_stats_.add(step_ms);
  tick_stats_.add(tick_ms);
  snapshot_stats_.add(ms_since(t1, t2));
  window_step_stats_.add(step_ms);
  window_tick_stats_.add(tick_ms);
  publish_metrics(tick_ms, rebuilt ? ms_since(t0, t_fields) : 0.0, rebuilt,
                  {ms_since(t0, t_fields), ms_since(t_fields, t1), ms_since(t1, t2)}, t2);
}

void Server::count_goal_change() {
  // The same inputs World gives NavigationFields: every player's cell, in player order.
  goal_cells_.clear();
  for (const sim::Player& pl : world_.players()) goal_cells_.push_back(world_.map().world_to_cell(pl.position));
  if (world_.tick() > 1 && goal_cells_ != prev_goal_cells_) ++goal_changes_;
  goal_cells_.swap(prev_goal_cells_);
  if (world_.fields().front_stale()) ++stale_ticks_;
}

void Server::log_status(Clock::time_point now) {
  const std::uint64_t bytes = tcp_.counters().bytes_sent + udp_.counters().bytes_sent;
  const double secs = std::chrono::duration<double>(now - last_status_).count();
  const double kbit_s = secs > 0.0 ? static_cast<double>(bytes - last_status_bytes_) * 8.0 / 1000.0 / secs : 0.0;
  spdlog::info("status tick={} agents={} asleep={} players={} clients={} tick_ms p50={:.3f} p99={:.3f} "
               "step_ms p50={:.3f} p99={:.3f} out={:.1f} kbit/s overruns={} rebuilds={} field_stale={} "
               "udp_max_batch={}",
               world_.tick(), world_.swarm().size(), world_.swarm().sleeping_count(), world_.players().size(),
               clients_.size(),
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

void Server::run_rules() {
  rules::run_rules_after_step(*rules_, *rules_context_, rules_tracker_, world_.barricade_changes());
  for (const std::string& line : rules_context_->take_log()) spdlog::info("rules: {}", cli::printable_ascii(line));
  if (!rules_stop_logged_ && !rules_->stopped().empty()) {
    rules_stop_logged_ = true;
    spdlog::error("{}; the script is stopped, the match goes on without it", cli::printable_ascii(rules_->stopped()));
  }
  if (const auto& over = rules_context_->match_over(); over && !stopping_) stop("match over: " + cli::printable_ascii(*over));
}

void Server::check_empty(Clock::time_point now) {
  if (stopping_ || playback_) return;
  // Both lines take from the session lines' budget: a join-and-Bye loop that lets a tick see each
  // state wrote them outside it, two a cycle (the stop itself is always logged).
  if (!world_.players().empty()) {
    if (empty_since_ && session_lines_.take()) spdlog::info("a player joined; the server stays up");
    had_player_ = true;  // also without the setting: an allocation may set it later
    empty_since_.reset();
    return;
  }
  if (!(config_.shutdown_when_empty_s > 0.0) || !had_player_) return;  // off, or the match has not begun
  if (!empty_since_) {
    empty_since_ = now;
    if (session_lines_.take()) {
      spdlog::info("every player has left; stopping in {:g} s unless one joins (--shutdown-when-empty)",
                   config_.shutdown_when_empty_s);
    }
    return;
  }
  if (now - *empty_since_ >= seconds(config_.shutdown_when_empty_s)) {
    stop(fmt::format("no players for {:g} s (--shutdown-when-empty)", config_.shutdown_when_empty_s));
  }
}

}  // namespace swarmfield::server
