// Headless rendering: a synthetic map and snapshot drawn by the software renderer into an
// SDL_Surface; pixels are checked where walls, roads, agents and players are.
#include <doctest/doctest.h>

#include <SDL.h>

#include <array>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "swarmfield/client/combat_effects.hpp"
#include "swarmfield/client/scene_renderer.hpp"
#include "swarmfield/sim/map/map_parse.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"

namespace client = swarmfield::client;
namespace sim = swarmfield::sim;
namespace protocol = swarmfield::protocol;

namespace {

struct Target {
  SDL_Surface* surface = nullptr;
  SDL_Renderer* renderer = nullptr;
  Target(int w, int h) {
    surface = SDL_CreateRGBSurfaceWithFormat(0, w, h, 32, SDL_PIXELFORMAT_RGB888);
    REQUIRE_MESSAGE(surface, SDL_GetError());
    renderer = SDL_CreateSoftwareRenderer(surface);
    REQUIRE_MESSAGE(renderer, SDL_GetError());
  }
  ~Target() {
    if (renderer) SDL_DestroyRenderer(renderer);
    if (surface) SDL_FreeSurface(surface);
  }
  client::Rgb at(sim::Vec2 p) const { return at(static_cast<int>(p.x), static_cast<int>(p.y)); }
  client::Rgb at(int x, int y) const {
    REQUIRE(x >= 0);
    REQUIRE(y >= 0);
    REQUIRE(x < surface->w);
    REQUIRE(y < surface->h);
    const auto* row = static_cast<const std::uint8_t*>(surface->pixels) + static_cast<std::ptrdiff_t>(y) * surface->pitch;
    std::uint32_t v = 0;
    std::memcpy(&v, row + x * 4, 4);
    client::Rgb c;
    SDL_GetRGB(v, surface->format, &c.r, &c.g, &c.b);
    return c;
  }
  int count(client::Rgb color) const {
    const std::uint32_t want = SDL_MapRGB(surface->format, color.r, color.g, color.b);
    int n = 0;
    for (int y = 0; y < surface->h; ++y) {
      const auto* row = static_cast<const std::uint8_t*>(surface->pixels) + static_cast<std::ptrdiff_t>(y) * surface->pitch;
      for (int x = 0; x < surface->w; ++x) {
        std::uint32_t v = 0;
        std::memcpy(&v, row + x * 4, 4);
        n += (v & 0xFFFFFFu) == (want & 0xFFFFFFu) ? 1 : 0;
      }
    }
    return n;
  }
};

std::string str(client::Rgb c) {
  return std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b);
}

// 16 x 12 cells: a building block, a player at P, agents at a/b.
constexpr const char* kMap = R"(
................
................
..####..........
..####.....a....
..####..........
................
.......P........
................
..........####..
....b.....####..
..........####..
................
)";

struct Scene {
  sim::GridMap map;
  std::vector<sim::MapMarker> markers;
  client::SnapshotState snapshot;
  sim::Vec2 marker(char c) const {
    for (const auto& m : markers) {
      if (m.symbol == c) return map.cell_center(m.cell);
    }
    FAIL("no marker " << c);
    return {};
  }
};

Scene make_scene() {
  Scene s;
  sim::MapError error;
  REQUIRE_MESSAGE(sim::parse_ascii_map(kMap, "scene", s.map, error, &s.markers), error.to_string());
  s.map.set_cost(14, 1, 3);  // one alley cell: a different grey
  s.snapshot.tick = 5;
  s.snapshot.total_agents = 2;
  std::uint32_t id = 1;
  for (const char c : {'a', 'b'}) {
    const auto p = s.marker(c);
    s.snapshot.agents.push_back({id++, p.x, p.y, 0.7f, 0});
  }
  const auto p = s.marker('P');
  s.snapshot.players.push_back({3, p.x, p.y, 0, 100.0f, 0});  // alive (a dead one, health 0, is drawn grey)
  return s;
}

}  // namespace

TEST_CASE("cost colours: walls dark, roads light, darker with cost") {
  CHECK(client::cost_color(sim::kBlockedCost) == client::kWallColor);
  const auto road = client::cost_color(1);
  const auto sidewalk = client::cost_color(2);
  const auto alley = client::cost_color(3);
  const auto swamp = client::cost_color(254);
  CHECK(road.r > sidewalk.r);
  CHECK(sidewalk.r > alley.r);
  CHECK(alley.r > swamp.r);
  CHECK(swamp.r > client::kWallColor.r);
  CHECK(client::heat_color(0.0f) == client::Rgb{250, 245, 200});
  CHECK(client::heat_color(0.5f) == client::Rgb{70, 140, 220});
  CHECK(client::heat_color(1.0f) == client::Rgb{25, 25, 85});
  CHECK(client::heat_color(-3.0f) == client::heat_color(0.0f));  // clamped
  const auto quarter = client::heat_color(0.25f);                  // between the first two stops
  CHECK(quarter.r < 250);
  CHECK(quarter.r > 70);
}

TEST_CASE("map, agents and players land on the right pixels (zoomed in: triangles)") {
  const Scene s = make_scene();
  Target t(320, 240);
  client::SceneRenderer renderer(t.renderer);
  std::string error;
  REQUIRE_MESSAGE(renderer.set_map(s.map, &error), error);
  client::Camera camera(320, 240);
  camera.fit({0.0f, 0.0f, 16.0f, 12.0f});
  client::InterpolatedFrame frame;
  client::unpack_snapshot(s.snapshot, frame);
  client::DrawOptions options;
  options.own_player_id = 3;
  renderer.draw_scene(camera, frame, options);
  REQUIRE(camera.zoom() * options.agent_radius >= 2.5f);  // the triangle path
  SDL_RenderFlush(t.renderer);

  // Wall cells (block at x 2..5, y 2..4) and road cells.
  for (const sim::CellCoord c : {sim::CellCoord{2, 2}, sim::CellCoord{5, 4}, sim::CellCoord{12, 9}}) {
    INFO("wall cell " << c.x << "," << c.y << " got " << str(t.at(camera.world_to_screen(s.map.cell_center(c)))));
    CHECK(t.at(camera.world_to_screen(s.map.cell_center(c))) == client::kWallColor);
  }
  CHECK(t.at(camera.world_to_screen(s.map.cell_center({0, 0}))) == client::cost_color(1));
  CHECK(t.at(camera.world_to_screen(s.map.cell_center({8, 1}))) == client::cost_color(1));
  CHECK(t.at(camera.world_to_screen(s.map.cell_center({14, 1}))) == client::cost_color(3));
  // Agents and the player at their world positions.
  for (const char c : {'a', 'b'}) {
    INFO("agent " << c << " pixel " << str(t.at(camera.world_to_screen(s.marker(c)))));
    CHECK(t.at(camera.world_to_screen(s.marker(c))) == client::kAgentColor);
  }
  CHECK(t.at(camera.world_to_screen(s.marker('P'))) == client::kOwnPlayerColor);
  CHECK(renderer.agents_drawn() == 2);
  // Border outside the map is background (fit leaves a margin).
  CHECK(t.at(1, 1) == client::kBackgroundColor);
  // Agent pixels only where agents are: roughly two small triangles.
  const int agent_pixels = t.count(client::kAgentColor);
  CHECK(agent_pixels > 20);
  CHECK(agent_pixels < 400);
}

TEST_CASE("zoomed out agents are small squares at their positions; off-screen ones are culled") {
  Scene s = make_scene();
  Target t(64, 64);
  client::SceneRenderer renderer(t.renderer);
  REQUIRE(renderer.set_map(s.map));
  client::Camera camera(64, 64);
  camera.set_zoom(3.0f);
  camera.center_on({8.0f, 6.0f});
  client::InterpolatedFrame frame;
  client::unpack_snapshot(s.snapshot, frame);
  frame.agents.push_back({99, 500.0f, 500.0f, 0.0f});  // far outside the view
  client::DrawOptions options;
  renderer.draw_scene(camera, frame, options);
  SDL_RenderFlush(t.renderer);
  CHECK(renderer.agents_drawn() == 2);
  CHECK(t.at(camera.world_to_screen(s.marker('a'))) == client::kAgentColor);
  CHECK(t.at(camera.world_to_screen(s.marker('b'))) == client::kAgentColor);
  CHECK(t.at(camera.world_to_screen(s.marker('P'))) == client::kPlayerColor);  // not ours: other colour
}

TEST_CASE("heat map and flow arrows draw only when enabled") {
  const Scene s = make_scene();
  Target t(320, 240);
  client::SceneRenderer renderer(t.renderer);
  REQUIRE(renderer.set_map(s.map));
  client::Camera camera(320, 240);
  camera.fit({0.0f, 0.0f, 16.0f, 12.0f});
  sim::NavigationFields fields;
  const std::array<sim::CellCoord, 1> goals{s.map.world_to_cell(s.marker('P'))};
  fields.update(s.map, goals);
  renderer.set_fields(&fields.integration(), &fields.flow());
  client::InterpolatedFrame empty;

  const sim::Vec2 road = camera.world_to_screen(s.map.cell_center({0, 11}));
  client::DrawOptions options;
  renderer.draw_scene(camera, empty, options);
  SDL_RenderFlush(t.renderer);
  CHECK(t.at(road) == client::cost_color(1));
  CHECK(t.count(client::kFlowArrowColor) == 0);

  options.heat_map = true;
  renderer.draw_scene(camera, empty, options);
  SDL_RenderFlush(t.renderer);
  CHECK_FALSE(t.at(road) == client::cost_color(1));  // tinted
  CHECK(t.at(camera.world_to_screen(s.map.cell_center({3, 3}))) == client::kWallColor);  // walls stay

  options.heat_map = false;
  options.flow_arrows = true;
  renderer.draw_scene(camera, empty, options);
  SDL_RenderFlush(t.renderer);
  CHECK(t.count(client::kFlowArrowColor) > 100);
  CHECK(t.count(client::kFlowArrowOnHeatColor) == 0);

  options.heat_map = true;  // arrows switch to a light colour over the heat map
  renderer.draw_scene(camera, empty, options);
  SDL_RenderFlush(t.renderer);
  CHECK(t.count(client::kFlowArrowOnHeatColor) > 100);
  CHECK(t.count(client::kFlowArrowColor) == 0);
}

TEST_CASE("text and HUD put ink on the surface") {
  Target t(200, 60);
  client::SceneRenderer renderer(t.renderer);
  SDL_SetRenderDrawColor(t.renderer, 0, 0, 0, 255);
  SDL_RenderClear(t.renderer);
  renderer.draw_text("TICK 42", 4, 4, 2, client::kHudTextColor);
  SDL_RenderFlush(t.renderer);
  const int ink = t.count(client::kHudTextColor);
  CHECK(ink > 50);
  // Each lit font pixel is a 2x2 block: the count is a multiple of 4.
  CHECK(ink % 4 == 0);
}

TEST_CASE("agents are drawn in their kind's colour and size; an unknown kind index falls back safely") {
  Scene s = make_scene();
  s.snapshot.agents[1].kind = 1;  // a is kind 0, b kind 1
  const std::vector<protocol::KindInfo> kinds = {{"runner", 0.3f, 0xF2A33A}, {"brute", 0.9f, 0x9A5BD6}};
  const client::Rgb runner{0xF2, 0xA3, 0x3A}, brute{0x9A, 0x5B, 0xD6};
  for (const float zoom : {20.0f, 3.0f}) {  // triangles, then squares
    CAPTURE(zoom);
    Target t(320, 240);
    client::SceneRenderer renderer(t.renderer);
    REQUIRE(renderer.set_map(s.map));
    client::Camera camera(320, 240);
    camera.set_zoom(zoom);
    camera.center_on({8.0f, 6.0f});
    client::InterpolatedFrame frame;
    client::unpack_snapshot(s.snapshot, frame);
    REQUIRE(frame.agents.size() == 2);
    CHECK(frame.agents[1].kind == 1);
    frame.agents.push_back({7, 14.5f, 11.5f, 0.0f, 200});  // a kind no table lists
    client::DrawOptions options;
    options.kinds = kinds;
    renderer.draw_scene(camera, frame, options);
    SDL_RenderFlush(t.renderer);
    CHECK(renderer.agents_drawn() == 3);
    CHECK(t.at(camera.world_to_screen(s.marker('a'))) == runner);
    CHECK(t.at(camera.world_to_screen(s.marker('b'))) == brute);
    CHECK(t.at(camera.world_to_screen({14.5f, 11.5f})) == client::kAgentColor);
    // The brute (r 0.9) covers more pixels than the runner (r 0.3): about (0.9 / 0.3)^2 = 9x.
    const int runner_px = t.count(runner), brute_px = t.count(brute);
    MESSAGE("zoom " << zoom << ": runner " << runner_px << " px, brute " << brute_px << " px");
    CHECK(brute_px > 4 * runner_px);
  }
}

TEST_CASE("the density grid shades its squares by level under the agents; empty squares stay clear") {
  const Scene s = make_scene();
  Target t(320, 240);
  client::SceneRenderer renderer(t.renderer);
  REQUIRE(renderer.set_map(s.map));
  client::Camera camera(320, 240);
  camera.fit({0.0f, 0.0f, 16.0f, 12.0f});
  client::InterpolatedFrame frame;
  client::unpack_snapshot(s.snapshot, frame);
  // Squares of one cell over the 16 x 12 map (16 x 12 squares): (0,0) level 2, (8,1) level 12.
  protocol::set_density_grid_geometry(frame.density, 0, 0, 16, 12);
  REQUIRE(frame.density.cell_log2 == 0);
  REQUIRE(frame.density.width == 16);
  frame.density.levels.assign(static_cast<std::size_t>(frame.density.width) * frame.density.height, 0);
  frame.density_cell_size = 1.0f;
  frame.density.levels[0 * 16 + 0] = 2;
  frame.density.levels[1 * 16 + 8] = 12;
  renderer.draw_scene(camera, frame, client::DrawOptions{});
  SDL_RenderFlush(t.renderer);
  CHECK(renderer.density_squares_drawn() == 2);
  const client::Rgb road = client::cost_color(1);
  const client::Rgb low = t.at(camera.world_to_screen({0.5f, 0.5f}));
  const client::Rgb high = t.at(camera.world_to_screen({8.5f, 1.5f}));
  INFO("road " << str(road) << " low " << str(low) << " high " << str(high));
  // Blended towards the density colour, more so at the higher level.
  CHECK(low != road);
  CHECK(std::abs(high.g - client::kDensityColor.g) < std::abs(low.g - client::kDensityColor.g));
  CHECK(std::abs(low.g - client::kDensityColor.g) < std::abs(road.g - client::kDensityColor.g));
  // A square with level 0 is not drawn: the road next to it keeps its colour.
  CHECK(t.at(camera.world_to_screen({1.5f, 0.5f})) == road);
  // Agents are drawn over the grid.
  CHECK(t.at(camera.world_to_screen(s.marker('a'))) == client::kAgentColor);
}

TEST_CASE("a dead player (health 0 in the snapshot) is drawn grey, a living one in its colour") {
  Scene s = make_scene();
  Target t(64, 64);
  client::SceneRenderer renderer(t.renderer);
  REQUIRE(renderer.set_map(s.map));
  client::Camera camera(64, 64);
  camera.set_zoom(3.0f);
  camera.center_on({8.0f, 6.0f});
  client::InterpolatedFrame frame;
  s.snapshot.players[0].health = 0.0f;
  client::unpack_snapshot(s.snapshot, frame);
  REQUIRE(frame.players.size() == 1);
  CHECK(frame.players[0].health == 0.0f);
  renderer.draw_scene(camera, frame, client::DrawOptions{});
  SDL_RenderFlush(t.renderer);
  CHECK(t.at(camera.world_to_screen(s.marker('P'))) == client::Rgb{120, 120, 120});
  CHECK_FALSE(t.at(camera.world_to_screen(s.marker('P'))) == client::kPlayerColor);
}

TEST_CASE("barricade colours: whole is kBarricadeColor, darker with damage, apart from walls and agents") {
  CHECK(client::barricade_color(255) == client::kBarricadeColor);
  CHECK(client::barricade_color(241) == client::kBarricadeColor);
  const client::Rgb half = client::barricade_color(128);
  const client::Rgb low = client::barricade_color(1);
  CHECK(half.r < client::kBarricadeColor.r);
  CHECK(low.r < half.r);
  CHECK(client::barricade_color(0) == low);
  CHECK(low == client::Rgb{70, 43, 17});  // 5/12 of the whole colour
  for (const int h : {1, 64, 128, 200, 255}) {
    const client::Rgb c = client::barricade_color(static_cast<std::uint8_t>(h));
    CAPTURE(h);
    CHECK(c != client::kWallColor);
    CHECK(c != client::kAgentColor);
    CHECK(c.r > c.g);  // brown: red over green over blue, unlike the walls' blue-grey
    CHECK(c.g > c.b);
  }
}

TEST_CASE("barricades are drawn over their cells in the barricade colour by health; cells off the map are not") {
  const Scene s = make_scene();
  Target t(320, 240);
  client::SceneRenderer renderer(t.renderer);
  REQUIRE(renderer.set_map(s.map));
  client::Camera camera(320, 240);
  camera.fit({0.0f, 0.0f, 16.0f, 12.0f});
  client::InterpolatedFrame frame;
  client::unpack_snapshot(s.snapshot, frame);
  const std::uint32_t w = 16;
  // Away from the player's label (drawn above it, over row 5).
  const client::Barricades barricades = {{6 * w + 12, 255}, {6 * w + 13, 100}, {0 * w + 15, 1}, {16 * 12 + 3, 255}};
  client::DrawOptions options;
  renderer.draw_scene(camera, frame, options);  // none given: nothing drawn
  SDL_RenderFlush(t.renderer);
  CHECK(renderer.barricades_drawn() == 0);
  CHECK(t.count(client::kBarricadeColor) == 0);

  options.barricades = &barricades;
  renderer.draw_scene(camera, frame, options);
  SDL_RenderFlush(t.renderer);
  CHECK(renderer.barricades_drawn() == 3);  // the fourth index lies beyond the map
  CHECK(t.at(camera.world_to_screen(s.map.cell_center({12, 6}))) == client::kBarricadeColor);
  CHECK(t.at(camera.world_to_screen(s.map.cell_center({13, 6}))) == client::barricade_color(100));
  CHECK(t.at(camera.world_to_screen(s.map.cell_center({15, 0}))) == client::barricade_color(1));
  CHECK(t.at(camera.world_to_screen(s.map.cell_center({14, 6}))) == client::cost_color(1));  // a neighbour
  // About one cell of pixels (the fit's zoom squared) in the whole colour.
  const float cell_px = camera.zoom() * s.map.cell_size();
  const int whole = t.count(client::kBarricadeColor);
  CHECK(static_cast<float>(whole) > 0.8f * cell_px * cell_px);
  CHECK(static_cast<float>(whole) < 1.3f * cell_px * cell_px);
  // Agents and players are drawn over barricades.
  CHECK(t.at(camera.world_to_screen(s.marker('P'))) == client::kPlayerColor);

  // Out of view: culled.
  client::Camera close(64, 64);
  close.set_zoom(8.0f);
  close.center_on({2.0f, 10.0f});
  renderer.draw_scene(close, frame, options);
  CHECK(renderer.barricades_drawn() == 0);
}

TEST_CASE("update_map redraws the cells the map changed since (a barricade's wall, a cell reopened)") {
  Scene s = make_scene();
  Target t(320, 240);
  client::SceneRenderer renderer(t.renderer);
  REQUIRE(renderer.set_map(s.map));
  client::Camera camera(320, 240);
  camera.fit({0.0f, 0.0f, 16.0f, 12.0f});
  const client::InterpolatedFrame empty;
  const auto pixel = [&](sim::CellCoord c) { return t.at(camera.world_to_screen(s.map.cell_center(c))); };
  s.map.set_cost(8, 5, sim::kBlockedCost);  // built on
  s.map.set_cost(3, 3, 2);                  // a wall opened to a sidewalk
  renderer.draw_scene(camera, empty, client::DrawOptions{});
  SDL_RenderFlush(t.renderer);
  CHECK(pixel({8, 5}) == client::cost_color(1));  // not yet: the renderer draws its own copy
  REQUIRE(renderer.update_map(s.map));
  renderer.draw_scene(camera, empty, client::DrawOptions{});
  SDL_RenderFlush(t.renderer);
  CHECK(pixel({8, 5}) == client::kWallColor);
  CHECK(pixel({3, 3}) == client::cost_color(2));
  CHECK(pixel({2, 2}) == client::kWallColor);  // unchanged cells keep theirs
  CHECK(pixel({0, 0}) == client::cost_color(1));
  REQUIRE(renderer.update_map(s.map));  // nothing changed since: nothing to do
  // More changes than the change log holds (it keeps kChangeLogLimit entries): the whole texture.
  for (std::size_t i = 0; i < sim::GridMap::kChangeLogLimit + 10; ++i) {
    s.map.set_cost(0, 0, static_cast<std::uint8_t>(i % 2 == 0 ? 5 : 1));
  }
  s.map.set_cost(0, 0, 4);
  REQUIRE(renderer.update_map(s.map));
  renderer.draw_scene(camera, empty, client::DrawOptions{});
  SDL_RenderFlush(t.renderer);
  CHECK(pixel({0, 0}) == client::cost_color(4));
  CHECK(pixel({8, 5}) == client::kWallColor);
}

TEST_CASE("deaths are drawn as crosses where the agents fell, shots as tracers along the aim; none once faded") {
  Scene s = make_scene();
  Target t(64, 64);
  client::SceneRenderer renderer(t.renderer);
  REQUIRE(renderer.set_map(s.map));
  client::Camera camera(64, 64);
  camera.set_zoom(3.0f);
  camera.center_on({8.0f, 6.0f});
  client::CombatEffects effects(10.0, 4.0);
  std::deque<client::ReceivedSnapshot> history(2);
  protocol::PlayerState shooter;
  shooter.id = 1;
  shooter.x = 8.0f;
  shooter.y = 6.0f;
  shooter.health = 50.0f;
  shooter.aim = 0;  // +x
  history[0].snapshot.tick = 1;
  history[0].snapshot.players = {shooter};
  shooter.shots = 1;
  history[1].snapshot.tick = 2;
  history[1].snapshot.players = {shooter};
  history[1].snapshot.deaths = {client::RenderAgent{9, 4.0f, 4.0f, 0.0f, 0}};
  effects.update(history, 2.0);
  REQUIRE(effects.deaths().size() == 1);
  REQUIRE(effects.shots().size() == 1);
  client::InterpolatedFrame empty;
  renderer.draw_scene(camera, empty, client::DrawOptions{});
  CHECK(renderer.draw_effects(camera, effects, 5.0f) == 2);
  SDL_RenderFlush(t.renderer);
  CHECK(t.at(camera.world_to_screen({4.0f, 4.0f})) == client::kDeathColor);  // the cross's centre
  CHECK(t.at(camera.world_to_screen({11.0f, 6.0f})) == client::kShotColor);  // on the tracer
  CHECK_FALSE(t.at(camera.world_to_screen({8.0f, 9.0f})) == client::kShotColor);  // not across it
  effects.update(history, 30.0);
  renderer.draw_scene(camera, empty, client::DrawOptions{});
  CHECK(renderer.draw_effects(camera, effects, 5.0f) == 0);
  SDL_RenderFlush(t.renderer);
  CHECK(t.count(client::kDeathColor) == 0);
  CHECK(t.count(client::kShotColor) == 0);
}
