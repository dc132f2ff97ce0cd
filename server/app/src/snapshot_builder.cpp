#include "swarmfield/server/snapshot_builder.hpp"

#include <algorithm>
#include <cmath>

namespace swarmfield::server {

void SnapshotWorldState::assign(const AgentArrays& arrays, std::span<const sim::Player> world_players,
                                std::uint32_t world_tick, std::uint64_t rebuild_count, float map_cell_size) {
  tick = world_tick;
  rebuilds = rebuild_count;
  relevances_used_ = 0;
  cell_size = map_cell_size;
  agents.assign(arrays.ids, arrays.xs, arrays.ys, arrays.headings, arrays.kinds, map_cell_size);
  players.clear();
  for (const sim::Player& p : world_players) {
    const bool aimed = p.aim.x != 0.0f || p.aim.y != 0.0f;
    players.push_back(protocol::PlayerState{p.id, p.position.x, p.position.y, p.contacts, p.health, p.kills, p.shots, 0,
                                            aimed ? protocol::quantize_heading(std::atan2(p.aim.y, p.aim.x)) : std::uint8_t{0}});
  }
  std::sort(players.begin(), players.end(),
            [](const protocol::PlayerState& a, const protocol::PlayerState& b) { return a.id < b.id; });
  if (players.size() > protocol::kMaxSnapshotPlayers) players.resize(protocol::kMaxSnapshotPlayers);
}

void SnapshotWorldState::assign(const sim::World& world) {
  const sim::Swarm& swarm = world.swarm();
  assign(AgentArrays{swarm.ids(), swarm.xs(), swarm.ys(), swarm.headings(), swarm.kinds()}, world.players(),
         static_cast<std::uint32_t>(world.tick()), world.rebuild_count(), world.map().cell_size());
}

const protocol::ViewRelevance& SnapshotWorldState::relevance(const protocol::QuantizedRect& view,
                                                             const protocol::RelevanceParams& params) {
  for (std::size_t i = 0; i < relevances_used_; ++i) {
    const protocol::ViewRelevance& r = *relevances_[i];
    const protocol::QuantizedRect& v = r.view();
    if (v.x0 == view.x0 && v.y0 == view.y0 && v.x1 == view.x1 && v.y1 == view.y1 &&
        r.max_tracked() == params.max_tracked && r.density_grid() == params.density_grid) {
      return r;
    }
  }
  if (relevances_used_ == relevances_.size()) relevances_.push_back(std::make_unique<protocol::ViewRelevance>());
  protocol::ViewRelevance& r = *relevances_[relevances_used_++];
  r.compute(agents, view, params);
  return r;
}

ClientSnapshotStream::ClientSnapshotStream(const ClientSnapshotParams& params)
    : params_(params),
      sender_(params.history_agents, false, params.history_pool),
      budget_(params.bits_per_second, params.snapshots_per_second) {}

protocol::QuantizedRect ClientSnapshotStream::area(const SnapshotWorldState& world, const ViewRect& view) const noexcept {
  return view.empty() ? protocol::QuantizedRect{}
                      : protocol::quantize_view(view.x0, view.y0, view.x1, view.y1, params_.margin, world.cell_size);
}

protocol::RelevanceParams ClientSnapshotStream::relevance_params() const noexcept {
  protocol::RelevanceParams relevance;
  relevance.max_tracked = params_.max_tracked;
  relevance.update_bits = budget_.update_bits();
  relevance.add_bits = budget_.add_bits();
  return relevance;
}

void ClientSnapshotStream::prepare(SnapshotWorldState& world, const ViewRect& view) {
  static_cast<void>(world.relevance(area(world, view), relevance_params()));
}

bool ClientSnapshotStream::build(SnapshotWorldState& world, const ViewRect& view, std::uint64_t echo_client_time_us,
                                 std::vector<std::uint8_t>& payload) {
  const protocol::RelevanceParams relevance = relevance_params();
  // What the snapshot costs besides agents: header, players, the two length fields, and a
  // density grid about as large as the last one (its changes are what is coded).
  const double fixed = static_cast<double>(protocol::kSnapshotHeaderBytes + 8 +
                                           world.players.size() * protocol::kSnapshotPlayerBytes + last_grid_bytes_);
  selector_.select(world.relevance(area(world, view), relevance), sender_.next_baseline(), world.tick,
                   budget_.allowance(fixed), relevance, candidates_, grid_);
  header_.tick = world.tick;
  header_.echo_client_time_us = echo_client_time_us;
  header_.total_agents = static_cast<std::uint32_t>(world.agents.size());
  header_.rebuilds = world.rebuilds;
  header_.players = world.players;
  header_.wave = world.wave;
  sender_.set_recent_deaths(world.recent_deaths);
  if (!sender_.encode(header_, candidates_, grid_, payload)) return false;
  budget_.spent(payload.size(), sender_.last_stats());
  last_grid_bytes_ = (sender_.last_stats().grid_bits + 7) / 8;
  return true;
}

std::vector<protocol::KindInfo> kind_infos(std::span<const sim::AgentKind> kinds) {
  std::vector<protocol::KindInfo> out;
  for (const sim::AgentKind& k : kinds) {
    if (out.size() == protocol::kMaxKinds) break;
    out.push_back({k.name, k.radius, k.colour});
  }
  return out;
}

}  // namespace swarmfield::server
