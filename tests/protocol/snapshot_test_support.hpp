#pragma once
// A synthetic moving crowd for the snapshot codec tests (the benchmark uses real swarm motion):
// agents with ids in spawn order, positions in 1/64 cell, each walking with its own velocity plus
// jitter, some leaving and some arriving every step. Seeded.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "swarmfield/protocol/snapshot/agent_frame.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"

namespace swarmfield::protocol::test {

class SyntheticCrowd {
 public:
  SyntheticCrowd(std::size_t n, std::uint64_t seed, std::uint32_t side_cells = 256) : rng_(seed), side_(side_cells * 64) {
    for (std::size_t i = 0; i < n; ++i) spawn();
  }

  /// Advances `ticks` ticks: each agent moves by its velocity (position units per tick) plus
  /// jitter of up to +-jitter; `churn` agents leave and as many arrive (new ids).
  void step(std::uint32_t ticks, std::int32_t jitter = 1, std::size_t churn = 0) {
    std::uniform_int_distribution<std::int32_t> j(-jitter, jitter);
    for (Agent& a : agents_) {
      for (std::uint32_t t = 0; t < ticks; ++t) {
        a.x = std::clamp<std::int64_t>(std::int64_t{a.x} + a.vx + j(rng_), 0, side_);
        a.y = std::clamp<std::int64_t>(std::int64_t{a.y} + a.vy + j(rng_), 0, side_);
      }
      if (rng_() % 8 == 0) a.heading = static_cast<std::uint8_t>(a.heading + (rng_() % 5) - 2);
    }
    for (std::size_t c = 0; c < churn && !agents_.empty(); ++c) {
      agents_.erase(agents_.begin() + static_cast<std::ptrdiff_t>(rng_() % agents_.size()));
      spawn();
    }
  }

  /// Candidates: every agent, send flag set with probability `send_percent` / 100.
  void candidates(AgentCandidates& out, unsigned send_percent = 100) {
    out.clear();
    for (const Agent& a : agents_) {
      out.push_back(AgentCandidate{a.id, static_cast<std::uint32_t>(a.x), static_cast<std::uint32_t>(a.y), a.heading,
                                   a.kind, static_cast<std::uint8_t>(rng_() % 100 < send_percent ? 1 : 0)});
    }
  }

  void set_kind(std::size_t i, std::uint8_t kind) { agents_[i].kind = kind; }
  void teleport(std::size_t i, std::uint32_t x, std::uint32_t y) {
    agents_[i].x = x;
    agents_[i].y = y;
  }
  void turn(std::size_t i, std::uint8_t heading) { agents_[i].heading = heading; }
  [[nodiscard]] std::size_t size() const noexcept { return agents_.size(); }

 private:
  struct Agent {
    std::uint32_t id;
    std::int64_t x, y;
    std::int32_t vx, vy;
    std::uint8_t heading;
    std::uint8_t kind;
  };
  void spawn() {
    Agent a;
    next_id_ += 1 + static_cast<std::uint32_t>(rng_() % 3);
    a.id = next_id_;
    a.x = static_cast<std::int64_t>(rng_() % side_);
    a.y = static_cast<std::int64_t>(rng_() % side_);
    a.vx = static_cast<std::int32_t>(rng_() % 13) - 6;
    a.vy = static_cast<std::int32_t>(rng_() % 13) - 6;
    a.heading = static_cast<std::uint8_t>(rng_());
    a.kind = static_cast<std::uint8_t>(rng_() % 3);
    agents_.push_back(a);  // ids increase: the vector stays sorted
  }
  std::mt19937_64 rng_;
  std::int64_t side_;
  std::uint32_t next_id_ = 10;
  std::vector<Agent> agents_;
};

}  // namespace swarmfield::protocol::test
