// swarmfield-viewer: watches a swarmfield server (the session: viewer.hpp). Parses the flags,
// opens the video, runs one session until it ends, a window close or SIGINT / SIGTERM.
#include <atomic>
#include <csignal>
#include <iostream>
#include <string>

#include "video.hpp"
#include "viewer.hpp"
#include "viewer_options.hpp"

namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }

}  // namespace

int main(int argc, char** argv) {
  swarmfield::viewer::Args args;
  if (const auto code = swarmfield::viewer::parse_options(argc, argv, args)) return *code;
  swarmfield::viewer::Video video;
  std::string error;
  if (!swarmfield::viewer::open_video(args, video, error)) {
    std::cerr << "error: " << error << "\n";
    return 3;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  swarmfield::viewer::Viewer viewer(args, video, g_stop);
  if (const auto code = viewer.connect()) return *code;
  viewer.loop();
  return viewer.summary();
}
