#include "swarmfield/server/snapshot_builder.hpp"

#include <algorithm>

namespace swarmfield::server {

void build_snapshot(const AgentArrays& agents, std::span<const sim::Player> players, const ViewRect& view,
                    float margin, const SnapshotMeta& meta, std::size_t max_agents, protocol::Snapshot& out,
                    std::vector<std::uint32_t>& scratch) {
  out.tick = meta.tick;
  out.baseline_tick = 0;
  out.echo_client_time_us = meta.echo_client_time_us;
  out.rebuilds = meta.rebuilds;
  out.total_agents = static_cast<std::uint32_t>(agents.ids.size());

  // Players: all of them (few), by id.
  out.players.clear();
  for (const sim::Player& p : players) {
    out.players.push_back(protocol::PlayerState{p.id, p.position.x, p.position.y, p.contacts});
  }
  std::sort(out.players.begin(), out.players.end(),
            [](const protocol::PlayerState& a, const protocol::PlayerState& b) { return a.id < b.id; });
  if (out.players.size() > protocol::kMaxPlayersPerSnapshot) out.players.resize(protocol::kMaxPlayersPerSnapshot);

  // Agents: linear filter by the grown view rectangle (a flat scan over SoA floats is cheaper
  // than a hash walk for the view sizes clients use).
  scratch.clear();
  const std::size_t n = std::min({agents.ids.size(), agents.xs.size(), agents.ys.size(), agents.headings.size()});
  const ViewRect area = view.grown(margin);
  if (!area.empty()) {
    for (std::size_t i = 0; i < n; ++i) {
      if (area.contains(agents.xs[i], agents.ys[i])) scratch.push_back(static_cast<std::uint32_t>(i));
    }
  }
  // The swarm hands out ids in spawn order, so the indices are usually sorted by id already;
  // sort only when that does not hold (e.g. after removals that reorder the arrays).
  const auto by_id = [&](std::uint32_t a, std::uint32_t b) { return agents.ids[a] < agents.ids[b]; };
  if (!std::is_sorted(scratch.begin(), scratch.end(), by_id)) std::sort(scratch.begin(), scratch.end(), by_id);
  const std::size_t limit = std::min(max_agents, protocol::kMaxAgentsPerSnapshot);
  if (scratch.size() > limit) scratch.resize(limit);

  auto& block = out.agents;
  block.ids.resize(scratch.size());
  block.xs.resize(scratch.size());
  block.ys.resize(scratch.size());
  block.headings.resize(scratch.size());
  const bool with_kinds = agents.kinds.size() >= n && n > 0;
  block.kinds.resize(with_kinds ? scratch.size() : 0);
  for (std::size_t k = 0; k < scratch.size(); ++k) {
    const std::uint32_t i = scratch[k];
    block.ids[k] = agents.ids[i];
    block.xs[k] = protocol::quantize_position(agents.xs[i]);
    block.ys[k] = protocol::quantize_position(agents.ys[i]);
    block.headings[k] = protocol::quantize_heading(agents.headings[i]);
    if (with_kinds) block.kinds[k] = agents.kinds[i];
  }
}

void build_snapshot(const sim::World& world, const ViewRect& view, std::uint64_t echo_client_time_us,
                    std::size_t max_agents, protocol::Snapshot& out, std::vector<std::uint32_t>& scratch) {
  const sim::Swarm& swarm = world.swarm();
  const AgentArrays agents{swarm.ids(), swarm.xs(), swarm.ys(), swarm.headings(), swarm.kinds()};
  SnapshotMeta meta;
  meta.tick = static_cast<std::uint32_t>(world.tick());
  meta.rebuilds = world.rebuild_count();
  meta.echo_client_time_us = echo_client_time_us;
  build_snapshot(agents, world.players(), view, kAoiMarginWorld, meta, max_agents, out, scratch);
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
