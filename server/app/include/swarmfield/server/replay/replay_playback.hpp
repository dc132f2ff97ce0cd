#pragma once
// Plays a Replay into a World tick by tick: applies the recorded inputs before each step and
// compares the recorded state hashes after it. Per tick: apply_inputs(), at_end()?, the World's
// step, check_hash() (which also moves past the hash record: skip it and later inputs are not
// reached). Used by `swarmfield-tool replay` (check) and by
// `swarmfield-server --replay` (serve a recording to viewers).
#include <cstdint>
#include <optional>
#include <string>

#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/server/replay/replay_file.hpp"
#include "swarmfield/sim/world.hpp"

namespace swarmfield::server {

class ReplayPlayback {
 public:
  /// `replay` must outlive the playback (read_replay() checked its structure).
  explicit ReplayPlayback(const Replay& replay) : replay_(replay) {}

  /// Before a step: applies the inputs recorded while World::tick() was world.tick(). Returns
  /// "" or an error (a recorded player id the World did not hand out, a player it does not
  /// know: the World is not the recording's).
  [[nodiscard]] std::string apply_inputs(sim::World& world);
  /// True once world.tick() is the recording's last tick (after apply_inputs()).
  [[nodiscard]] bool at_end(const sim::World& world) const;
  /// After a step (or at the end): compares a hash recorded for world.tick(). nullopt if none
  /// was recorded there or it matches; else the recorded hash.
  [[nodiscard]] std::optional<std::uint64_t> check_hash(const sim::World& world);
  [[nodiscard]] std::uint64_t end_tick() const;
  [[nodiscard]] std::uint64_t hashes_checked() const noexcept { return hashes_checked_; }
  [[nodiscard]] std::uint64_t last_matching_tick() const noexcept { return last_match_; }

 private:
  const Replay& replay_;
  std::size_t next_ = 0;  // next record
  std::uint64_t hashes_checked_ = 0;
  std::uint64_t last_match_ = 0;
  bool end_checked_ = false;
};

/// What re-simulating a recording found.
struct ReplayCheck {
  bool ok = false;
  std::string message;            ///< one line: the first problem, or a summary
  std::uint64_t ticks = 0;        ///< ticks simulated
  std::uint64_t hashes_checked = 0;
  std::uint64_t first_bad_tick = 0;  ///< the first tick whose stored hash differs (0 if none)
  double seconds = 0.0;              ///< wall time of the simulation
};

/// Builds the recording's World (its map and stored settings, with `threads` swarm threads)
/// and re-simulates it, checking every stored state hash; stops at the first difference.
/// The settings stored in a recording (ReplayHeader::config_toml), parsed like a config file
/// (`name` labels errors). A recording made before the horde rules existed has no `combat` key:
/// it ran without them, so it replays without them (a missing key would otherwise take today's
/// default, on, and the match would not re-simulate).
[[nodiscard]] ConfigParseResult parse_stored_config(const std::string& toml, const std::string& name);

[[nodiscard]] ReplayCheck check_replay(const Replay& replay, std::uint32_t threads);

}  // namespace swarmfield::server
