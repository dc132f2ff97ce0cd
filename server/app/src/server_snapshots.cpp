// The Server's snapshots (server.hpp): who gets one this tick and over which transport, built in
// parallel, sent as sealed UDP fragments or one TCP frame; the clients' acknowledgements.
#include <spdlog/spdlog.h>

#include "server_clock.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/server/server.hpp"

namespace swarmfield::server {

using server_detail::seconds;

void Server::send_snapshots() {
  const auto now = Clock::now();
  const auto ack_timeout = seconds(config_.ack_timeout_s);
  if (snapshot_routes_.empty()) return;
  // Once for every client: all agents quantized, sorted by id and indexed by tiles.
  snapshot_world_.assign(world_);
  snapshot_world_.wave = static_cast<std::uint32_t>(world_.waves().comings_started());
  recent_deaths_.sorted_ids(snapshot_world_.recent_deaths);
  for (protocol::PlayerState& p : snapshot_world_.players) p.score = rules_context_->score(p.id);
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

void Server::on_snapshot_ack(ClientState& client, const protocol::SnapshotAck& ack, bool via_udp) {
  const auto it = snapshot_routes_.find(client.id);
  if (it == snapshot_routes_.end() || ack.latest == 0) return;
  SnapshotRoute& route = *it->second;
  if (!route.stream.on_ack(ack)) return;  // a sequence never sent: ignored
  const auto& [sequence, packet] = route.first_packet[ack.latest % route.first_packet.size()];
  if (via_udp && sequence == ack.latest) client.acks.on_ack(packet);
}

}  // namespace swarmfield::server
