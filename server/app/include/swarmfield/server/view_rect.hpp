#pragma once
// A client's view rectangle in world units, normalized so x0 <= x1 and y0 <= y1.
#include <algorithm>
#include <cmath>

namespace swarmfield::server {

struct ViewRect {
  float x0 = 0.0f, y0 = 0.0f, x1 = 0.0f, y1 = 0.0f;

  /// From two corners in any order; non-finite input gives an empty rectangle.
  [[nodiscard]] static ViewRect from_corners(float ax, float ay, float bx, float by) noexcept {
    if (!std::isfinite(ax) || !std::isfinite(ay) || !std::isfinite(bx) || !std::isfinite(by)) return {};
    return {std::min(ax, bx), std::min(ay, by), std::max(ax, bx), std::max(ay, by)};
  }
  /// Zero area = the client wants no agents (protocol: "empty = no agents wanted").
  [[nodiscard]] bool empty() const noexcept { return !(x1 > x0) || !(y1 > y0); }
  /// Grown by `margin` world units on every side (empty stays empty).
  [[nodiscard]] ViewRect grown(float margin) const noexcept {
    if (empty()) return *this;
    return {x0 - margin, y0 - margin, x1 + margin, y1 + margin};
  }
  /// Closed containment test (points on the border are inside).
  [[nodiscard]] bool contains(float x, float y) const noexcept { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

}  // namespace swarmfield::server
