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
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "swarmfield/client/bot_brain.hpp"
#include "swarmfield/client/bot_script.hpp"
#include "swarmfield/client/command_line.hpp"
#include "swarmfield/cli/version.hpp"
#include "swarmfield/client/connection.hpp"
#include "swarmfield/client/token_file.hpp"
#include "swarmfield/protocol/transport/messages.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using swarmfield::client::BotAction;
using swarmfield::client::BotBrain;
using swarmfield::client::BotCommand;
using swarmfield::client::BotCommandKind;
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
  ConnectionOptions options;  ///< how it connected first (a resume copies them)
  std::unique_ptr<Connection> connection;
  /// Reconnects: the newest session's resume ticket, the stats of connections that dropped,
  /// resumes that succeeded, and tries of the current one (a new connection is handshaking).
  std::optional<swarmfield::client::ResumeTicket> ticket;
  std::vector<swarmfield::client::ConnectionStats> retired;
  int reconnects = 0;
  int resume_tries = 0;
  bool resuming = false;
  std::optional<Clock::time_point> resume_at;  ///< the next try waits until then
  std::optional<BotBrain> brain;
  bool reported_end = false;
  bool warned_builds = false;  // a refused build request was reported
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

// ---- Options ---------------------------------------------------------------------------------
struct Options {
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
  bool fire = false;
  std::string token_file;
  std::uint64_t max_map_cells = swarmfield::client::kDefaultMaxMapCells;
  std::vector<swarmfield::protocol::ConnectToken> tokens;  ///< read from token_file, one per bot

  [[nodiscard]] bool viewers() const { return role == "viewer"; }
};

// The command line into `options` and the script into `script`; an exit code when the program
// should stop (help, bad options, an unreadable script).
std::optional<int> parse_options(int argc, char** argv, Options& options, BotScript& script) {
  CLI::App app{"swarmfield-bot: connects players to a swarmfield server and drives them from a script"};
  swarmfield::cli::add_version_flag(app, "swarmfield-bot");
  app.add_option("--host", options.host, "server address")->capture_default_str();
  // Range-checked as text, before conversion: a port past 65535 is named as out of range, not as
  // "Could not convert" (the option is 16 bits).
  app.add_option("--port", options.port, "server TCP port")->check(CLI::Range(1, 65535))->capture_default_str();
  app.add_option("--script", options.script_path, "bot script file (default: a built-in wander loop)");
  app.add_option("--seconds", options.seconds, "stop after this many seconds (0 = when the script ends; with a limit, a script that ends holding the trigger stands and fires until it)")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  app.add_option("--count", options.count, "number of bots, one connection each")
      ->check(CLI::Range(1, 2000))
      ->capture_default_str();
  app.add_option("--seed", options.seed, "random seed (bot i uses seed + i)")->capture_default_str();
  app.add_option("--name", options.name, "player name (bots get -1, -2, ... when --count > 1)")->capture_default_str();
  app.add_option("--view", options.view,
                 "half-size of the view rectangle sent to the server, world units (0 = no agents)")
      ->check(CLI::Range(0.0f, 100000.0f))
      ->capture_default_str();
  app.add_option("--role", options.role,
                 "player (driven by the script) or viewer (watches the whole map, does not move)")
      ->check(CLI::IsMember({"player", "viewer"}))
      ->capture_default_str();
  app.add_option("--input-hz", options.input_hz, "inputs per second")
      ->check(CLI::Range(1.0, 120.0))
      ->capture_default_str();
  app.add_option("--connect-timeout-ms", options.connect_timeout_ms,
                 "time allowed to connect and get the server's answer to Hello, ms")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  app.add_option("--data-timeout-ms", options.data_timeout_ms,
                 "fail (exit 1) when the server sends nothing for this long, ms (0 = never)")
      ->check(CLI::Range(0, 600000))
      ->capture_default_str();
  swarmfield::client::add_max_map_cells_option(app, options.max_map_cells);
  app.add_option("--token-file", options.token_file,
                 "connect tokens from the match's backend, one per line, one per bot (a server with --auth tokens "
                 "admits no one without; the token sets the role and name)");
  app.add_flag("--fire", options.fire,
               "hold the trigger for the whole run, aimed at the nearest agent in view (like a 'fire' line at "
               "the top of the script)");
  if (const auto code = swarmfield::client::parse_command_line(app, argc, argv)) return *code;
  if (!options.token_file.empty()) {
    std::string token_error;
    if (!swarmfield::client::read_token_file(options.token_file, static_cast<std::size_t>(options.count),
                                             options.tokens, token_error)) {
      std::cerr << "error: " << token_error << "\n";
      return swarmfield::client::kExitBadArguments;
    }
  }
  {
    // The name each bot sends (with "-N" when --count > 1) must be one the server takes whole:
    // before, a name with a control character was refused only by the server, and a longer one
    // was cut to kMaxNameBytes without a word.
    const std::string longest = options.count > 1 ? options.name + "-" + std::to_string(options.count) : options.name;
    if (options.name.empty() || swarmfield::protocol::clean_name(longest) != longest) {
      std::cerr << "error: --name must be 1.." << swarmfield::protocol::kMaxNameBytes
                << " bytes of UTF-8 (with the '-N' suffix when --count > 1), without control or invisible formatting "
                   "characters (see --help)\n";
      return swarmfield::client::kExitBadArguments;
    }
  }
  if (options.fire && options.viewers()) {
    std::cerr << "error: --fire needs --role player (a viewer has no gun) (see --help)\n";
    return swarmfield::client::kExitBadArguments;
  }

  BotScriptError script_error;
  const bool parsed = options.script_path.empty()
                          ? swarmfield::client::parse_bot_script(swarmfield::client::default_bot_script(),
                                                                 "<built-in>", script, script_error)
                          : swarmfield::client::load_bot_script(options.script_path, script, script_error);
  if (!parsed) {
    std::cerr << "error: " << script_error.to_string() << "\n";
    return 2;
  }
  if (options.fire) {
    BotCommand fire;
    fire.kind = BotCommandKind::kFire;  // untimed; line 0: not from the file
    script.commands.insert(script.commands.begin(), fire);
  }
  return std::nullopt;
}

// The bots, one connection each on one io_context, and the steps main() runs in order
// (connect, loop, summary).
class Fleet {
 public:
  Fleet(const Options& options, const BotScript& script);
  void connect();
  void loop();
  int summary();

 private:
  [[nodiscard]] double elapsed() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }
  void report_end(Bot& bot);
  bool resume(Bot& bot);
  void drive(Bot& bot, float dt);
  // With --seconds 0 the script's end is the end; with a time limit, a script that ends holding
  // the trigger stands and fires until it (a last stand, BotBrain::finished()).
  [[nodiscard]] bool running(const Bot& bot) const {
    if (options_.viewers()) return true;
    return options_.seconds > 0.0 ? !bot.brain->finished() : !bot.brain->ran_off_end();
  }

  const Options& options_;
  asio::io_context io_;
  std::vector<Bot> bots_;
  Clock::time_point started_;
  int failed_ = 0;     // bots that never connected
  bool lost_ = false;  // a connection ended other than by the server's Bye
};

Fleet::Fleet(const Options& options, const BotScript& script)
    : options_(options), bots_(static_cast<std::size_t>(options.count)) {
  const int count = options.count;
  for (int i = 0; i < count; ++i) {
    Bot& bot = bots_[static_cast<std::size_t>(i)];
    bot.name = count > 1 ? options.name + "-" + std::to_string(i + 1) : options.name;
    ConnectionOptions connection;
    connection.host = options.host;
    connection.port = options.port;
    connection.role = options.viewers() ? protocol::Role::kViewer : protocol::Role::kPlayer;
    connection.name = bot.name;
    connection.connect_timeout = std::chrono::milliseconds(options.connect_timeout_ms);
    connection.handshake_timeout = std::chrono::milliseconds(options.connect_timeout_ms) + std::chrono::seconds(10);
    connection.data_timeout = std::chrono::milliseconds(options.data_timeout_ms);
    connection.max_map_cells = options.max_map_cells;
    if (!options.tokens.empty()) connection.token = options.tokens[static_cast<std::size_t>(i)];
    bot.options = connection;
    bot.connection = std::make_unique<Connection>(io_, connection);
    bot.brain.emplace(script, options.seed + static_cast<std::uint64_t>(i));
    bot.connection->start();
  }
  started_ = Clock::now();
}

// ---- Connect ---------------------------------------------------------------------------------
// Handshakes run concurrently on the one io_context; their own timers bound this loop.
void Fleet::connect() {
  auto all_settled = [&] {
    for (const auto& b : bots_) {
      if (!b.connection->connected() && !b.connection->finished()) return false;
    }
    return true;
  };
  while (!all_settled() && !g_stop) io_.run_for(std::chrono::milliseconds(20));

  for (auto& b : bots_) {
    if (!b.connection->connected()) {
      ++failed_;
      std::cerr << "error: " << b.name << ": "
                << (b.connection->error().empty() ? "interrupted" : b.connection->error()) << "\n";
      b.reported_end = true;
    } else if (!options_.viewers() && b.connection->welcome().player_id == 0) {
      std::cerr << "warning: " << b.name << ": the server assigned no player (player_id 0); it can not move\n";
    }
  }
  const int count = options_.count;
  if (failed_ < count) {
    const sim::GridMap& map = bots_.front().connection->map();
    std::cerr << "info: " << (count - failed_) << " of " << count << " bot(s) connected to " << options_.host << ":"
              << options_.port << ", map " << map.width() << "x" << map.height() << "\n";
  }
}

// ---- Loop ------------------------------------------------------------------------------------
// Fixed input rate, sockets serviced in between; ends when every bot is done or gone.
void Fleet::loop() {
  const auto period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / options_.input_hz));
  auto next_tick = Clock::now();
  auto last_update = Clock::now();
  while (!g_stop && failed_ < options_.count) {
    if (options_.seconds > 0.0 && elapsed() >= options_.seconds) break;
    const auto now = Clock::now();
    if (now < next_tick) {
      io_.run_until(next_tick);
      if (io_.stopped()) {
        // No pending work (every socket closed): sleep instead of spinning.
        std::this_thread::sleep_until(next_tick);
        io_.restart();
      }
      continue;
    }
    next_tick += period;
    if (next_tick < now) next_tick = now + period;  // fell behind: do not burst
    const float dt = std::chrono::duration<float>(now - last_update).count();
    last_update = now;

    bool any_running = false;
    bool any_connected = false;
    for (auto& b : bots_) {
      if (!b.connection->connected()) {
        if (resume(b)) {
          any_connected = true;  // handshaking again: still in the game
          any_running = true;
          continue;
        }
        report_end(b);
        continue;
      }
      if (b.resuming) {
        b.resuming = false;
        b.resume_tries = 0;
        ++b.reconnects;
        std::cerr << "info: " << b.name << ": resumed its session (player " << b.connection->welcome().player_id << ")\n";
      }
      b.ticket = b.connection->resume_ticket();
      any_connected = true;
      (void)b.connection->stats();
      drive(b, dt);
      if (running(b)) any_running = true;
    }
    if (!any_running || !any_connected) break;
  }
}

// A bot whose connection dropped (not by the server's Bye or Error) resumes its session with
// its ticket (the server's --reconnect-grace): a new connection whose Hello carries the proof.
// False when there is nothing to resume or it was refused; true while a resume is under way.
bool Fleet::resume(Bot& b) {
  Connection& c = *b.connection;
  if (!c.finished()) return b.resuming;  // a resume's handshake in progress
  // The server's own words (a Bye, an Error: refused, full, shutting down) end the session for good.
  if (b.reported_end || c.ended_by_server() || !b.ticket || b.resume_tries >= swarmfield::client::kMaxResumeTries ||
      g_stop)
    return false;
  if (!b.resume_at) {
    // This connection has just ended: say why, and wait before the next try.
    std::cerr << "info: " << b.name << ": " << c.error() << "; resuming the session (try " << b.resume_tries + 1
              << " of " << swarmfield::client::kMaxResumeTries << ")\n";
    b.retired.push_back(c.stats());
    b.resume_at = Clock::now() + swarmfield::client::resume_delay(b.resume_tries);
  }
  b.resuming = true;
  if (Clock::now() < *b.resume_at) return true;
  b.resume_at.reset();
  ConnectionOptions options = b.options;
  options.resume = b.ticket;
  options.token.reset();  // a token works once; the ticket is the session's
  b.connection = std::make_unique<Connection>(io_, options);
  b.connection->start();
  b.resuming = true;
  ++b.resume_tries;
  return true;
}

// A bot whose connection ended, said once.
void Fleet::report_end(Bot& bot) {
  if (bot.reported_end) return;
  bot.reported_end = true;
  const Connection& c = *bot.connection;
  std::string why = c.error().empty() ? "connection closed" : c.error();
  if (bot.resume_tries >= swarmfield::client::kMaxResumeTries) {
    why += " (gave up resuming the session after " + std::to_string(bot.resume_tries) + " tries)";
  }
  if (c.ended_by_bye()) {
    std::cerr << "info: " << bot.name << ": " << why << "\n";  // orderly end, not a failure
  } else {
    lost_ = true;
    std::cerr << "error: " << bot.name << ": " << why << "\n";
  }
}

// One input of a connected bot: a viewer's view of the whole map, or a player's move and gun
// from its script (aimed at the nearest agent of the latest snapshot) and its view round its
// position.
void Fleet::drive(Bot& b, float dt) {
  Connection& c = *b.connection;
  if (options_.viewers()) {
    // The whole map in view: the server tracks the 16,384 agents nearest its centre and
    // sends the rest as the density grid. The input carries the snapshot acks.
    protocol::Input input;
    input.view_x1 = static_cast<float>(c.map().width()) * c.map().cell_size();
    input.view_y1 = static_cast<float>(c.map().height()) * c.map().cell_size();
    c.send_input(input);
    return;
  }
  b.position = own_position(c, b.contacts);
  std::span<const swarmfield::client::RenderAgent> agents;
  if (const auto* latest = c.latest()) agents = latest->snapshot.agents;
  const BotAction action = b.brain->act(c.map(), b.position, agents, dt);
  for (const auto& message : b.brain->take_messages()) std::cerr << "warning: " << b.name << ": " << message << "\n";
  protocol::Input input;
  input.move_x = action.move.x;
  input.move_y = action.move.y;
  input.fire = action.fire;
  input.aim_x = action.aim.x;
  input.aim_y = action.aim.y;
  // The script's `build` lines: numbered by the connection, carried by this input and the next.
  for (const sim::CellCoord& cell : action.builds) {
    if (c.request_build(cell.x, cell.y) == 0 && !b.warned_builds) {
      b.warned_builds = true;
      std::cerr << "warning: " << b.name << ": build (" << cell.x << ", " << cell.y << ") not requested: "
                << Connection::kMaxPendingBuilds << " build requests wait already (said once)\n";
    }
  }
  const float view = options_.view;
  if (b.position && view > 0.0f) {
    input.view_x0 = b.position->x - view;
    input.view_y0 = b.position->y - view;
    input.view_x1 = b.position->x + view;
    input.view_y1 = b.position->y + view;
  }
  c.send_input(input);
}

// ---- Summary ---------------------------------------------------------------------------------
// Goodbye, then the one-line summary on stdout (the load tests read it); the exit code.
int Fleet::summary() {
  // Bye frames out, then give the sockets a moment to flush.
  for (auto& b : bots_) b.connection->close("bot finished");
  io_.poll();

  std::uint64_t snapshots = 0;
  std::uint64_t no_baseline = 0;
  std::uint64_t bytes_received = 0;
  std::uint64_t contacts = 0;
  std::uint64_t arrived = 0;
  std::uint64_t gave_up = 0;
  std::uint64_t shots = 0;  // inputs sent with fire set, over all bots
  std::uint64_t builds = 0;  // build requests made, over all bots
  std::uint64_t deaths_seen = 0;  // agents the snapshots removed as killed, over all bots
  std::int64_t score = 0;         // the bots' players' scores in their newest snapshots
  double rtt_sum = 0.0;
  std::uint64_t rtt_samples = 0;
  std::uint64_t reconnects = 0;
  for (auto& b : bots_) {
    reconnects += static_cast<std::uint64_t>(b.reconnects);
    b.retired.push_back(b.connection->stats());
    for (const auto& s : b.retired) {
      snapshots += s.snapshots_received;
      no_baseline += s.snapshots_no_baseline;
      bytes_received += s.bytes_received;
      rtt_sum += s.rtt_ms_sum;
      rtt_samples += s.rtt_samples;
      shots += s.inputs_firing;
      builds += s.build_requests;
      deaths_seen += s.deaths_seen;
    }
    contacts += b.contacts;
    if (const swarmfield::client::ReceivedSnapshot* newest = b.connection->latest(); newest != nullptr && !options_.viewers()) {
      for (const swarmfield::protocol::PlayerState& p : newest->snapshot.players) {
        if (p.id == b.connection->welcome().player_id) score += p.score;
      }
    }
    if (!options_.viewers()) {
      arrived += b.brain->gotos_arrived();
      gave_up += b.brain->gotos_failed();
    }
  }
  const double rtt_avg = rtt_samples ? rtt_sum / static_cast<double>(rtt_samples) : 0.0;
  const int count = options_.count;
  std::printf("bots=%d connected=%d snapshots=%llu rtt_ms_avg=%.2f contacts=%llu gotos_arrived=%llu gotos_failed=%llu "
              "seconds=%.1f bytes_received=%llu snapshots_no_baseline=%llu role=%s shots=%llu builds=%llu deaths_seen=%llu "
              "score=%lld reconnects=%llu\n",
              count, count - failed_, static_cast<unsigned long long>(snapshots), rtt_avg,
              static_cast<unsigned long long>(contacts), static_cast<unsigned long long>(arrived),
              static_cast<unsigned long long>(gave_up), elapsed(), static_cast<unsigned long long>(bytes_received),
              static_cast<unsigned long long>(no_baseline), options_.role.c_str(),
              static_cast<unsigned long long>(shots), static_cast<unsigned long long>(builds),
              static_cast<unsigned long long>(deaths_seen), static_cast<long long>(score),
              static_cast<unsigned long long>(reconnects));
  std::fflush(stdout);
  return (failed_ > 0 || lost_) ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  BotScript script;
  if (const auto code = parse_options(argc, argv, options, script)) return *code;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  Fleet fleet(options, script);
  fleet.connect();
  fleet.loop();
  return fleet.summary();
}
