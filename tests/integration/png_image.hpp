#pragma once
// Reads a PNG file into 8-bit RGB pixels with libpng (palette, grey, 16-bit and alpha inputs are
// converted; alpha is dropped), so tests can count pixels of known colours in a screenshot.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace swarmfield::testing {

struct RgbImage {
  int width = 0;   ///< pixels
  int height = 0;  ///< pixels
  std::vector<std::uint8_t> rgb;  ///< row-major, 3 bytes per pixel, width*height*3 bytes
};

/// The image in `path`, or nullopt with `error` set (missing file, not a PNG, corrupt data,
/// larger than 16384 pixels per side).
[[nodiscard]] std::optional<RgbImage> load_png_rgb(const std::string& path, std::string& error);

}  // namespace swarmfield::testing
