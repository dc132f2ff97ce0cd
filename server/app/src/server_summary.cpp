// The Server's exit summary (server.hpp): ServerSummary and its one-line text.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <sstream>

#include "swarmfield/server/net/web_gateway.hpp"
#include "swarmfield/server/server.hpp"

namespace swarmfield::server {

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
     << " frame_timeouts=" << frame_timeouts << " tcp_budget_stops=" << tcp_budget_stops
     << " refused_per_address=" << refused_per_address
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
  ss << " kills=" << kills << " player_deaths=" << player_deaths << " shots=" << shots
     << " actions_refused=" << actions_refused;
  ss << " barricades_built=" << barricades_built << " barricades_fallen=" << barricades_fallen;
  ss << " waves=" << waves << " score=" << score;
  ss << " tokens_accepted=" << tokens_accepted << " tokens_missing=" << tokens_missing
     << " tokens_expired=" << tokens_expired << " tokens_forged=" << tokens_forged
     << " tokens_replayed=" << tokens_replayed << " tokens_wrong_server=" << tokens_wrong_server
     << " tokens_wrong_protocol=" << tokens_wrong_protocol << " tokens_malformed=" << tokens_malformed
     << " unsealed_frames=" << unsealed_frames;
  ss << " trickle_timeouts=" << trickle_timeouts << " refused_address_share=" << refused_address_share;
  ss << " resumes=" << resumes << " resumes_refused=" << resumes_refused << " sessions_detached=" << sessions_detached
     << " sessions_expired=" << sessions_expired;
  ss << " web_pages=" << web_pages << " web_sockets=" << web_sockets << " web_refused=" << web_refused
     << " web_bad_requests=" << web_bad_requests << " web_spectators_full=" << web_spectators_full
     << " web_evicted=" << web_evicted;
  ss << " snapshots_shared=" << snapshots_shared << " shared_encodes=" << shared_encodes
     << " spectator_joins=" << spectator_joins;
  ss.precision(2);
  ss << " viewer_snapshots_per_s_min=" << viewer_snapshots_per_s_min << " viewers_rated=" << viewers_rated;
  ss << " spectator_lags=" << spectator_lags;
  if (!match_id.empty()) ss << " match_id=" << match_id;
  return ss.str();
}
std::optional<double> Server::viewer_snapshot_rate(const ClientState& client) noexcept {
  if (client.role != protocol::Role::kViewer || client.snapshots_sent < 2) return std::nullopt;
  const double span = std::chrono::duration<double>(client.last_snapshot_at - client.first_snapshot_at).count();
  if (span < 1.0) return std::nullopt;
  return static_cast<double>(client.snapshots_sent - 1) / span;
}

ServerSummary Server::summary() const {
  ServerSummary s;
  s.ticks = world_.tick();
  s.match_id = match_id_;
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
  s.tcp_budget_stops = tcp_.counters().frame_budget_stops;
  s.refused_per_address = tcp_.counters().refused_per_address;
  s.udp_rcvbuf_kb = udp_.receive_buffer_bytes() / 1024;
  s.udp_drops = u.dropped;
  s.snapshots_sent = snapshots_sent_;
  s.snapshots_tcp = snapshots_tcp_;
  s.snapshots_deferred = snapshots_deferred_;
  s.snapshots_shared = snapshots_shared_;
  s.shared_encodes = shared_encodes_;
  s.spectator_joins = spectator_joins_;
  s.spectator_lags = spectator_lags_;
  // The viewers that left (at shutdown every connection closes first) and those still here.
  LowestRate rates = left_viewer_rates_;
  for (const auto& [id, c] : clients_.clients()) {
    if (const std::optional<double> rate = viewer_snapshot_rate(c)) rates.add(*rate);
  }
  s.viewer_snapshots_per_s_min = rates.min;
  s.viewers_rated = rates.count;
  s.snapshot_bytes = snapshot_bytes_;
  s.snapshot_agents = snapshot_agents_;
  s.bytes_per_agent =
      snapshot_agents_ > 0 ? static_cast<double>(snapshot_bytes_) / static_cast<double>(snapshot_agents_) : 0.0;
  s.max_datagram = u.max_datagram;
  s.spawns_held_back = world_.spawns_held_back();
  s.kills = world_.kills();
  s.player_deaths = world_.player_death_count();
  s.shots = world_.shots();
  s.actions_refused = actions_refused_;
  s.barricades_built = world_.barricades_built();
  s.barricades_fallen = world_.barricades_fallen();
  s.waves = world_.waves().comings_started();
  s.score = rules_context_ ? rules_context_->total_score() : 0;
  using protocol::TokenRefusal;
  const auto refused = [this](TokenRefusal r) { return token_refusals_[static_cast<std::size_t>(r)]; };
  s.tokens_accepted = tokens_accepted_;
  s.tokens_missing = tokens_missing_;
  s.tokens_expired = refused(TokenRefusal::kExpired);
  s.tokens_forged = refused(TokenRefusal::kForged);
  s.tokens_replayed = refused(TokenRefusal::kReplayed);
  s.tokens_wrong_server = refused(TokenRefusal::kWrongServer);
  s.tokens_wrong_protocol = refused(TokenRefusal::kWrongProtocol);
  s.tokens_malformed = refused(TokenRefusal::kMalformed);
  s.unsealed_frames = tcp_.counters().unsealed_frames;
  s.trickle_timeouts = trickle_timeouts_;
  s.refused_address_share = refused_address_share_;
  s.resumes = resumes_;
  s.resumes_refused = resumes_refused_;
  s.sessions_detached = sessions_detached_;
  s.sessions_expired = sessions_expired_;
  if (web_) {
    const WebGateway::Counters web = web_->counters();
    s.web_pages = web.pages_served;
    s.web_sockets = web.websockets;
    s.web_refused = web.refused;
    s.web_bad_requests = web.bad_requests;
    s.web_spectators_full = web.spectators_full;
    s.web_evicted = web.evicted;
  }
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) s.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  return s;
}

}  // namespace swarmfield::server
