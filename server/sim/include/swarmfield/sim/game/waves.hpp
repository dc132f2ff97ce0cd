#pragma once
// Waves as data: a table of waves (when, which kinds, how many, where, how fast) and the wave
// director that turns it into spawn orders tick by tick. Pure and deterministic: the director
// sees ticks and the number of agents alive, never a clock; the World places the agents it orders
// (World::spawn_agents_of, drawn from the world's seed).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"

namespace swarmfield::sim {

/// A rectangle of cells, both corners included (map cells).
struct SpawnZone {
  CellCoord min;
  CellCoord max;
  friend bool operator==(const SpawnZone&, const SpawnZone&) = default;
};

/// One kind and how many of it a wave brings.
struct WaveGroup {
  std::uint8_t kind = 0;     ///< index into the world's kinds
  std::uint32_t count = 0;   ///< agents of the first coming (repeats grow it, see growth)
  friend bool operator==(const WaveGroup&, const WaveGroup&) = default;
};

enum class WaveTrigger : std::uint8_t {
  kAtTime,       ///< start_seconds after the match began
  kWhenCleared,  ///< start_seconds after the previous waves have all spawned and no agent is left
};

/// One wave of the table. Times in seconds; counted in ticks by the director (rounded to the
/// nearest tick).
struct WaveSpec {
  std::string name;  ///< for logs and clients ("wave 3"), may be empty
  WaveTrigger trigger = WaveTrigger::kAtTime;
  float start_seconds = 0.0f;  ///< >= 0: see trigger
  std::vector<WaveGroup> groups;  ///< 1..kMaxWaveGroups
  /// Where its agents appear: a rectangle (clamped to the map), or anywhere the spawner would put
  /// them (the players' distance rule, reachability; see World::spawn_agents).
  std::optional<SpawnZone> zone;
  /// Pacing: the agents come evenly over this many seconds (0 = all in the first tick).
  float duration_seconds = 0.0f;
  /// It comes back `repeat` more times, every `repeat_seconds` after its previous start, each
  /// time with its counts multiplied by `growth` once more (rounded to the nearest agent).
  std::uint32_t repeat = 0;
  float repeat_seconds = 0.0f;
  float growth = 1.0f;
  friend bool operator==(const WaveSpec&, const WaveSpec&) = default;
};

inline constexpr std::size_t kMaxWaves = 256;
inline constexpr std::size_t kMaxWaveGroups = 16;
inline constexpr std::uint32_t kMaxWaveCount = 1000000;  ///< agents of one group in one coming
inline constexpr std::uint32_t kMaxWaveRepeat = 10000;
inline constexpr float kMaxWaveSeconds = 1.0e6f;
inline constexpr float kMaxWaveGrowth = 100.0f;

/// "" when the table is usable with `kind_count` kinds, else one sentence naming the wave (by
/// its 1-based number) and the field: at most kMaxWaves waves of 1..kMaxWaveGroups groups, each
/// kind < kind_count, counts <= kMaxWaveCount, times in 0..kMaxWaveSeconds, repeat_seconds > 0
/// with a repeat, growth in (0, kMaxWaveGrowth], a zone with min <= max.
[[nodiscard]] std::string check_waves(const std::vector<WaveSpec>& waves, std::size_t kind_count);

/// Agents the director asks for this tick: `count` of `kind` for the wave numbered `coming`
/// (1-based, counting repeats: the n-th wave the match has seen).
struct SpawnOrder {
  std::uint32_t coming = 0;
  std::uint8_t kind = 0;
  std::uint32_t count = 0;
  std::optional<SpawnZone> zone;
  friend bool operator==(const SpawnOrder&, const SpawnOrder&) = default;
};

/// Turns a wave table into spawn orders. Each wave (and each repeat of it) is a coming with a
/// start tick; from its start it orders its agents evenly over its duration (cumulative: after
/// k of d ticks, round_down(total x (k + 1) / d) of each group), groups in table order. A
/// kAtTime wave starts at its time; a kWhenCleared wave starts start_seconds after the first
/// tick at which every earlier wave's comings have all been ordered (repeats included) and no
/// agent is alive. Cost O(waves) per update.
class WaveDirector {
 public:
  WaveDirector() = default;
  /// `waves` should pass check_waves (a wave that does not is skipped whole); `dt` is the tick in
  /// seconds (> 0, else 1/30).
  WaveDirector(std::vector<WaveSpec> waves, float dt);

  /// The orders for the tick numbered `tick` (0-based; call once per tick with increasing
  /// ticks), given the agents alive before it. Appends to `out` (not cleared).
  void update(std::uint64_t tick, std::size_t agents_alive, std::vector<SpawnOrder>& out);

  /// Comings started so far (the wave number a HUD shows), 0 before the first.
  [[nodiscard]] std::uint32_t comings_started() const noexcept { return comings_started_; }
  /// True once every wave of the table has ordered all its agents, repeats included.
  [[nodiscard]] bool finished() const noexcept;
  [[nodiscard]] const std::vector<WaveSpec>& waves() const noexcept { return waves_; }

 private:
  struct State {
    bool valid = true;
    bool started = false;          // its first coming has started
    std::uint32_t comings = 0;     // comings started (first + repeats)
    std::uint32_t number = 0;      // the current coming's number (SpawnOrder::coming)
    double factor = 1.0;           // growth^(comings - 1), by repeated multiplication
    std::uint64_t start_tick = 0;  // of the current coming
    std::uint64_t ticks = 1;       // the duration in ticks (>= 1)
    std::vector<std::uint32_t> total;    // per group, this coming
    std::vector<std::uint32_t> ordered;  // per group, this coming
    bool done = false;             // every coming fully ordered
    std::uint64_t cleared_wait_from = 0;
    bool cleared_waiting = false;
  };
  [[nodiscard]] std::uint64_t ticks_of(float seconds) const noexcept;
  void start_coming(std::size_t w, std::uint64_t tick);
  [[nodiscard]] bool coming_ordered(const State& s) const noexcept;

  std::vector<WaveSpec> waves_;
  std::vector<State> state_;
  float dt_ = 1.0f / 30.0f;
  std::uint32_t comings_started_ = 0;
};

}  // namespace swarmfield::sim
