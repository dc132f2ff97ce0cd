#pragma once
// The agents killed during the last ticks, for the snapshots' death flags: a snapshot is a delta
// against a frame the client acknowledged, up to 32 snapshots old, so every death since that
// frame's tick must still be known when the snapshot is encoded (SnapshotEncoder::
// set_recent_deaths).
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "swarmfield/sim/game/combat.hpp"

namespace swarmfield::server {

class RecentDeaths {
 public:
  /// Deaths older than `horizon_ticks` are forgotten; at most `max_held` are held (the oldest
  /// go first: a client whose baseline is older sees those agents leave without a death).
  explicit RecentDeaths(std::uint32_t horizon_ticks = 1024, std::size_t max_held = 1u << 16)
      : horizon_(horizon_ticks), max_held_(max_held) {}

  /// Records the deaths of world tick `tick` (ticks must not decrease) and forgets the old ones.
  void add(std::uint32_t tick, std::span<const sim::AgentDeath> deaths);
  /// The held agents' ids, sorted strictly increasing (ids are never reused).
  void sorted_ids(std::vector<std::uint32_t>& out) const;
  [[nodiscard]] std::size_t size() const noexcept { return held_.size(); }

 private:
  struct Entry {
    std::uint32_t tick;
    std::uint32_t id;
  };
  std::uint32_t horizon_;
  std::size_t max_held_;
  std::deque<Entry> held_;  // oldest first
};

/// Ticks a death must be held so every baseline a snapshot may use still sees it: the history's
/// 32 snapshots at `snapshot_hz`, plus one, in ticks of `tick_hz` (rounded up), twice over for
/// snapshots deferred behind a slow TCP stream.
[[nodiscard]] std::uint32_t death_horizon_ticks(std::int64_t tick_hz, std::int64_t snapshot_hz) noexcept;

}  // namespace swarmfield::server
