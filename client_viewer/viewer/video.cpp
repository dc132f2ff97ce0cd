// The viewer's SDL set-up (video.hpp).
#include "video.hpp"

namespace swarmfield::viewer {

bool open_video(const Args& args, Video& video, std::string& error) {
  if (args.headless) {
    // No video subsystem at all: a software renderer drawing into a plain surface works with
    // no DISPLAY, no X server and no GPU. The hint keeps SDL off X11 should anything init video.
    SDL_SetHint(SDL_HINT_VIDEODRIVER, "offscreen");
    if (SDL_Init(0) != 0) {
      error = std::string("SDL_Init failed: ") + SDL_GetError();
      return false;
    }
    video.sdl_started = true;
    video.surface = SDL_CreateRGBSurfaceWithFormat(0, args.width, args.height, 32, SDL_PIXELFORMAT_RGB888);
    if (!video.surface) {
      error = std::string("could not create a ") + std::to_string(args.width) + "x" + std::to_string(args.height) +
              " offscreen surface: " + SDL_GetError();
      return false;
    }
    video.renderer = SDL_CreateSoftwareRenderer(video.surface);
    if (!video.renderer) {
      error = std::string("could not create the software renderer: ") + SDL_GetError();
      return false;
    }
    return true;
  }
  if (SDL_Init(SDL_INIT_VIDEO) != 0) {
    error = std::string("could not start SDL video (no display? use --headless): ") + SDL_GetError();
    return false;
  }
  video.sdl_started = true;
  // With no display at all SDL falls back to its "offscreen"/"dummy" driver: a window nobody
  // can see. Say so (exit 3) instead of silently rendering into the void, unless the user
  // asked for that driver with SDL_VIDEODRIVER.
  const char* driver = SDL_GetCurrentVideoDriver();
  const char* requested = SDL_getenv("SDL_VIDEODRIVER");
  const std::string driver_name = driver ? driver : "";
  if ((driver_name == "offscreen" || driver_name == "dummy") && (requested == nullptr || driver_name != requested)) {
    error = "could not start SDL video: no display found (SDL fell back to its '" + driver_name +
            "' driver); use --headless, or run under xvfb-run";
    return false;
  }
  video.window = SDL_CreateWindow("swarmfield viewer", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, args.width,
                                  args.height, SDL_WINDOW_RESIZABLE);
  if (!video.window) {
    error = std::string("could not open a window: ") + SDL_GetError();
    return false;
  }
  // Let SDL pick (GPU when there is one, the software renderer under Xvfb).
  video.renderer = SDL_CreateRenderer(video.window, -1, 0);
  if (!video.renderer) video.renderer = SDL_CreateRenderer(video.window, -1, SDL_RENDERER_SOFTWARE);
  if (!video.renderer) {
    error = std::string("could not create a renderer: ") + SDL_GetError();
    return false;
  }
  return true;
}

}  // namespace swarmfield::viewer
