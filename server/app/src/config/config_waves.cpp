// The config's [[waves]] resolved against its kinds and zones (server_config.hpp).
#include <algorithm>
#include <cmath>

#include "swarmfield/server/config/server_config.hpp"

namespace swarmfield::server {

std::string resolve_waves(const ServerConfig& c, std::vector<sim::WaveSpec>& out) {
  std::vector<sim::WaveSpec> waves;
  for (std::size_t i = 0; i < c.waves.size(); ++i) {
    const WaveConfig& w = c.waves[i];
    const std::string at = "waves[" + std::to_string(i) + "]" + (w.name.empty() ? "" : " ('" + w.name + "')");
    sim::WaveSpec s;
    s.name = w.name;
    s.trigger = w.when_cleared ? sim::WaveTrigger::kWhenCleared : sim::WaveTrigger::kAtTime;
    for (const auto& group : w.kinds) {
      // Named, not a structured binding: clang 14 (the fuzz build) can not capture one in a lambda.
      const std::string& name = group.first;
      const std::int64_t count = group.second;
      const auto it = std::find_if(c.kinds.begin(), c.kinds.end(), [&](const sim::AgentKind& k) { return k.name == name; });
      if (it == c.kinds.end()) {
        std::string names;
        for (const sim::AgentKind& k : c.kinds) names += (names.empty() ? "" : ", ") + k.name;
        return at + ": kind '" + name + "' is not one of the kinds: " + names;
      }
      if (count < 0 || count > static_cast<std::int64_t>(sim::kMaxWaveCount))
        return at + ": " + name + " = " + std::to_string(count) + " must be in 0.." + std::to_string(sim::kMaxWaveCount);
      s.groups.push_back({static_cast<std::uint8_t>(it - c.kinds.begin()), static_cast<std::uint32_t>(count)});
    }
    std::optional<std::array<std::int64_t, 4>> zone = w.zone;
    if (!w.zone_name.empty()) {
      const auto z = c.zones.find(w.zone_name);
      if (z == c.zones.end()) return at + ": zone '" + w.zone_name + "' is not in the [zones] table";
      zone = z->second;
    }
    if (zone) {
      const auto& r = *zone;
      const bool ok = std::all_of(r.begin(), r.end(), [](std::int64_t v) { return v >= 0 && v < (std::int64_t{1} << 30); });
      if (!ok || r[0] > r[2] || r[1] > r[3]) {
        // Name the rectangle where it is written: a referenced zone is the [zones] table's entry.
        const std::string where = w.zone_name.empty() ? "zone" : "zone '" + w.zone_name + "' (zones." + w.zone_name + ")";
        return at + ": " + where + " = [" + std::to_string(r[0]) + ", " + std::to_string(r[1]) + ", " +
               std::to_string(r[2]) + ", " + std::to_string(r[3]) +
               "] must be [x0, y0, x1, y1] cells with 0 <= x0 <= x1 < 2^30 and 0 <= y0 <= y1 < 2^30";
      }
      s.zone = sim::SpawnZone{{static_cast<std::int32_t>(r[0]), static_cast<std::int32_t>(r[1])},
                              {static_cast<std::int32_t>(r[2]), static_cast<std::int32_t>(r[3])}};
    }
    if (w.repeat < 0 || w.repeat > static_cast<std::int64_t>(sim::kMaxWaveRepeat))
      return at + ": repeat " + std::to_string(w.repeat) + " must be in 0.." + std::to_string(sim::kMaxWaveRepeat);
    const auto seconds = [&](const char* key, double v, bool open) -> std::string {
      const auto f = static_cast<double>(static_cast<float>(v));
      if (std::isfinite(v) && (open ? f > 0.0 : f >= 0.0) && v <= sim::kMaxWaveSeconds) return {};
      return at + ": " + key + " must be in " + (open ? "(0, " : "0..") + "1e6" + (open ? "]" : "") + " seconds";
    };
    if (std::string e = seconds("start", w.start_s, false); !e.empty()) return e;
    if (std::string e = seconds("duration", w.duration_s, false); !e.empty()) return e;
    if (std::string e = seconds("every", w.every_s, w.repeat > 0); !e.empty()) return e + (w.repeat > 0 ? " when it repeats" : "");
    if (!(std::isfinite(w.growth) && w.growth > 0.0 && w.growth <= sim::kMaxWaveGrowth))
      return at + ": growth must be in (0, 100]";
    s.start_seconds = static_cast<float>(w.start_s);
    s.duration_seconds = static_cast<float>(w.duration_s);
    s.repeat = static_cast<std::uint32_t>(w.repeat);
    s.repeat_seconds = static_cast<float>(w.every_s);
    s.growth = static_cast<float>(w.growth);
    waves.push_back(std::move(s));
  }
  if (std::string e = sim::check_waves(waves, c.kinds.size()); !e.empty()) return e;
  out = std::move(waves);
  return {};
}

}  // namespace swarmfield::server
