#pragma once
// What the viewer draws for a moment and then forgets: agents that died (a mark where they
// fell) and shots (a tracer from the shooter along its aim). Built from the snapshots the
// client holds as the render time passes them (so marks appear when the interpolated picture
// reaches them, not a snapshot early), in ticks of the server: no clock, so it is testable.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "swarmfield/client/connection.hpp"

namespace swarmfield::client {

/// A death or shot to draw: where (world units), its age as a fraction of its life (0 new,
/// 1 gone), and for a shot its direction (radians) and the shooter.
struct CombatMark {
  float x = 0.0f;
  float y = 0.0f;
  float aim = 0.0f;            ///< shots: direction, radians (0 = +x, y grows downward)
  std::uint32_t tick = 0;      ///< server tick it happened by (the snapshot's)
  std::uint32_t player_id = 0; ///< shots: the shooter
  std::uint8_t kind = 0;       ///< deaths: the agent's kind
  float age = 0.0f;            ///< set by update(): (render tick - tick) / life, in [0, 1)
};

class CombatEffects {
 public:
  /// Deaths are drawn for `death_life_ticks`, shots for `shot_life_ticks` (both > 0).
  explicit CombatEffects(double death_life_ticks = 20.0, double shot_life_ticks = 5.0, std::size_t max_marks = 4096);

  /// Takes in the deaths and new shots of every snapshot in `history` (ordered by tick) whose
  /// tick is after the last one taken and at most `render_tick`, then forgets marks older than
  /// their life and sets the ages of the rest. A shot is a player whose `shots` count grew
  /// since the previous snapshot taken (one tracer however many shots the gap held). At most
  /// `max_marks` of each are held (the oldest go first). A history that jumps back (a new
  /// connection) starts over.
  void update(const std::deque<ReceivedSnapshot>& history, double render_tick);
  [[nodiscard]] const std::vector<CombatMark>& deaths() const noexcept { return deaths_; }
  [[nodiscard]] const std::vector<CombatMark>& shots() const noexcept { return shots_; }
  /// Deaths and shots taken in since construction.
  [[nodiscard]] std::uint64_t deaths_seen() const noexcept { return deaths_seen_; }
  [[nodiscard]] std::uint64_t shots_seen() const noexcept { return shots_seen_; }

 private:
  void take(const SnapshotState& snapshot);
  void age(std::vector<CombatMark>& marks, double render_tick, double life) const;

  double death_life_;
  double shot_life_;
  std::size_t max_marks_;
  std::uint32_t last_tick_ = 0;  ///< newest snapshot tick taken in (0: none)
  std::vector<protocol::PlayerState> last_players_;
  std::vector<CombatMark> deaths_, shots_;
  std::uint64_t deaths_seen_ = 0, shots_seen_ = 0;
};

}  // namespace swarmfield::client
