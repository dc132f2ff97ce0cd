#pragma once
// A tiny built-in 5x7 bitmap font (printable ASCII) for the viewer's HUD, so the viewer needs
// no font files and no SDL_ttf. Pure data + layout; drawing lives in the renderer.
#include <array>
#include <cstdint>
#include <string_view>

namespace swarmfield::client {

inline constexpr int kGlyphWidth = 5;    ///< pixels (at scale 1)
inline constexpr int kGlyphHeight = 7;   ///< pixels
inline constexpr int kGlyphAdvance = 6;  ///< horizontal step per character, incl. 1 px gap
inline constexpr int kLineAdvance = 9;   ///< vertical step per line

/// Seven rows, top first; bit 4 is the leftmost column, bit 0 the rightmost.
using GlyphRows = std::array<std::uint8_t, kGlyphHeight>;

/// Glyph of a character; characters outside printable ASCII (32..126) give the '?' glyph.
[[nodiscard]] const GlyphRows& glyph(char c) noexcept;

/// True if pixel (x, y) of the glyph is lit (0 <= x < 5, 0 <= y < 7; false outside).
[[nodiscard]] bool glyph_pixel(char c, int x, int y) noexcept;

/// Width and height in pixels of `text` at `scale` (newlines start a new line).
[[nodiscard]] int text_width(std::string_view text, int scale) noexcept;
[[nodiscard]] int text_height(std::string_view text, int scale) noexcept;

/// Calls `plot(px, py, scale)` for every lit glyph pixel of `text` drawn with its top-left
/// corner at (x, y); (px, py) is the top-left of a scale x scale block.
template <typename Plot>
void for_each_text_pixel(std::string_view text, int x, int y, int scale, Plot&& plot) {
  int cx = x;
  int cy = y;
  for (const char c : text) {
    if (c == '\n') {
      cx = x;
      cy += kLineAdvance * scale;
      continue;
    }
    const GlyphRows& rows = glyph(c);
    for (int row = 0; row < kGlyphHeight; ++row) {
      for (int col = 0; col < kGlyphWidth; ++col) {
        if ((rows[static_cast<std::size_t>(row)] >> (kGlyphWidth - 1 - col)) & 1u) {
          plot(cx + col * scale, cy + row * scale, scale);
        }
      }
    }
    cx += kGlyphAdvance * scale;
  }
}

}  // namespace swarmfield::client
