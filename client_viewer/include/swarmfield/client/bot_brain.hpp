#pragma once
// Runs a BotScript: turns the bot's position (from snapshots) and elapsed time into a move
// intent, while the script holds the trigger a shot at the nearest agent, and the cells its
// `build` lines ask for. Pure (no sockets, no clock): time comes in as dt, randomness from the
// seed.
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/client/bot_script.hpp"
#include "swarmfield/client/bot_steering.hpp"
#include "swarmfield/client/snapshot_state.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::client {

/// A goto counts as arrived within this distance of its target (world units).
inline constexpr float kArriveRadius = 0.5f;
/// `kite` backs away from the agents within this distance (world units).
inline constexpr float kKiteRadius = 10.0f;

/// Where `kite` goes from `from`: away from the agents of `agents` within kKiteRadius, each
/// weighted by 1 / distance^2 (the nearest push hardest), along the best of 16 directions whose
/// next 1.5 cells are walkable on `map` (the one closest to straight away). Unit length, or zero
/// when no agent is that near or every direction is walled.
[[nodiscard]] sim::Vec2 kite_direction(const sim::GridMap& map, sim::Vec2 from, std::span<const RenderAgent> agents) noexcept;

/// The agent nearest `from` (Euclidean, world units; equal distances: the lowest id), or nullptr
/// when `agents` is empty. Any order of `agents`.
[[nodiscard]] const RenderAgent* nearest_agent(sim::Vec2 from, std::span<const RenderAgent> agents) noexcept;

/// What a bot sends for one tick.
struct BotAction {
  sim::Vec2 move{};   ///< move intent, |move| <= 1
  bool fire = false;  ///< the trigger is held and there is an agent to aim at
  sim::Vec2 aim{};    ///< when fire: nearest agent - own position (world units, non-zero); else 0
  /// Cells (map cells, inside the map) whose `build` lines ran in this update, in script order:
  /// the caller asks the server for each (Connection::request_build). Usually none.
  std::vector<sim::CellCoord> builds;
};

class BotBrain {
 public:
  BotBrain(BotScript script, std::uint64_t seed);

  /// Advances the script by `dt` seconds. `position` is the bot's player position in world units
  /// (nullopt until the first snapshot shows it; the script does not start before that).
  /// Returns the move intent, |intent| <= 1.
  /// Commands that take no time (fire, cease, build, wait 0, a skipped goto, ...) run on in the
  /// same update; a pass through a repeating script that took no time at all ends the update as one
  /// tick of standing still, so a script such as `fire` + `repeat` can not spin.
  sim::Vec2 update(const sim::GridMap& map, std::optional<sim::Vec2> position, float dt);

  /// update(), then the gun: while the script holds the trigger (trigger_held()), fire at the
  /// agent of `agents` nearest `position` (nearest_agent), aim = its position - `position`;
  /// no fire without a position, with no agent, or with an agent exactly at `position`.
  /// `agents`: the latest snapshot's, world units (SnapshotState::agents). The `build` lines the
  /// update ran are in BotAction::builds.
  BotAction act(const sim::GridMap& map, std::optional<sim::Vec2> position, std::span<const RenderAgent> agents,
                float dt);

  /// The script holds the trigger for the tick of the last update(): a `fire` ran, no `cease`
  /// since, a `fire S` has S seconds left (they count down like a `wait S`; also after the
  /// script's end). False before the script starts.
  [[nodiscard]] bool trigger_held() const noexcept { return trigger_; }

  /// The script ran off its end and the trigger is released (never true for a script ending
  /// in `repeat`). A script that ends holding the trigger stands where it is and fires on (a
  /// last stand): an untimed `fire` until the bot's --seconds, a `fire S` until S runs out.
  [[nodiscard]] bool finished() const noexcept { return ran_off_end() && !trigger_; }
  /// The script ran off its end (the trigger may still be held, see finished()).
  [[nodiscard]] bool ran_off_end() const noexcept { return index_ >= script_.commands.size(); }
  /// Warnings and notes since the last call ("line 3: goto (10, 20) timed out after 25.0 s at
  /// (4.5, 7.0)", ...).
  [[nodiscard]] std::vector<std::string> take_messages();
  [[nodiscard]] std::size_t command_index() const noexcept { return index_; }
  [[nodiscard]] std::uint64_t gotos_arrived() const noexcept { return arrived_; }
  [[nodiscard]] std::uint64_t gotos_failed() const noexcept { return failed_; }
  /// `build` lines run with a cell inside the map (each one a BotAction::builds entry).
  [[nodiscard]] std::uint64_t builds() const noexcept { return builds_made_; }
  /// `build` lines skipped because their cell lies outside the map (warned once per line).
  [[nodiscard]] std::uint64_t builds_skipped() const noexcept { return builds_skipped_; }
  [[nodiscard]] const BotSteering& steering() const noexcept { return steering_; }

  /// Timeout used for `goto` without one: generous for walking `distance` world units around
  /// buildings at a few units per second.
  [[nodiscard]] static float default_goto_timeout(float distance) noexcept { return 15.0f + distance; }

 private:
  sim::Vec2 run_commands(const sim::GridMap& map, sim::Vec2 position, float dt);
  void begin_command(const sim::GridMap& map, sim::Vec2 position);
  void next_command() noexcept;
  void restart_script() noexcept;
  void pull_trigger(const BotCommand& cmd) noexcept;
  void count_down_trigger(float dt) noexcept;
  void note(const std::string& text);
  void run_build(const sim::GridMap& map, const BotCommand& cmd, sim::Vec2 position);
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
  std::vector<int> warned_lines_;  ///< script lines whose goto or build was skipped (warned once)
  std::vector<sim::CellCoord> builds_;  ///< cells of the `build` lines of the current update
  std::uint64_t builds_made_ = 0;
  std::uint64_t builds_skipped_ = 0;
  std::uint64_t arrived_ = 0;
  std::uint64_t failed_ = 0;
  bool trigger_ = false;        ///< the script holds the trigger
  bool kiting_ = false;         ///< the last update() ran a `kite` (it fires while it runs)
  std::span<const RenderAgent> agents_;  ///< act()'s agents for the update it runs (kite)
  bool trigger_timed_ = false;  ///< ... until trigger_left_ runs out (`fire S`)
  float trigger_left_ = 0.0f;   ///< seconds
};

}  // namespace swarmfield::client
