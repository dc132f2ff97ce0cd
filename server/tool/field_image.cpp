// Field picture: heat map + contours + arrows + goal markers.
#include "field_image.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace swarmfield::tool {

namespace {

using Rgb = std::array<std::uint8_t, 3>;

constexpr Rgb kWall{34, 34, 40};
constexpr Rgb kUnreachableColor{96, 84, 104};
constexpr Rgb kArrow{16, 16, 16};
constexpr Rgb kGoal{230, 30, 30};
constexpr Rgb kGoalRing{255, 255, 255};

/// Reversed viridis-like ramp: t = 0 (at a goal) bright yellow ... t = 1 (farthest) dark purple.
Rgb ramp(double t) {
  static constexpr std::array<Rgb, 5> kStops{{{253, 231, 37}, {94, 201, 98}, {33, 145, 140}, {59, 82, 139}, {68, 1, 84}}};
  t = std::clamp(t, 0.0, 1.0) * static_cast<double>(kStops.size() - 1);
  const auto i = std::min(static_cast<std::size_t>(t), kStops.size() - 2);
  const double f = t - static_cast<double>(i);
  Rgb out{};
  for (std::size_t c = 0; c < 3; ++c)
    out[c] = static_cast<std::uint8_t>(std::lround(kStops[i][c] * (1.0 - f) + kStops[i + 1][c] * f));
  return out;
}

Rgb scaled(Rgb c, double s) {
  return {static_cast<std::uint8_t>(c[0] * s), static_cast<std::uint8_t>(c[1] * s), static_cast<std::uint8_t>(c[2] * s)};
}

class Canvas {
 public:
  explicit Canvas(RgbImage& img) : img_(img) {}
  void set(std::int32_t x, std::int32_t y, Rgb c) {
    if (x < 0 || y < 0 || x >= img_.width || y >= img_.height) return;
    const std::size_t i = (static_cast<std::size_t>(y) * static_cast<std::size_t>(img_.width) + static_cast<std::size_t>(x)) * 3;
    img_.rgb[i] = c[0];
    img_.rgb[i + 1] = c[1];
    img_.rgb[i + 2] = c[2];
  }
  /// Line of the given thickness (pixels) between two points in pixel coordinates.
  void line(double x0, double y0, double x1, double y1, std::int32_t thickness, Rgb c) {
    const double len = std::hypot(x1 - x0, y1 - y0);
    const auto steps = static_cast<std::int32_t>(std::ceil(len * 2.0)) + 1;
    const std::int32_t lo = -(thickness - 1) / 2;
    const std::int32_t hi = thickness / 2;
    for (std::int32_t s = 0; s <= steps; ++s) {
      const double t = static_cast<double>(s) / steps;
      const auto px = static_cast<std::int32_t>(std::floor(x0 + (x1 - x0) * t));
      const auto py = static_cast<std::int32_t>(std::floor(y0 + (y1 - y0) * t));
      for (std::int32_t dy = lo; dy <= hi; ++dy)
        for (std::int32_t dx = lo; dx <= hi; ++dx) set(px + dx, py + dy, c);
    }
  }
  void disc(double cx, double cy, double r, Rgb c) {
    for (auto y = static_cast<std::int32_t>(std::floor(cy - r)); y <= static_cast<std::int32_t>(std::ceil(cy + r)); ++y)
      for (auto x = static_cast<std::int32_t>(std::floor(cx - r)); x <= static_cast<std::int32_t>(std::ceil(cx + r)); ++x) {
        const double dx = x + 0.5 - cx;
        const double dy = y + 0.5 - cy;
        if (dx * dx + dy * dy <= r * r) set(x, y, c);
      }
  }

 private:
  RgbImage& img_;
};

}  // namespace

RgbImage render_field_image(const sim::GridMap& map, const sim::IntegrationField& integration,
                            const sim::FlowField& flow, std::span<const sim::CellCoord> goals,
                            const FieldImageOptions& options) {
  const std::int32_t ppc = std::max(options.pixels_per_cell, 1);
  const std::int32_t w = map.width();
  const std::int32_t h = map.height();
  RgbImage img;
  img.width = w * ppc;
  img.height = h * ppc;
  img.rgb.assign(static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height) * 3, 0);
  Canvas canvas(img);

  std::uint32_t max_value = 1;
  for (const std::uint32_t v : integration.values())
    if (v != sim::kUnreachable) max_value = std::max(max_value, v);
  // About 24 contour bands across the field.
  const std::uint32_t band = std::max<std::uint32_t>(max_value / 24, 1);
  const auto band_of = [&](std::int32_t x, std::int32_t y) -> std::int64_t {
    if (!integration.reachable(x, y)) return -1;
    return integration.raw(x, y) / band;
  };

  // Cells.
  for (std::int32_t y = 0; y < h; ++y) {
    for (std::int32_t x = 0; x < w; ++x) {
      Rgb c;
      if (!map.walkable(x, y)) {
        c = kWall;
      } else if (!integration.reachable(x, y)) {
        c = kUnreachableColor;
      } else {
        c = ramp(static_cast<double>(integration.raw(x, y)) / max_value);
        const std::uint8_t cost = map.cost(x, y);
        if (cost >= 3) {
          c = scaled(c, 0.78);
        } else if (cost == 2) {
          c = scaled(c, 0.89);
        }
        const std::int64_t b = band_of(x, y);
        if ((x + 1 < w && band_of(x + 1, y) >= 0 && band_of(x + 1, y) != b) ||
            (y + 1 < h && band_of(x, y + 1) >= 0 && band_of(x, y + 1) != b))
          c = scaled(c, 0.7);
      }
      for (std::int32_t py = 0; py < ppc; ++py)
        for (std::int32_t px = 0; px < ppc; ++px) canvas.set(x * ppc + px, y * ppc + py, c);
    }
  }

  // Arrows: the smoothed direction at the centre of every arrow_step-th cell, drawn centred on
  // that point with a two-stroke head.
  const std::int32_t step = std::max(options.arrow_step, 2);
  const double cell_px = ppc;
  const double len = step * cell_px * 0.75;
  const std::int32_t thickness = ppc >= 4 ? 2 : 1;
  for (std::int32_t cy = step / 2; cy < h; cy += step) {
    for (std::int32_t cx = step / 2; cx < w; cx += step) {
      if (flow.at(cx, cy) == sim::FlowDirection::kNone) continue;
      const sim::Vec2 centre = map.cell_center({cx, cy});
      const sim::Vec2 d = sim::sample_flow(map, flow, centre);
      if (d.x == 0.0f && d.y == 0.0f) continue;
      const double px = (cx + 0.5) * cell_px;
      const double py = (cy + 0.5) * cell_px;
      const double tx = px + d.x * len * 0.5;
      const double ty = py + d.y * len * 0.5;
      canvas.line(px - d.x * len * 0.5, py - d.y * len * 0.5, tx, ty, thickness, kArrow);
      const double head = len * 0.3;
      const double a = std::atan2(d.y, d.x);
      for (const double side : {2.6, -2.6}) {
        canvas.line(tx, ty, tx + std::cos(a + side) * head, ty + std::sin(a + side) * head, thickness, kArrow);
      }
    }
  }

  // Goals.
  const double r = std::max(4.0, 2.0 * cell_px);
  for (const sim::CellCoord g : goals) {
    const double gx = (g.x + 0.5) * cell_px;
    const double gy = (g.y + 0.5) * cell_px;
    canvas.disc(gx, gy, r + 2.0, kGoalRing);
    canvas.disc(gx, gy, r, kGoal);
  }
  return img;
}

}  // namespace swarmfield::tool
