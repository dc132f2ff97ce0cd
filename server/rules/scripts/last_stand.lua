-- Last stand: hold out as long as you can (swarmfield-server --rules server/rules/scripts/last_stand.lua).
--
-- Every 20 seconds a bigger wave comes: more walkers and runners each time, and from the third
-- wave on brutes too. Kills score by kind (runner 5, walker 10, brute 50), a death costs 25.
-- The match ends when every player is down at the same time.
--
-- The rules run per event, never per agent, inside an instruction budget (--rules-budget);
-- there is no io, os or require here, and math.random is replaced by game.random (seeded from the
-- world's seed), so a recorded match replays bit for bit.

local FIRST_WAVE = 5       -- seconds before the first wave
local WAVE_EVERY = 20      -- seconds between waves
local POINTS = { runner = 5, walker = 10, brute = 50 }

local wave = 0
local next_wave_at = FIRST_WAVE

-- Spawns `count` of `kind` if the server has such a kind (a custom [[kinds]] table may not).
local function spawn(kind, count)
  if count <= 0 then return 0 end
  local ok, spawned = pcall(game.spawn, kind, count)
  if ok then return spawned end
  return 0
end

function on_start()
  game.log("last stand: the first wave comes in " .. FIRST_WAVE .. " s, then one every " .. WAVE_EVERY .. " s")
end

function on_agent_killed(id, kind, killer, x, y)
  game.add_score(killer, POINTS[kind] or 10)
end

function on_player_died(id, x, y)
  game.add_score(id, -25)
  local players = game.players()
  for _, p in ipairs(players) do
    if p.alive then return end
  end
  if #players > 0 then
    local best, best_score = 0, nil
    for _, p in ipairs(players) do
      if best_score == nil or p.score > best_score then best, best_score = p.id, p.score end
    end
    game.end_match("last stand over at wave " .. wave .. "; best player " .. best .. " with " .. best_score .. " points")
  end
end

function on_tick(tick)
  if game.seconds() < next_wave_at then return end
  wave = wave + 1
  next_wave_at = next_wave_at + WAVE_EVERY
  local spawned = spawn("walker", 20 * wave) + spawn("runner", 10 * wave) + spawn("brute", wave // 3)
  game.log("wave " .. wave .. ": " .. spawned .. " agents, " .. game.agent_count() .. " in the horde")
end
