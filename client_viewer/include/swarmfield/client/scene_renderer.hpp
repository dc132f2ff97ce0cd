#pragma once
// Draws the viewer's scene with any SDL_Renderer: the windowed viewer's, or a software renderer
// on an SDL_Surface for the headless screenshot mode and the pixel tests. The map and the heat
// map are textures of one pixel per cell, scaled with nearest-neighbour filtering, so a frame
// costs the same for a 64x64 or a 1024x1024 map.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/client/camera.hpp"
#include "swarmfield/client/map_delta.hpp"
#include "swarmfield/client/snapshot_interpolation.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

struct SDL_Renderer;
struct SDL_Texture;

namespace swarmfield::client {

class CombatEffects;

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  constexpr bool operator==(const Rgb&) const noexcept = default;
};

inline constexpr Rgb kBackgroundColor{10, 10, 14};   ///< outside the map
inline constexpr Rgb kWallColor{46, 48, 60};         ///< cost 255
inline constexpr Rgb kAgentColor{235, 80, 50};
inline constexpr Rgb kPlayerColor{60, 200, 255};
inline constexpr Rgb kOwnPlayerColor{90, 255, 120};  ///< the player this client drives
inline constexpr Rgb kFlowArrowColor{35, 65, 170};        ///< on the plain map
inline constexpr Rgb kFlowArrowOnHeatColor{245, 245, 245}; ///< over the (blue) heat map
inline constexpr Rgb kHudTextColor{240, 240, 240};
/// Density squares (agents the server counts but does not send individually): this colour
/// blended over the map, more opaque the more agents (alpha kDensityAlphaBase +
/// kDensityAlphaStep * level, level = 1 + floor(log2 count)).
inline constexpr Rgb kDensityColor{200, 60, 40};
inline constexpr int kDensityAlphaBase = 40;
inline constexpr int kDensityAlphaStep = 12;
/// A whole barricade (wood brown: apart from the walls' blue-grey, the roads' grey and the
/// agents' reds); damaged ones are darker (barricade_color).
inline constexpr Rgb kBarricadeColor{168, 104, 40};

/// Colour of a map cell: walls dark, walkable cells grey, darker as the cost rises (roads
/// lightest, then sidewalks, alleys, swamp).
[[nodiscard]] Rgb cost_color(std::uint8_t cost) noexcept;
/// Heat-map colour for an integration value `t` in [0,1] (0 = at a goal, 1 = farthest).
[[nodiscard]] Rgb heat_color(float t) noexcept;
/// Colour of a barricade of health `health` (fraction of full, 1..255; 0 reads as 1): 16 equal
/// steps of brightness from 5/12 of kBarricadeColor (health 1..16) up to kBarricadeColor itself
/// (health 241..255).
[[nodiscard]] Rgb barricade_color(std::uint8_t health) noexcept;

/// Marks of agents killed (a cross where they fell, fading) and shot tracers.
inline constexpr Rgb kDeathColor{255, 230, 120};
inline constexpr Rgb kShotColor{255, 255, 200};

struct DrawOptions {
  bool flow_arrows = false;
  bool heat_map = false;
  std::uint32_t own_player_id = 0;  ///< 0 = none
  float agent_radius = 0.35f;       ///< world units: drawn size of an agent of no known kind
  float player_radius = 0.5f;       ///< world units
  /// The server's enemy kinds (Welcome::kinds): an agent of kind k < kinds.size() is drawn in
  /// kinds[k]'s colour and radius; any other kind index (or no table) in kAgentColor and
  /// agent_radius.
  std::span<const protocol::KindInfo> kinds = {};
  /// Barricades to draw over the map (Connection::barricades(): cell index of the map given to
  /// set_map() -> health), each cell filled with barricade_color(health); nullptr = none.
  /// Indices beyond the map are not drawn.
  const Barricades* barricades = nullptr;
};

class SceneRenderer {
 public:
  explicit SceneRenderer(SDL_Renderer* renderer);
  ~SceneRenderer();
  SceneRenderer(const SceneRenderer&) = delete;
  SceneRenderer& operator=(const SceneRenderer&) = delete;

  /// (Re)builds the map texture. false + `error` (SDL's message) when SDL can not create it.
  bool set_map(const sim::GridMap& map, std::string* error = nullptr);
  /// Brings the map texture up to date with `map`, the map last given to set_map() or here,
  /// changed since (e.g. by MapDeltas): only the cells changed since then are redrawn
  /// (GridMap::cells_changed_since), or the whole texture when the map's change log no longer
  /// reaches back. A map of another size or cell size is set_map(). The fields given to
  /// set_fields() stay (rebuild them for the new map and call set_fields() again). Cheap when
  /// nothing changed: call it every frame. false + `error` as set_map().
  bool update_map(const sim::GridMap& map, std::string* error = nullptr);
  /// Uses these fields for the heat map and the flow arrows (nullptr: none). Call again after
  /// every rebuild of the fields; the heat texture is rebuilt here. The fields must outlive
  /// the next draw_scene().
  void set_fields(const sim::IntegrationField* integration, const sim::FlowField* flow);

  /// Clears the target and draws map, overlays, the density grid, agents and players.
  void draw_scene(const Camera& camera, const InterpolatedFrame& frame, const DrawOptions& options);
  /// Text with a translucent dark box behind it, top-left at (x, y) pixels.
  void draw_hud(std::span<const std::string> lines, int x, int y, int scale);
  void draw_text(std::string_view text, int x, int y, int scale, Rgb color);
  /// Over the scene: each death of `effects` as a cross where the agent fell and each shot as
  /// a line `shot_length` world units long from the shooter along its aim, both fading with
  /// their age. Returns the marks drawn (inside the view).
  std::size_t draw_effects(const Camera& camera, const CombatEffects& effects, float shot_length);

  /// Agents drawn by the last draw_scene() (inside the view).
  [[nodiscard]] std::size_t agents_drawn() const noexcept { return agents_drawn_; }
  /// Density squares drawn by the last draw_scene() (level > 0, on screen).
  [[nodiscard]] std::size_t density_squares_drawn() const noexcept { return density_drawn_; }
  /// Barricade cells drawn by the last draw_scene() (inside the map and the view).
  [[nodiscard]] std::size_t barricades_drawn() const noexcept { return barricades_drawn_; }

 private:
  void draw_map(const Camera& camera);
  void draw_heat(const Camera& camera);
  void draw_flow(const Camera& camera, bool heat_on);
  void draw_density(const Camera& camera, const InterpolatedFrame& frame);
  void draw_barricades(const Camera& camera, const Barricades& barricades);
  /// The map texture's pixels for every cell of map_.
  void upload_map_pixels();
  void draw_agents(const Camera& camera, const InterpolatedFrame& frame, const DrawOptions& options);
  void draw_players(const Camera& camera, const InterpolatedFrame& frame, const DrawOptions& options);
  void copy_cells(SDL_Texture* texture, const Camera& camera);
  // The map cells the camera sees: columns [x0, x1), rows [y0, y1), clamped to the map.
  struct CellRange {
    int x0, y0, x1, y1;
  };
  [[nodiscard]] CellRange visible_cells(const Camera& camera) const;

  SDL_Renderer* renderer_;
  SDL_Texture* map_texture_ = nullptr;
  SDL_Texture* heat_texture_ = nullptr;
  sim::GridMap map_;  ///< own copy: callers may replace theirs
  bool has_map_ = false;
  std::uint32_t source_revision_ = 0;  ///< revision() of the caller's map last drawn into the texture
  const sim::IntegrationField* integration_ = nullptr;
  const sim::FlowField* flow_ = nullptr;
  std::size_t agents_drawn_ = 0;
  std::size_t density_drawn_ = 0;
  std::size_t barricades_drawn_ = 0;
};

}  // namespace swarmfield::client
