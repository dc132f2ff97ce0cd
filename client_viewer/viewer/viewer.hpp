#pragma once
// swarmfield-viewer's session: the connection, the camera, the UI state, and the steps the
// program runs in order (connect, loop, summary). viewer_main.cpp parses the flags, opens the
// video and runs one.
#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "swarmfield/client/camera.hpp"
#include "swarmfield/client/combat_effects.hpp"
#include "swarmfield/client/connection.hpp"
#include "swarmfield/client/scene_renderer.hpp"
#include "swarmfield/client/snapshot_interpolation.hpp"
#include "swarmfield/sim/nav/field/navigation_fields.hpp"
#include "video.hpp"
#include "viewer_options.hpp"

namespace swarmfield::viewer {

using Clock = std::chrono::steady_clock;

/// One viewing session: the connection, the camera and the UI state, and the steps main() runs
/// in order (connect, loop, summary).
class Viewer {
 public:
  /// `stop` is read each frame: set (by a signal handler) it ends the session like a quit.
  Viewer(const Args& args, Video& video, const std::atomic<bool>& stop)
      : args_(args),
        stop_(stop),
        video_(video),
        scene_(video.renderer),
        camera_(args.width, args.height),
        connection_(std::make_unique<swarmfield::client::Connection>(io_, swarmfield::viewer::connection_options(args))),
        frame_period_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / args.fps))),
        flow_(args.flow),
        heat_(args.heat),
        follow_(args.follow) {
    connection_->start();
    started_ = Clock::now();
    fps_window_ = next_input_ = last_field_update_ = Clock::now();
  }

  std::optional<int> connect();
  void loop();
  int summary();

 private:
  [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }
  void handle_events();
  void draw_connecting();
  void draw_frame(const swarmfield::client::ConnectionStats& stats);
  bool connection_ended();  // true when the loop should stop
  bool resume();            // true while a resume is under way
  void resumed();
  void show_map(const swarmfield::sim::GridMap& map);
  void interpolate(Clock::time_point frame_start);
  void follow_player();
  void send_input(Clock::time_point frame_start);
  void follow_map_changes();
  void request_build_at_mouse();
  void update_fields(Clock::time_point frame_start);
  void count_frame();
  void wait_for_next_frame(Clock::time_point frame_start);

  const Args& args_;
  const std::atomic<bool>& stop_;
  Video& video_;
  swarmfield::client::SceneRenderer scene_;
  swarmfield::client::Camera camera_;
  asio::io_context io_;
  std::unique_ptr<swarmfield::client::Connection> connection_;
  // Resume (the server's --reconnect-grace): the newest session's ticket, the connection that
  // was lost (kept until the new one has its own map: map_ points into it), the tries of the
  // current resume, and the snapshots of the connections that were lost.
  std::optional<swarmfield::client::ResumeTicket> ticket_;
  std::unique_ptr<swarmfield::client::Connection> lost_connection_;
  int resume_tries_ = 0;
  std::optional<Clock::time_point> resume_at_;  // the next try waits until then
  int reconnects_ = 0;
  std::uint64_t snapshots_before_ = 0;
  Clock::duration frame_period_;
  Clock::time_point started_;
  const swarmfield::sim::GridMap* map_ = nullptr;  // the server's map, once connected
  double delay_ticks_ = 0.0;           // how far behind the newest snapshot frames are drawn

  // UI state.
  bool quit_ = false;
  bool flow_ = false;
  bool heat_ = false;
  bool follow_ = false;
  bool dragging_ = false;
  bool firing_ = false;  // --play: left button held
  bool map_ready_ = false;
  int move_x_ = 0;
  int move_y_ = 0;
  std::uint64_t frames_ = 0;
  double fps_ = 0.0;
  std::uint64_t fps_frames_ = 0;
  Clock::time_point fps_window_;
  Clock::time_point next_input_;
  swarmfield::client::InterpolationClock interp_clock_{30.0};
  std::uint32_t observed_tick_ = 0;
  swarmfield::client::InterpolatedFrame frame_;
  swarmfield::client::CombatEffects effects_;  // deaths and shots, drawn for a moment
  swarmfield::sim::NavigationFields fields_;
  bool fields_shown_ = false;
  std::uint32_t map_revision_shown_ = 0;  // the map's revision() the renderer has drawn
  Clock::time_point last_field_update_;
  std::string end_reason_;
  std::size_t agents_visible_ = 0;
  std::size_t density_squares_ = 0;
  bool lost_ = false;
  bool ended_ = false;
};

}  // namespace swarmfield::viewer
