#pragma once
// Writing what the viewer rendered to a PNG file.
#include <string>

struct SDL_Surface;
struct SDL_Renderer;

namespace swarmfield::client {

/// Writes `surface` (any pixel format) as an 8-bit RGB PNG. false + `error` (naming the path)
/// when the surface can not be converted or the file can not be written.
[[nodiscard]] bool save_surface_png(SDL_Surface* surface, const std::string& path, std::string& error);

/// Reads back the renderer's current target (window or surface) and writes it as a PNG.
[[nodiscard]] bool save_renderer_png(SDL_Renderer* renderer, const std::string& path, std::string& error);

}  // namespace swarmfield::client
