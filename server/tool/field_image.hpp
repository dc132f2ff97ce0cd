#pragma once
// Renders an integration + flow field as an RGB picture (for `swarmfield-tool field`).
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

namespace swarmfield::tool {

struct FieldImageOptions {
  std::int32_t pixels_per_cell = 4;  ///< >= 1
  std::int32_t arrow_step = 8;       ///< cells between arrows (>= 2)
};

struct RgbImage {
  std::int32_t width = 0;   ///< pixels
  std::int32_t height = 0;  ///< pixels
  std::vector<std::uint8_t> rgb;  ///< row-major, 3 bytes per pixel
};

/// Heat map of the integration field (yellow near a goal, dark purple far; cells costing more
/// than 1 slightly darker; faint iso-cost contours), walls dark grey, walkable-but-unreachable
/// cells grey-violet, smoothed flow arrows every `arrow_step` cells, goals as red discs.
[[nodiscard]] RgbImage render_field_image(const sim::GridMap& map, const sim::IntegrationField& integration,
                                          const sim::FlowField& flow, std::span<const sim::CellCoord> goals,
                                          const FieldImageOptions& options);

}  // namespace swarmfield::tool
