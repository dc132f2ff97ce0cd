// swarmfield-viewer's session (viewer.hpp): SDL2 window (or, with --headless, a software
// renderer on an offscreen surface that needs no display at all), interpolated agents,
// barricades, HUD, flow-arrow and heat-map overlays computed locally with swarmfield_sim (and
// recomputed when the server's MapDeltas change the map).
#include "viewer.hpp"

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "swarmfield/client/bitmap_font.hpp"
#include "swarmfield/client/camera.hpp"
#include "swarmfield/client/combat_effects.hpp"
#include "swarmfield/client/connection.hpp"
#include "swarmfield/client/play_controls.hpp"
#include "swarmfield/client/scene_renderer.hpp"
#include "swarmfield/client/screenshot.hpp"
#include "swarmfield/client/snapshot_interpolation.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace client = swarmfield::client;
namespace sim = swarmfield::sim;
namespace protocol = swarmfield::protocol;

// A shot's tracer, world units: the server's default --fire-range (Welcome does not carry it).
constexpr float kShotDrawLength = 10.0f;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace

namespace swarmfield::viewer {

void Viewer::handle_events() {
  SDL_Event e;
  while (SDL_PollEvent(&e)) {
    switch (e.type) {
      case SDL_QUIT: quit_ = true; break;
      case SDL_WINDOWEVENT:
        if (e.window.event == SDL_WINDOWEVENT_SIZE_CHANGED) camera_.resize(e.window.data1, e.window.data2);
        break;
      case SDL_KEYDOWN: {
        const auto key = e.key.keysym.sym;
        const float step = 60.0f;
        if (key == SDLK_ESCAPE || key == SDLK_q) quit_ = true;
        if (key == SDLK_f) flow_ = !flow_;
        if (key == SDLK_h) heat_ = !heat_;
        if (key == SDLK_p) follow_ = !follow_;
        if (key == SDLK_b && args_.player && map_ready_) request_build_at_mouse();
        if (key == SDLK_LEFT) { camera_.pan_pixels(step, 0); follow_ = false; }
        if (key == SDLK_RIGHT) { camera_.pan_pixels(-step, 0); follow_ = false; }
        if (key == SDLK_UP) { camera_.pan_pixels(0, step); follow_ = false; }
        if (key == SDLK_DOWN) { camera_.pan_pixels(0, -step); follow_ = false; }
        const sim::Vec2 mid{static_cast<float>(camera_.screen_width()) * 0.5f,
                            static_cast<float>(camera_.screen_height()) * 0.5f};
        if (key == SDLK_PLUS || key == SDLK_EQUALS || key == SDLK_KP_PLUS) camera_.zoom_at(1.25f, mid);
        if (key == SDLK_MINUS || key == SDLK_KP_MINUS) camera_.zoom_at(0.8f, mid);
        if ((key == SDLK_0 || key == SDLK_HOME) && map_ready_) {
          const auto& m = connection_->map();
          camera_.fit({0.0f, 0.0f, static_cast<float>(m.width()) * m.cell_size(),
                       static_cast<float>(m.height()) * m.cell_size()});
          follow_ = false;
        }
        break;
      }
      case SDL_MOUSEWHEEL: {
        int mx = 0;
        int my = 0;
        SDL_GetMouseState(&mx, &my);
        const float factor = e.wheel.y > 0 ? 1.2f : (e.wheel.y < 0 ? 1.0f / 1.2f : 1.0f);
        camera_.zoom_at(factor, {static_cast<float>(mx), static_cast<float>(my)});
        break;
      }
      case SDL_MOUSEBUTTONDOWN:
        if (args_.play && e.button.button == SDL_BUTTON_LEFT) {
          firing_ = true;  // --play: the left button is the trigger, the right one pans
        } else if (e.button.button == SDL_BUTTON_LEFT || e.button.button == SDL_BUTTON_RIGHT) {
          dragging_ = true;
        }
        break;
      case SDL_MOUSEBUTTONUP:
        if (args_.play && e.button.button == SDL_BUTTON_LEFT) {
          firing_ = false;
        } else {
          dragging_ = false;
        }
        break;
      case SDL_MOUSEMOTION:
        if (dragging_) {
          camera_.pan_pixels(static_cast<float>(e.motion.xrel), static_cast<float>(e.motion.yrel));
          follow_ = false;
        }
        break;
      default: break;
    }
  }
  if (args_.player && !args_.headless) {
    const Uint8* keys = SDL_GetKeyboardState(nullptr);
    move_x_ = (keys[SDL_SCANCODE_D] ? 1 : 0) - (keys[SDL_SCANCODE_A] ? 1 : 0);
    move_y_ = (keys[SDL_SCANCODE_S] ? 1 : 0) - (keys[SDL_SCANCODE_W] ? 1 : 0);
  }
}

void Viewer::draw_connecting() {
  SDL_SetRenderDrawColor(video_.renderer, client::kBackgroundColor.r, client::kBackgroundColor.g,
                         client::kBackgroundColor.b, 255);
  SDL_RenderClear(video_.renderer);
  const std::string text = "connecting to " + args_.host + ":" + std::to_string(args_.port) + " ...";
  scene_.draw_text(text, (camera_.screen_width() - client::text_width(text, 2)) / 2, camera_.screen_height() / 2, 2,
                   client::kHudTextColor);
}

void Viewer::draw_frame(const client::ConnectionStats& stats) {
  client::DrawOptions draw;
  draw.flow_arrows = flow_;
  draw.heat_map = heat_;
  draw.own_player_id = connection_->welcome().player_id;
  draw.kinds = connection_->welcome().kinds;
  draw.barricades = &connection_->barricades();
  scene_.draw_scene(camera_, frame_, draw);
  scene_.draw_effects(camera_, effects_, kShotDrawLength);
  agents_visible_ = scene_.agents_drawn();
  density_squares_ = scene_.density_squares_drawn();
  std::vector<std::string> hud;
  hud.push_back("tick " + std::to_string(static_cast<long long>(frame_.tick)) + "  rtt " + fmt("%.1f", stats.rtt_ms) +
                " ms  " + fmt("%.1f", stats.kbit_per_s) + " kbit/s  fps " + fmt("%.0f", fps_));
  // Agents drawn one by one / in the world (tracked by the server for this view), and the
  // density grid's lower bound of the rest of the view.
  const std::uint64_t density = client::density_agents_floor(frame_.density);
  hud.push_back("agents " + std::to_string(agents_visible_) + "/" + std::to_string(frame_.total_agents) + " (" +
                std::to_string(frame_.agents.size()) + " sent" +
                (density > 0 ? ", " + std::to_string(density) + "+ as density" : std::string()) + ")  players " +
                std::to_string(frame_.players.size()) +
                (connection_->barricades().empty() ? std::string()
                                                  : "  barricades " + std::to_string(connection_->barricades().size())) +
                "  snapshots " + std::to_string(stats.snapshots_received) +
                (stats.bad_datagrams ? "  bad " + std::to_string(stats.bad_datagrams) : ""));
  hud.push_back(std::string("[F]low ") + (flow_ ? "on" : "off") + "  [H]eat " + (heat_ ? "on" : "off") +
                "  [P] follow " + (follow_ ? "on" : "off") + "  zoom " + fmt("%.2f", camera_.zoom()));
  // The game: each player's health and kills (the first 4).
  std::string fighters;
  for (std::size_t i = 0; i < frame_.players.size() && i < 4; ++i) {
    const auto& pl = frame_.players[i];
    fighters.append(fighters.empty() ? "" : "  ");
    fighters.append("P");
    fighters.append(std::to_string(pl.id));
    // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive, GCC bug 105329) on
    // `" " + std::to_string(...)` once this function is inlined into its caller.
    if (pl.health > 0.0f) {
      fighters.append(" ");
      fighters.append(std::to_string(static_cast<long long>(std::ceil(pl.health))));
      fighters.append(" hp");
    } else {
      fighters.append(" dead");
    }
    fighters.append(", ");
    fighters.append(std::to_string(pl.kills));
    fighters.append(" kills, score ");
    fighters.append(std::to_string(pl.score));
  }
  if (frame_.wave > 0) {
    fighters.append(fighters.empty() ? "" : "  ");
    fighters.append("wave ");
    fighters.append(std::to_string(frame_.wave));
  }
  if (!fighters.empty()) hud.push_back(fighters);
  if (args_.play) hud.push_back("[WASD] move  [mouse] aim  [left button] fire  [B] build  [right drag] pan");
  if (lost_connection_ && end_reason_.empty()) hud.push_back("connection lost: resuming the session...");
  if (!end_reason_.empty()) hud.push_back("disconnected: " + end_reason_);
  scene_.draw_hud(hud, 6, 6, 2);
}

// ---- Connect ---------------------------------------------------------------------------------
// Keeps the window responsive meanwhile. Then the map, the camera and the interpolation clock.
// An exit code when the viewer cannot go on.
std::optional<int> Viewer::connect() {
  while (!connection_->connected() && !connection_->finished() && !quit_ && !stop_) {
    if (args_.seconds > 0.0 && elapsed() >= args_.seconds) break;
    handle_events();
    draw_connecting();
    if (video_.window) SDL_RenderPresent(video_.renderer);
    ++frames_;
    const auto wake = Clock::now() + std::chrono::milliseconds(20);
    io_.run_until(wake);
    if (io_.stopped()) io_.restart();
    if (Clock::now() < wake) std::this_thread::sleep_until(wake);
  }
  if (!connection_->connected()) {
    const std::string why = connection_->error().empty()
                                ? "gave up connecting to " + args_.host + ":" + std::to_string(args_.port) +
                                      " (stopped before the handshake finished)"
                                : connection_->error();
    std::cerr << "error: " << why << "\n";
    std::printf("viewer: connected=0 frames=%llu seconds=%.1f\n", static_cast<unsigned long long>(frames_), elapsed());
    return 1;
  }

  const sim::GridMap& map = connection_->map();
  std::string error;
  if (!scene_.set_map(map, &error)) {
    std::cerr << "error: " << error << "\n";
    connection_->close("viewer error");
    return 3;
  }
  map_ = &map;
  map_revision_shown_ = map.revision();
  const client::WorldRect map_rect{0.0f, 0.0f, static_cast<float>(map.width()) * map.cell_size(),
                                   static_cast<float>(map.height()) * map.cell_size()};
  camera_.fit(map_rect);
  if (args_.zoom > 0.0f) camera_.set_zoom(args_.zoom);
  map_ready_ = true;
  const auto& welcome = connection_->welcome();
  interp_clock_ = client::InterpolationClock(welcome.tick_hz);
  delay_ticks_ = args_.interp_snapshots * static_cast<double>(welcome.tick_hz) /
                 static_cast<double>(std::max<std::uint16_t>(1, welcome.snapshot_hz));
  std::cerr << "info: connected to " << args_.host << ":" << args_.port << " as client " << welcome.client_id
            << ", map '" << welcome.map.name << "' " << map.width() << "x" << map.height() << ", " << welcome.tick_hz
            << " Hz ticks, " << welcome.snapshot_hz << " Hz snapshots\n";
  return std::nullopt;
}

// ---- Loop ------------------------------------------------------------------------------------
// One frame per pass at --fps at most: events, packets, interpolation, inputs, overlays, draw.
void Viewer::loop() {
  while (!quit_ && !stop_) {
    const auto frame_start = Clock::now();
    if (args_.seconds > 0.0 && elapsed() >= args_.seconds) break;
    handle_events();
    io_.poll();
    if (io_.stopped()) io_.restart();
    if (connection_ended()) break;
    if (lost_connection_ && connection_->connected()) resumed();
    if (connection_->connected()) ticket_ = connection_->resume_ticket();
    // After a resume may have replaced the connection (the old one's stats would dangle).
    const auto& stats = connection_->stats();
    interpolate(frame_start);
    if (follow_) follow_player();
    send_input(frame_start);
    follow_map_changes();
    update_fields(frame_start);
    draw_frame(stats);
    if (video_.window) SDL_RenderPresent(video_.renderer);
    count_frame();
    wait_for_next_frame(frame_start);
  }
}

bool Viewer::connection_ended() {
  if (!connection_->finished() || ended_) return false;
  if (resume()) return false;
  ended_ = true;
  lost_ = !connection_->ended_by_bye();  // a server's Bye is an orderly end, not a failure
  end_reason_ = connection_->error().empty() ? "connection closed" : connection_->error();
  if (resume_tries_ >= client::kMaxResumeTries) {
    end_reason_ += " (gave up resuming the session after " + std::to_string(resume_tries_) + " tries)";
  }
  std::cerr << (lost_ ? "error: " : "info: ") << end_reason_ << "\n";
  // With no window, or a time limit, nothing more to show: keep the last frame for the
  // screenshot and stop.
  return video_.window == nullptr || args_.seconds > 0.0;
}

// A connection lost (not ended by the server's Bye or Error) is resumed with the session's
// ticket: a new connection whose Hello carries the proof, for the same player, at most
// client::kMaxResumeTries times in a row, the tries spread by client::resume_delay(). The last
// frame stays on screen meanwhile.
bool Viewer::resume() {
  client::Connection& c = *connection_;
  if (c.ended_by_server() || !ticket_ || resume_tries_ >= client::kMaxResumeTries || quit_ || stop_) return false;
  if (!resume_at_) {
    // This connection has just ended: say why, and wait before the next try.
    std::cerr << "info: " << (c.error().empty() ? std::string("connection closed") : c.error())
              << "; resuming the session (try " << resume_tries_ + 1 << " of " << client::kMaxResumeTries << ")\n";
    snapshots_before_ += c.stats().snapshots_received;
    resume_at_ = Clock::now() + client::resume_delay(resume_tries_);
  }
  if (Clock::now() < *resume_at_) return true;
  resume_at_.reset();
  client::ConnectionOptions options = swarmfield::viewer::connection_options(args_);
  options.resume = ticket_;
  options.token.reset();  // a token works once; the ticket is the session's
  if (!lost_connection_) lost_connection_ = std::move(connection_);  // map_ points into it
  connection_ = std::make_unique<client::Connection>(io_, options);
  connection_->start();
  ++resume_tries_;
  return true;
}

// The resumed connection has its map (the server sends it again, with the barricades of now):
// draw that one, drop the lost connection.
void Viewer::resumed() {
  show_map(connection_->map());
  lost_connection_.reset();
  resume_tries_ = 0;
  ++reconnects_;
  std::cerr << "info: resumed the session (player " << connection_->welcome().player_id << ")\n";
}

// The map to draw and to compute the overlays on; the overlays follow at the next frame.
void Viewer::show_map(const sim::GridMap& map) {
  std::string error;
  if (!scene_.set_map(map, &error)) std::cerr << "warning: " << error << "\n";
  map_ = &map;
  map_revision_shown_ = map.revision();
  fields_shown_ = false;
}

// Map local time to server ticks from every snapshot not seen yet, then the frame to draw.
void Viewer::interpolate(Clock::time_point frame_start) {
  if (!connection_->connected()) return;  // resuming: keep the last frame
  for (const auto& r : connection_->snapshots()) {
    if (r.snapshot.tick > observed_tick_) {
      interp_clock_.observe(r.snapshot.tick, r.received_at);
      observed_tick_ = r.snapshot.tick;
    }
  }
  (void)connection_->take_new_snapshot_count();
  if (interp_clock_.valid()) {
    const double render_tick = interp_clock_.render_tick(frame_start, delay_ticks_);
    client::interpolate_history(connection_->snapshots(), render_tick, frame_);
    effects_.update(connection_->snapshots(), render_tick);
  }
}

void Viewer::follow_player() {
  const auto& welcome = connection_->welcome();
  for (const auto& p : frame_.players) {
    if (welcome.player_id == 0 || p.id == welcome.player_id) {
      camera_.center_on({p.x, p.y});
      break;
    }
  }
}

// Inputs at ~30 Hz: move intent (players) and the view rectangle for the area of interest.
void Viewer::send_input(Clock::time_point frame_start) {
  if (frame_start < next_input_ || !connection_->connected()) return;
  next_input_ = frame_start + std::chrono::milliseconds(33);
  protocol::Input input;
  const sim::Vec2 move = sim::normalized_or_zero({static_cast<float>(move_x_), static_cast<float>(move_y_)});
  input.move_x = move.x;
  input.move_y = move.y;
  if (args_.play && !args_.headless) {
    client::PlayControls controls;
    const Uint8* keys = SDL_GetKeyboardState(nullptr);
    controls.up = keys[SDL_SCANCODE_W] != 0;
    controls.down = keys[SDL_SCANCODE_S] != 0;
    controls.left = keys[SDL_SCANCODE_A] != 0;
    controls.right = keys[SDL_SCANCODE_D] != 0;
    controls.fire = firing_;
    int mx = 0;
    int my = 0;
    if ((SDL_GetMouseFocus() != nullptr)) {
      SDL_GetMouseState(&mx, &my);
      controls.mouse_world = camera_.screen_to_world({static_cast<float>(mx), static_cast<float>(my)});
    }
    std::optional<sim::Vec2> own;
    for (const auto& p : frame_.players) {
      if (p.id == connection_->welcome().player_id) own = sim::Vec2{p.x, p.y};
    }
    client::apply_play_controls(controls, own, input);
  }
  const client::WorldRect view = camera_.visible_world();
  input.view_x0 = view.x0;
  input.view_y0 = view.y0;
  input.view_x1 = view.x1;
  input.view_y1 = view.y1;
  connection_->send_input(input);
}

// B (players): ask the server for a barricade on the map cell under the mouse pointer (the
// connection refuses a cell outside the map; the server decides whether it is built).
void Viewer::request_build_at_mouse() {
  int mx = 0;
  int my = 0;
  SDL_GetMouseState(&mx, &my);
  const sim::Vec2 world = camera_.screen_to_world({static_cast<float>(mx), static_cast<float>(my)});
  const sim::CellCoord cell = connection_->map().world_to_cell(world);
  if (connection_->request_build(cell.x, cell.y) == 0) {
    std::cerr << "info: no build at cell (" << cell.x << ", " << cell.y << "): outside the map or too many waiting\n";
  }
}

// The server's MapDeltas change the connection's map in place (its revision() moves): redraw
// the changed cells of the map texture, and have the overlay fields follow at once (not up to
// 200 ms later: a barricade must not show a flow through it).
void Viewer::follow_map_changes() {
  if (!connection_->connected()) return;
  const sim::GridMap& map = connection_->map();
  if (map.revision() == map_revision_shown_) return;
  std::string error;
  if (!scene_.update_map(map, &error)) std::cerr << "warning: " << error << "\n";
  map_revision_shown_ = map.revision();
  fields_shown_ = false;  // the next update_fields() runs now and hands the fields over again
}

// Fields for the overlays: goals = the players' cells, same as the server's swarm uses.
// Rebuilt at most 5 times a second (unless the map changed: NavigationFields::update rebuilds
// for a new map revision): on big maps a rebuild costs tens of ms, and players change cells
// several times a second.
void Viewer::update_fields(Clock::time_point frame_start) {
  if (!(flow_ || heat_) || (fields_shown_ && frame_start - last_field_update_ < std::chrono::milliseconds(200))) return;
  last_field_update_ = frame_start;
  std::vector<sim::CellCoord> goals;
  if (const auto* latest = connection_->latest()) {
    for (const auto& p : latest->snapshot.players) goals.push_back(map_->world_to_cell({p.x, p.y}));
  }
  if (fields_.update(*map_, goals) || !fields_shown_) {
    scene_.set_fields(&fields_.integration(), &fields_.flow());
    fields_shown_ = true;
  }
}

void Viewer::count_frame() {
  ++frames_;
  ++fps_frames_;
  const double fps_seconds = std::chrono::duration<double>(Clock::now() - fps_window_).count();
  if (fps_seconds >= 1.0) {
    fps_ = static_cast<double>(fps_frames_) / fps_seconds;
    fps_frames_ = 0;
    fps_window_ = Clock::now();
  }
}

// Sleep the rest of the frame inside Asio so packets are handled as they come.
void Viewer::wait_for_next_frame(Clock::time_point frame_start) {
  const auto frame_end = frame_start + frame_period_;
  if (Clock::now() < frame_end) {
    io_.run_until(frame_end);
    if (io_.stopped()) io_.restart();
    // run_until returns at once when nothing is pending (connection gone): do not spin.
    if (Clock::now() < frame_end) std::this_thread::sleep_until(frame_end);
  }
}

// ---- Summary ---------------------------------------------------------------------------------
// The screenshot, goodbye, and the one-line summary on stdout; the exit code.
int Viewer::summary() {
  // Stopped (--seconds, a signal) while a lost session was being resumed: that is no orderly end.
  if (lost_connection_ && !ended_) {
    lost_ = true;
    std::cerr << "error: stopped while resuming the session (the connection was lost)\n";
  }
  int exit_code = lost_ ? 1 : 0;
  if (!args_.screenshot.empty()) {
    // Redraw the last frame: after SDL_RenderPresent a window's back buffer is undefined.
    draw_frame(connection_->stats());
    std::string error;
    const bool saved = video_.surface ? client::save_surface_png(video_.surface, args_.screenshot, error)
                                      : client::save_renderer_png(video_.renderer, args_.screenshot, error);
    if (!saved) {
      std::cerr << "error: " << error << "\n";
      exit_code = exit_code ? exit_code : 4;
    }
  }
  connection_->close("viewer quit");
  io_.poll();

  const auto& stats = connection_->stats();
  std::printf(
      "viewer: connected=1 frames=%llu snapshots=%llu agents_visible=%zu agents_in_frame=%zu agents_total=%u "
      "density_squares=%zu barricades=%zu rtt_ms=%.2f kbit_s=%.1f bad_datagrams=%llu deaths_seen=%llu shots_seen=%llu "
      "reconnects=%d seconds=%.1f%s%s\n",
      static_cast<unsigned long long>(frames_),
      static_cast<unsigned long long>(snapshots_before_ + stats.snapshots_received),
      agents_visible_, frame_.agents.size(), frame_.total_agents, density_squares_, connection_->barricades().size(),
      stats.rtt_ms, stats.kbit_per_s,
      static_cast<unsigned long long>(stats.bad_datagrams), static_cast<unsigned long long>(effects_.deaths_seen()),
      static_cast<unsigned long long>(effects_.shots_seen()), reconnects_, elapsed(), args_.screenshot.empty() ? "" : " screenshot=",
      args_.screenshot.c_str());
  std::fflush(stdout);
  return exit_code;
}

}  // namespace swarmfield::viewer
