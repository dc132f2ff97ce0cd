#include "swarmfield/server/recent_deaths.hpp"

#include <algorithm>

#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

namespace swarmfield::server {

void RecentDeaths::add(std::uint32_t tick, std::span<const sim::AgentDeath> deaths) {
  for (const sim::AgentDeath& d : deaths) held_.push_back(Entry{tick, d.agent_id});
  while (!held_.empty() && (held_.size() > max_held_ || tick - held_.front().tick > horizon_)) held_.pop_front();
}

void RecentDeaths::sorted_ids(std::vector<std::uint32_t>& out) const {
  out.clear();
  for (const Entry& e : held_) out.push_back(e.id);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

std::uint32_t death_horizon_ticks(std::int64_t tick_hz, std::int64_t snapshot_hz) noexcept {
  const std::int64_t per_snapshot = snapshot_hz > 0 ? (tick_hz + snapshot_hz - 1) / snapshot_hz : tick_hz;
  return static_cast<std::uint32_t>(std::max<std::int64_t>(1, per_snapshot) *
                                    static_cast<std::int64_t>(protocol::kSnapshotHistorySize + 1) * 2);
}

}  // namespace swarmfield::server
