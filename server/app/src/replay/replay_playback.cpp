#include "swarmfield/server/replay/replay_playback.hpp"

#include <chrono>
#include <cinttypes>
#include <cstdio>

#include "swarmfield/server/config/config_toml.hpp"
#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/server/world_setup.hpp"

namespace swarmfield::server {
namespace {
std::string hex(std::uint64_t v) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%016" PRIx64, v);
  return buffer;
}
}  // namespace

std::string ReplayPlayback::apply_inputs(sim::World& world) {
  while (next_ < replay_.records.size()) {
    const auto* in = std::get_if<ReplayInputs>(&replay_.records[next_]);
    if (in == nullptr || in->tick != world.tick()) break;
    for (const ReplayEvent& e : in->events) {
      switch (e.kind) {
        case ReplayEvent::Kind::kAddPlayer: {
          const std::uint32_t id = world.add_player(e.value);
          if (id != e.player_id)
            return "tick " + std::to_string(world.tick()) + ": the World handed out player " + std::to_string(id) +
                   ", the recording says " + std::to_string(e.player_id);
          break;
        }
        case ReplayEvent::Kind::kRemovePlayer:
          if (!world.remove_player(e.player_id))
            return "tick " + std::to_string(world.tick()) + ": the recording removes player " +
                   std::to_string(e.player_id) + ", which the World does not have";
          break;
        case ReplayEvent::Kind::kIntent:
          (void)world.set_player_intent(e.player_id, e.value);  // refused values were refused live too
          break;
        case ReplayEvent::Kind::kFire:
        case ReplayEvent::Kind::kCeaseFire:
          // Only changes the World took were recorded: a refusal here means the re-simulation went astray.
          if (!world.set_player_fire(e.player_id, e.kind == ReplayEvent::Kind::kFire, e.value))
            return "tick " + std::to_string(world.tick()) + ": the World refused player " + std::to_string(e.player_id) +
                   "'s recorded trigger change";
          break;
        case ReplayEvent::Kind::kBuild: {
          const sim::CellCoord cell{static_cast<std::int32_t>(e.value.x), static_cast<std::int32_t>(e.value.y)};
          const sim::BuildResult built = world.build_barricade(e.player_id, cell);
          if (built != sim::BuildResult::kBuilt)
            return "tick " + std::to_string(world.tick()) + ": the World refused player " + std::to_string(e.player_id) +
                   "'s recorded barricade at cell " + std::to_string(cell.x) + "," + std::to_string(cell.y) + " (" +
                   std::string(sim::build_result_name(built)) + ")";
          break;
        }
      }
    }
    ++next_;
  }
  return {};
}

bool ReplayPlayback::at_end(const sim::World& world) const {
  if (next_ >= replay_.records.size()) return true;
  const auto* end = std::get_if<ReplayEnd>(&replay_.records[next_]);
  return end != nullptr && end->tick <= world.tick();
}

std::optional<std::uint64_t> ReplayPlayback::check_hash(const sim::World& world) {
  if (next_ >= replay_.records.size()) return std::nullopt;
  std::uint64_t tick = 0, hash = 0;
  bool is_end = false;
  if (const auto* h = std::get_if<ReplayHash>(&replay_.records[next_])) {
    tick = h->tick;
    hash = h->hash;
  } else if (const auto* e = std::get_if<ReplayEnd>(&replay_.records[next_])) {
    tick = e->tick;
    hash = e->hash;
    is_end = true;
  } else {
    return std::nullopt;
  }
  if (tick != world.tick()) return std::nullopt;
  if (is_end) {  // the end record stays (at_end() looks at it) and is compared once
    if (end_checked_) return std::nullopt;
    end_checked_ = true;
  } else {
    ++next_;
  }
  ++hashes_checked_;
  if (world.state_hash() != hash) return hash;
  last_match_ = tick;
  return std::nullopt;
}

std::uint64_t ReplayPlayback::end_tick() const {
  for (auto it = replay_.records.rbegin(); it != replay_.records.rend(); ++it)
    if (const auto* e = std::get_if<ReplayEnd>(&*it)) return e->tick;
  return 0;
}

ConfigParseResult parse_stored_config(const std::string& toml, const std::string& name) {
  ConfigParseResult stored = parse_config_toml(toml, name);
  if (stored.action != ConfigParseResult::Action::kRun) return stored;
  // config_to_toml writes every key: a stored config without `combat` predates the rules. (The
  // text parsed above, so it parses again.)
  toml::table table;
  if (parse_toml_text(toml, name, table).empty() && !table.contains("combat")) stored.config.combat = false;
  return stored;
}

ReplayCheck check_replay(const Replay& replay, std::uint32_t threads) {
  ReplayCheck result;
  const ConfigParseResult stored = parse_stored_config(replay.header.config_toml, "the replay's stored settings");
  if (stored.action != ConfigParseResult::Action::kRun) {
    result.message = stored.output;
    return result;
  }
  ServerConfig config = stored.config;
  config.threads = threads;
  const auto t0 = std::chrono::steady_clock::now();
  sim::World world(sim::GridMap::from_costs(replay.header.width, replay.header.height, replay.header.costs,
                                            replay.header.cell_size),
                   world_params(config));
  ReplayPlayback playback(replay);
  const float dt = replay.header.dt_s;
  // The rules as the server ran them (a stored script re-runs; one that failed then fails now).
  std::string rules_error;
  const std::unique_ptr<rules::GameRules> rules = make_rules(config, rules_error);
  rules::RulesContext rules_context(world, dt);
  rules::RulesTracker rules_tracker;
  const std::uint64_t last = playback.end_tick();
  for (;;) {
    if (std::string e = playback.apply_inputs(world); !e.empty()) {
      result.message = e;
      result.first_bad_tick = world.tick();
      break;
    }
    if (playback.at_end(world)) {
      if (const auto stored_hash = playback.check_hash(world)) {
        result.first_bad_tick = world.tick();
        result.message = "state differs at tick " + std::to_string(world.tick()) + " (the end): stored " +
                         hex(*stored_hash) + ", replayed " + hex(world.state_hash());
      } else {
        result.ok = true;
        result.message = "all " + std::to_string(playback.hashes_checked()) + " stored state hashes match";
      }
      break;
    }
    if (world.tick() > last) {  // cannot happen with a file read_replay() accepted
      result.message = "the recording's records are out of order at tick " + std::to_string(world.tick());
      break;
    }
    world.step(dt);
    rules::run_rules_after_step(*rules, rules_context, rules_tracker, world.barricade_changes());
    world.clear_barricade_changes();
    if (const auto stored_hash = playback.check_hash(world)) {
      result.first_bad_tick = world.tick();
      result.message = "state differs at tick " + std::to_string(world.tick()) + ": stored " + hex(*stored_hash) +
                       ", replayed " + hex(world.state_hash()) + " (last match at tick " +
                       std::to_string(playback.last_matching_tick()) + ")";
      break;
    }
  }
  result.ticks = world.tick();
  result.hashes_checked = playback.hashes_checked();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace swarmfield::server
