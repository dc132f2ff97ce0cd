#include "swarmfield/client/snapshot_interpolation.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace swarmfield::client {

namespace {

float lerp_angle(float a, float b, float t) noexcept {
  constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;
  float d = std::fmod(b - a, kTwoPi);
  if (d > std::numbers::pi_v<float>) d -= kTwoPi;
  if (d < -std::numbers::pi_v<float>) d += kTwoPi;
  return a + d * t;
}

void copy_density(const SnapshotState& snapshot, InterpolatedFrame& out) {
  out.density = snapshot.density;
  out.density_cell_size = snapshot.cell_size;
  out.wave = snapshot.wave;
}

RenderPlayer render_player(const protocol::PlayerState& p) {
  return RenderPlayer{p.id,    p.x,     p.y,     p.contacts, p.health, p.kills,
                      p.shots, p.score, protocol::dequantize_heading(p.aim)};
}

}  // namespace

void unpack_snapshot(const SnapshotState& snapshot, InterpolatedFrame& out) {
  out.tick = snapshot.tick;
  out.total_agents = snapshot.total_agents;
  out.agents = snapshot.agents;
  out.players.clear();
  for (const auto& p : snapshot.players) out.players.push_back(render_player(p));
  copy_density(snapshot, out);
}

void interpolate_snapshots(const SnapshotState& from, const SnapshotState& to, float alpha, InterpolatedFrame& out) {
  if (!(alpha >= 0.0f)) alpha = 0.0f;  // also catches NaN
  if (alpha > 1.0f) alpha = 1.0f;
  out.tick = static_cast<double>(from.tick) + (static_cast<double>(to.tick) - static_cast<double>(from.tick)) * alpha;
  out.total_agents = to.total_agents;
  out.agents.clear();
  // Merge of the two id-sorted lists.
  std::size_t ia = 0;
  for (const RenderAgent& b : to.agents) {
    while (ia < from.agents.size() && from.agents[ia].id < b.id) ++ia;
    if (ia < from.agents.size() && from.agents[ia].id == b.id) {
      const RenderAgent& a = from.agents[ia];
      out.agents.push_back(RenderAgent{b.id, a.x + (b.x - a.x) * alpha, a.y + (b.y - a.y) * alpha,
                                       lerp_angle(a.heading, b.heading, alpha), b.kind});
    } else {
      out.agents.push_back(b);
    }
  }
  copy_density(to, out);
  out.players.clear();
  for (const auto& pb : to.players) {
    RenderPlayer p = render_player(pb);
    for (const auto& pa : from.players) {
      if (pa.id == pb.id) {
        p.x = pa.x + (pb.x - pa.x) * alpha;
        p.y = pa.y + (pb.y - pa.y) * alpha;
        break;
      }
    }
    out.players.push_back(p);
  }
}

bool interpolate_history(const std::deque<ReceivedSnapshot>& history, double render_tick,
                         InterpolatedFrame& out) {
  if (history.empty()) return false;
  if (!(render_tick > static_cast<double>(history.front().snapshot.tick))) {
    unpack_snapshot(history.front().snapshot, out);
    return true;
  }
  if (render_tick >= static_cast<double>(history.back().snapshot.tick)) {
    unpack_snapshot(history.back().snapshot, out);
    return true;
  }
  for (std::size_t i = 0; i + 1 < history.size(); ++i) {
    const auto& a = history[i].snapshot;
    const auto& b = history[i + 1].snapshot;
    if (render_tick >= a.tick && render_tick < b.tick) {
      const double span = static_cast<double>(b.tick) - static_cast<double>(a.tick);
      const float alpha = span > 0.0 ? static_cast<float>((render_tick - a.tick) / span) : 1.0f;
      interpolate_snapshots(a, b, alpha, out);
      return true;
    }
  }
  unpack_snapshot(history.back().snapshot, out);
  return true;
}

namespace {
double seconds_of(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}
}  // namespace

void InterpolationClock::observe(std::uint32_t tick, std::chrono::steady_clock::time_point received_at) {
  const double offset = static_cast<double>(tick) - seconds_of(received_at) * tick_hz_;
  if (!valid_ || std::abs(offset - offset_ticks_) > tick_hz_) {
    offset_ticks_ = offset;
    valid_ = true;
    return;
  }
  offset_ticks_ += 0.1 * (offset - offset_ticks_);
}

double InterpolationClock::render_tick(std::chrono::steady_clock::time_point now, double delay_ticks) const {
  return seconds_of(now) * tick_hz_ + offset_ticks_ - delay_ticks;
}

}  // namespace swarmfield::client
