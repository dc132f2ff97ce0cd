#pragma once
// Game rules written in Lua 5.4 (the plain C API). A script defines any of these functions,
// which the server calls after the World's step, per event and per wave, never per agent:
//
//   on_start()                            the match's first tick
//   on_tick(tick)                         every tick (keep it cheap)
//   on_agent_killed(id, kind, killer, x, y)
//   on_player_died(id, x, y)
//   on_player_joined(id) / on_player_left(id)
//   on_wave(n)                            the n-th coming of the wave table started
//   on_barricade_fallen(x, y)             cells
//
// and calls the `game` table: game.tick(), game.seconds(), game.agent_count([kind]),
// game.players() (array of {id, x, y, health, alive, kills, deaths, score}),
// game.spawn(kind, count [, x0, y0, x1, y1]), game.add_score(id, points), game.score(id),
// game.end_match(reason), game.log(text), game.random(n) (1..n from the world's seed: math.random
// is removed).
//
// The sandbox: only the base library (without dofile, loadfile, load, require, collectgarbage's
// options beyond "count"), string, table, math (without random) and utf8: no io, os, package,
// debug, so no files, clocks or network, and a script replays bit for bit with the World. (The
// iteration order of pairs() over string keys is Lua's and varies between runs: scripts that
// act on it lose determinism; use ipairs or sort the keys.) Each tick's calls together may run
// `instruction_budget` VM instructions (lua_sethook count hook) and the state may hold
// `memory_budget` bytes (its allocator refuses more); past either the script is stopped with an
// error naming the hook and the tick, and the match goes on without it.
#include <cstdint>
#include <memory>
#include <string>

#include "swarmfield/rules/game_rules.hpp"

struct lua_State;

namespace swarmfield::rules {

struct LuaBudget {
  std::uint64_t instructions_per_tick = 1000000;
  std::size_t memory_bytes = std::size_t{64} << 20;
};

class LuaRules final : public GameRules {
 public:
  /// Loads `script` (its text; `chunk_name` names it in errors, e.g. the file's name) and runs
  /// its top level under the budget. `seed` seeds game.random. On failure error() says why (a
  /// syntax error with its line, a runtime error, the budget) and the rules are stopped.
  LuaRules(const std::string& script, const std::string& chunk_name, std::uint64_t seed, LuaBudget budget = {});
  ~LuaRules() override;
  LuaRules(const LuaRules&) = delete;
  LuaRules& operator=(const LuaRules&) = delete;

  void after_step(RulesContext& ctx, const TickEvents& events) override;
  [[nodiscard]] std::string stopped() const override { return error_; }
  [[nodiscard]] std::string name() const override { return "lua " + chunk_name_; }
  /// VM instructions the last tick's calls ran (counted in steps of the hook's interval).
  [[nodiscard]] std::uint64_t last_tick_instructions() const noexcept { return tick_instructions_; }

  // For the C callbacks (lua_rules.cpp): the state of the call in progress.
  struct Call;

 private:
  bool call(const char* function, int nargs, const char* what);
  void stop(std::string why);

  lua_State* L_ = nullptr;
  std::string chunk_name_;
  LuaBudget budget_;
  std::string error_;
  std::uint64_t tick_instructions_ = 0;
  std::uint64_t tick_ = 0;
  std::size_t memory_ = 0;
  bool over_memory_ = false;
  std::uint64_t random_state_ = 0;
  RulesContext* ctx_ = nullptr;  // during after_step
  friend struct LuaRulesAccess;
};

}  // namespace swarmfield::rules
