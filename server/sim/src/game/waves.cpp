// Waves as data: the table's check and the wave director (see waves.hpp).
#include "swarmfield/sim/game/waves.hpp"

#include "../number_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace swarmfield::sim {

namespace {

using sim_detail::number_text;

bool seconds_ok(float v) { return std::isfinite(v) && v >= 0.0f && v <= kMaxWaveSeconds; }

}  // namespace

std::string check_waves(const std::vector<WaveSpec>& waves, std::size_t kind_count) {
  if (waves.size() > kMaxWaves) {
    return std::to_string(waves.size()) + " waves: at most " + std::to_string(kMaxWaves);
  }
  for (std::size_t i = 0; i < waves.size(); ++i) {
    const WaveSpec& w = waves[i];
    const std::string at = "wave " + std::to_string(i + 1) + (w.name.empty() ? "" : " ('" + w.name + "')");
    if (w.groups.empty() || w.groups.size() > kMaxWaveGroups) {
      return at + " has " + std::to_string(w.groups.size()) + " kinds: give 1.." + std::to_string(kMaxWaveGroups);
    }
    for (const WaveGroup& g : w.groups) {
      if (g.kind >= kind_count) return at + " names kind " + std::to_string(g.kind) + ", but there are " + std::to_string(kind_count);
      if (g.count > kMaxWaveCount) return at + ": count " + std::to_string(g.count) + " must be in 0.." + std::to_string(kMaxWaveCount);
    }
    if (!seconds_ok(w.start_seconds)) return at + ": start " + number_text(w.start_seconds) + " must be in 0.." + number_text(kMaxWaveSeconds) + " seconds";
    if (!seconds_ok(w.duration_seconds)) {
      return at + ": duration " + number_text(w.duration_seconds) + " must be in 0.." + number_text(kMaxWaveSeconds) + " seconds";
    }
    if (w.repeat > kMaxWaveRepeat) return at + ": repeat " + std::to_string(w.repeat) + " must be in 0.." + std::to_string(kMaxWaveRepeat);
    if (!seconds_ok(w.repeat_seconds) || (w.repeat > 0 && !(w.repeat_seconds > 0.0f))) {
      return at + ": every " + number_text(w.repeat_seconds) + " must be in (0, " + number_text(kMaxWaveSeconds) + "] seconds when it repeats";
    }
    if (!(std::isfinite(w.growth) && w.growth > 0.0f && w.growth <= kMaxWaveGrowth)) {
      return at + ": growth " + number_text(w.growth) + " must be in (0, " + number_text(kMaxWaveGrowth) + "]";
    }
    if (w.zone && (w.zone->min.x > w.zone->max.x || w.zone->min.y > w.zone->max.y || w.zone->min.x < 0 || w.zone->min.y < 0)) {
      return at + ": zone [" + std::to_string(w.zone->min.x) + ", " + std::to_string(w.zone->min.y) + ", " +
             std::to_string(w.zone->max.x) + ", " + std::to_string(w.zone->max.y) +
             "] must be [x0, y0, x1, y1] cells with 0 <= x0 <= x1 and 0 <= y0 <= y1";
    }
  }
  return {};
}

WaveDirector::WaveDirector(std::vector<WaveSpec> waves, float dt)
    : waves_(std::move(waves)), state_(waves_.size()), dt_(dt > 0.0f && std::isfinite(dt) ? dt : 1.0f / 30.0f) {
  for (std::size_t w = 0; w < waves_.size(); ++w) {
    // Kinds are the World's to check (it knows its table): here the rest of the rules.
    std::vector<WaveSpec> one{waves_[w]};
    state_[w].valid = check_waves(one, kMaxWaveGroups * 256).empty();
    state_[w].done = !state_[w].valid;
  }
}

std::uint64_t WaveDirector::ticks_of(float seconds) const noexcept {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(seconds) / static_cast<double>(dt_)));
}

bool WaveDirector::coming_ordered(const State& s) const noexcept {
  for (std::size_t g = 0; g < s.total.size(); ++g) {
    if (s.ordered[g] < s.total[g]) return false;
  }
  return true;
}

void WaveDirector::start_coming(std::size_t w, std::uint64_t tick) {
  State& s = state_[w];
  const WaveSpec& spec = waves_[w];
  if (s.comings > 0) s.factor *= static_cast<double>(spec.growth);
  s.started = true;
  ++s.comings;
  s.number = ++comings_started_;
  s.start_tick = tick;
  s.ticks = std::max<std::uint64_t>(1, ticks_of(spec.duration_seconds));
  s.total.resize(spec.groups.size());
  s.ordered.assign(spec.groups.size(), 0);
  for (std::size_t g = 0; g < spec.groups.size(); ++g) {
    const double n = std::round(static_cast<double>(spec.groups[g].count) * s.factor);
    s.total[g] = static_cast<std::uint32_t>(std::clamp(n, 0.0, static_cast<double>(kMaxWaveCount)));
  }
}

void WaveDirector::update(std::uint64_t tick, std::size_t agents_alive, std::vector<SpawnOrder>& out) {
  bool earlier_done = true;  // every earlier wave has ordered all its comings
  for (std::size_t w = 0; w < waves_.size(); ++w) {
    State& s = state_[w];
    const WaveSpec& spec = waves_[w];
    if (!s.started && !s.done) {
      if (spec.trigger == WaveTrigger::kAtTime) {
        if (tick >= ticks_of(spec.start_seconds)) start_coming(w, tick);
      } else if (earlier_done && agents_alive == 0) {
        if (!s.cleared_waiting) {
          s.cleared_waiting = true;
          s.cleared_wait_from = tick;
        }
        if (tick >= s.cleared_wait_from + ticks_of(spec.start_seconds)) start_coming(w, tick);
      } else {
        s.cleared_waiting = false;  // the horde came back before the pause ended: wait for it again
      }
    }
    // A repeat whose time has come starts once the coming before it is fully ordered.
    while (s.started && !s.done && coming_ordered(s)) {
      if (s.comings > spec.repeat) {
        s.done = true;
        break;
      }
      const std::uint64_t next = s.start_tick + ticks_of(spec.repeat_seconds);
      if (tick < next) break;
      start_coming(w, next);
    }
    if (s.started && !s.done) {
      const std::uint64_t elapsed = std::min(tick - s.start_tick + 1, s.ticks);
      for (std::size_t g = 0; g < spec.groups.size(); ++g) {
        const auto want = static_cast<std::uint32_t>(static_cast<std::uint64_t>(s.total[g]) * elapsed / s.ticks);
        if (want > s.ordered[g]) {
          out.push_back({s.number, spec.groups[g].kind, want - s.ordered[g], spec.zone});
          s.ordered[g] = want;
        }
      }
      if (coming_ordered(s) && s.comings > spec.repeat) s.done = true;
    }
    earlier_done = earlier_done && s.done;
  }
}

bool WaveDirector::finished() const noexcept {
  return std::all_of(state_.begin(), state_.end(), [](const State& s) { return s.done; });
}

}  // namespace swarmfield::sim
