// swarmfield-bot: connects N players to a server and drives each from a script
// (client_viewer/BOT_SCRIPT.md), or N headless viewers of the whole map (--role viewer: no
// player, no rendering; they decode and acknowledge every snapshot, as the viewer does). The
// last stdout line is a one-line summary for load tests.
#include <CLI/CLI.hpp>
#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "swarmfield/client/bot_brain.hpp"
#include "swarmfield/client/bot_script.hpp"
#include "swarmfield/client/command_line.hpp"
#include "swarmfield/client/connection.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using swarmfield::client::BotBrain;
using swarmfield::client::BotScript;
using swarmfield::client::BotScriptError;
using swarmfield::client::Connection;
using swarmfield::client::ConnectionOptions;
namespace sim = swarmfield::sim;
namespace protocol = swarmfield::protocol;

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop = true; }

struct Bot {
  std::string name;
  std::unique_ptr<Connection> connection;
  std::optional<BotBrain> brain;
  bool reported_end = false;
  std::uint32_t contacts = 0;
  std::optional<sim::Vec2> position;
};

std::optional<sim::Vec2> own_position(const Connection& c, std::uint32_t& contacts) {
  const auto* latest = c.latest();
  if (!latest) return std::nullopt;
  for (const auto& p : latest->snapshot.players) {
    if (p.id == c.welcome().player_id) {
      contacts = p.contacts;
      return sim::Vec2{p.x, p.y};
    }
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"swarmfield-bot: connects players to a swarmfield server and drives them from a script"};
  std::string host = "127.0.0.1";
  std::uint16_t port = 7777;
  std::string script_path;
  double seconds = 0.0;
  int count = 1;
  std::uint64_t seed = 1;
  std::string name = "bot";
  float view = 16.0f;
  double input_hz = 30.0;
  int connect_timeout_ms = 5000;
  int data_timeout_ms = 5000;
  std::string role = "player";
  app.add_option("--host", host, "server address")->capture_default_str();
  app.add_option("--port", port, "server TCP port")->capture_default_str();
  app.add_option("--script", script_path, "bot script file (default: a built-in wander loop)");
  app.add_option("--seconds", seconds, "stop after this many seconds (0 = when the script ends)")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  app.add_option("--count", count, "number of bots, one connection each")->check(CLI::Range(1, 2000))->capture_default_str();
  app.add_option("--seed", seed, "random seed (bot i uses seed + i)")->capture_default_str();
  app.add_option("--name", name, "player name (bots get -1, -2, ... when --count > 1)")->capture_default_str();
  app.add_option("--view", view, "half-size of the view rectangle sent to the server, world units (0 = no agents)")
      ->check(CLI::Range(0.0f, 100000.0f))
      ->capture_default_str();
  app.add_option("--role", role, "player (driven by the script) or viewer (watches the whole map, does not move)")
      ->check(CLI::IsMember({"player", "viewer"}))
      ->capture_default_str();
  app.add_option("--input-hz", input_hz, "inputs per second")->check(CLI::Range(1.0, 120.0))->capture_default_str();
  app.add_option("--connect-timeout-ms", connect_timeout_ms,
                 "time allowed to connect and get the server's answer to Hello, ms")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  app.add_option("--data-timeout-ms", data_timeout_ms,
                 "fail (exit 1) when the server sends nothing for this long, ms (0 = never)")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  if (const auto code = swarmfield::client::parse_command_line(app, argc, argv)) return *code;

  BotScript script;
  BotScriptError script_error;
  const bool parsed = script_path.empty()
                          ? swarmfield::client::parse_bot_script(swarmfield::client::default_bot_script(),
                                                                 "<built-in>", script, script_error)
                          : swarmfield::client::load_bot_script(script_path, script, script_error);
  if (!parsed) {
    std::cerr << "error: " << script_error.to_string() << "\n";
    return 2;
  }

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  const bool viewers = role == "viewer";
  asio::io_context io;
  std::vector<Bot> bots(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    Bot& bot = bots[static_cast<std::size_t>(i)];
    bot.name = count > 1 ? name + "-" + std::to_string(i + 1) : name;
    ConnectionOptions options;
    options.host = host;
    options.port = port;
    options.role = viewers ? protocol::Role::kViewer : protocol::Role::kPlayer;
    options.name = bot.name;
    options.connect_timeout = std::chrono::milliseconds(connect_timeout_ms);
    options.handshake_timeout = std::chrono::milliseconds(connect_timeout_ms) + std::chrono::seconds(10);
    options.data_timeout = std::chrono::milliseconds(data_timeout_ms);
    bot.connection = std::make_unique<Connection>(io, options);
    bot.brain.emplace(script, seed + static_cast<std::uint64_t>(i));
    bot.connection->start();
  }

  const auto started = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - started).count(); };

  // Handshakes run concurrently on the one io_context; their own timers bound this loop.
  auto all_settled = [&] {
    for (const auto& b : bots) {
      if (!b.connection->connected() && !b.connection->finished()) return false;
    }
    return true;
  };
  while (!all_settled() && !g_stop) io.run_for(std::chrono::milliseconds(20));

  int failed = 0;
  for (auto& b : bots) {
    if (!b.connection->connected()) {
      ++failed;
      std::cerr << "error: " << b.name << ": "
                << (b.connection->error().empty() ? "interrupted" : b.connection->error()) << "\n";
      b.reported_end = true;
    } else if (!viewers && b.connection->welcome().player_id == 0) {
      std::cerr << "warning: " << b.name << ": the server assigned no player (player_id 0); it can not move\n";
    }
  }
  if (failed < count) {
    std::cerr << "info: " << (count - failed) << " of " << count << " bot(s) connected to " << host << ":" << port
              << ", map " << bots.front().connection->map().width() << "x" << bots.front().connection->map().height()
              << "\n";
  }

  // Main loop: fixed input rate, sockets serviced in between.
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / input_hz));
  auto next_tick = Clock::now();
  auto last_update = Clock::now();
  bool lost = false;
  while (!g_stop && failed < count) {
    if (seconds > 0.0 && elapsed() >= seconds) break;
    const auto now = Clock::now();
    if (now < next_tick) {
      io.run_until(next_tick);
      if (io.stopped()) {
        // No pending work (every socket closed): sleep instead of spinning.
        std::this_thread::sleep_until(next_tick);
        io.restart();
      }
      continue;
    }
    next_tick += period;
    if (next_tick < now) next_tick = now + period;  // fell behind: do not burst
    const float dt = std::chrono::duration<float>(now - last_update).count();
    last_update = now;

    bool any_running = false;
    bool any_connected = false;
    for (auto& b : bots) {
      Connection& c = *b.connection;
      if (!c.connected()) {
        if (!b.reported_end) {
          b.reported_end = true;
          const std::string why = c.error().empty() ? "connection closed" : c.error();
          if (c.ended_by_bye()) {
            std::cerr << "info: " << b.name << ": " << why << "\n";  // orderly end, not a failure
          } else {
            lost = true;
            std::cerr << "error: " << b.name << ": " << why << "\n";
          }
        }
        continue;
      }
      any_connected = true;
      (void)c.stats();
      if (viewers) {
        // The whole map in view: the server tracks the 16,384 agents nearest its centre and
        // sends the rest as the density grid. The input carries the snapshot acks.
        protocol::Input input;
        input.view_x1 = static_cast<float>(c.map().width()) * c.map().cell_size();
        input.view_y1 = static_cast<float>(c.map().height()) * c.map().cell_size();
        c.send_input(input);
        any_running = true;
        continue;
      }
      b.position = own_position(c, b.contacts);
      const sim::Vec2 intent = b.brain->update(c.map(), b.position, dt);
      for (const auto& message : b.brain->take_messages()) std::cerr << "warning: " << b.name << ": " << message << "\n";
      protocol::Input input;
      input.move_x = intent.x;
      input.move_y = intent.y;
      if (b.position && view > 0.0f) {
        input.view_x0 = b.position->x - view;
        input.view_y0 = b.position->y - view;
        input.view_x1 = b.position->x + view;
        input.view_y1 = b.position->y + view;
      }
      c.send_input(input);
      if (!b.brain->finished()) any_running = true;
    }
    if (!any_running || !any_connected) break;
  }

  // Goodbye: Bye frames out, then give the sockets a moment to flush.
  for (auto& b : bots) b.connection->close("bot finished");
  io.poll();

  std::uint64_t snapshots = 0;
  std::uint64_t no_baseline = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t contacts = 0;
  std::uint64_t arrived = 0;
  std::uint64_t gave_up = 0;
  double rtt_sum = 0.0;
  std::uint64_t rtt_samples = 0;
  for (auto& b : bots) {
    const auto& s = b.connection->stats();
    snapshots += s.snapshots_received;
    no_baseline += s.snapshots_no_baseline;
    bytes_received += s.bytes_received;
    rtt_sum += s.rtt_ms_sum;
    rtt_samples += s.rtt_samples;
    contacts += b.contacts;
    if (!viewers) {
      arrived += b.brain->gotos_arrived();
      gave_up += b.brain->gotos_failed();
    }
  }
  const double rtt_avg = rtt_samples ? rtt_sum / static_cast<double>(rtt_samples) : 0.0;
  std::printf("bots=%d connected=%d snapshots=%llu rtt_ms_avg=%.2f contacts=%llu gotos_arrived=%llu gotos_failed=%llu "
              "seconds=%.1f bytes_received=%llu snapshots_no_baseline=%llu role=%s\n",
              count, count - failed, static_cast<unsigned long long>(snapshots), rtt_avg,
              static_cast<unsigned long long>(contacts), static_cast<unsigned long long>(arrived),
              static_cast<unsigned long long>(gave_up), elapsed(), static_cast<unsigned long long>(bytes_received),
              static_cast<unsigned long long>(no_baseline), role.c_str());
  std::fflush(stdout);
  return (failed > 0 || lost) ? 1 : 0;
}
