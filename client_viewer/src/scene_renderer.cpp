#include "swarmfield/client/scene_renderer.hpp"

#include "swarmfield/client/combat_effects.hpp"

#include <SDL.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "swarmfield/client/bitmap_font.hpp"

namespace swarmfield::client {

namespace {

std::uint32_t pack_rgba(Rgb c, std::uint8_t a) noexcept {
  // SDL_PIXELFORMAT_RGBA32 is byte order R,G,B,A in memory on every platform.
  std::uint32_t v = 0;
  auto* bytes = reinterpret_cast<std::uint8_t*>(&v);
  bytes[0] = c.r;
  bytes[1] = c.g;
  bytes[2] = c.b;
  bytes[3] = a;
  return v;
}

SDL_Color to_sdl(Rgb c, std::uint8_t a = 255) noexcept { return SDL_Color{c.r, c.g, c.b, a}; }

void set_color(SDL_Renderer* r, Rgb c, std::uint8_t a = 255) { SDL_SetRenderDrawColor(r, c.r, c.g, c.b, a); }

}  // namespace

Rgb cost_color(std::uint8_t cost) noexcept {
  if (cost == sim::kBlockedCost) return kWallColor;
  const int c = std::max<int>(1, cost);
  // log2 spacing: costs 1/2/3 (road/sidewalk/alley) differ visibly, 254 is still lighter than a wall.
  const int shade = std::max(80, 160 - static_cast<int>(std::lround(22.0 * std::log2(static_cast<double>(c)))));
  return Rgb{static_cast<std::uint8_t>(shade), static_cast<std::uint8_t>(shade),
             static_cast<std::uint8_t>(std::max(0, shade - 10))};
}

Rgb heat_color(float t) noexcept {
  if (!(t >= 0.0f)) t = 0.0f;
  if (t > 1.0f) t = 1.0f;
  // Pale (near a goal) -> blue -> navy (far): cool colours, so the red-orange agents and the
  // cyan/green players stay readable on top.
  constexpr Rgb stops[3] = {{250, 245, 200}, {70, 140, 220}, {25, 25, 85}};
  const float s = t * 2.0f;
  const int i = std::min(1, static_cast<int>(s));
  const float f = s - static_cast<float>(i);
  auto mix = [f](std::uint8_t a, std::uint8_t b) {
    return static_cast<std::uint8_t>(std::lround(static_cast<float>(a) + (static_cast<float>(b) - static_cast<float>(a)) * f));
  };
  return Rgb{mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b)};
}

Rgb barricade_color(std::uint8_t health) noexcept {
  const int step = (std::max<int>(1, health) + 15) / 16;  // 1..16
  // Brightness (375 + 35 * (step - 1)) / 900: 5/12 at step 1, exactly 1 at step 16.
  auto shade = [step](std::uint8_t c) {
    return static_cast<std::uint8_t>((static_cast<int>(c) * (375 + 35 * (step - 1)) + 450) / 900);
  };
  return Rgb{shade(kBarricadeColor.r), shade(kBarricadeColor.g), shade(kBarricadeColor.b)};
}

SceneRenderer::SceneRenderer(SDL_Renderer* renderer) : renderer_(renderer) {}

SceneRenderer::~SceneRenderer() {
  if (map_texture_) SDL_DestroyTexture(map_texture_);
  if (heat_texture_) SDL_DestroyTexture(heat_texture_);
}

bool SceneRenderer::set_map(const sim::GridMap& map, std::string* error) {
  if (map_texture_) SDL_DestroyTexture(map_texture_);
  if (heat_texture_) SDL_DestroyTexture(heat_texture_);
  map_texture_ = nullptr;
  heat_texture_ = nullptr;
  integration_ = nullptr;
  flow_ = nullptr;
  has_map_ = false;
  if (map.width() < 1 || map.height() < 1) {
    if (error) *error = "empty map";
    return false;
  }
  // Nearest-neighbour scaling keeps cells crisp (and pixel colours exact for the tests).
  SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "0");
  map_texture_ = SDL_CreateTexture(renderer_, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STATIC, map.width(), map.height());
  if (!map_texture_) {
    if (error) *error = std::string("could not create the map texture: ") + SDL_GetError();
    return false;
  }
  SDL_SetTextureBlendMode(map_texture_, SDL_BLENDMODE_NONE);
  map_ = map;
  map_.set_change_log(false);  // a copy nobody follows cell by cell
  source_revision_ = map.revision();
  upload_map_pixels();
  has_map_ = true;
  return true;
}

void SceneRenderer::upload_map_pixels() {
  std::vector<std::uint32_t> pixels(map_.cell_count());
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = pack_rgba(cost_color(map_.costs()[i]), 255);
  SDL_UpdateTexture(map_texture_, nullptr, pixels.data(), map_.width() * 4);
}

bool SceneRenderer::update_map(const sim::GridMap& map, std::string* error) {
  if (!has_map_ || !map_texture_ || map.width() != map_.width() || map.height() != map_.height() ||
      !(map.cell_size() == map_.cell_size())) {
    return set_map(map, error);
  }
  if (map.revision() == source_revision_) return true;
  // Few changed cells: one 1x1 texture update each; many, or a change log that no longer
  // reaches back: the whole texture.
  constexpr std::size_t kMaxCellUpdates = 4096;
  std::vector<sim::CellCoord> scratch;
  std::span<const sim::CellCoord> changed;
  if (map.cells_changed_since(source_revision_, scratch, changed) && changed.size() <= kMaxCellUpdates) {
    for (const sim::CellCoord c : changed) {
      const std::uint8_t cost = map.cost(c.x, c.y);
      map_.set_cost(c.x, c.y, cost);
      const std::uint32_t pixel = pack_rgba(cost_color(cost), 255);
      const SDL_Rect cell{c.x, c.y, 1, 1};
      SDL_UpdateTexture(map_texture_, &cell, &pixel, 4);
    }
  } else {
    map_ = map;
    map_.set_change_log(false);
    upload_map_pixels();
  }
  source_revision_ = map.revision();
  return true;
}

void SceneRenderer::set_fields(const sim::IntegrationField* integration, const sim::FlowField* flow) {
  integration_ = integration;
  flow_ = flow;
  if (!has_map_ || !integration || integration->width() != map_.width() || integration->height() != map_.height()) {
    integration_ = nullptr;
    return;
  }
  if (flow && (flow->width() != map_.width() || flow->height() != map_.height())) flow_ = nullptr;
  if (!heat_texture_) {
    heat_texture_ = SDL_CreateTexture(renderer_, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STATIC, map_.width(),
                                      map_.height());
    if (!heat_texture_) return;
    SDL_SetTextureBlendMode(heat_texture_, SDL_BLENDMODE_BLEND);
  }
  const auto& values = integration->values();
  std::uint32_t max_value = 0;
  for (const auto v : values) {
    if (v != sim::kUnreachable) max_value = std::max(max_value, v);
  }
  std::vector<std::uint32_t> pixels(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] == sim::kUnreachable) {
      pixels[i] = 0;  // fully transparent: walls and unreachable cells keep their map colour
    } else {
      const float t = max_value == 0 ? 0.0f : static_cast<float>(values[i]) / static_cast<float>(max_value);
      pixels[i] = pack_rgba(heat_color(std::sqrt(t)), 150);
    }
  }
  SDL_UpdateTexture(heat_texture_, nullptr, pixels.data(), map_.width() * 4);
}

SceneRenderer::CellRange SceneRenderer::visible_cells(const Camera& camera) const {
  const float cs = map_.cell_size();
  const WorldRect view = camera.visible_world();
  return {std::clamp(static_cast<int>(std::floor(view.x0 / cs)), 0, map_.width()),
          std::clamp(static_cast<int>(std::floor(view.y0 / cs)), 0, map_.height()),
          std::clamp(static_cast<int>(std::ceil(view.x1 / cs)), 0, map_.width()),
          std::clamp(static_cast<int>(std::ceil(view.y1 / cs)), 0, map_.height())};
}

void SceneRenderer::copy_cells(SDL_Texture* texture, const Camera& camera) {
  // Copy only the visible cells: huge destination rectangles at high zoom are slow (and lose
  // precision) in the software renderer.
  const float cs = map_.cell_size();
  const auto [cx0, cy0, cx1, cy1] = visible_cells(camera);
  if (cx1 <= cx0 || cy1 <= cy0) return;
  const SDL_Rect src{cx0, cy0, cx1 - cx0, cy1 - cy0};
  const sim::Vec2 a = camera.world_to_screen({static_cast<float>(cx0) * cs, static_cast<float>(cy0) * cs});
  const sim::Vec2 b = camera.world_to_screen({static_cast<float>(cx1) * cs, static_cast<float>(cy1) * cs});
  const SDL_FRect dst{a.x, a.y, b.x - a.x, b.y - a.y};
  SDL_RenderCopyF(renderer_, texture, &src, &dst);
}

void SceneRenderer::draw_map(const Camera& camera) {
  if (has_map_ && map_texture_) copy_cells(map_texture_, camera);
}

void SceneRenderer::draw_heat(const Camera& camera) {
  if (has_map_ && heat_texture_ && integration_) copy_cells(heat_texture_, camera);
}

void SceneRenderer::draw_flow(const Camera& camera, bool heat_on) {
  if (!has_map_ || !flow_) return;
  const float cs = map_.cell_size();
  const float cell_px = cs * camera.zoom();
  // At most one arrow every ~10 pixels: thin out by a whole number of cells.
  const int stride = std::max(1, static_cast<int>(std::ceil(10.0f / std::max(cell_px, 1e-3f))));
  const WorldRect view = camera.visible_world();
  const int cx0 = std::max(0, static_cast<int>(std::floor(view.x0 / cs)) / stride * stride);
  const int cy0 = std::max(0, static_cast<int>(std::floor(view.y0 / cs)) / stride * stride);
  const int cx1 = std::min(map_.width(), static_cast<int>(std::ceil(view.x1 / cs)));
  const int cy1 = std::min(map_.height(), static_cast<int>(std::ceil(view.y1 / cs)));
  const float len = 0.42f * cs * static_cast<float>(stride);
  set_color(renderer_, heat_on ? kFlowArrowOnHeatColor : kFlowArrowColor);
  for (int cy = cy0; cy < cy1; cy += stride) {
    for (int cx = cx0; cx < cx1; cx += stride) {
      const auto d = flow_->at(cx, cy);
      if (d == sim::FlowDirection::kNone) continue;
      const sim::Vec2 v = sim::direction_vector(d);
      const sim::Vec2 c = map_.cell_center({cx, cy});
      const sim::Vec2 tail = camera.world_to_screen(c - v * len);
      const sim::Vec2 tip = camera.world_to_screen(c + v * len);
      SDL_RenderDrawLineF(renderer_, tail.x, tail.y, tip.x, tip.y);
      // Arrow head: two short strokes back from the tip, +-30 degrees.
      const float head = std::max(2.0f, 0.35f * len * camera.zoom());
      const float ang = std::atan2(v.y, v.x);
      for (const float side : {-0.5f, 0.5f}) {
        const float a = ang + std::numbers::pi_v<float> + side;
        SDL_RenderDrawLineF(renderer_, tip.x, tip.y, tip.x + std::cos(a) * head, tip.y + std::sin(a) * head);
      }
    }
  }
}

void SceneRenderer::draw_density(const Camera& camera, const InterpolatedFrame& frame) {
  density_drawn_ = 0;
  const protocol::DensityGrid& g = frame.density;
  if (g.empty() || g.levels.size() != static_cast<std::size_t>(g.width) * g.height) return;
  // One batch of rectangles per level (at most 15 draw calls, whatever the grid's size).
  std::array<std::vector<SDL_Rect>, 16> by_level;
  const float side = static_cast<float>(1u << g.cell_log2) * frame.density_cell_size;  // world units
  const float w = static_cast<float>(camera.screen_width());
  const float h = static_cast<float>(camera.screen_height());
  for (std::size_t row = 0; row < g.height; ++row) {
    for (std::size_t col = 0; col < g.width; ++col) {
      const std::uint8_t level = g.levels[row * g.width + col];
      if (level == 0) continue;
      const float x0 = static_cast<float>(g.origin_x) * frame.density_cell_size + static_cast<float>(col) * side;
      const float y0 = static_cast<float>(g.origin_y) * frame.density_cell_size + static_cast<float>(row) * side;
      const sim::Vec2 a = camera.world_to_screen({x0, y0});
      const sim::Vec2 b = camera.world_to_screen({x0 + side, y0 + side});
      if (b.x < 0.0f || b.y < 0.0f || a.x > w || a.y > h) continue;
      // Integer edges shared by neighbouring squares: no seams, no overlaps.
      const int x0i = static_cast<int>(std::floor(a.x)), y0i = static_cast<int>(std::floor(a.y));
      const int x1i = static_cast<int>(std::floor(b.x)), y1i = static_cast<int>(std::floor(b.y));
      if (x1i <= x0i || y1i <= y0i) continue;
      by_level[std::min<std::size_t>(level, 15)].push_back(SDL_Rect{x0i, y0i, x1i - x0i, y1i - y0i});
      ++density_drawn_;
    }
  }
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_BLEND);
  for (std::size_t level = 1; level < by_level.size(); ++level) {
    if (by_level[level].empty()) continue;
    const int alpha = std::min(255, kDensityAlphaBase + kDensityAlphaStep * static_cast<int>(level));
    SDL_SetRenderDrawColor(renderer_, kDensityColor.r, kDensityColor.g, kDensityColor.b, static_cast<std::uint8_t>(alpha));
    SDL_RenderFillRects(renderer_, by_level[level].data(), static_cast<int>(by_level[level].size()));
  }
}

void SceneRenderer::draw_barricades(const Camera& camera, const Barricades& barricades) {
  barricades_drawn_ = 0;
  if (!has_map_ || barricades.empty()) return;
  // The visible cells; one batch of rectangles per colour step (at most 16 draw calls).
  const float cs = map_.cell_size();
  const auto [cx0, cy0, cx1, cy1] = visible_cells(camera);
  if (cx1 <= cx0 || cy1 <= cy0) return;
  std::array<std::vector<SDL_FRect>, 17> by_step;
  const auto width = static_cast<std::uint32_t>(map_.width());
  const std::uint64_t cells = map_.cell_count();
  // Only the rows in view: the map is ordered by index, i.e. row by row.
  const auto first = barricades.lower_bound(static_cast<std::uint32_t>(cy0) * width);
  for (auto it = first; it != barricades.end(); ++it) {
    if (it->first >= cells) break;
    const auto x = static_cast<int>(it->first % width);
    const auto y = static_cast<int>(it->first / width);
    if (y >= cy1) break;
    if (x < cx0 || x >= cx1) continue;
    const sim::Vec2 a = camera.world_to_screen({static_cast<float>(x) * cs, static_cast<float>(y) * cs});
    const sim::Vec2 b = camera.world_to_screen({static_cast<float>(x + 1) * cs, static_cast<float>(y + 1) * cs});
    const int step = (std::max<int>(1, it->second) + 15) / 16;
    by_step[static_cast<std::size_t>(step)].push_back(SDL_FRect{a.x, a.y, b.x - a.x, b.y - a.y});
    ++barricades_drawn_;
  }
  for (std::size_t step = 1; step < by_step.size(); ++step) {
    if (by_step[step].empty()) continue;
    set_color(renderer_, barricade_color(static_cast<std::uint8_t>(step * 16 - 1)));
    SDL_RenderFillRectsF(renderer_, by_step[step].data(), static_cast<int>(by_step[step].size()));
  }
}

void SceneRenderer::draw_agents(const Camera& camera, const InterpolatedFrame& frame, const DrawOptions& options) {
  agents_drawn_ = 0;
  // Per kind: colour and radius in pixels. Slot kinds.size() is the fallback for agents of a
  // kind the table does not list (a wire value is never used as an index unchecked).
  const std::size_t n_kinds = std::min(options.kinds.size(), protocol::kMaxKinds);
  std::array<SDL_Color, protocol::kMaxKinds + 1> colors{};
  std::array<float, protocol::kMaxKinds + 1> radii{};
  float largest = options.agent_radius;
  for (std::size_t k = 0; k < n_kinds; ++k) {
    const std::uint32_t c = options.kinds[k].colour;
    colors[k] = SDL_Color{static_cast<std::uint8_t>(c >> 16), static_cast<std::uint8_t>(c >> 8), static_cast<std::uint8_t>(c), 255};
    radii[k] = options.kinds[k].radius * camera.zoom();
    largest = std::max(largest, options.kinds[k].radius);
  }
  colors[n_kinds] = to_sdl(kAgentColor);
  radii[n_kinds] = options.agent_radius * camera.zoom();
  auto slot_of = [&](std::uint8_t kind) { return kind < n_kinds ? static_cast<std::size_t>(kind) : n_kinds; };
  const float margin = std::max(2.0f, 2.0f * largest * camera.zoom());
  const float w = static_cast<float>(camera.screen_width());
  const float h = static_cast<float>(camera.screen_height());
  // Zoomed in: triangles pointing along the heading (one geometry batch); zoomed out: squares of
  // at least 2x2 px so single agents stay visible, one batch per kind. Decided on the fallback
  // radius so a frame does not mix the two looks.
  if (radii[n_kinds] >= 2.5f) {
    std::vector<SDL_Vertex> verts;
    verts.reserve(frame.agents.size() * 3);
    for (const auto& a : frame.agents) {
      const sim::Vec2 p = camera.world_to_screen({a.x, a.y});
      if (p.x < -margin || p.y < -margin || p.x > w + margin || p.y > h + margin) continue;
      ++agents_drawn_;
      const std::size_t slot = slot_of(a.kind);
      const float r_px = radii[slot];
      const SDL_Color color = colors[slot];
      const float c = std::cos(a.heading);
      const float s = std::sin(a.heading);
      const SDL_FPoint tip{p.x + c * r_px * 1.3f, p.y + s * r_px * 1.3f};
      const SDL_FPoint left{p.x - c * r_px * 0.8f - s * r_px * 0.8f, p.y - s * r_px * 0.8f + c * r_px * 0.8f};
      const SDL_FPoint right{p.x - c * r_px * 0.8f + s * r_px * 0.8f, p.y - s * r_px * 0.8f - c * r_px * 0.8f};
      verts.push_back(SDL_Vertex{tip, color, {0.0f, 0.0f}});
      verts.push_back(SDL_Vertex{left, color, {0.0f, 0.0f}});
      verts.push_back(SDL_Vertex{right, color, {0.0f, 0.0f}});
    }
    if (!verts.empty()) SDL_RenderGeometry(renderer_, nullptr, verts.data(), static_cast<int>(verts.size()), nullptr, 0);
    return;
  }
  std::array<std::vector<SDL_FRect>, protocol::kMaxKinds + 1> rects;
  for (const auto& a : frame.agents) {
    const sim::Vec2 p = camera.world_to_screen({a.x, a.y});
    if (p.x < -margin || p.y < -margin || p.x > w + margin || p.y > h + margin) continue;
    ++agents_drawn_;
    const std::size_t slot = slot_of(a.kind);
    const float size = std::max(2.0f, 2.0f * radii[slot]);
    rects[slot].push_back(SDL_FRect{std::floor(p.x - size * 0.5f), std::floor(p.y - size * 0.5f), size, size});
  }
  for (std::size_t slot = 0; slot <= n_kinds; ++slot) {
    if (rects[slot].empty()) continue;
    SDL_SetRenderDrawColor(renderer_, colors[slot].r, colors[slot].g, colors[slot].b, 255);
    SDL_RenderFillRectsF(renderer_, rects[slot].data(), static_cast<int>(rects[slot].size()));
  }
}

void SceneRenderer::draw_players(const Camera& camera, const InterpolatedFrame& frame, const DrawOptions& options) {
  constexpr int kSegments = 16;
  const float r_px = std::max(5.0f, options.player_radius * camera.zoom());
  for (const auto& pl : frame.players) {
    const sim::Vec2 p = camera.world_to_screen({pl.x, pl.y});
    const bool own = options.own_player_id != 0 && pl.id == options.own_player_id;
    const bool dead = pl.health == 0.0f;
    const SDL_Color fill = dead ? SDL_Color{120, 120, 120, 255} : to_sdl(own ? kOwnPlayerColor : kPlayerColor);
    const SDL_Color rim{0, 0, 0, 255};
    std::vector<SDL_Vertex> verts;
    verts.reserve(kSegments * 6);
    for (int i = 0; i < kSegments; ++i) {
      const float a0 = 2.0f * std::numbers::pi_v<float> * static_cast<float>(i) / kSegments;
      const float a1 = 2.0f * std::numbers::pi_v<float> * static_cast<float>(i + 1) / kSegments;
      // Dark rim first, then the fill on top, so the player reads on any background.
      const float ro = r_px + 1.5f;
      verts.push_back(SDL_Vertex{{p.x, p.y}, rim, {0, 0}});
      verts.push_back(SDL_Vertex{{p.x + std::cos(a0) * ro, p.y + std::sin(a0) * ro}, rim, {0, 0}});
      verts.push_back(SDL_Vertex{{p.x + std::cos(a1) * ro, p.y + std::sin(a1) * ro}, rim, {0, 0}});
    }
    for (int i = 0; i < kSegments; ++i) {
      const float a0 = 2.0f * std::numbers::pi_v<float> * static_cast<float>(i) / kSegments;
      const float a1 = 2.0f * std::numbers::pi_v<float> * static_cast<float>(i + 1) / kSegments;
      verts.push_back(SDL_Vertex{{p.x, p.y}, fill, {0, 0}});
      verts.push_back(SDL_Vertex{{p.x + std::cos(a0) * r_px, p.y + std::sin(a0) * r_px}, fill, {0, 0}});
      verts.push_back(SDL_Vertex{{p.x + std::cos(a1) * r_px, p.y + std::sin(a1) * r_px}, fill, {0, 0}});
    }
    SDL_RenderGeometry(renderer_, nullptr, verts.data(), static_cast<int>(verts.size()), nullptr, 0);
    // Built by append, not `"P" + std::to_string(..)`: g++ 12 at -O3 reports a false
    // -Wrestrict on that operator+ (GCC bug 105651), which -Werror turns into a build failure.
    std::string label = "P";
    label.append(std::to_string(pl.id));
    if (dead) {
      label.append(" dead");
    } else if (pl.health > 0.0f) {
      label.append(" ");
      label.append(std::to_string(static_cast<long long>(std::ceil(pl.health))));
      label.append("hp");
    }
    const int lx = static_cast<int>(p.x - static_cast<float>(text_width(label, 1)) * 0.5f);
    const int ly = static_cast<int>(p.y - r_px - 11.0f);
    draw_text(label, lx + 1, ly + 1, 1, Rgb{0, 0, 0});  // shadow: readable on light ground
    draw_text(label, lx, ly, 1, own ? kOwnPlayerColor : kPlayerColor);
  }
}

void SceneRenderer::draw_scene(const Camera& camera, const InterpolatedFrame& frame, const DrawOptions& options) {
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_NONE);
  set_color(renderer_, kBackgroundColor);
  SDL_RenderClear(renderer_);
  draw_map(camera);
  if (options.heat_map) draw_heat(camera);
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_NONE);
  if (options.barricades) {
    draw_barricades(camera, *options.barricades);
  } else {
    barricades_drawn_ = 0;
  }
  if (options.flow_arrows) draw_flow(camera, options.heat_map && integration_ != nullptr);
  draw_density(camera, frame);
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_NONE);
  draw_agents(camera, frame, options);
  draw_players(camera, frame, options);
}

void SceneRenderer::draw_text(std::string_view text, int x, int y, int scale, Rgb color) {
  std::vector<SDL_Rect> rects;
  for_each_text_pixel(text, x, y, scale, [&](int px, int py, int s) { rects.push_back(SDL_Rect{px, py, s, s}); });
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_NONE);
  set_color(renderer_, color);
  if (!rects.empty()) SDL_RenderFillRects(renderer_, rects.data(), static_cast<int>(rects.size()));
}

void SceneRenderer::draw_hud(std::span<const std::string> lines, int x, int y, int scale) {
  if (lines.empty()) return;
  int width = 0;
  for (const auto& l : lines) width = std::max(width, text_width(l, scale));
  const int line_h = kLineAdvance * scale;
  const int pad = 3 * scale;
  const SDL_Rect box{x, y, width + 2 * pad, static_cast<int>(lines.size()) * line_h + 2 * pad - 2 * scale};
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_BLEND);
  SDL_SetRenderDrawColor(renderer_, 0, 0, 0, 170);
  SDL_RenderFillRect(renderer_, &box);
  int ly = y + pad;
  for (const auto& l : lines) {
    draw_text(l, x + pad, ly, scale, kHudTextColor);
    ly += line_h;
  }
}

std::size_t SceneRenderer::draw_effects(const Camera& camera, const CombatEffects& effects, float shot_length) {
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_BLEND);
  const float w = static_cast<float>(camera.screen_width()), h = static_cast<float>(camera.screen_height());
  const auto on_screen = [&](sim::Vec2 p, float margin) {
    return p.x >= -margin && p.y >= -margin && p.x <= w + margin && p.y <= h + margin;
  };
  std::size_t drawn = 0;
  const float arm = std::max(3.0f, 0.5f * camera.zoom());
  for (const CombatMark& m : effects.deaths()) {
    const sim::Vec2 p = camera.world_to_screen({m.x, m.y});
    if (!on_screen(p, arm)) continue;
    const SDL_Color c = to_sdl(kDeathColor, static_cast<std::uint8_t>(255.0f * (1.0f - m.age)));
    SDL_SetRenderDrawColor(renderer_, c.r, c.g, c.b, c.a);
    const float a = arm * (1.0f + m.age);  // the cross grows as it fades
    SDL_RenderDrawLineF(renderer_, p.x - a, p.y - a, p.x + a, p.y + a);
    SDL_RenderDrawLineF(renderer_, p.x - a, p.y + a, p.x + a, p.y - a);
    ++drawn;
  }
  for (const CombatMark& m : effects.shots()) {
    const sim::Vec2 from = camera.world_to_screen({m.x, m.y});
    const sim::Vec2 to = camera.world_to_screen({m.x + std::cos(m.aim) * shot_length, m.y + std::sin(m.aim) * shot_length});
    const float reach = shot_length * camera.zoom();
    if (!on_screen(from, reach)) continue;
    const SDL_Color c = to_sdl(kShotColor, static_cast<std::uint8_t>(255.0f * (1.0f - m.age)));
    SDL_SetRenderDrawColor(renderer_, c.r, c.g, c.b, c.a);
    SDL_RenderDrawLineF(renderer_, from.x, from.y, to.x, to.y);
    ++drawn;
  }
  return drawn;
}

}  // namespace swarmfield::client
