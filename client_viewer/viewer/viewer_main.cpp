// swarmfield-viewer: watches a swarmfield server. SDL2 window (or, with --headless, a software
// renderer on an offscreen surface that needs no display at all), interpolated agents, HUD,
// flow-arrow and heat-map overlays computed locally with swarmfield_sim.
#include <SDL.h>

#include <CLI/CLI.hpp>
#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "swarmfield/client/bitmap_font.hpp"
#include "swarmfield/client/camera.hpp"
#include "swarmfield/client/command_line.hpp"
#include "swarmfield/client/connection.hpp"
#include "swarmfield/client/scene_renderer.hpp"
#include "swarmfield/client/screenshot.hpp"
#include "swarmfield/client/snapshot_interpolation.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace client = swarmfield::client;
namespace sim = swarmfield::sim;
namespace protocol = swarmfield::protocol;

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }

struct Args {
  std::string host = "127.0.0.1";
  std::uint16_t port = 7777;
  std::string name = "viewer";
  bool headless = false;
  double seconds = 0.0;
  std::string screenshot;
  int width = 1024;
  int height = 768;
  bool follow = false;
  bool player = false;
  bool flow = false;
  bool heat = false;
  double interp_snapshots = 2.0;
  int connect_timeout_ms = 5000;
  int data_timeout_ms = 5000;
  int fps = 60;
  float zoom = 0.0f;  ///< pixels per world unit; 0 = fit the whole map
};

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

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

// Opens `path` for writing without truncating it (append mode) and removes it again if it did
// not exist before: a write check that leaves no trace. `why` gets strerror on failure.
bool screenshot_path_writable(const std::string& path, std::string& why) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  FILE* f = std::fopen(path.c_str(), "ab");
  if (!f) {
    why = std::strerror(errno);
    return false;
  }
  std::fclose(f);
  if (!existed) std::filesystem::remove(path, ec);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"swarmfield-viewer: watch a swarmfield server (SDL2 window or headless PNG)"};
  Args args;
  app.add_option("--host", args.host, "server address")->capture_default_str();
  app.add_option("--port", args.port, "server TCP port")->capture_default_str();
  app.add_option("--name", args.name, "client name shown by the server")->capture_default_str();
  app.add_flag("--headless", args.headless, "no window: render offscreen (needs no display)");
  app.add_option("--seconds", args.seconds, "quit after this many seconds (0 = run until closed; headless default 5)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--screenshot", args.screenshot, "write the last frame to this PNG file");
  app.add_option("--width", args.width, "frame width, pixels")->check(CLI::Range(64, 8192))->capture_default_str();
  app.add_option("--height", args.height, "frame height, pixels")->check(CLI::Range(64, 8192))->capture_default_str();
  app.add_flag("--follow", args.follow, "keep the (own or first) player centred");
  app.add_flag("--player", args.player, "join as a player, move with WASD");
  app.add_flag("--flow", args.flow, "start with flow arrows on (toggle F)");
  app.add_flag("--heat", args.heat, "start with the integration heat map on (toggle H)");
  app.add_option("--interp-snapshots", args.interp_snapshots, "render this many snapshot intervals behind")
      ->check(CLI::Range(0.0, 20.0))
      ->capture_default_str();
  app.add_option("--connect-timeout-ms", args.connect_timeout_ms,
                 "time allowed to connect and get the server's answer to Hello, ms")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  app.add_option("--data-timeout-ms", args.data_timeout_ms,
                 "fail (exit 1) when the server sends nothing for this long, ms (0 = never)")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  app.add_option("--zoom", args.zoom, "pixels per world unit (0 = fit the whole map)")
      ->check(CLI::Range(0.0f, client::Camera::kMaxZoom));
  app.add_option("--fps", args.fps, "frame rate cap")->check(CLI::Range(1, 500))->capture_default_str();
  if (const auto code = swarmfield::client::parse_command_line(app, argc, argv)) return *code;
  if (args.headless && args.seconds <= 0.0) args.seconds = 5.0;
  if (!args.screenshot.empty()) {
    // Fail now, not after --seconds of watching, when the screenshot can never be written.
    std::string why;
    if (!screenshot_path_writable(args.screenshot, why)) {
      std::cerr << "error: can not write the screenshot '" << args.screenshot << "': " << why << "\n";
      return 4;
    }
  }

  Video video;
  std::string error;
  if (!open_video(args, video, error)) {
    std::cerr << "error: " << error << "\n";
    return 3;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  client::SceneRenderer scene(video.renderer);
  client::Camera camera(args.width, args.height);

  asio::io_context io;
  client::ConnectionOptions options;
  options.host = args.host;
  options.port = args.port;
  options.name = args.name;
  options.role = args.player ? protocol::Role::kPlayer : protocol::Role::kViewer;
  options.connect_timeout = std::chrono::milliseconds(args.connect_timeout_ms);
  options.handshake_timeout = std::chrono::milliseconds(args.connect_timeout_ms) + std::chrono::seconds(10);
  options.data_timeout = std::chrono::milliseconds(args.data_timeout_ms);
  client::Connection connection(io, options);
  connection.start();

  const auto started = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - started).count(); };
  const auto frame_period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / args.fps));

  // UI state.
  bool quit = false;
  bool flow = args.flow;
  bool heat = args.heat;
  bool follow = args.follow;
  bool dragging = false;
  bool map_ready = false;
  int move_x = 0;
  int move_y = 0;
  std::uint64_t frames = 0;
  double fps = 0.0;
  std::uint64_t fps_frames = 0;
  auto fps_window = Clock::now();
  auto next_input = Clock::now();
  client::InterpolationClock interp_clock(30.0);
  std::uint32_t observed_tick = 0;
  client::InterpolatedFrame frame;
  sim::NavigationFields fields;
  bool fields_shown = false;
  auto last_field_update = Clock::now();
  std::string end_reason;
  std::size_t agents_visible = 0;
  std::size_t density_squares = 0;

  auto handle_events = [&] {
    SDL_Event e;
    while (SDL_PollEvent(&e)) {
      switch (e.type) {
        case SDL_QUIT: quit = true; break;
        case SDL_WINDOWEVENT:
          if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) camera.resize(e.window.data1, e.window.data2);
          break;
        case SDL_KEYDOWN: {
          const auto key = e.key.keysym.sym;
          const float step = 60.0f;
          if (key == SDLK_ESCAPE || key == SDLK_q) quit = true;
          if (key == SDLK_f) flow = !flow;
          if (key == SDLK_h) heat = !heat;
          if (key == SDLK_p) follow = !follow;
          if (key == SDLK_LEFT) { camera.pan_pixels(step, 0); follow = false; }
          if (key == SDLK_RIGHT) { camera.pan_pixels(-step, 0); follow = false; }
          if (key == SDLK_UP) { camera.pan_pixels(0, step); follow = false; }
          if (key == SDLK_DOWN) { camera.pan_pixels(0, -step); follow = false; }
          const sim::Vec2 mid{static_cast<float>(camera.screen_width()) * 0.5f, static_cast<float>(camera.screen_height()) * 0.5f};
          if (key == SDLK_PLUS || key == SDLK_EQUALS || key == SDLK_KP_PLUS) camera.zoom_at(1.25f, mid);
          if (key == SDLK_MINUS || key == SDLK_KP_MINUS) camera.zoom_at(0.8f, mid);
          if ((key == SDLK_0 || key == SDLK_HOME) && map_ready) {
            const auto& m = connection.map();
            camera.fit({0.0f, 0.0f, static_cast<float>(m.width()) * m.cell_size(), static_cast<float>(m.height()) * m.cell_size()});
            follow = false;
          }
          break;
        }
        case SDL_MOUSEWHEEL: {
          int mx = 0;
          int my = 0;
          SDL_GetMouseState(&mx, &my);
          const float factor = e.wheel.y > 0 ? 1.2f : (e.wheel.y < 0 ? 1.0f / 1.2f : 1.0f);
          camera.zoom_at(factor, {static_cast<float>(mx), static_cast<float>(my)});
          break;
        }
        case SDL_MOUSEBUTTONDOWN:
          if (e.button.button == SDL_BUTTON_LEFT || e.button.button == SDL_BUTTON_RIGHT) dragging = true;
          break;
        case SDL_MOUSEBUTTONUP: dragging = false; break;
        case SDL_MOUSEMOTION:
          if (dragging) {
            camera.pan_pixels(static_cast<float>(e.motion.xrel), static_cast<float>(e.motion.yrel));
            follow = false;
          }
          break;
        default: break;
      }
    }
    if (args.player && !args.headless) {
      const Uint8* keys = SDL_GetKeyboardState(nullptr);
      move_x = (keys[SDL_SCANCODE_D] ? 1 : 0) - (keys[SDL_SCANCODE_A] ? 1 : 0);
      move_y = (keys[SDL_SCANCODE_S] ? 1 : 0) - (keys[SDL_SCANCODE_W] ? 1 : 0);
    }
  };

  auto draw_connecting = [&] {
    SDL_SetRenderDrawColor(video.renderer, client::kBackgroundColor.r, client::kBackgroundColor.g,
                           client::kBackgroundColor.b, 255);
    SDL_RenderClear(video.renderer);
    const std::string text = "connecting to " + args.host + ":" + std::to_string(args.port) + " ...";
    scene.draw_text(text, (camera.screen_width() - client::text_width(text, 2)) / 2, camera.screen_height() / 2, 2,
                    client::kHudTextColor);
  };

  auto draw_frame = [&](const client::ConnectionStats& stats) {
    client::DrawOptions draw;
    draw.flow_arrows = flow;
    draw.heat_map = heat;
    draw.own_player_id = connection.welcome().player_id;
    draw.kinds = connection.welcome().kinds;
    scene.draw_scene(camera, frame, draw);
    agents_visible = scene.agents_drawn();
    density_squares = scene.density_squares_drawn();
    std::vector<std::string> hud;
    hud.push_back("tick " + std::to_string(static_cast<long long>(frame.tick)) + "  rtt " + fmt("%.1f", stats.rtt_ms) +
                  " ms  " + fmt("%.1f", stats.kbit_per_s) + " kbit/s  fps " + fmt("%.0f", fps));
    // Agents drawn one by one / in the world (tracked by the server for this view), and the
    // density grid's lower bound of the rest of the view.
    const std::uint64_t density = client::density_agents_floor(frame.density);
    hud.push_back("agents " + std::to_string(agents_visible) + "/" + std::to_string(frame.total_agents) + " (" +
                  std::to_string(frame.agents.size()) + " sent" +
                  (density > 0 ? ", " + std::to_string(density) + "+ as density" : std::string()) + ")  players " +
                  std::to_string(frame.players.size()) +
                  "  snapshots " +
                  std::to_string(stats.snapshots_received) + (stats.bad_datagrams ? "  bad " + std::to_string(stats.bad_datagrams) : ""));
    hud.push_back(std::string("[F]low ") + (flow ? "on" : "off") + "  [H]eat " + (heat ? "on" : "off") + "  [P] follow " +
                  (follow ? "on" : "off") + "  zoom " + fmt("%.2f", camera.zoom()));
    if (!end_reason.empty()) hud.push_back("disconnected: " + end_reason);
    scene.draw_hud(hud, 6, 6, 2);
  };

  // ---- connect (keeps the window responsive meanwhile) -------------------------------------
  while (!connection.connected() && !connection.finished() && !quit && !g_stop) {
    if (args.seconds > 0.0 && elapsed() >= args.seconds) break;
    handle_events();
    draw_connecting();
    if (video.window) SDL_RenderPresent(video.renderer);
    ++frames;
    const auto wake = Clock::now() + std::chrono::milliseconds(20);
    io.run_until(wake);
    if (io.stopped()) io.restart();
    if (Clock::now() < wake) std::this_thread::sleep_until(wake);
  }
  if (!connection.connected()) {
    const std::string why = connection.error().empty()
                                ? "gave up connecting to " + args.host + ":" + std::to_string(args.port) +
                                      " (stopped before the handshake finished)"
                                : connection.error();
    std::cerr << "error: " << why << "\n";
    std::printf("viewer: connected=0 frames=%llu seconds=%.1f\n", static_cast<unsigned long long>(frames), elapsed());
    return 1;
  }

  const sim::GridMap& map = connection.map();
  if (!scene.set_map(map, &error)) {
    std::cerr << "error: " << error << "\n";
    connection.close("viewer error");
    return 3;
  }
  const client::WorldRect map_rect{0.0f, 0.0f, static_cast<float>(map.width()) * map.cell_size(),
                                   static_cast<float>(map.height()) * map.cell_size()};
  camera.fit(map_rect);
  if (args.zoom > 0.0f) camera.set_zoom(args.zoom);
  map_ready = true;
  const auto& welcome = connection.welcome();
  interp_clock = client::InterpolationClock(welcome.tick_hz);
  const double delay_ticks = args.interp_snapshots * static_cast<double>(welcome.tick_hz) /
                             static_cast<double>(std::max<std::uint16_t>(1, welcome.snapshot_hz));
  std::cerr << "info: connected to " << args.host << ":" << args.port << " as client " << welcome.client_id << ", map '"
            << welcome.map.name << "' " << map.width() << "x" << map.height() << ", " << welcome.tick_hz << " Hz ticks, "
            << welcome.snapshot_hz << " Hz snapshots\n";

  // ---- main loop ---------------------------------------------------------------------------
  bool lost = false;
  bool ended = false;
  while (!quit && !g_stop) {
    const auto frame_start = Clock::now();
    if (args.seconds > 0.0 && elapsed() >= args.seconds) break;
    handle_events();
    io.poll();
    if (io.stopped()) io.restart();
    const auto& stats = connection.stats();
    if (connection.finished() && !ended) {
      ended = true;
      lost = !connection.ended_by_bye();  // a server's Bye is an orderly end, not a failure
      end_reason = connection.error().empty() ? "connection closed" : connection.error();
      std::cerr << (lost ? "error: " : "info: ") << end_reason << "\n";
      if (video.window == nullptr || args.seconds > 0.0) {
        // Nothing more to show: keep the last frame for the screenshot and stop.
        break;
      }
    }

    // Map local time to server ticks from every snapshot not seen yet.
    for (const auto& r : connection.snapshots()) {
      if (r.snapshot.tick > observed_tick) {
        interp_clock.observe(r.snapshot.tick, r.received_at);
        observed_tick = r.snapshot.tick;
      }
    }
    (void)connection.take_new_snapshot_count();
    if (interp_clock.valid()) {
      client::interpolate_history(connection.snapshots(), interp_clock.render_tick(frame_start, delay_ticks), frame);
    }

    if (follow) {
      for (const auto& p : frame.players) {
        if (welcome.player_id == 0 || p.id == welcome.player_id) {
          camera.center_on({p.x, p.y});
          break;
        }
      }
    }

    // Inputs at ~30 Hz: move intent (players) and the view rectangle for the area of interest.
    if (frame_start >= next_input && connection.connected()) {
      next_input = frame_start + std::chrono::milliseconds(33);
      protocol::Input input;
      const sim::Vec2 move = sim::normalized_or_zero({static_cast<float>(move_x), static_cast<float>(move_y)});
      input.move_x = move.x;
      input.move_y = move.y;
      const client::WorldRect view = camera.visible_world();
      input.view_x0 = view.x0;
      input.view_y0 = view.y0;
      input.view_x1 = view.x1;
      input.view_y1 = view.y1;
      connection.send_input(input);
    }

    // Fields for the overlays: goals = the players' cells, same as the server's swarm uses.
    // Rebuilt at most 5 times a second: on big maps a rebuild costs tens of ms, and players
    // change cells several times a second.
    if ((flow || heat) && (!fields_shown || frame_start - last_field_update >= std::chrono::milliseconds(200))) {
      last_field_update = frame_start;
      std::vector<sim::CellCoord> goals;
      if (const auto* latest = connection.latest()) {
        for (const auto& p : latest->snapshot.players) goals.push_back(map.world_to_cell({p.x, p.y}));
      }
      if (fields.update(map, goals) || !fields_shown) {
        scene.set_fields(&fields.integration(), &fields.flow());
        fields_shown = true;
      }
    }

    draw_frame(stats);
    if (video.window) SDL_RenderPresent(video.renderer);
    ++frames;
    ++fps_frames;
    const double fps_seconds = std::chrono::duration<double>(Clock::now() - fps_window).count();
    if (fps_seconds >= 1.0) {
      fps = static_cast<double>(fps_frames) / fps_seconds;
      fps_frames = 0;
      fps_window = Clock::now();
    }
    // Sleep the rest of the frame inside Asio so packets are handled as they come.
    const auto frame_end = frame_start + frame_period;
    if (Clock::now() < frame_end) {
      io.run_until(frame_end);
      if (io.stopped()) io.restart();
      // run_until returns at once when nothing is pending (connection gone): do not spin.
      if (Clock::now() < frame_end) std::this_thread::sleep_until(frame_end);
    }
  }

  int exit_code = lost ? 1 : 0;
  if (!args.screenshot.empty()) {
    // Redraw the last frame: after SDL_RenderPresent a window's back buffer is undefined.
    draw_frame(connection.stats());
    const bool saved = video.surface ? client::save_surface_png(video.surface, args.screenshot, error)
                                     : client::save_renderer_png(video.renderer, args.screenshot, error);
    if (!saved) {
      std::cerr << "error: " << error << "\n";
      exit_code = exit_code ? exit_code : 4;
    }
  }
  connection.close("viewer quit");
  io.poll();

  const auto& stats = connection.stats();
  std::printf(
      "viewer: connected=1 frames=%llu snapshots=%llu agents_visible=%zu agents_in_frame=%zu agents_total=%u "
      "density_squares=%zu rtt_ms=%.2f kbit_s=%.1f bad_datagrams=%llu seconds=%.1f%s%s\n",
      static_cast<unsigned long long>(frames), static_cast<unsigned long long>(stats.snapshots_received), agents_visible,
      frame.agents.size(), frame.total_agents, density_squares, stats.rtt_ms, stats.kbit_per_s,
      static_cast<unsigned long long>(stats.bad_datagrams), elapsed(), args.screenshot.empty() ? "" : " screenshot=",
      args.screenshot.c_str());
  std::fflush(stdout);
  return exit_code;
}
