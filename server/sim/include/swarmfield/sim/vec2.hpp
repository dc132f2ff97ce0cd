#pragma once
// Small 2-D vector in world units. Plain value type; no SIMD tricks so results are
// reproducible across builds (no -ffast-math in the simulation).
#include <cmath>

namespace swarmfield::sim {

struct Vec2 {
  float x = 0.0f;
  float y = 0.0f;

  constexpr Vec2 operator+(Vec2 o) const noexcept { return {x + o.x, y + o.y}; }
  constexpr Vec2 operator-(Vec2 o) const noexcept { return {x - o.x, y - o.y}; }
  constexpr Vec2 operator*(float s) const noexcept { return {x * s, y * s}; }
  constexpr Vec2& operator+=(Vec2 o) noexcept { x += o.x; y += o.y; return *this; }
  constexpr Vec2& operator-=(Vec2 o) noexcept { x -= o.x; y -= o.y; return *this; }
  constexpr bool operator==(const Vec2&) const noexcept = default;
};

/// Both coordinates finite (neither NaN nor infinite).
[[nodiscard]] inline bool finite(Vec2 v) noexcept { return std::isfinite(v.x) && std::isfinite(v.y); }

[[nodiscard]] constexpr float dot(Vec2 a, Vec2 b) noexcept { return a.x * b.x + a.y * b.y; }
[[nodiscard]] inline float length(Vec2 v) noexcept { return std::sqrt(dot(v, v)); }

/// Unit vector of `v`, or {0,0} when |v| is below `eps` (never NaN).
[[nodiscard]] inline Vec2 normalized_or_zero(Vec2 v, float eps = 1e-6f) noexcept {
  const float len = length(v);
  return len > eps ? Vec2{v.x / len, v.y / len} : Vec2{};
}

}  // namespace swarmfield::sim
