// The Server's snapshots (server.hpp): who gets one this tick and over which transport, built in
// parallel, sent as sealed UDP fragments or one TCP frame; the clients' acknowledgements.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "server_clock.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
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
  // 1. Who gets a snapshot, over which transport, from which stream (serial: sockets and shared state).
  const std::uint64_t tick = world_.tick();
  const std::uint64_t join_ticks =
      config_.spectator_join_s > 0.0
          ? std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(config_.spectator_join_s * config_.tick_hz)))
          : 0;
  snapshot_jobs_.clear();
  for (auto& [id, c] : clients_.clients()) {
    const auto sit = session_of_client_.find(id);
    TcpSession* session = sit == session_of_client_.end() ? nullptr : tcp_.find(sit->second);
    const auto rit = snapshot_routes_.find(id);
    if (session == nullptr || !session->is_open() || rit == snapshot_routes_.end()) {
      // It misses this tick's snapshot: a member of a shared stream would miss one of its deltas.
      if (rit != snapshot_routes_.end() && rit->second->group != 0) leave_spectator_group(*rit->second, tick);
      continue;
    }
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
    // A member of a shared spectator stream that no longer fits it (on UDP now, another area)
    // goes back to its own stream.
    SpectatorGroup* group = nullptr;
    if (route.group != 0) {
      const auto git = spectator_groups_.find(route.group);
      if (git != spectator_groups_.end() && shares_spectator_stream(c, join_ticks) && git->second->udp == udp &&
          git->second->area == route.stream.sent_area(snapshot_world_, c.view)) {
        group = git->second.get();
      } else {
        leave_spectator_group(route, tick);
      }
    }
    if (!udp && session->latest_waiting()) {
      // Over TCP each snapshot is a delta against the previous one, so none may be replaced
      // while queued: skip this one (it counts towards eviction like a replaced one). A member
      // of a shared stream misses one of its deltas: it leaves the stream.
      if (group != nullptr) leave_spectator_group(route, tick);
      ++snapshots_deferred_;
      tcp_.skip_latest(*session, budget_bytes);
      continue;
    }
    route.stream.set_reliable(!udp);
    // The view's relevance, computed once per tick and shared, in the order clients come: a
    // shared stream's in its first member's turn (asked for after every other client's, it fell
    // to the per-tick bound's best cover once 70 small views had used the bound up: a whole-map
    // stream then carried 114 of 3,000 agents; spectator_stream_test).
    if (group == nullptr) {
      route.stream.prepare(snapshot_world_, c.view);
    } else {
      group->stream.prepare(snapshot_world_, group->view);
    }
    snapshot_jobs_.push_back(SnapshotJob{&c, session, &route, udp, false, group});
  }
  if (join_ticks > 0) {
    join_spectator_groups(tick, join_ticks);
    settle_udp_groups(tick);
  }
  // 2. Select and encode, one client or shared stream per chunk, on the pool.
  const std::size_t jobs = snapshot_jobs_.size();
  sim::parallel_for(snapshot_pool_.get(), jobs + group_jobs_.size(), 1, [this, jobs](std::size_t begin, std::size_t end, std::size_t) {
    for (std::size_t j = begin; j < end; ++j) {
      if (j >= jobs) {
        SpectatorGroup& g = *group_jobs_[j - jobs];
        g.built = g.stream.build(snapshot_world_, g.view, 0, g.payload);
        continue;
      }
      SnapshotJob& job = snapshot_jobs_[j];
      if (job.group != nullptr) continue;
      job.built = job.route->stream.build(snapshot_world_, job.client->view, job.client->echo_client_time_us,
                                          job.route->payload);
    }
  });
  shared_encodes_ += group_jobs_.size();
  // 3. Send (serial).
  for (SnapshotJob& job : snapshot_jobs_) {
    ClientState& c = *job.client;
    SnapshotRoute& route = *job.route;
    ClientSnapshotStream& stream = job.group != nullptr ? job.group->stream : route.stream;
    if (job.group != nullptr) {
      job.built = job.group->built;
      if (job.built) {
        // The shared encoding with this client's own echo time (the header's fixed bytes).
        route.payload.assign(job.group->payload.begin(), job.group->payload.end());
        job.built = protocol::set_snapshot_echo(route.payload, c.echo_client_time_us);
      }
    }
    if (!job.built) {
      if (snapshots_refused_++ == 0) spdlog::warn("snapshot for client {} refused by the encoder; skipped", c.id);
      continue;
    }
    const std::uint32_t sequence = stream.last_sequence();
    const protocol::SnapshotEncodeStats& stats = stream.last_stats();
    route.last_sequence = sequence;
    ++snapshots_sent_;
    if (job.group != nullptr) ++snapshots_shared_;
    snapshot_bytes_ += route.payload.size();
    snapshot_agents_ += stats.updated + stats.added;
    c.snapshot_payload_bytes += route.payload.size();
    c.snapshot_entries += stats.updated + stats.added;
    c.snapshot_residual_bytes += stats.rans_bytes;
    c.snapshot_escape_bits += stats.escape_bits;
    c.snapshot_added_bits += stats.added_bits;
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
    if (c.snapshots_sent == 0) c.first_snapshot_at = now;
    c.last_snapshot_at = now;
    ++c.snapshots_sent;
  }
}

ClientSnapshotParams Server::snapshot_params() const {
  ClientSnapshotParams params;
  params.bits_per_second = static_cast<double>(config_.client_kbps) * 1000.0;
  params.snapshots_per_second = static_cast<double>(config_.snapshot_hz);
  return params;
}

bool Server::shares_spectator_stream(const ClientState& c, std::uint64_t join_ticks) noexcept {
  // A viewer's view is empty until its first Input: sharing starts with the view it asks for.
  return join_ticks > 0 && c.role == protocol::Role::kViewer && !c.view.empty();
}

void Server::leave_spectator_group(SnapshotRoute& route, std::uint64_t tick) {
  // The client holds the shared stream's frames: its own stream starts over with a full
  // snapshot numbered after the last one it got.
  route.stream.restart(route.last_sequence + 1);
  route.group = 0;
  route.left_group_tick = tick;
}

void Server::join_spectator_groups(std::uint64_t tick, std::uint64_t join_ticks) {
  const std::uint64_t burst_ticks = static_cast<std::uint64_t>(kSpectatorBurstSeconds * config_.tick_hz);
  // Spectators on their own streams that may join one (not within join_ticks of leaving one),
  // by area: the order of ids, so the same clients make the same choice on every run.
  std::vector<JoinCandidate>& candidates = join_candidates_;
  candidates.clear();
  for (std::size_t j = 0; j < snapshot_jobs_.size(); ++j) {
    const SnapshotJob& job = snapshot_jobs_[j];
    if (job.group != nullptr || !shares_spectator_stream(*job.client, join_ticks)) continue;
    if (job.route->left_group_tick != 0 && tick - job.route->left_group_tick < join_ticks) continue;
    if (job.udp) {
      // Over UDP only a client that acknowledges its own stream: a silent one would be sent
      // back (settle_udp_groups) and restart the shared stream for its members every interval.
      const protocol::SnapshotSender& own = job.route->stream.sender();
      if (own.newest_acked() == 0 || own.next_sequence() - own.newest_acked() > kSharedAckLag) continue;
    }
    candidates.push_back({job.route->stream.sent_area(snapshot_world_, job.client->view), job.udp, j});
  }
  // By area, then transport: a stream is reliable (TCP: each delta against the previous
  // snapshot) or not (UDP: against what every member acknowledged), never both.
  std::stable_sort(candidates.begin(), candidates.end(), [](const JoinCandidate& a, const JoinCandidate& b) {
    return a.area < b.area || (a.area == b.area && a.udp < b.udp);
  });
  for (std::size_t i = 0; i < candidates.size();) {
    std::size_t e = i + 1;
    while (e < candidates.size() && candidates[e].area == candidates[i].area && candidates[e].udp == candidates[i].udp) ++e;
    SpectatorGroup* group = nullptr;
    std::uint64_t group_id = 0;
    for (auto& [gid, g] : spectator_groups_) {
      if (g->area == candidates[i].area && g->udp == candidates[i].udp) {
        group = g.get();
        group_id = gid;
        break;
      }
    }
    // An existing stream takes joiners at most every join_ticks (each join is a full snapshot
    // for its members), except in its first seconds, while its members' views still fill from
    // their own first snapshot (spectators arriving together: a match's start, a shared link);
    // a new one starts as soon as two spectators share an area.
    const bool join = group != nullptr ? tick - group->last_join_tick >= join_ticks ||
                                             tick - group->started_tick < std::min(join_ticks, burst_ticks)
                                       : e - i >= 2;
    if (join) {
      if (group == nullptr) {
        group_id = next_spectator_group_++;
        auto made = std::make_unique<SpectatorGroup>(snapshot_params(), candidates[i].udp);
        group = made.get();
        group->area = candidates[i].area;
        group->view = snapshot_jobs_[candidates[i].job].client->view;
        group->started_tick = tick;
        spectator_groups_.emplace(group_id, std::move(made));
      }
      // Numbered after everything each joiner has decoded (a receiver drops older sequences).
      std::uint32_t next = group->stream.next_sequence();
      for (std::size_t k = i; k < e; ++k) next = std::max(next, snapshot_jobs_[candidates[k].job].route->last_sequence + 1);
      group->stream.restart(next);
      group->last_join_tick = tick;
      ++spectator_joins_;
      for (std::size_t k = i; k < e; ++k) {
        SnapshotJob& job = snapshot_jobs_[candidates[k].job];
        job.group = group;
        job.route->group = group_id;
        job.route->group_acks = protocol::SnapshotAck{};
        job.route->group_first = next;
      }
    }
    i = e;
  }
  // Encode the streams that have members this tick; forget those that have none.
  for (auto& [gid, g] : spectator_groups_) g->build = false;
  for (const SnapshotJob& job : snapshot_jobs_) {
    if (job.group != nullptr) job.group->build = true;
  }
  group_jobs_.clear();
  for (auto it = spectator_groups_.begin(); it != spectator_groups_.end();) {
    if (!it->second->build) {
      it = spectator_groups_.erase(it);
      continue;
    }
    it->second->stream.prepare(snapshot_world_, it->second->view);
    group_jobs_.push_back(it->second.get());
    ++it;
  }
}

void Server::settle_udp_groups(std::uint64_t tick) {
  const auto send_back = [&](SnapshotJob& job, const char* why) {
    // Its own stream takes over: a full snapshot, then deltas against its own acknowledgements.
    spdlog::info("client {}: {} of the shared spectator stream; back to its own stream", job.client->id, why);
    leave_spectator_group(*job.route, tick);
    ++spectator_lags_;
    job.group = nullptr;
    job.route->stream.prepare(snapshot_world_, job.client->view);
  };
  for (SpectatorGroup* g : group_jobs_) {
    if (!g->udp) continue;
    const std::uint32_t next = g->stream.next_sequence();
    group_members_.clear();
    for (SnapshotJob& job : snapshot_jobs_) {
      if (job.group != g) continue;
      const SnapshotRoute& route = *job.route;
      const std::uint32_t newest = route.group_acks.latest;
      if (next - route.group_first > kSharedAckLag && (newest == 0 || next - newest > kSharedAckLag)) {
        send_back(job, newest == 0 ? "no acknowledgement" : "acknowledgements too old");
      } else {
        group_members_.push_back(&job);
      }
    }
    const auto common_of_members = [&] {
      protocol::SnapshotAck common;
      for (std::size_t i = 0; i < group_members_.size(); ++i) {
        const protocol::SnapshotAck& a = group_members_[i]->route->group_acks;
        common = i == 0 ? a : protocol::common_acks(common, a);
      }
      return common;
    };
    protocol::SnapshotAck common = common_of_members();
    const bool recent = common.latest != 0 && next - common.latest <= kSharedAckLag;
    if (!recent && group_members_.size() > 1) {
      // No recent frame all hold: the newest one at least half of them hold is the baseline,
      // and those that lack it go back to their own streams.
      std::uint32_t majority = 0;
      for (std::uint32_t back = 1; back <= kSharedAckLag && back < next && majority == 0; ++back) {
        const std::uint32_t s = next - back;
        std::size_t holders = 0;
        for (const SnapshotJob* job : group_members_) holders += job->route->group_acks.has(s) ? 1 : 0;
        if (holders * 2 >= group_members_.size()) majority = s;
      }
      if (majority != 0) {
        std::size_t kept = 0;
        for (SnapshotJob* job : group_members_) {
          if (job->route->group_acks.has(majority)) {
            group_members_[kept++] = job;
          } else {
            send_back(*job, "lacks the frame most members hold");
          }
        }
        group_members_.resize(kept);
        common = common_of_members();
      }
    }
    // Every member holds these frames: the next snapshot is a delta against the newest of them
    // still in the stream's history (else full). A stream whose members all went back is built
    // for nobody this tick and forgotten at the next.
    g->stream.set_acks(common);
  }
}

void Server::on_snapshot_ack(ClientState& client, const protocol::SnapshotAck& ack, bool via_udp) {
  const auto it = snapshot_routes_.find(client.id);
  if (it == snapshot_routes_.end() || ack.latest == 0) return;
  SnapshotRoute& route = *it->second;
  const auto git = route.group != 0 ? spectator_groups_.find(route.group) : spectator_groups_.end();
  if (git != spectator_groups_.end() && git->second->udp) {
    // A member of a shared stream over UDP acknowledges the stream's sequences: kept per member
    // (from its first one on) and combined before each encode (settle_udp_groups).
    if (ack.latest >= git->second->stream.next_sequence()) return;  // never sent: ignored
    route.group_acks.merge(ack, route.group_first);
  } else if (!route.stream.on_ack(ack)) {
    return;  // a sequence never sent: ignored
  }
  const auto& [sequence, packet] = route.first_packet[ack.latest % route.first_packet.size()];
  if (via_udp && sequence == ack.latest) client.acks.on_ack(packet);
}

}  // namespace swarmfield::server
