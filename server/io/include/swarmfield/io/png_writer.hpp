#pragma once
// Writing 8-bit RGB images as PNG (libpng).
#include <cstdint>
#include <string>
#include <vector>

namespace swarmfield::io {

/// Writes `rgb` (row-major, 3 bytes per pixel, top row first, width * height * 3 bytes) to
/// `path` as an 8-bit RGB PNG. Returns false with a message naming the file when the size is
/// wrong or zero, the file cannot be created (OS reason) or libpng fails; a partly written
/// file is removed.
[[nodiscard]] bool write_png_rgb(const std::string& path, std::int32_t width, std::int32_t height,
                                 const std::vector<std::uint8_t>& rgb, std::string& error);

}  // namespace swarmfield::io
