// The game's rules over a World: the default score, Lua scripts reacting to events and acting
// through `game`, the sandbox (no files, clocks or loading), the instruction and memory budgets
// (the script stops, the match goes on), determinism, and the shipped last-stand script.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "swarmfield/rules/game_rules.hpp"
#include "swarmfield/rules/lua_rules.hpp"
#include "swarmfield/sim/map/city_generator.hpp"

using namespace swarmfield;

namespace {

constexpr float kDt = 1.0f / 30.0f;

sim::GridMap open_room(std::int32_t side) {
  std::vector<std::uint8_t> costs(static_cast<std::size_t>(side) * side, 1);
  for (std::int32_t i = 0; i < side; ++i) {
    costs[static_cast<std::size_t>(i)] = costs[static_cast<std::size_t>(side) * (side - 1) + i] = sim::kBlockedCost;
    costs[static_cast<std::size_t>(i) * side] = costs[static_cast<std::size_t>(i) * side + side - 1] = sim::kBlockedCost;
  }
  return sim::GridMap::from_costs(side, side, std::move(costs));
}

sim::WorldParams combat_world() {
  sim::WorldParams p;
  p.combat.enabled = true;
  p.max_agents = 5000;
  p.kinds = sim::default_agent_kinds();
  p.spawner.min_player_distance = 6.0f;
  return p;
}

// A World, its rules and the per-tick call, as the server runs them.
struct Match {
  sim::World world;
  std::unique_ptr<rules::GameRules> rules;
  rules::RulesContext ctx;
  rules::RulesTracker tracker;
  Match(sim::GridMap map, const sim::WorldParams& p, std::unique_ptr<rules::GameRules> r)
      : world(std::move(map), p), rules(std::move(r)), ctx(world, kDt) {}
  void step() {
    world.step(kDt);
    rules::run_rules_after_step(*rules, ctx, tracker, world.barricade_changes());
    world.clear_barricade_changes();
  }
};

std::unique_ptr<rules::LuaRules> lua(const std::string& script, rules::LuaBudget budget = {}) {
  return std::make_unique<rules::LuaRules>(script, "test.lua", 7, budget);
}

}  // namespace

TEST_CASE("rules: the default rules score kills by kind for the killer and take 25 for a death") {
  sim::WorldParams p = combat_world();
  p.combat.player_health = 1.0f;
  p.combat.respawn_seconds = 100.0f;
  Match m(open_room(32), p, std::make_unique<rules::DefaultRules>());
  const std::uint32_t pid = m.world.add_player({16.5f, 16.5f});
  m.world.swarm_mutable().add({19.5f, 16.5f}, 0.0f, 0);  // a runner in the line of fire
  REQUIRE(m.world.set_player_fire(pid, true, {1.0f, 0.0f}));
  for (int t = 0; t < 10; ++t) m.step();
  CHECK(m.world.kills() == 1);
  CHECK(m.ctx.score(pid) == 5);
  m.world.swarm_mutable().add({16.5f, 17.2f}, 0.0f, 2);  // a brute that bites
  for (int t = 0; t < 30 && m.world.player_death_count() == 0; ++t) m.step();
  REQUIRE(m.world.player_death_count() == 1);
  CHECK(m.ctx.score(pid) == 5 - 25);
  CHECK(m.ctx.total_score() == -20);
  // Scores saturate instead of wrapping round.
  for (int i = 0; i < 1000; ++i) m.ctx.add_score(pid, std::int64_t{1} << 60);
  CHECK(m.ctx.score(pid) == rules::RulesContext::kMaxScore);
}

TEST_CASE("rules: a Lua script sees the events and acts through game (score, spawns, log, the match's end)") {
  const std::string script = R"(
    started, joined, ticks, waves = 0, 0, 0, 0
    function on_start() started = started + 1; game.log("start", 1, true) end
    function on_player_joined(id) joined = id end
    function on_wave(n) waves = n end
    function on_agent_killed(id, kind, killer, x, y)
      game.add_score(killer, kind == "runner" and 7 or 1)
      if game.agent_count() == 0 then game.log("spawned", game.spawn("walker", 3, 1, 1, 4, 4)) end
    end
    function on_tick(t)
      ticks = ticks + 1
      if t == 20 then
        local ps = game.players()
        game.log("players", #ps, ps[1].id, ps[1].alive, ps[1].kills, game.score(ps[1].id), joined, waves)
      end
      if t == 40 then game.end_match("done at " .. t) end
    end
  )";
  sim::WorldParams p = combat_world();
  sim::WaveSpec w;
  w.groups = {{1, 1}};
  w.start_seconds = 0.1f;
  w.zone = sim::SpawnZone{{28, 28}, {30, 30}};
  p.waves = {w};
  Match m(open_room(32), p, lua(script));
  REQUIRE(m.rules->stopped().empty());
  const std::uint32_t pid = m.world.add_player({16.5f, 16.5f});
  m.world.swarm_mutable().add({19.5f, 16.5f}, 0.0f, 0);
  REQUIRE(m.world.set_player_fire(pid, true, {1.0f, 0.0f}));
  std::vector<std::string> log;
  for (int t = 0; t < 41; ++t) {
    if (t == 10) REQUIRE(m.world.set_player_fire(pid, false, {}));
    m.step();
    for (std::string& line : m.ctx.take_log()) log.push_back(std::move(line));
  }
  INFO(m.rules->stopped());
  CHECK(m.rules->stopped().empty());
  REQUIRE(log.size() == 3);
  CHECK(log[0] == "start 1 true");
  // The runner died with the horde empty (the wave comes at 0.1 s): 3 walkers spawned.
  CHECK(log[1] == "spawned 3");
  CHECK(log[2] == "players 1 1 true 1 7 1 1");
  CHECK(m.ctx.score(pid) == 7);
  CHECK(m.world.swarm().kind_count(1) == 3 + 1);  // and the wave's walker
  REQUIRE(m.ctx.match_over().has_value());
  CHECK(*m.ctx.match_over() == "done at 40");
}

TEST_CASE("rules: a script over its instruction budget is stopped with a clear error; the match goes on") {
  for (const char* body : {"while true do end", "while true do pcall(function() while true do end end) end",
                           "local s = 0; for i = 1, 1e12 do s = s + i end"}) {
    const std::string script = std::string("calls = 0\nfunction on_tick(t)\n calls = calls + 1\n if t == 5 then ") + body +
                               " end\nend\n";
    rules::LuaBudget budget;
    budget.instructions_per_tick = 100000;
    Match m(open_room(24), combat_world(), lua(script, budget));
    (void)m.world.add_player({12.5f, 12.5f});
    for (int t = 0; t < 20; ++t) m.step();
    const std::string err = m.rules->stopped();
    INFO(body);
    CHECK(err.find("over its instruction budget (100000 a tick)") != std::string::npos);
    CHECK(err.find("on_tick") != std::string::npos);
    CHECK(err.find("tick 5") != std::string::npos);
    CHECK(m.world.tick() == 20);  // the match went on
  }
  // A budget that is enough is not hit.
  Match ok(open_room(24), combat_world(), lua("function on_tick(t) local s = 0 for i = 1, 1000 do s = s + i end end"));
  for (int t = 0; t < 20; ++t) ok.step();
  CHECK(ok.rules->stopped().empty());
  CHECK(dynamic_cast<rules::LuaRules&>(*ok.rules).last_tick_instructions() < 100000);
}

TEST_CASE("rules: the sandbox has no files, clocks, loading or math.random; memory is bounded; errors name the line") {
  const auto stopped_with = [](const std::string& script, rules::LuaBudget budget = {}) {
    Match m(open_room(16), combat_world(), lua(script, budget));
    for (int t = 0; t < 3; ++t) m.step();
    return m.rules->stopped();
  };
  CHECK(stopped_with("function on_tick() os.time() end").find("global 'os'") != std::string::npos);
  CHECK(stopped_with("function on_tick() io.open('/etc/passwd') end").find("global 'io'") != std::string::npos);
  CHECK(stopped_with("function on_tick() require('x') end").find("global 'require'") != std::string::npos);
  CHECK(stopped_with("function on_tick() dofile('/etc/passwd') end").find("global 'dofile'") != std::string::npos);
  CHECK(stopped_with("function on_tick() load('return 1')() end").find("global 'load'") != std::string::npos);
  CHECK(stopped_with("function on_tick() math.random(3) end").find("random") != std::string::npos);
  CHECK(stopped_with("function on_tick() game.log(string.dump(on_tick)) end").find("dump") != std::string::npos);
  CHECK(stopped_with("function on_tick() return debug.getinfo(1) end").find("global 'debug'") != std::string::npos);
  CHECK(stopped_with("function on_tick() game.spawn('dragon', 3) end").find("no kind named 'dragon'") != std::string::npos);
  CHECK(stopped_with("function on_tick() game.spawn('walker', -1) end").find("count must be in") != std::string::npos);
  const std::string syntax = stopped_with("x = = 1\n");
  CHECK(syntax.find("test.lua:1:") != std::string::npos);
  CHECK(stopped_with(std::string("\x1bLua", 4)).find("attempt to load a binary chunk") != std::string::npos);
  rules::LuaBudget small;
  small.memory_bytes = std::size_t{4} << 20;
  const std::string memory = stopped_with("t = {} function on_tick() for i = 1, 1e9 do t[i] = string.rep('x', 1000) .. i end end", small);
  CHECK(memory.find("memory") != std::string::npos);
  // Finalizers run with hooks off (a loop in one could never be stopped): refused.
  CHECK(stopped_with("function on_tick() setmetatable({}, {__gc = function() while true do end end}) end")
            .find("__gc finalizers are not allowed") != std::string::npos);
  CHECK(stopped_with("function on_tick() setmetatable({}, {__index = {}}) end").empty());
  // String work done in C, out of the count hook's reach, is capped.
  CHECK(stopped_with("function on_tick() local s = string.rep('x', 2^24) end").find("over 1 MiB") != std::string::npos);
  CHECK(stopped_with("function on_tick() local s = string.rep('a', 3000) s:find('.-.-.-.-c') end")
            .find("at most 3 repetition items") != std::string::npos);
  CHECK(stopped_with("function on_tick() local s = string.rep('a', 5000) s:find('a') end").find("limited to 4 KiB") !=
        std::string::npos);
  CHECK(stopped_with("function on_tick() local s = ('a'):rep(100) assert(s:find('a+') == 1) end").empty());
  // Saved with a UTF-8 byte order mark (Windows Notepad): loads, as Lua's own loadfile takes it
  // (it was "unexpected symbol near '<\239>'").
  CHECK(stopped_with("\xEF\xBB\xBF" "function on_tick() end").empty());
  // A metatable on _G whose __index raises: the hooks are looked up raw (this aborted the server).
  CHECK(stopped_with("setmetatable(_G, {__index = function(t, k) error('x') end})\nfunction on_tick() end").empty());
  // A huge error text is cut.
  CHECK(stopped_with("function on_tick() error(string.rep('E', 100000)) end").size() < 600);
  // game.* outside the on_* functions (the script's top level runs before the match).
  CHECK(stopped_with("game.spawn('walker', 1)").find("only works inside the on_* functions") != std::string::npos);
}

TEST_CASE("rules: game.add_score takes the ids of players, now or gone, not made-up ones") {
  // Every id was a new entry of the score table, outside the state's memory budget: a loop over
  // made-up ids grew the server by ~190 MB a second.
  Match m(open_room(16), combat_world(), lua(R"(
    n = 0
    function on_tick(t)
      if t == 2 then for _, p in ipairs(game.players()) do game.add_score(p.id, 5) end end
      if t == 3 then game.add_score(1, 1) end  -- player 1 left at tick 2: its score stays its own
      if t == 4 then for i = 1, 100 do n = n + 1; game.add_score(1000 + n, 1) end end
    end)"));
  const std::uint32_t first = m.world.add_player({5.5f, 5.5f});
  (void)m.world.add_player({10.5f, 10.5f});
  REQUIRE(first == 1);
  for (int t = 0; t < 2; ++t) m.step();
  REQUIRE(m.world.remove_player(first));
  for (int t = 2; t < 6; ++t) m.step();
  CHECK(m.ctx.score(1) == 6);
  CHECK(m.ctx.score(2) == 5);
  CHECK(m.ctx.scores().size() == 2);
  const std::string err = m.rules->stopped();
  INFO(err);
  CHECK(err.find("at tick 4") != std::string::npos);
  CHECK(err.find("no player has this id") != std::string::npos);
}

TEST_CASE("rules: once over its memory budget a script can not go on allocating in a pcall loop") {
  // Each refused allocation made Lua collect the whole state and retry before raising "not enough
  // memory", which pcall caught: 300 of them in a loop held a tick 5 s with the default 64 MiB
  // (the instruction budget allowed ~50,000). Now the first refusal makes every instruction fail.
  rules::LuaBudget small;
  small.memory_bytes = std::size_t{4} << 20;
  Match m(open_room(16), combat_world(), lua(R"(
    keep, n = {}, 0
    function on_tick(t)
      local ok = pcall(function() for i = 1, 50000 do n = n + 1; keep[n] = {n} end end)
      if ok then return end
      local fails = 0
      for i = 1, 300 do
        if not pcall(function() local x = {} for j = 1, 100 do x[j] = {j} end end) then fails = fails + 1 end
      end
      game.log("went on after the memory ran out", fails)
    end)", small));
  std::vector<std::string> log;
  for (int t = 0; t < 10 && m.rules->stopped().empty(); ++t) {
    m.step();
    for (std::string& line : m.ctx.take_log()) log.push_back(std::move(line));
  }
  const std::string err = m.rules->stopped();
  INFO(err);
  CHECK(err.find("over its memory budget (4194304 bytes)") != std::string::npos);
  CHECK(log.empty());
  // The state still closes cleanly, and the match goes on.
  m.step();
}

TEST_CASE("rules: work a sandbox function loops over in C is charged to the instruction budget") {
  // Each ran in C, where the count hook never fires: the tick thread stayed in it (with 1e12 in
  // place of 1e8, or a longer loop, for good: no tick, no SIGTERM). Each is now stopped with the
  // budget's error, naming the function, before the work starts.
  const std::pair<const char*, const char*> cases[] = {
      {"local s = string.rep('a', 500) for i = 1, 10 do s:find('.-b') end", "string.find"},  // each call in budget
      {"local s = string.rep('a', 200) s:find('.-.-.-b')", "string.find"},
      {"for w in string.gmatch(string.rep('a', 4000), '%b()') do end", "string.gmatch"},
      {"table.move({}, 1, 1e8, 1, {})", "table.move"},
      {"table.insert(setmetatable({}, {__len = function() return 1e8 end}), 1, 5)", "table.insert"},
      {"table.remove(setmetatable({}, {__len = function() return 1e8 end}), 1)", "table.remove"},
      // A C function as __index answers every index without a VM instruction: table.concat,
      // table.unpack and table.sort walked a range or length of the script's choosing in C (the
      // first and the last for good; a loop of 1e6-value unpacks for hours).
      {"table.concat(setmetatable({}, {__index = getmetatable, __metatable = ''}), '', 1, math.maxinteger)",
       "table.concat"},
      {"table.concat(setmetatable({}, {__index = getmetatable, __metatable = ''}), '', math.mininteger, "
       "math.maxinteger)",
       "table.concat"},
      {"local t = setmetatable({}, {__index = getmetatable, __metatable = ''}) for i = 1, 100 do "
       "local n = select('#', table.unpack(t, 1, 900000)) end",
       "table.unpack"},
      {"table.sort(setmetatable({}, {__index = getmetatable, __newindex = rawequal, __metatable = '', "
       "__len = function() return 2^31 - 2 end}))",
       "table.sort"},
  };
  for (const auto& [body, what] : cases) {
    const std::string script = std::string("function on_tick(t)\n if t == 2 then ") + body + " end\nend\n";
    Match m(open_room(16), combat_world(), lua(script));
    for (int t = 0; t < 4; ++t) m.step();
    const std::string err = m.rules->stopped();
    INFO(body);
    INFO(err);
    CHECK(err.find(std::string(what) + ": over its instruction budget (1000000 a tick") != std::string::npos);
    CHECK(err.find("test.lua:2:") != std::string::npos);  // the script's line, not the sandbox's
    CHECK(m.world.tick() == 4);  // the match went on
  }
  // What a rules script does with them stays well within the budget.
  Match ok(open_room(16), combat_world(), lua(R"(
    function on_tick(t)
      local name, count = ("runner:12"):match("^(%a+):(%d+)$")
      assert(name == "runner" and count == "12")
      assert(("a,b,c"):gsub(",", ";") == "a;b;c")
      assert(("hello world"):find("wor", 1, true) == 7)
      local list = {}
      for i = 1, 200 do table.insert(list, i) end
      table.insert(list, 1, 0)
      assert(table.remove(list, 1) == 0 and table.remove(list) == 200)
      local copy = table.move(list, 1, #list, 1, {})
      assert(#copy == 199)
      assert(#table.concat(list, ",") > 0 and select("#", table.unpack(list)) == 199)
      table.sort(copy, function(a, b) return a > b end)
      assert(copy[1] == 199)
      assert(string.rep("ab", 3, "-") == "ab-ab-ab")
      -- Empty pieces: the empty string at once (string.rep copied nothing 1e17 times, for good).
      assert(string.rep("", 1e17) == "" and string.rep("", 1e17, "") == "")
    end)"));
  for (int t = 0; t < 5; ++t) ok.step();
  CHECK(ok.rules->stopped() == "");
}

TEST_CASE("rules: a match with Lua rules spawning by game.random replays bit for bit, with any thread count") {
  const std::string script = R"(
    function on_tick(t)
      if t % 15 == 0 then
        local x = game.random(50)
        game.spawn("walker", game.random(4), x, 1, x + 5, 10)
      end
    end
    function on_agent_killed(id, kind, killer) game.add_score(killer, 1) end
  )";
  const sim::GridMap city = sim::generate_city({64, 64, 4});
  std::vector<std::vector<std::uint64_t>> hashes;
  std::vector<std::int64_t> scores;
  for (std::uint32_t threads : {1u, 2u, 3u}) {
    sim::WorldParams p = combat_world();
    p.worker_threads = threads;
    Match m(city, p, lua(script));
    const std::uint32_t pid = m.world.add_player({32.0f, 32.0f});
    hashes.emplace_back();
    for (int t = 0; t < 300; ++t) {
      const float a = static_cast<float>(t) * 0.1f;
      REQUIRE(m.world.set_player_fire(pid, true, {std::cos(a), std::sin(a)}));
      m.step();
      hashes.back().push_back(m.world.state_hash());
    }
    CHECK(m.rules->stopped().empty());
    CHECK(m.world.swarm().size() + m.world.kills() > 20);
    scores.push_back(m.ctx.total_score());
  }
  CHECK(hashes[0] == hashes[1]);
  CHECK(hashes[0] == hashes[2]);
  CHECK(scores[0] == scores[1]);
  MESSAGE("score " << scores[0]);
}

TEST_CASE("rules: the shipped last_stand.lua brings escalating waves, scores kills and ends when every player is down") {
  std::ifstream in(std::string(SWARMFIELD_RULES_SCRIPTS) + "/last_stand.lua");
  const std::string script((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!script.empty());
  sim::WorldParams p = combat_world();
  p.combat.player_health = 200.0f;
  p.combat.respawn_seconds = 60.0f;
  Match m(sim::generate_city({64, 64, 2}), p, std::make_unique<rules::LuaRules>(script, "last_stand.lua", 3));
  REQUIRE_MESSAGE(m.rules->stopped().empty(), m.rules->stopped());
  const std::uint32_t pid = m.world.add_player({32.0f, 32.0f});
  std::vector<std::string> log;
  std::size_t after_first = 0, after_second = 0;
  int t = 0;
  for (; t < 30 * 120 && !m.ctx.match_over(); ++t) {
    const float a = static_cast<float>(t) * 0.2f;
    REQUIRE(m.world.set_player_fire(pid, true, {std::cos(a), std::sin(a)}));
    m.step();
    for (std::string& line : m.ctx.take_log()) log.push_back(std::move(line));
    if (t == 30 * 5 + 1) after_first = m.world.swarm().size() + m.world.kills();
    if (t == 30 * 25 + 1) after_second = m.world.swarm().size() + m.world.kills();
  }
  INFO(m.rules->stopped());
  CHECK(m.rules->stopped().empty());
  CHECK(after_first == 30);          // wave 1: 20 walkers + 10 runners
  CHECK(after_second == 30 + 60);    // wave 2: 40 + 20
  REQUIRE(log.size() >= 3);
  CHECK(log[0].find("last stand") == 0);
  CHECK(log[1].find("wave 1: 30 agents") == 0);
  CHECK(m.ctx.score(pid) != 0);
  REQUIRE(m.ctx.match_over().has_value());  // the only player fell
  CHECK(m.ctx.match_over()->find("last stand over at wave") == 0);
  MESSAGE("over after " << t / 30 << " s: " << *m.ctx.match_over() << "; kills " << m.world.kills());
}
