#include "swarmfield/client/bot_brain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace swarmfield::client {

namespace {
std::string format_point(sim::Vec2 p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%.1f, %.1f)", static_cast<double>(p.x), static_cast<double>(p.y));
  return buf;
}
}  // namespace

const RenderAgent* nearest_agent(sim::Vec2 from, std::span<const RenderAgent> agents) noexcept {
  const RenderAgent* best = nullptr;
  float best_d2 = 0.0f;
  for (const RenderAgent& a : agents) {
    const float dx = a.x - from.x;
    const float dy = a.y - from.y;
    const float d2 = dx * dx + dy * dy;
    if (!best || d2 < best_d2 || (d2 == best_d2 && a.id < best->id)) {
      best = &a;
      best_d2 = d2;
    }
  }
  return best;
}

BotBrain::BotBrain(BotScript script, std::uint64_t seed) : script_(std::move(script)), rng_(seed) {}

std::vector<std::string> BotBrain::take_messages() {
  std::vector<std::string> out;
  out.swap(messages_);
  return out;
}

void BotBrain::note(const std::string& text) {
  // Bounded: a caller that never drains messages must not grow memory forever.
  if (messages_.size() < 256) messages_.push_back(text);
}

void BotBrain::next_command() noexcept {
  ++index_;
  started_ = false;
  elapsed_ = 0.0f;
}

void BotBrain::restart_script() noexcept {
  index_ = 0;
  started_ = false;
  elapsed_ = 0.0f;
}

void BotBrain::pull_trigger(const BotCommand& cmd) noexcept {
  trigger_ = true;
  trigger_timed_ = cmd.timed;
  trigger_left_ = cmd.seconds;
}

// Like a wait's clock: a `fire S` holds the trigger on the updates whose dt add up to S.
void BotBrain::count_down_trigger(float dt) noexcept {
  if (!trigger_ || !trigger_timed_) return;
  if (trigger_left_ <= 0.0f) {
    trigger_ = false;
    return;
  }
  trigger_left_ -= dt;
}

// A `build` takes no time: a cell inside the map is handed to the caller (act()), one outside it
// is skipped with a warning (once per line: a repeating script would warn every pass).
void BotBrain::run_build(const sim::GridMap& map, const BotCommand& cmd, sim::Vec2 position) {
  const sim::CellCoord own = map.world_to_cell(position);
  const std::int64_t x = static_cast<std::int64_t>(cmd.cell_x) + (cmd.relative_x ? own.x : 0);
  const std::int64_t y = static_cast<std::int64_t>(cmd.cell_y) + (cmd.relative_y ? own.y : 0);
  if (x >= 0 && y >= 0 && map.in_bounds(static_cast<std::int32_t>(x), static_cast<std::int32_t>(y))) {
    builds_.push_back(sim::CellCoord{static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)});
    ++builds_made_;
    return;
  }
  ++builds_skipped_;
  if (std::find(warned_lines_.begin(), warned_lines_.end(), cmd.line) != warned_lines_.end()) return;
  warned_lines_.push_back(cmd.line);
  note("line " + std::to_string(cmd.line) + ": build (" + std::to_string(x) + ", " + std::to_string(y) + ") is outside the " + std::to_string(map.width()) + "x" +
       std::to_string(map.height()) + " map, skipped");
}

void BotBrain::begin_command(const sim::GridMap& map, sim::Vec2 position) {
  const BotCommand& cmd = script_.commands[index_];
  started_ = true;
  elapsed_ = 0.0f;
  limit_ = cmd.seconds;
  if (cmd.kind == BotCommandKind::kGoto) {
    const sim::Vec2 target{cmd.x, cmd.y};
    const auto status = steering_.set_target(map, target);
    const std::string where = "line " + std::to_string(cmd.line) + ": goto " + format_point(target);
    // A skipped goto inside a `repeat` loop would warn every pass; once per line is enough.
    const bool warned = std::find(warned_lines_.begin(), warned_lines_.end(), cmd.line) != warned_lines_.end();
    if (status != BotSteering::TargetStatus::kOk) {
      if (!warned) warned_lines_.push_back(cmd.line);
      if (!warned) note(where + (status == BotSteering::TargetStatus::kOutsideMap ? " is outside the map" : " is inside a wall") +
           ", skipped");
      ++failed_;
      steering_.clear();
      limit_ = 0.0f;
      return;
    }
    if (!steering_.reachable_from(map, position)) {
      if (!warned) warned_lines_.push_back(cmd.line);
      if (!warned) note(where + " can not be reached from " + format_point(position) + ", skipped");
      ++failed_;
      steering_.clear();
      limit_ = 0.0f;
      return;
    }
    if (limit_ <= 0.0f) limit_ = default_goto_timeout(sim::length(target - position));
  } else if (cmd.kind == BotCommandKind::kWander) {
    wander_left_ = 0.0f;
  }
}

sim::Vec2 BotBrain::wander_direction(const sim::GridMap& map, sim::Vec2 position, float dt) {
  wander_left_ -= dt;
  const float look = 0.75f * map.cell_size();
  const bool ahead_blocked = !map.walkable_at(position + wander_dir_ * look);
  if (wander_left_ <= 0.0f || ahead_blocked || (wander_dir_.x == 0.0f && wander_dir_.y == 0.0f)) {
    std::uniform_real_distribution<float> angle(0.0f, 2.0f * std::numbers::pi_v<float>);
    std::uniform_real_distribution<float> hold(0.5f, 2.0f);
    // A few tries for a heading that is open; in a dead end take the last one anyway.
    for (int attempt = 0; attempt < 8; ++attempt) {
      const float a = angle(rng_);
      wander_dir_ = {std::cos(a), std::sin(a)};
      if (map.walkable_at(position + wander_dir_ * look)) break;
    }
    wander_left_ = hold(rng_);
  }
  return wander_dir_;
}

sim::Vec2 kite_direction(const sim::GridMap& map, sim::Vec2 from, std::span<const RenderAgent> agents) noexcept {
  sim::Vec2 away{};
  for (const RenderAgent& a : agents) {
    const sim::Vec2 d{from.x - a.x, from.y - a.y};
    const float d2 = sim::dot(d, d);
    if (!(d2 > 0.0f) || d2 > kKiteRadius * kKiteRadius) continue;
    away = away + d * (1.0f / (d2 * std::sqrt(d2)));  // unit direction / distance^2
  }
  if (away.x == 0.0f && away.y == 0.0f) return {};
  const sim::Vec2 want = sim::normalized_or_zero(away);
  const float cell = map.cell_size();
  sim::Vec2 best{};
  float best_score = -2.0f;
  constexpr int kDirections = 16;
  for (int i = 0; i < kDirections; ++i) {
    const float a = 2.0f * std::numbers::pi_v<float> * static_cast<float>(i) / kDirections;
    const sim::Vec2 dir{std::cos(a), std::sin(a)};
    if (!map.walkable_at(from + dir * (0.75f * cell)) || !map.walkable_at(from + dir * (1.5f * cell))) continue;
    const float score = sim::dot(dir, want);
    if (score > best_score) {
      best_score = score;
      best = dir;
    }
  }
  return best;
}

sim::Vec2 BotBrain::update(const sim::GridMap& map, std::optional<sim::Vec2> position, float dt) {
  kiting_ = false;
  builds_.clear();
  if (!position || script_.commands.empty()) return {};
  if (!(dt >= 0.0f) || dt > 10.0f) dt = 0.0f;  // NaN / absurd frame times advance nothing
  const sim::Vec2 move = run_commands(map, *position, dt);
  count_down_trigger(dt);
  return move;
}

BotAction BotBrain::act(const sim::GridMap& map, std::optional<sim::Vec2> position,
                        std::span<const RenderAgent> agents, float dt) {
  BotAction action;
  agents_ = agents;
  action.move = update(map, position, dt);
  agents_ = {};
  action.builds = builds_;
  if (!(trigger_ || kiting_) || !position) return action;
  if (const RenderAgent* target = nearest_agent(*position, agents)) {
    const sim::Vec2 aim{target->x - position->x, target->y - position->y};
    if (aim.x != 0.0f || aim.y != 0.0f) {
      action.fire = true;
      action.aim = aim;
    }
  }
  return action;
}

// The script from the current command until one takes time (its move is returned) or the
// script ends. Commands that take no time run on; a `repeat` reached by a pass that began in
// this update (so took no time) ends the update instead, as one tick of standing still: with
// at most two `repeat`s per update the loop always ends.
sim::Vec2 BotBrain::run_commands(const sim::GridMap& map, sim::Vec2 p, float dt) {
  bool pass_began_here = index_ == 0 && !started_;
  while (!ran_off_end()) {
    const BotCommand& cmd = script_.commands[index_];
    switch (cmd.kind) {
      case BotCommandKind::kRepeat: {
        const bool timeless_pass = pass_began_here;
        restart_script();
        if (timeless_pass) return {};
        pass_began_here = true;
        continue;
      }
      case BotCommandKind::kFire:
        pull_trigger(cmd);
        next_command();
        continue;
      case BotCommandKind::kCease:
        trigger_ = false;
        next_command();
        continue;
      case BotCommandKind::kBuild:
        run_build(map, cmd, p);
        next_command();
        continue;
      case BotCommandKind::kGoto:
      case BotCommandKind::kWait:
      case BotCommandKind::kWander:
      case BotCommandKind::kKite:
        break;
    }
    if (!started_) begin_command(map, p);
    switch (cmd.kind) {
      case BotCommandKind::kGoto: {
        if (!steering_.has_target()) {  // skipped in begin_command
          next_command();
          continue;
        }
        const sim::Vec2 target = steering_.target();
        const float dist = sim::length(target - p);
        if (dist <= kArriveRadius) {
          ++arrived_;
          steering_.clear();
          next_command();
          continue;
        }
        if (elapsed_ >= limit_) {
          char secs[32];
          std::snprintf(secs, sizeof secs, "%.1f", static_cast<double>(limit_));
          note("line " + std::to_string(cmd.line) + ": goto " + format_point(target) + " timed out after " + secs +
               " s at " + format_point(p) + ", moving on");
          ++failed_;
          steering_.clear();
          next_command();
          continue;
        }
        elapsed_ += dt;
        sim::Vec2 dir = steering_.direction(map, p);
        // Slow down inside the last unit so the server's step does not overshoot the target.
        const float speed = dist < 1.0f ? std::max(0.3f, dist) : 1.0f;
        return dir * speed;
      }
      case BotCommandKind::kWait: {
        if (elapsed_ >= limit_) {
          next_command();
          continue;
        }
        elapsed_ += dt;
        return {};
      }
      case BotCommandKind::kWander: {
        if (elapsed_ >= limit_) {
          next_command();
          continue;
        }
        elapsed_ += dt;
        return wander_direction(map, p, dt);
      }
      case BotCommandKind::kKite: {
        if (elapsed_ >= limit_) {
          next_command();
          continue;
        }
        elapsed_ += dt;
        kiting_ = true;
        return kite_direction(map, p, agents_);
      }
      case BotCommandKind::kRepeat:
      case BotCommandKind::kFire:
      case BotCommandKind::kCease:
      case BotCommandKind::kBuild:
        break;  // handled above
    }
  }
  return {};
}

}  // namespace swarmfield::client
