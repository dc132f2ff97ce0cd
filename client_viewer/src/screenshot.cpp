#include "swarmfield/client/screenshot.hpp"

#include <SDL.h>

#include <cstdint>
#include <vector>

#include "swarmfield/io/png_writer.hpp"

namespace swarmfield::client {

namespace {
bool write_rgb24(SDL_Surface* rgb, const std::string& path, std::string& error) {
  const int w = rgb->w;
  const int h = rgb->h;
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3);
  const auto* base = static_cast<const std::uint8_t*>(rgb->pixels);
  for (int y = 0; y < h; ++y) {
    const auto* row = base + static_cast<std::ptrdiff_t>(y) * rgb->pitch;
    std::copy(row, row + static_cast<std::ptrdiff_t>(w) * 3,
              packed.begin() + static_cast<std::ptrdiff_t>(y) * w * 3);
  }
  return swarmfield::io::write_png_rgb(path, w, h, packed, error);
}
}  // namespace

bool save_surface_png(SDL_Surface* surface, const std::string& path, std::string& error) {
  if (!surface) {
    error = "no surface to save to " + path;
    return false;
  }
  SDL_Surface* rgb = SDL_ConvertSurfaceFormat(surface, SDL_PIXELFORMAT_RGB24, 0);
  if (!rgb) {
    error = std::string("could not convert the frame for ") + path + ": " + SDL_GetError();
    return false;
  }
  SDL_LockSurface(rgb);
  const bool ok = write_rgb24(rgb, path, error);
  SDL_UnlockSurface(rgb);
  SDL_FreeSurface(rgb);
  return ok;
}

bool save_renderer_png(SDL_Renderer* renderer, const std::string& path, std::string& error) {
  int w = 0;
  int h = 0;
  if (SDL_GetRendererOutputSize(renderer, &w, &h) != 0 || w < 1 || h < 1) {
    error = std::string("could not read the frame size for ") + path + ": " + SDL_GetError();
    return false;
  }
  SDL_Surface* rgb = SDL_CreateRGBSurfaceWithFormat(0, w, h, 24, SDL_PIXELFORMAT_RGB24);
  if (!rgb) {
    error = std::string("could not allocate the frame for ") + path + ": " + SDL_GetError();
    return false;
  }
  bool ok = SDL_RenderReadPixels(renderer, nullptr, SDL_PIXELFORMAT_RGB24, rgb->pixels, rgb->pitch) == 0;
  if (!ok) {
    error = std::string("could not read the frame for ") + path + ": " + SDL_GetError();
  } else {
    ok = write_rgb24(rgb, path, error);
  }
  SDL_FreeSurface(rgb);
  return ok;
}

}  // namespace swarmfield::client
