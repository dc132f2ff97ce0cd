#pragma once
// Which navigation fields a map gets: one whole-map field, or hierarchical fields (sectors,
// portal routes and per-sector fields on demand; see HierarchicalFields).
#include <cstdint>
#include <optional>
#include <string_view>

namespace swarmfield::sim {

enum class FieldMode : std::uint8_t { kWhole, kHierarchical, kAuto };

/// Map side (cells, the larger of width and height) from which kAuto means hierarchical: at
/// 4096 a whole rebuild takes ~0.2 s and a field pair ~100 MiB (HIERARCHICAL.md).
inline constexpr std::int32_t kHierarchicalFromSide = 4096;

/// kWhole or kHierarchical for a `width` x `height` map (cells): kAuto resolved by
/// kHierarchicalFromSide, the others returned as they are.
[[nodiscard]] constexpr FieldMode resolve_field_mode(FieldMode mode, std::int32_t width, std::int32_t height) noexcept {
  if (mode != FieldMode::kAuto) return mode;
  return (width > height ? width : height) >= kHierarchicalFromSide ? FieldMode::kHierarchical : FieldMode::kWhole;
}

/// "whole", "hierarchical", "auto".
[[nodiscard]] constexpr std::string_view field_mode_name(FieldMode mode) noexcept {
  return mode == FieldMode::kWhole ? "whole" : mode == FieldMode::kHierarchical ? "hierarchical" : "auto";
}

/// The mode named `text` (field_mode_name()'s words), or nullopt.
[[nodiscard]] constexpr std::optional<FieldMode> parse_field_mode(std::string_view text) noexcept {
  for (const FieldMode m : {FieldMode::kWhole, FieldMode::kHierarchical, FieldMode::kAuto}) {
    if (text == field_mode_name(m)) return m;
  }
  return std::nullopt;
}

}  // namespace swarmfield::sim
