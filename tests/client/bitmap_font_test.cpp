// The built-in 5x7 font: every printable glyph has ink, glyphs differ, layout sizes add up.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "swarmfield/client/bitmap_font.hpp"

namespace client = swarmfield::client;

TEST_CASE("every printable character except space has a non-empty glyph, and glyphs differ") {
  std::set<client::GlyphRows> seen;
  for (char c = 33; c < 127; ++c) {
    int lit = 0;
    for (int y = 0; y < client::kGlyphHeight; ++y) {
      for (int x = 0; x < client::kGlyphWidth; ++x) lit += client::glyph_pixel(c, x, y) ? 1 : 0;
    }
    CHECK_MESSAGE(lit > 0, "glyph '" << c << "' is empty");
    // Only the 5 low bits are used.
    for (const auto row : client::glyph(c)) CHECK((row & ~0x1Fu) == 0);
    seen.insert(client::glyph(c));
  }
  CHECK(seen.size() == 94);  // no two characters share a shape
  int space = 0;
  for (int y = 0; y < client::kGlyphHeight; ++y) {
    for (int x = 0; x < client::kGlyphWidth; ++x) space += client::glyph_pixel(' ', x, y) ? 1 : 0;
  }
  CHECK(space == 0);
}

TEST_CASE("unknown characters fall back to '?' and out-of-glyph pixels are off") {
  CHECK(client::glyph('\x01') == client::glyph('?'));
  CHECK(client::glyph('\xE9') == client::glyph('?'));
  CHECK_FALSE(client::glyph_pixel('A', -1, 0));
  CHECK_FALSE(client::glyph_pixel('A', 5, 0));
  CHECK_FALSE(client::glyph_pixel('A', 0, 7));
  // Spot-check shapes: '1' has a vertical stem in the middle column, '-' one full middle row.
  for (int y = 0; y < 7; ++y) CHECK(client::glyph_pixel('1', 2, y));
  for (int x = 0; x < 5; ++x) CHECK(client::glyph_pixel('-', x, 3));
  CHECK_FALSE(client::glyph_pixel('-', 2, 0));
}

TEST_CASE("text layout: sizes and plotted pixels") {
  CHECK(client::text_width("", 1) == 0);
  CHECK(client::text_width("A", 1) == 5);
  CHECK(client::text_width("AB", 1) == 11);
  CHECK(client::text_width("AB", 3) == 33);
  CHECK(client::text_width("ABC\nA", 1) == 17);
  CHECK(client::text_height("A", 2) == 14);
  CHECK(client::text_height("A\nB", 1) == 16);

  std::vector<std::pair<int, int>> pixels;
  client::for_each_text_pixel("1-", 10, 20, 2, [&](int x, int y, int s) {
    CHECK(s == 2);
    pixels.emplace_back(x, y);
  });
  // '1' has 10 lit pixels, '-' has 5.
  CHECK(pixels.size() == 15);
  for (const auto& [x, y] : pixels) {
    CHECK(x >= 10);
    CHECK(x < 10 + client::text_width("1-", 2));
    CHECK(y >= 20);
    CHECK(y < 20 + client::text_height("1-", 2));
  }
}
