#pragma once
// World <-> screen transform of the viewer: a centre in world units and a zoom in pixels per
// world unit. Screen y grows downward like world y (row index), so no flip.
#include <algorithm>

#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::client {

/// Axis-aligned world rectangle (world units), x0 <= x1, y0 <= y1.
struct WorldRect {
  float x0 = 0.0f, y0 = 0.0f, x1 = 0.0f, y1 = 0.0f;
};

class Camera {
 public:
  static constexpr float kMinZoom = 0.05f;   ///< pixels per world unit
  static constexpr float kMaxZoom = 200.0f;

  Camera() = default;
  Camera(int screen_w, int screen_h) { resize(screen_w, screen_h); }

  void resize(int screen_w, int screen_h) noexcept {
    screen_w_ = std::max(1, screen_w);
    screen_h_ = std::max(1, screen_h);
  }
  [[nodiscard]] int screen_width() const noexcept { return screen_w_; }
  [[nodiscard]] int screen_height() const noexcept { return screen_h_; }
  [[nodiscard]] float zoom() const noexcept { return zoom_; }
  [[nodiscard]] sim::Vec2 center() const noexcept { return center_; }

  void set_zoom(float pixels_per_unit) noexcept { zoom_ = std::clamp(pixels_per_unit, kMinZoom, kMaxZoom); }
  void center_on(sim::Vec2 world) noexcept { center_ = world; }

  /// Shows the whole rectangle (world units) with `margin_px` pixels of border.
  void fit(WorldRect rect, int margin_px = 8) noexcept {
    const float w = std::max(1e-3f, rect.x1 - rect.x0);
    const float h = std::max(1e-3f, rect.y1 - rect.y0);
    const float avail_w = static_cast<float>(std::max(1, screen_w_ - 2 * margin_px));
    const float avail_h = static_cast<float>(std::max(1, screen_h_ - 2 * margin_px));
    set_zoom(std::min(avail_w / w, avail_h / h));
    center_ = {(rect.x0 + rect.x1) * 0.5f, (rect.y0 + rect.y1) * 0.5f};
  }

  [[nodiscard]] sim::Vec2 world_to_screen(sim::Vec2 w) const noexcept {
    return {(w.x - center_.x) * zoom_ + static_cast<float>(screen_w_) * 0.5f,
            (w.y - center_.y) * zoom_ + static_cast<float>(screen_h_) * 0.5f};
  }
  [[nodiscard]] sim::Vec2 screen_to_world(sim::Vec2 s) const noexcept {
    return {(s.x - static_cast<float>(screen_w_) * 0.5f) / zoom_ + center_.x,
            (s.y - static_cast<float>(screen_h_) * 0.5f) / zoom_ + center_.y};
  }

  /// Moves the view by a screen-space drag of (dx, dy) pixels (content follows the mouse).
  void pan_pixels(float dx, float dy) noexcept {
    center_.x -= dx / zoom_;
    center_.y -= dy / zoom_;
  }

  /// Multiplies the zoom by `factor`, keeping the world point under screen pixel `anchor` fixed.
  void zoom_at(float factor, sim::Vec2 anchor) noexcept {
    const sim::Vec2 before = screen_to_world(anchor);
    set_zoom(zoom_ * factor);
    const sim::Vec2 after = screen_to_world(anchor);
    center_ += before - after;
  }

  /// The world rectangle the screen shows.
  [[nodiscard]] WorldRect visible_world() const noexcept {
    const sim::Vec2 a = screen_to_world({0.0f, 0.0f});
    const sim::Vec2 b = screen_to_world({static_cast<float>(screen_w_), static_cast<float>(screen_h_)});
    return {a.x, a.y, b.x, b.y};
  }

 private:
  int screen_w_ = 1;
  int screen_h_ = 1;
  float zoom_ = 4.0f;
  sim::Vec2 center_{};
};

}  // namespace swarmfield::client
