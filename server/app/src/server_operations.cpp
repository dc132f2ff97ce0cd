// Server's operations hooks: the HTTP endpoints and the metrics the tick thread publishes.
#include <spdlog/spdlog.h>

#include "swarmfield/server/operations_http.hpp"
#include "swarmfield/server/server.hpp"

namespace swarmfield::server {

bool Server::start_operations(std::string& error) {
  std::vector<const char*> drops;
  for (std::size_t i = 0; i < static_cast<std::size_t>(UdpDrop::kCount); ++i) drops.push_back(to_string(static_cast<UdpDrop>(i)));
  ops_.set_labels({"default"}, std::move(drops));
  ops_.set_ready(true);
  if (config_.http_port < 0) return true;
  const std::string bind = config_.http_bind.empty() ? config_.bind : config_.http_bind;
  http_ = std::make_unique<OperationsHttp>(ops_);
  if (!http_->start(bind, static_cast<std::uint16_t>(config_.http_port), error)) return false;
  spdlog::info("http listening port={} bind={} (/healthz /readyz /metrics)", http_->port(), bind);
  return true;
}

void Server::publish_metrics(double tick_ms, double rebuild_ms, bool rebuilt, Clock::time_point now) {
  MetricsSnapshot& m = metrics_;
  m.tick_duration.observe(tick_ms / 1000.0);
  if (rebuilt) m.rebuild_duration.observe(rebuild_ms / 1000.0);
  m.ticks = world_.tick();
  m.overruns = scheduler_.overruns();
  m.skipped_ticks = scheduler_.skipped_ticks();
  m.field_rebuilds = world_.rebuild_count();
  m.kind_count = 1;
  m.agents_by_kind[0] = world_.swarm().size();
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

void Server::operations_draining() { ops_.set_draining(true); }

void Server::stop_operations() {
  if (http_) http_->stop();
}

}  // namespace swarmfield::server
