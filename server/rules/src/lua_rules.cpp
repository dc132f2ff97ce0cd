// Lua rules (lua_rules.hpp): the sandboxed state, the budget hooks, the event calls and the
// `game` table.
#include "swarmfield/rules/lua_rules.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

namespace swarmfield::rules {

// The C callbacks reach the LuaRules through the state's extra space (LUA_EXTRASPACE).
struct LuaRulesAccess {
  static LuaRules& of(lua_State* L) { return **static_cast<LuaRules**>(lua_getextraspace(L)); }

  static void* allocate(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
    LuaRules& self = *static_cast<LuaRules*>(ud);
    const std::size_t old = ptr != nullptr ? osize : 0;
    if (nsize == 0) {
      self.memory_ -= old;
      std::free(ptr);
      return nullptr;
    }
    if (nsize > old && self.memory_ - old + nsize > self.budget_.memory_bytes) {
      self.over_memory_ = true;
      // Lua answers a refused allocation with a full garbage collection and a retry (16 ms for a
      // full 64 MiB state), then "not enough memory", which a pcall catches: a loop of failing
      // allocations held the tick thread 5 s per 300 of them. The script is stopped after this
      // call anyway, so from here every instruction fails at once (lua_sethook only sets fields:
      // safe inside the allocator).
      if (self.L_ != nullptr) lua_sethook(self.L_, &memory_hook, LUA_MASKCOUNT, 1);
      return nullptr;  // Lua raises "not enough memory"
    }
    void* out = std::realloc(ptr, nsize);
    if (out != nullptr) self.memory_ = self.memory_ - old + nsize;
    return out;
  }

  static constexpr int kHookEvery = 1000;  // instructions between two count hooks

  /// The registry key of the memory error's message, made when the state is: raising it then
  /// allocates nothing (an allocation would run the garbage collector again).
  static inline const char kMemoryErrorKey = 0;

  static void memory_hook(lua_State* L, lua_Debug*) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &kMemoryErrorKey);
    lua_error(L);
  }

  static void hook(lua_State* L, lua_Debug*) {
    LuaRules& self = of(L);
    self.tick_instructions_ += kHookEvery;
    if (self.tick_instructions_ > self.budget_.instructions_per_tick) {
      // Every instruction from now on fails, so a pcall in the script can not swallow it for long.
      lua_sethook(L, &hook, LUA_MASKCOUNT, 1);
      luaL_error(L, "over its instruction budget (%I a tick)", static_cast<lua_Integer>(self.budget_.instructions_per_tick));
    }
  }

  /// charge(units, what): counts work a sandbox wrapper is about to hand to C (pattern
  /// matching, table.move, table.insert/remove shifting elements) against the tick's instruction
  /// budget. The count hook fires only between VM instructions, so one call looping in C is out
  /// of its reach: a loop of pattern matches, or one table.move over 1e12 indices, held the tick
  /// thread for good (no tick, no SIGTERM). Over the budget it fails like the hook does.
  static int charge(lua_State* L) {
    LuaRules& self = of(L);
    const lua_Number units = luaL_checknumber(L, 1);
    const char* what = luaL_optstring(L, 2, "C work");
    const auto budget = static_cast<lua_Number>(self.budget_.instructions_per_tick);
    const lua_Number left = budget - static_cast<lua_Number>(self.tick_instructions_);
    if (!(units <= left)) {  // also NaN
      self.tick_instructions_ = self.budget_.instructions_per_tick + 1;
      lua_sethook(L, &hook, LUA_MASKCOUNT, 1);
      // Level 2: the script's line that called the wrapper (0 is this function, 1 the wrapper).
      luaL_where(L, 2);
      lua_pushfstring(L, "%s: over its instruction budget (%I a tick; work done in C counts: this call up to %f steps)",
                      what, static_cast<lua_Integer>(self.budget_.instructions_per_tick), units);
      lua_concat(L, 2);
      return lua_error(L);
    }
    if (units > 0) self.tick_instructions_ += static_cast<std::uint64_t>(units);
    return 0;
  }

  static RulesContext& ctx(lua_State* L) {
    LuaRules& self = of(L);
    if (self.ctx_ == nullptr) luaL_error(L, "the game is not running yet (game.* only works inside the on_* functions)");
    return *self.ctx_;
  }

  static int game_tick(lua_State* L) {
    lua_pushinteger(L, static_cast<lua_Integer>(of(L).tick_));
    return 1;
  }
  static int game_seconds(lua_State* L) {
    lua_pushnumber(L, static_cast<lua_Number>(of(L).tick_) * static_cast<lua_Number>(ctx(L).dt()));
    return 1;
  }
  static int game_agent_count(lua_State* L) {
    const sim::Swarm& swarm = ctx(L).world().swarm();
    if (lua_isnoneornil(L, 1)) {
      lua_pushinteger(L, static_cast<lua_Integer>(swarm.size()));
      return 1;
    }
    const char* kind = luaL_checkstring(L, 1);
    const std::span<const sim::AgentKind> kinds = swarm.kind_table();
    lua_Integer n = 0;
    for (std::size_t k = 0; k < kinds.size(); ++k) {
      if (kinds[k].name == kind) n = static_cast<lua_Integer>(swarm.kind_count(static_cast<std::uint8_t>(k)));
    }
    lua_pushinteger(L, n);
    return 1;
  }
  static int game_players(lua_State* L) {
    RulesContext& c = ctx(L);
    const std::span<const sim::Player> players = c.world().players();
    lua_createtable(L, static_cast<int>(players.size()), 0);
    for (std::size_t i = 0; i < players.size(); ++i) {
      const sim::Player& p = players[i];
      lua_createtable(L, 0, 8);
      lua_pushinteger(L, p.id);
      lua_setfield(L, -2, "id");
      lua_pushnumber(L, p.position.x);
      lua_setfield(L, -2, "x");
      lua_pushnumber(L, p.position.y);
      lua_setfield(L, -2, "y");
      lua_pushnumber(L, p.health);
      lua_setfield(L, -2, "health");
      lua_pushboolean(L, p.alive ? 1 : 0);
      lua_setfield(L, -2, "alive");
      lua_pushinteger(L, p.kills);
      lua_setfield(L, -2, "kills");
      lua_pushinteger(L, p.deaths);
      lua_setfield(L, -2, "deaths");
      lua_pushinteger(L, static_cast<lua_Integer>(c.score(p.id)));
      lua_setfield(L, -2, "score");
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    return 1;
  }
  static int game_spawn(lua_State* L) {
    // No C++ object with a destructor may be alive when a luaL_ check fails: Lua's errors
    // longjmp over these frames.
    RulesContext& c = ctx(L);
    const char* kind = luaL_checkstring(L, 1);
    const lua_Integer count = luaL_checkinteger(L, 2);
    luaL_argcheck(L, count >= 0 && count <= static_cast<lua_Integer>(sim::kMaxWaveCount), 2, "count must be in 0..1000000");
    std::optional<sim::SpawnZone> zone;
    if (!lua_isnoneornil(L, 3)) {
      lua_Integer r[4];
      for (int i = 0; i < 4; ++i) {
        r[i] = luaL_checkinteger(L, 3 + i);
        luaL_argcheck(L, r[i] >= 0 && r[i] < (lua_Integer{1} << 30), 3 + i, "a cell must be >= 0");
      }
      luaL_argcheck(L, r[0] <= r[2] && r[1] <= r[3], 3, "a zone is x0, y0, x1, y1 with x0 <= x1 and y0 <= y1");
      zone = sim::SpawnZone{{static_cast<std::int32_t>(r[0]), static_cast<std::int32_t>(r[1])},
                            {static_cast<std::int32_t>(r[2]), static_cast<std::int32_t>(r[3])}};
    }
    const std::span<const sim::AgentKind> kinds = c.world().swarm().kind_table();
    if (std::none_of(kinds.begin(), kinds.end(), [&](const sim::AgentKind& k) { return k.name == kind; })) {
      return luaL_error(L, "game.spawn: no kind named '%s'", kind);
    }
    lua_pushinteger(L, static_cast<lua_Integer>(c.spawn(std::string(kind), static_cast<std::size_t>(count), zone)));
    return 1;
  }
  static int game_add_score(lua_State* L) {
    const lua_Integer id = luaL_checkinteger(L, 1);
    const lua_Integer points = luaL_checkinteger(L, 2);
    // Only ids the world has issued (a player now or one that left): each new id is an entry of
    // the score table, held outside the state's memory budget, and a loop over made-up ids grew
    // the server by ~190 MB a second until it ran out of memory.
    RulesContext& c = ctx(L);
    luaL_argcheck(L, id >= 1 && id < static_cast<lua_Integer>(c.world().next_player_id()), 1,
                  "no player has this id (game.players() lists them)");
    luaL_argcheck(L, points > -(lua_Integer{1} << 40) && points < (lua_Integer{1} << 40), 2, "points out of range");
    c.add_score(static_cast<std::uint32_t>(id), points);
    return 0;
  }
  static int game_score(lua_State* L) {
    const lua_Integer id = luaL_checkinteger(L, 1);
    lua_pushinteger(L, id >= 0 && id <= 0xFFFFFFFF ? static_cast<lua_Integer>(ctx(L).score(static_cast<std::uint32_t>(id))) : 0);
    return 1;
  }
  static int game_end_match(lua_State* L) {
    std::size_t len = 0;
    const char* reason = luaL_optlstring(L, 1, "the rules ended the match", &len);
    ctx(L).end_match(std::string(reason, std::min<std::size_t>(len, 200)));
    return 0;
  }
  static int game_log(lua_State* L) {
    RulesContext& c = ctx(L);
    // Joined on the Lua side (a __tostring may raise an error: no std::string alive then).
    const int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; ++i) {
      if (i > 1) luaL_addchar(&b, ' ');
      luaL_tolstring(L, i, nullptr);
      luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    std::size_t len = 0;
    const char* text = lua_tolstring(L, -1, &len);
    c.log(std::string(text, std::min<std::size_t>(len, 500)));
    return 0;
  }
  static int game_random(lua_State* L) {
    const lua_Integer n = luaL_checkinteger(L, 1);
    luaL_argcheck(L, n >= 1, 1, "n must be >= 1");
    // xorshift64* (Vigna), seeded from the world's seed: the same draws in a replay.
    std::uint64_t& x = of(L).random_state_;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    const std::uint64_t r = x * 0x2545F4914F6CDD1Dull;
    lua_pushinteger(L, static_cast<lua_Integer>(r % static_cast<std::uint64_t>(n)) + 1);
    return 1;
  }
};

namespace {

using A = LuaRulesAccess;

void open_sandbox(lua_State* L) {
  const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
                           {LUA_STRLIBNAME, luaopen_string},
                           {LUA_TABLIBNAME, luaopen_table},
                           {LUA_MATHLIBNAME, luaopen_math},
                           {LUA_UTF8LIBNAME, luaopen_utf8}};
  for (const luaL_Reg& lib : libs) {
    luaL_requiref(L, lib.name, lib.func, 1);
    lua_pop(L, 1);
  }
  // No files, no code from strings or files, no GC tuning, nothing printed behind the log's back.
  for (const char* name : {"dofile", "loadfile", "load", "collectgarbage", "print", "require"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_getglobal(L, LUA_MATHLIBNAME);
  for (const char* name : {"random", "randomseed"}) {
    lua_pushnil(L);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);
  // string.dump turns a function into bytecode, which nothing in the sandbox can load: of no use
  // to rules, only a way to put binary into the log.
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_pushnil(L);
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);
  // Run in the sandbox before the script: setmetatable refuses a __gc finalizer (Lua runs them
  // with hooks off, so the budget could never stop a loop in one); string.rep is capped at 1 MiB
  // and the pattern functions at subjects of 4 KiB and patterns of 64 bytes with at most 3
  // repetition items (their backtracking runs in C, where the count hook does not fire). Work
  // that loops in C is charged to the instruction budget before it starts (`charge`, the chunk's
  // argument, so scripts can not reach it): a pattern call its worst case, (len(s) + 1) ^ (items
  // + 1) steps (each start may try every split of the subject among the repetition items and %b
  // scans; one start when find or match is anchored), table.move the indices it walks,
  // table.insert/remove the elements they shift (#t may come from a __len).
  static const char* const kGuards = R"(
    local charge = ...
    local raw_setmetatable, rawget, type, error, select = setmetatable, rawget, type, error, select
    local tonumber = tonumber
    setmetatable = function(t, mt)
      if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
        error("__gc finalizers are not allowed in rules scripts", 2)
      end
      return raw_setmetatable(t, mt)
    end
    local rep, len, gsub, sub = string.rep, string.len, string.gsub, string.sub
    string.rep = function(s, n, sep)
      local total = len(s) * n + (sep and len(sep) * (n - 1) or 0)
      if n > 0 and total > 1048576 then error("string.rep: the result would be over 1 MiB", 2) end
      if n > 1 and total == 0 then n = 1 end  -- empty pieces: rep loops n times in C for ""
      return rep(s, n, sep)
    end
    for _, name in ipairs({"find", "match", "gmatch", "gsub"}) do
      local f = string[name]
      string[name] = function(s, p, ...)
        if type(s) == "string" and len(s) > 4096 then error("string." .. name .. ": subjects are limited to 4 KiB", 2) end
        if type(p) == "string" then
          if len(p) > 64 then error("string." .. name .. ": patterns are limited to 64 bytes", 2) end
          local _, items = gsub(p, "[%*%+%-%?]", "")
          if items > 3 then error("string." .. name .. ": at most 3 repetition items (* + - ?) in a pattern", 2) end
          local n = type(s) == "string" and len(s) or 0
          if name == "find" and select(2, ...) then
            charge((n + 1) * (len(p) + 1), "string.find")
          else
            local _, scans = gsub(p, "%%b", "")
            local starts = ((name == "find" or name == "match") and sub(p, 1, 1) == "^") and 0 or 1
            charge((n + 1) ^ (items + scans + starts), "string." .. name)
          end
        end
        return f(s, p, ...)
      end
    end
    local move, insert, remove = table.move, table.insert, table.remove
    table.move = function(a1, f, e, ...)
      local first, last = tonumber(f), tonumber(e)
      if first and last and last >= first then charge(last - first + 1, "table.move") end
      return move(a1, f, e, ...)
    end
    -- concat(t, sep, i, j) and unpack(t, i, j) read t[i..j] (j = #t by default), sort(t) about
    -- #t * log2(#t) pairs: a C function as __index (getmetatable) answers each read with no VM
    -- instruction, so the range or #t alone says how long they stay in C.
    local concat, unpack, sort, log, max = table.concat, table.unpack, table.sort, math.log, math.max
    local function range(t, i, j)
      local first, last = tonumber(i) or 1, tonumber(j)
      if not last and type(t) == "table" then last = #t end
      return last and last >= first and last - (first + 0.0) + 1 or 0  -- in floats: no wrap-around
    end
    table.concat = function(t, sep, i, j)
      charge(range(t, i, j), "table.concat")
      return concat(t, sep, i, j)
    end
    table.unpack = function(t, i, j)
      charge(range(t, i, j), "table.unpack")
      return unpack(t, i, j)
    end
    table.sort = function(t, ...)
      local n = type(t) == "table" and #t or 0
      if n > 1 then charge(n * max(1, log(n, 2)), "table.sort") end
      return sort(t, ...)
    end
    -- insert(t, pos, v) and remove(t, pos) shift the elements from pos to #t.
    local function shifting(f, name, with_pos)
      return function(t, ...)
        if select("#", ...) >= with_pos and type(t) == "table" then
          local pos = tonumber((...))
          if pos then charge(#t + 1 - pos, name) end
        end
        return f(t, ...)
      end
    end
    table.insert = shifting(insert, "table.insert", 2)
    table.remove = shifting(remove, "table.remove", 1)
  )";
  if (luaL_loadbufferx(L, kGuards, std::strlen(kGuards), "=sandbox", "t") == LUA_OK) {
    lua_pushcfunction(L, A::charge);
    lua_call(L, 1, 0);
  }
  const luaL_Reg game[] = {{"tick", A::game_tick},         {"seconds", A::game_seconds},
                           {"agent_count", A::game_agent_count}, {"players", A::game_players},
                           {"spawn", A::game_spawn},       {"add_score", A::game_add_score},
                           {"score", A::game_score},       {"end_match", A::game_end_match},
                           {"log", A::game_log},           {"random", A::game_random},
                           {nullptr, nullptr}};
  luaL_newlib(L, game);
  lua_setglobal(L, "game");
}

}  // namespace

LuaRules::LuaRules(const std::string& script, const std::string& chunk_name, std::uint64_t seed, LuaBudget budget)
    : chunk_name_(chunk_name), budget_(budget), random_state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {
  if (random_state_ == 0) random_state_ = 1;
  L_ = lua_newstate(&A::allocate, this);
  if (L_ == nullptr) {
    error_ = "rules " + chunk_name_ + ": could not make a Lua state within " + std::to_string(budget_.memory_bytes) + " bytes";
    return;
  }
  *static_cast<LuaRules**>(lua_getextraspace(L_)) = this;
  lua_pushfstring(L_, "over its memory budget (%I bytes)", static_cast<lua_Integer>(budget_.memory_bytes));
  lua_rawsetp(L_, LUA_REGISTRYINDEX, &A::kMemoryErrorKey);
  open_sandbox(L_);
  lua_sethook(L_, &A::hook, LUA_MASKCOUNT, A::kHookEvery);
  // Text only: a precompiled chunk could crash the VM ("t"). A UTF-8 byte order mark (Windows
  // Notepad saves one) is skipped, as Lua's own loadfile does: it was "unexpected symbol near
  // '<\239>'".
  const std::size_t bom = script.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  if (luaL_loadbufferx(L_, script.data() + bom, script.size() - bom, ("@" + chunk_name_).c_str(), "t") != LUA_OK) {
    stop(std::string("rules ") + chunk_name_ + ": " + lua_tostring(L_, -1));
    lua_pop(L_, 1);
    return;
  }
  tick_instructions_ = 0;
  if (lua_pcall(L_, 0, 0, 0) != LUA_OK) {
    stop(std::string("rules ") + chunk_name_ + " while loading: " + (lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "an error"));
    lua_pop(L_, 1);
  } else if (over_memory_) {
    stop("rules " + chunk_name_ + " while loading: over its memory budget (" + std::to_string(budget_.memory_bytes) + " bytes)");
  }
}

LuaRules::~LuaRules() {
  if (L_ != nullptr) lua_close(L_);
}

void LuaRules::stop(std::string why) {
  // A script's error can be any length (error(string.rep("E", 1e7))): the first 500 bytes.
  if (why.size() > 500) why = why.substr(0, 500) + "...";
  if (error_.empty()) error_ = std::move(why);
}

bool LuaRules::call(const char* function, int nargs, const char* what) {
  if (!error_.empty()) {
    lua_pop(L_, nargs);
    return false;
  }
  // A raw read: a metatable on _G whose __index raises would do so outside the protected call.
  lua_pushglobaltable(L_);
  lua_pushstring(L_, function);
  lua_rawget(L_, -2);
  lua_remove(L_, -2);
  if (!lua_isfunction(L_, -1)) {
    lua_pop(L_, nargs + 1);
    return true;  // the script does not handle this event
  }
  lua_insert(L_, -(nargs + 1));
  if (lua_pcall(L_, nargs, 0, 0) != LUA_OK) {
    const char* msg = lua_tostring(L_, -1);
    stop("rules " + chunk_name_ + ": " + function + " (" + what + ") at tick " + std::to_string(tick_) + ": " +
         (msg != nullptr ? msg : "an error that is not a string"));
    lua_pop(L_, 1);
    return false;
  }
  if (over_memory_) {
    stop("rules " + chunk_name_ + ": " + function + " at tick " + std::to_string(tick_) + ": over its memory budget (" +
         std::to_string(budget_.memory_bytes) + " bytes)");
    return false;
  }
  return true;
}

void LuaRules::after_step(RulesContext& ctx, const TickEvents& e) {
  if (!error_.empty() || L_ == nullptr) return;
  ctx_ = &ctx;
  tick_ = e.tick;
  tick_instructions_ = 0;
  lua_sethook(L_, &A::hook, LUA_MASKCOUNT, A::kHookEvery);
  const std::span<const sim::AgentKind> kinds = ctx.world().swarm().kind_table();
  bool ok = true;
  if (e.first) ok = call("on_start", 0, "the match's first tick");
  for (std::size_t i = 0; ok && i < e.players_joined.size(); ++i) {
    lua_pushinteger(L_, e.players_joined[i]);
    ok = call("on_player_joined", 1, "a player joined");
  }
  for (std::size_t i = 0; ok && i < e.players_left.size(); ++i) {
    lua_pushinteger(L_, e.players_left[i]);
    ok = call("on_player_left", 1, "a player left");
  }
  const std::uint32_t comings = ctx.world().waves().comings_started();
  for (std::uint32_t i = 0; ok && i < e.waves_started; ++i) {
    lua_pushinteger(L_, comings - e.waves_started + i + 1);
    ok = call("on_wave", 1, "a wave started");
  }
  for (std::size_t i = 0; ok && i < e.agent_deaths.size(); ++i) {
    const sim::AgentDeath& d = e.agent_deaths[i];
    lua_pushinteger(L_, d.agent_id);
    lua_pushstring(L_, d.kind < kinds.size() ? kinds[d.kind].name.c_str() : "");
    lua_pushinteger(L_, d.killer_id);
    lua_pushnumber(L_, d.position.x);
    lua_pushnumber(L_, d.position.y);
    ok = call("on_agent_killed", 5, "an agent was killed");
  }
  for (std::size_t i = 0; ok && i < e.player_deaths.size(); ++i) {
    lua_pushinteger(L_, e.player_deaths[i].player_id);
    lua_pushnumber(L_, e.player_deaths[i].position.x);
    lua_pushnumber(L_, e.player_deaths[i].position.y);
    ok = call("on_player_died", 3, "a player died");
  }
  for (std::size_t i = 0; ok && i < e.barricades_fallen.size(); ++i) {
    lua_pushinteger(L_, e.barricades_fallen[i].x);
    lua_pushinteger(L_, e.barricades_fallen[i].y);
    ok = call("on_barricade_fallen", 2, "a barricade fell");
  }
  if (ok) {
    lua_pushinteger(L_, static_cast<lua_Integer>(e.tick));
    (void)call("on_tick", 1, "the tick");
  }
  ctx_ = nullptr;
}

}  // namespace swarmfield::rules
