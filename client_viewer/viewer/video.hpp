#pragma once
// The viewer's SDL window and renderer, or with --headless an offscreen surface.
#include <SDL.h>

#include <string>

#include "viewer_options.hpp"

namespace swarmfield::viewer {

// Owns the SDL objects; destroys them in the right order on every exit path.
struct Video {
  SDL_Window* window = nullptr;
  SDL_Surface* surface = nullptr;  ///< headless target
  SDL_Renderer* renderer = nullptr;
  bool sdl_started = false;
  ~Video() {
    if (renderer) SDL_DestroyRenderer(renderer);
    if (surface) SDL_FreeSurface(surface);
    if (window) SDL_DestroyWindow(window);
    if (sdl_started) SDL_Quit();
  }
};

/// Starts SDL and opens `video` as `args` ask (a window, or an offscreen surface with a software
/// renderer for --headless). False with `error` set when there is no display (and no
/// --headless), or SDL fails.
[[nodiscard]] bool open_video(const Args& args, Video& video, std::string& error);

}  // namespace swarmfield::viewer
