#pragma once
// Runs a BotScript: turns the bot's position (from snapshots) and elapsed time into a move
// intent. Pure (no sockets, no clock): time comes in as dt, randomness from the seed.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "swarmfield/client/bot_script.hpp"
#include "swarmfield/client/bot_steering.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::client {

/// A goto counts as arrived within this distance of its target (world units).
inline constexpr float kArriveRadius = 0.5f;

class BotBrain {
 public:
  BotBrain(BotScript script, std::uint64_t seed);

  /// Advances the script by `dt` seconds. `position` is the bot's player position in world units
  /// (nullopt until the first snapshot shows it; the script does not start before that).
  /// Returns the move intent, |intent| <= 1.
  sim::Vec2 update(const sim::GridMap& map, std::optional<sim::Vec2> position, float dt);

  /// The script ran off its end (never true for a script ending in `repeat`).
  [[nodiscard]] bool finished() const noexcept { return index_ >= script_.commands.size(); }
  /// Warnings and notes since the last call ("line 3: goto (10, 20) timed out after 25.0 s at
  /// (4.5, 7.0)", ...).
  [[nodiscard]] std::vector<std::string> take_messages();
  [[nodiscard]] std::size_t command_index() const noexcept { return index_; }
  [[nodiscard]] std::uint64_t gotos_arrived() const noexcept { return arrived_; }
  [[nodiscard]] std::uint64_t gotos_failed() const noexcept { return failed_; }
  [[nodiscard]] const BotSteering& steering() const noexcept { return steering_; }

  /// Timeout used for `goto` without one: generous for walking `distance` world units around
  /// buildings at a few units per second.
  [[nodiscard]] static float default_goto_timeout(float distance) noexcept { return 15.0f + distance; }

 private:
  void begin_command(const sim::GridMap& map, sim::Vec2 position);
  void next_command() noexcept;
  void note(const std::string& text);
  sim::Vec2 wander_direction(const sim::GridMap& map, sim::Vec2 position, float dt);

  BotScript script_;
  std::mt19937_64 rng_;
  BotSteering steering_;
  std::size_t index_ = 0;
  bool started_ = false;       ///< current command initialised
  float elapsed_ = 0.0f;       ///< seconds in the current command
  float limit_ = 0.0f;         ///< seconds allowed for the current command
  sim::Vec2 wander_dir_{};
  float wander_left_ = 0.0f;   ///< seconds until the wander picks a new heading
  std::vector<std::string> messages_;
  std::vector<int> warned_lines_;  ///< script lines whose goto was skipped (warned once)
  std::uint64_t arrived_ = 0;
  std::uint64_t failed_ = 0;
};

}  // namespace swarmfield::client
