#pragma once
// The game's rules on top of the simulation: what happens when agents die, players fall, waves
// come and barricades break -- score, extra spawns, the end of a match. The mechanics (damage,
// shots, barricades, the wave table) are the World's (server/sim/game); a GameRules sees each
// tick's events after the World's step and answers through a RulesContext. The server calls it
// once per tick (run_rules_after_step), never per agent, and so does the replay check, in the
// same order, so a recorded match with rules re-simulates bit for bit.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/sim/world.hpp"

namespace swarmfield::rules {

/// What the rules may do to the match. Spawns act on the World at once; the rest is kept for
/// the server (score for the summary and clients, log lines, the match's end).
class RulesContext {
 public:
  /// `dt`: the fixed tick, seconds (what a script's game.seconds() counts with).
  RulesContext(sim::World& world, float dt) : world_(world), dt_(dt) {}

  [[nodiscard]] const sim::World& world() const noexcept { return world_; }
  [[nodiscard]] float dt() const noexcept { return dt_; }
  /// Spawns up to `count` agents of the kind named `kind` (World::spawn_agents_of), in `zone`
  /// when given. Returns how many were spawned; 0 for an unknown kind name.
  std::size_t spawn(const std::string& kind, std::size_t count, const std::optional<sim::SpawnZone>& zone);
  /// Adds `points` (may be negative) to a player's score. Unknown ids are kept too (a player
  /// may have left).
  /// Scores saturate at +-kMaxScore (a script adding in a loop can not wrap them round).
  void add_score(std::uint32_t player_id, std::int64_t points);
  static constexpr std::int64_t kMaxScore = std::int64_t{1} << 53;
  [[nodiscard]] std::int64_t score(std::uint32_t player_id) const;
  [[nodiscard]] std::int64_t total_score() const;
  [[nodiscard]] const std::map<std::uint32_t, std::int64_t>& scores() const noexcept { return scores_; }
  /// Ends the match (the server drains and stops, naming `reason`); the first call wins.
  void end_match(std::string reason);
  [[nodiscard]] const std::optional<std::string>& match_over() const noexcept { return match_over_; }
  /// A line for the server's log (at most kMaxLogLines kept between two take_log() calls).
  void log(std::string line);
  [[nodiscard]] std::vector<std::string> take_log();
  static constexpr std::size_t kMaxLogLines = 64;

 private:
  sim::World& world_;
  float dt_ = 1.0f / 30.0f;
  std::map<std::uint32_t, std::int64_t> scores_;
  std::optional<std::string> match_over_;
  std::vector<std::string> log_;
  std::uint64_t log_dropped_ = 0;
};

/// A tick's events, after the World's step (views into the World and the caller's lists).
struct TickEvents {
  std::uint64_t tick = 0;          ///< World::tick() after the step
  bool first = false;              ///< the match's first tick (on_start)
  std::span<const sim::AgentDeath> agent_deaths;
  std::span<const sim::PlayerDeath> player_deaths;
  std::span<const std::uint32_t> players_joined;  ///< ids added since the last call
  std::span<const std::uint32_t> players_left;
  std::span<const sim::CellCoord> barricades_fallen;
  std::uint32_t waves_started = 0;  ///< comings of the wave table started during this tick (0, 1, ...)
};

/// The interface the tick calls. Every hook has a do-nothing default.
class GameRules {
 public:
  virtual ~GameRules() = default;
  /// Called once per tick with that tick's events; reacts through `ctx`.
  virtual void after_step(RulesContext& ctx, const TickEvents& events) = 0;
  /// "" while working; else why the rules stopped (a script over its budget, a runtime error).
  /// Stopped rules are not called again; the match goes on without them.
  [[nodiscard]] virtual std::string stopped() const { return {}; }
  /// A short name for logs ("default", "lua last_stand.lua").
  [[nodiscard]] virtual std::string name() const = 0;
};

/// The default horde rules' score: each kill scores its kind's points (runner 5, walker 10,
/// brute 50, any other kind 10) for the killer; a player's death costs 25.
class DefaultRules final : public GameRules {
 public:
  void after_step(RulesContext& ctx, const TickEvents& events) override;
  [[nodiscard]] std::string name() const override { return "default"; }
};

/// Keeps what run_rules_after_step needs between ticks (the players and wave count last seen).
struct RulesTracker {
  std::vector<std::uint32_t> players;  // ids at the last call, sorted
  std::uint32_t comings = 0;
  bool started = false;
  // Scratch of the call.
  std::vector<std::uint32_t> joined, left, now;
  std::vector<sim::CellCoord> fallen;
};

/// After a World step: gathers the tick's events (players joined and left since the last call,
/// barricades fallen among `changes` -- the World's barricade_changes() since the caller last
/// cleared them) and calls `rules` unless it stopped. The server and the replay check both call
/// this right after World::finish_tick, so the rules' spawns land in the same place in both.
void run_rules_after_step(GameRules& rules, RulesContext& ctx, RulesTracker& tracker,
                          std::span<const sim::BarricadeChange> changes);

}  // namespace swarmfield::rules
