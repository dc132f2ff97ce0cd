// Replays: the file format (round trip, every truncation and corruption refused with a clear
// error), a bot session recorded through the real server and re-simulated bit-identically with
// 1 and 2 threads (and a tampered recording caught at the right tick), swarmfield-tool replay's
// exit codes, and swarmfield-server --replay serving the recording to a viewer.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "loopback_support.hpp"
#include "swarmfield/server/replay/replay_file.hpp"
#include "swarmfield/server/replay/replay_playback.hpp"
#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/server/world_setup.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "temp_dir.hpp"

using namespace std::chrono_literals;
using namespace swarmfield;
using server::Replay;
using server::ReplayEvent;

namespace {

std::vector<std::uint8_t> slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void spit(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A small World recorded with ReplayWriter: one player wandering, 120 ticks.
std::string record_small(const std::string& path, std::uint32_t hash_every) {
  server::ServerConfig config;
  config.city_size = 64;
  config.agents = 200;
  config.field_budget = 0;
  sim::CityParams city;
  city.width = city.height = 64;
  sim::World world(sim::generate_city(city), server::world_params(config));
  server::ReplayHeader header;
  header.config_toml = server::config_to_toml(config);
  header.map_name = "city-64";
  header.width = header.height = 64;
  header.costs = world.map().costs();
  header.dt_s = server::tick_seconds(config);
  header.hash_interval = hash_every;
  server::ReplayWriter writer;
  std::string error;
  REQUIRE(writer.open(path, header, error));
  const sim::Vec2 spawn{32.5f, 32.5f};
  const std::uint32_t id = world.add_player(spawn);
  writer.record(world.tick(), {ReplayEvent::Kind::kAddPlayer, id, spawn});
  for (int t = 0; t < 120; ++t) {
    const sim::Vec2 intent{t % 40 < 20 ? 1.0f : -0.5f, t % 30 < 15 ? 0.3f : -1.0f};
    world.set_player_intent(id, intent);
    writer.record(world.tick(), {ReplayEvent::Kind::kIntent, id, intent});
    world.step(header.dt_s);
    writer.end_tick(world.tick(), world.state_hash());
  }
  REQUIRE(writer.finish(world.tick(), world.state_hash(), error));
  return path;
}

long long value_of(const std::string& line, const std::string& key) { return test::summary_value(line, key); }

}  // namespace

TEST_CASE("replay file: writer and reader agree; the re-simulation matches with 1 and 2 threads") {
  const test::TempDir dir("swarmfield-replay-test");
  const std::string path = record_small(dir.path + "/small.rpl", 7);
  std::string error;
  const auto replay = server::read_replay(path, error);
  REQUIRE_MESSAGE(replay.has_value(), error);
  CHECK(replay->header.width == 64);
  CHECK(replay->header.hash_interval == 7);
  CHECK(std::holds_alternative<server::ReplayEnd>(replay->records.back()));
  CHECK(server::encode_replay(*replay) == slurp(path));  // the writer's bytes, exactly
  for (std::uint32_t threads : {1u, 2u}) {
    const auto check = server::check_replay(*replay, threads);
    INFO(check.message);
    CHECK(check.ok);
    CHECK(check.ticks == 120);
    CHECK(check.hashes_checked == 120 / 7 + 1);  // every 7th tick + the end
  }
}

TEST_CASE("replay file: every truncation and every corrupted byte is refused with a clear error") {
  const test::TempDir dir("swarmfield-replay-test");
  const auto bytes = slurp(record_small(dir.path + "/small.rpl", 10));
  std::string error;
  REQUIRE(server::parse_replay(bytes, "x", error).has_value());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    error.clear();
    const bool parsed = server::parse_replay(cut, "cut.rpl", error).has_value();
    if (parsed || error.find("cut.rpl: byte ") == std::string::npos) {
      FAIL("prefix of " << n << " bytes: parsed=" << parsed << " error=" << error);
    }
    if (n > 100 && error.find("truncated") == std::string::npos) FAIL("prefix of " << n << ": " << error);
  }
  // One flipped bit anywhere after the magic: checksum, version or structure error.
  for (std::size_t i = 8; i < bytes.size(); i += 3) {
    auto bad = bytes;
    bad[i] ^= 0x10;
    error.clear();
    if (server::parse_replay(bad, "bad.rpl", error).has_value()) FAIL("flipped byte " << i << " was accepted");
  }
  auto wrong = bytes;
  wrong[0] = 'X';
  CHECK_FALSE(server::parse_replay(wrong, "w", error).has_value());
  CHECK(error.find("not a swarmfield replay") != std::string::npos);
  wrong = bytes;
  wrong[8] = 9;
  CHECK_FALSE(server::parse_replay(wrong, "w", error).has_value());
  CHECK(error.find("version 9 not supported") != std::string::npos);
  CHECK_FALSE(server::read_replay(dir.path + "/missing.rpl", error).has_value());
  CHECK(error.find("missing.rpl") != std::string::npos);
  // A directory threw std::ios_base::failure out of the read (swarmfield-tool replay aborted,
  // status 134); a device such as /dev/zero was read until memory ran out.
  error.clear();
  CHECK_FALSE(server::read_replay(dir.path, error).has_value());
  CHECK(error.find("is a directory") != std::string::npos);
  error.clear();
  CHECK_FALSE(server::read_replay("/dev/zero", error).has_value());
  CHECK(error.find("not a regular file") != std::string::npos);
}

TEST_CASE("replay file: a pipe that is not a recording is refused from its first bytes, not read to its end") {
  // swarmfield-tool replay <(cat /dev/zero) read until memory ran out (a std::bad_alloc aborted
  // it), and a big file named by mistake was held whole before its magic was looked at.
  const test::TempDir dir("swarmfield-replay-test");
  const std::string fifo = dir.path + "/zeros.rpl";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto old_handler = std::signal(SIGPIPE, SIG_IGN);  // the writer learns of the close by EPIPE
  constexpr std::size_t kOffered = std::size_t{64} << 20;
  std::size_t written = 0;
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::vector<char> zeros(1 << 16, 0);
    while (written < kOffered) {
      const ssize_t n = ::write(fd, zeros.data(), zeros.size());
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    ::close(fd);
  });
  std::string error;
  const bool read = server::read_replay(fifo, error).has_value();
  writer.join();
  std::signal(SIGPIPE, old_handler);
  CHECK_FALSE(read);
  CHECK(error.find("zeros.rpl: byte 0: not a swarmfield replay (no SWFRPLAY magic)") != std::string::npos);
  CHECK(written < (std::size_t{1} << 20));  // a pipe's buffer and a read's, not the 64 MiB offered
}

TEST_CASE("replay file: allow_truncated plays a recording cut short up to its last state hash, and it replays") {
  const test::TempDir dir("swarmfield-replay-test");
  const auto bytes = slurp(record_small(dir.path + "/small.rpl", 10));
  std::string error, note;
  const server::ReplayReadOptions allow{true};
  std::size_t accepted = 0;
  std::uint64_t longest = 0;
  for (std::size_t n = 0; n < bytes.size(); n += 7) {
    const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    error.clear();
    note.clear();
    const auto replay = server::parse_replay(cut, "cut.rpl", error, allow, &note);
    if (!replay) {
      // Refused only before the first state hash (nothing checked to play up to).
      if (error.find("cut.rpl: byte ") == std::string::npos) FAIL("prefix of " << n << ": " << error);
      continue;
    }
    ++accepted;
    const auto* end = std::get_if<server::ReplayEnd>(&replay->records.back());
    REQUIRE(end != nullptr);
    CHECK(end->tick % 10 == 0);  // a state hash's tick
    CHECK(note.find("cut short at byte") != std::string::npos);
    longest = std::max(longest, end->tick);
    if (n % 49 == 0) {  // re-simulated: the hash at the new end checks out
      const auto check = server::check_replay(*replay, 1);
      INFO(check.message);
      CHECK(check.ok);
      CHECK(check.ticks == end->tick);
    }
  }
  CHECK(accepted > 0);
  CHECK(longest >= 110);  // the last hash before the end record (120 ticks recorded)
  // A flipped bit: refused (a checksum), or, where it lands in a record's length (which then
  // reaches past the end, as a cut does), read up to a state hash before it and still replaying.
  for (std::size_t i = 8; i < bytes.size(); i += 13) {
    auto bad = bytes;
    bad[i] ^= 0x10;
    note.clear();
    const auto replay = server::parse_replay(bad, "bad.rpl", error, allow, &note);
    if (!replay) continue;
    const std::size_t at = note.find("cut short at byte ");
    REQUIRE_MESSAGE(at != std::string::npos, "flipped byte " << i << " accepted whole");
    CHECK(std::stoull(note.substr(at + 18)) <= i);
  }
  note.clear();
  REQUIRE(server::parse_replay(bytes, "whole.rpl", error, allow, &note).has_value());
  CHECK(note.empty());
}

TEST_CASE("replay: --allow-truncated serves and the tool checks a recording cut short; without it, exit 2") {
  const test::TempDir dir("swarmfield-replay-test");
  auto bytes = slurp(record_small(dir.path + "/small.rpl", 10));
  bytes.resize(bytes.size() * 3 / 4);
  spit(dir.path + "/cut.rpl", bytes);
  // The error says what to do.
  (void)test::expect_exit({"--port", "0", "--bind", "127.0.0.1", "--replay", dir.path + "/cut.rpl"}, 2,
                          {"--allow-truncated"}, 5s);
  test::ServerProcess served(
      {"--port", "0", "--bind", "127.0.0.1", "--replay", dir.path + "/cut.rpl", "--allow-truncated"});
  CHECK(served.wait_exit(10s) == 0);
  CHECK(served.err().find("cut short at byte") != std::string::npos);
  CHECK(served.err().find("shutting down (end of the recording)") != std::string::npos);
  const long long ticks = value_of(served.out(), "ticks");
  CHECK(ticks > 0);
  CHECK(ticks % 10 == 0);
  CHECK(ticks < 120);
}

TEST_CASE("replay: a changed input or hash is caught at the first tick whose state differs") {
  const test::TempDir dir("swarmfield-replay-test");
  std::string error;
  auto replay = *server::read_replay(record_small(dir.path + "/small.rpl", 1), error);
  // A different intent before tick 50: the state differs from tick 51 on (hash every tick).
  Replay changed_input = replay;
  for (auto& r : changed_input.records) {
    if (auto* in = std::get_if<server::ReplayInputs>(&r); in != nullptr && in->tick == 50) in->events.back().value.x = -1.0f;
  }
  auto check = server::check_replay(changed_input, 1);
  CHECK_FALSE(check.ok);
  CHECK(check.first_bad_tick == 51);
  CHECK(check.message.find("state differs at tick 51") != std::string::npos);
  CHECK(check.message.find("last match at tick 50") != std::string::npos);
  // A stored hash changed: caught exactly there.
  Replay changed_hash = replay;
  for (auto& r : changed_hash.records) {
    if (auto* h = std::get_if<server::ReplayHash>(&r); h != nullptr && h->tick == 77) h->hash ^= 1;
  }
  check = server::check_replay(changed_hash, 2);
  CHECK_FALSE(check.ok);
  CHECK(check.first_bad_tick == 77);
  // The tool: exit 1 naming the tick; a broken file exit 2; a good one 0.
  spit(dir.path + "/changed.rpl", server::encode_replay(changed_input));
  const std::string tool = std::string(SWARMFIELD_BIN_DIR) + "/swarmfield-tool replay ";
  CHECK(WEXITSTATUS(std::system((tool + dir.path + "/changed.rpl > " + dir.path + "/out.txt 2>&1").c_str())) == 1);
  const auto out = slurp(dir.path + "/out.txt");
  const std::string text(out.begin(), out.end());
  CHECK(text.find("state differs at tick 51") != std::string::npos);
  CHECK(text.find("result=differs first_bad_tick=51") != std::string::npos);
  auto cut = slurp(dir.path + "/small.rpl");
  cut.resize(cut.size() - 5);
  spit(dir.path + "/cut.rpl", cut);
  CHECK(WEXITSTATUS(std::system((tool + dir.path + "/cut.rpl > /dev/null 2>&1").c_str())) == 2);
  CHECK(WEXITSTATUS(std::system((tool + dir.path + "/small.rpl > /dev/null 2>&1").c_str())) == 0);
  // --allow-truncated: checked up to its last state hash (tick 120: hashes every tick, the end
  // record cut).
  CHECK(WEXITSTATUS(std::system((tool + "--allow-truncated " + dir.path + "/cut.rpl > " + dir.path + "/cut.txt 2>&1").c_str())) ==
        0);
  const auto cut_out = slurp(dir.path + "/cut.txt");
  const std::string cut_text(cut_out.begin(), cut_out.end());
  CHECK(cut_text.find("warning: replay") != std::string::npos);
  CHECK(cut_text.find("ticks=120 ") != std::string::npos);
  CHECK(cut_text.find("result=ok") != std::string::npos);
}

TEST_CASE("replay: a bot session through the real server re-simulates bit-identically; --replay serves it to viewers") {
  const test::TempDir dir("swarmfield-replay-test");
  const std::string file = dir.path + "/match.rpl";
  {
    test::ServerProcess server(test::small_city({"--agents", "400", "--record", file, "--record-hash-every", "5"}));
    const auto ports = test::wait_listening(server);
    REQUIRE_MESSAGE(ports.has_value(), server.err());
    // Two bots wandering for 2 s (intents every tick, joins and leaves at different ticks).
    const std::string bot = std::string(SWARMFIELD_BIN_DIR) + "/swarmfield-bot --host 127.0.0.1 --port " +
                            std::to_string(ports->tcp) + " --seconds 2 --count 2 > " + dir.path + "/bot.txt 2>&1";
    REQUIRE(std::system(bot.c_str()) == 0);
    std::this_thread::sleep_for(300ms);  // ticks with nobody in them
    server.signal(SIGTERM);              // the drain closes the recording
    REQUIRE(server.wait_exit(3s) == 0);
    CHECK(server.err().find("recording " + file + " closed") != std::string::npos);
  }
  std::string error;
  const auto replay = server::read_replay(file, error);
  REQUIRE_MESSAGE(replay.has_value(), error);
  std::size_t adds = 0, removes = 0, intents = 0;
  for (const auto& r : replay->records) {
    if (const auto* in = std::get_if<server::ReplayInputs>(&r)) {
      for (const auto& e : in->events) {
        adds += e.kind == ReplayEvent::Kind::kAddPlayer;
        removes += e.kind == ReplayEvent::Kind::kRemovePlayer;
        intents += e.kind == ReplayEvent::Kind::kIntent;
      }
    }
  }
  CHECK(adds == 2);
  CHECK(removes == 2);
  CHECK(intents > 40);
  std::uint64_t ticks = 0;
  for (std::uint32_t threads : {1u, 2u}) {
    const auto check = server::check_replay(*replay, threads);
    INFO("threads " << threads << ": " << check.message);
    CHECK(check.ok);
    CHECK(check.hashes_checked >= 10);
    ticks = check.ticks;
  }
  CHECK(ticks >= 60);

  // Served to a viewer: the recorded players appear where the re-simulation puts them; a
  // player may not join; the server stops at the end of the recording.
  test::ServerProcess served({"--port", "0", "--bind", "127.0.0.1", "--replay", file});
  const auto ports = test::wait_listening(served);
  REQUIRE_MESSAGE(ports.has_value(), served.err());
  test::RawClient player;
  REQUIRE(player.connect(ports->tcp));
  REQUIRE(player.send(test::hello(protocol::Role::kPlayer)));
  const auto refused = player.read_until<protocol::Error>(3s);
  REQUIRE(refused.has_value());
  CHECK(refused->reason.find("plays a recording") != std::string::npos);
  test::RawClient viewer;
  REQUIRE(test::join(viewer, ports->tcp, protocol::Role::kViewer).has_value());
  test::Inputs inputs;
  REQUIRE(viewer.send(inputs.make(0, 0, 64.0f, test::now_us())));
  // Snapshots with players in them, checked against a re-simulation to the same tick.
  server::ServerConfig config = server::parse_config_toml(replay->header.config_toml, "stored").config;
  sim::World world(sim::GridMap::from_costs(64, 64, replay->header.costs), server::world_params(config));
  server::ReplayPlayback playback(*replay);
  std::size_t compared = 0;
  // Until the server stops at the end of the recording (no more snapshots).
  while (const auto snapshot = viewer.read_snapshot(2s)) {
    if (snapshot->players.empty()) continue;
    while (world.tick() < snapshot->tick) {
      REQUIRE(playback.apply_inputs(world).empty());
      world.step(replay->header.dt_s);
      REQUIRE_FALSE(playback.check_hash(world).has_value());  // also moves the playback past the hash
    }
    REQUIRE(world.tick() == snapshot->tick);
    REQUIRE(snapshot->players.size() == world.players().size());
    for (const auto& p : snapshot->players) {
      const sim::Player* expected = world.find_player(p.id);
      REQUIRE(expected != nullptr);
      CHECK(p.x == expected->position.x);  // players travel unquantized: exactly the recording
      CHECK(p.y == expected->position.y);
    }
    ++compared;
  }
  CHECK(compared >= 5);
  CHECK(served.wait_exit(3s) == 0);
  CHECK(served.err().find("shutting down (end of the recording)") != std::string::npos);
  CHECK(value_of(served.out(), "ticks") == static_cast<long long>(ticks));
}

TEST_CASE("replay: --record-max-mb ends the recording at the limit as a whole recording; the server keeps running") {
  // A client joining and saying Bye in a loop (--auth open, one address) grew the recording by
  // ~750 MB an hour, without end. Now the tick that takes the file to --record-max-mb ends the
  // recording (an end record: the file replays), one line says so, and the match goes on.
  const test::TempDir dir("swarmfield-replay-test");
  const std::string file = dir.path + "/capped.rpl";
  const auto limit = static_cast<std::uintmax_t>(0.05 * 1024 * 1024);  // --record-max-mb 0.05: 52,428 bytes
  test::ServerProcess server(test::small_city({"--agents", "50", "--record", file, "--record-max-mb", "0.05"}));
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  const auto cycle = [&] {
    test::RawClient c;
    REQUIRE(c.connect(ports->tcp));
    REQUIRE(c.send(test::hello(protocol::Role::kPlayer)));
    REQUIRE(c.read_until<protocol::Welcome>(5s).has_value());
    REQUIRE(c.send(protocol::Bye{"again"}));
    CHECK(c.wait_closed(5s));
  };
  const std::string stopped = "reached --record-max-mb 0.05";
  int cycles = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const auto end = start + 60s; server.err().find(stopped) == std::string::npos && std::chrono::steady_clock::now() < end;) {
    for (int i = 0; i < 25; ++i, ++cycles) cycle();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE_MESSAGE(server.err().find(stopped) != std::string::npos, server.err());
  std::this_thread::sleep_for(100ms);  // a few ticks more: nothing more is written
  const std::uintmax_t size = std::filesystem::file_size(file);
  INFO(cycles << " join/Bye cycles in " << seconds << " s reached the limit; the file is " << size << " bytes");
  CHECK(size >= limit);
  // The server keeps running and serving: more cycles, a player joins; the file stays as it was.
  for (int i = 0; i < 50; ++i) cycle();
  test::RawClient player;
  REQUIRE(test::join(player, ports->tcp, protocol::Role::kPlayer).has_value());
  CHECK(player.read_snapshot(3s).has_value());
  server.signal(SIGTERM);
  REQUIRE(server.wait_exit(3s) == 0);
  CHECK(std::filesystem::file_size(file) == size);
  const std::string err = server.err();
  std::size_t lines = 0;
  for (std::size_t at = err.find(stopped); at != std::string::npos; at = err.find(stopped, at + 1)) ++lines;
  CHECK(lines == 1);
  CHECK(err.find("recording " + file + " closed") == std::string::npos);  // not closed a second time
  // A whole recording: it reads without --allow-truncated and re-simulates bit for bit.
  std::string error;
  const auto replay = server::read_replay(file, error);
  REQUIRE_MESSAGE(replay.has_value(), error);
  // Over the limit by at most the last tick's records (its inputs: the joins and leaves of that
  // tick, 13 bytes each; a state hash) and the end record. Each record: type, length, CRC (9 bytes).
  std::uintmax_t last_tick_bytes = 2 * (9 + 16);  // a state hash and the end record
  for (auto r = replay->records.rbegin(); r != replay->records.rend(); ++r) {
    if (const auto* in = std::get_if<server::ReplayInputs>(&*r)) {
      last_tick_bytes += 9 + 12 + 13 * in->events.size();
      break;
    }
  }
  INFO("the last tick's records and the end record: " << last_tick_bytes << " bytes");
  CHECK(size <= limit + last_tick_bytes);
  CHECK(last_tick_bytes < limit / 4);  // one tick's worth, not a run of them
  const auto check = server::check_replay(*replay, 1);
  INFO(check.message);
  CHECK(check.ok);
  CHECK(check.hashes_checked >= 1);
  const std::string tool = std::string(SWARMFIELD_BIN_DIR) + "/swarmfield-tool replay " + file + " > " + dir.path + "/out.txt 2>&1";
  CHECK(WEXITSTATUS(std::system(tool.c_str())) == 0);
}

TEST_CASE("replay: a file that can not be opened is an error saying so and why, exit 2") {
  // Before: "error: can not read replay file '/nonexistent'", with no reason.
  const test::TempDir dir("swarmfield-replay-test");
  std::string error;
  CHECK_FALSE(server::read_replay(dir.path + "/missing.rpl", error).has_value());
  CHECK(error == "can not open replay file '" + dir.path + "/missing.rpl': No such file or directory");
  const std::string tool = std::string(SWARMFIELD_BIN_DIR) + "/swarmfield-tool replay ";
  CHECK(WEXITSTATUS(std::system((tool + dir.path + "/missing.rpl > " + dir.path + "/out.txt 2>&1").c_str())) == 2);
  const auto out = slurp(dir.path + "/out.txt");
  const std::string text(out.begin(), out.end());
  CHECK(text.find("can not open replay file '" + dir.path + "/missing.rpl': No such file or directory") != std::string::npos);
}

TEST_CASE("replay: --replay with a broken file is an error naming it, exit 2") {
  const test::TempDir dir("swarmfield-replay-test");
  auto bytes = slurp(record_small(dir.path + "/small.rpl", 10));
  bytes.resize(bytes.size() / 2);
  spit(dir.path + "/half.rpl", bytes);
  (void)test::expect_exit({"--port", "0", "--bind", "127.0.0.1", "--replay", dir.path + "/half.rpl"}, 2,
                          {"half.rpl: byte ", "truncated"}, 5s);
  // --record in a folder that does not exist: refused with the flags (exit 2), naming the path.
  (void)test::expect_exit(test::small_city({"--record", "/nonexistent-dir/x.rpl"}), 2, {"/nonexistent-dir/x.rpl"}, 5s);
}

TEST_CASE("combat through the real server: a firing bot kills agents, the summary counts the game, the match replays") {
  const test::TempDir dir("swarmfield-combat-test");
  const std::string file = dir.path + "/fight.rpl";
  std::string summary;
  {
    // Agents spawn 20 units off; a 6 s bot standing its ground with --fire meets them.
    test::ServerProcess server(test::small_city({"--agents", "600", "--record", file, "--record-hash-every", "5",
                                                 "--player-health", "40", "--respawn-time", "0.5"}));
    const auto ports = test::wait_listening(server);
    REQUIRE_MESSAGE(ports.has_value(), server.err());
    // A viewer that fires is refused and counted; a player whose aim has no direction too.
    test::RawClient viewer;
    REQUIRE(test::join(viewer, ports->tcp, protocol::Role::kViewer).has_value());
    test::Inputs viewer_inputs;
    protocol::Input shot = viewer_inputs.make(0, 0, 64.0f, test::now_us());
    shot.fire = true;
    shot.aim_x = 1.0f;
    REQUIRE(viewer.send(shot));
    // Holding the trigger repeats it in every Input: one press, refused once (each Input was
    // counted before: a browser holding fire for a minute added ~1,800).
    for (int repeat = 0; repeat < 3; ++repeat) {
      protocol::Input held = viewer_inputs.make(0, 0, 64.0f, test::now_us());
      held.fire = true;
      held.aim_x = 1.0f;
      REQUIRE(viewer.send(held));
    }
    test::RawClient player;
    REQUIRE(test::join(player, ports->tcp, protocol::Role::kPlayer).has_value());
    test::Inputs player_inputs;
    protocol::Input no_aim = player_inputs.make(0, 0, 64.0f, test::now_us());
    no_aim.fire = true;
    REQUIRE(player.send(no_aim));
    REQUIRE(player.read_snapshot(2s).has_value());  // a tick has applied it
    const std::string bot_script = dir.path + "/stand.bot";
    std::ofstream(bot_script) << "fire\n";
    const std::string bot = std::string(SWARMFIELD_BIN_DIR) + "/swarmfield-bot --host 127.0.0.1 --port " +
                            std::to_string(ports->tcp) + " --seconds 6 --script " + bot_script + " > " + dir.path +
                            "/bot.txt 2>&1";
    REQUIRE(std::system(bot.c_str()) == 0);
    summary = test::stop_and_summarize(server);
  }
  const auto bot_out = slurp(dir.path + "/bot.txt");
  const std::string bot_text(bot_out.begin(), bot_out.end());
  INFO(summary);
  INFO(bot_text);
  CHECK(value_of(summary, "kills") > 0);
  CHECK(value_of(summary, "shots") > 0);
  CHECK(value_of(summary, "player_deaths") >= 0);
  CHECK(value_of(summary, "actions_refused") == 2);  // the viewer's press, the aim of no direction
  CHECK(value_of(bot_text, "shots") > 0);
  // The snapshots told the bot of the deaths it saw (each once) and of its score: the default
  // rules' points per kill, less 25 per death of its own.
  CHECK(value_of(bot_text, "deaths_seen") > 0);
  CHECK(value_of(bot_text, "deaths_seen") <= value_of(summary, "kills"));
  CHECK(value_of(bot_text, "score") != 0);
  std::string error;
  const auto replay = server::read_replay(file, error);
  REQUIRE_MESSAGE(replay.has_value(), error);
  std::size_t fire_events = 0;
  for (const auto& r : replay->records) {
    if (const auto* in = std::get_if<server::ReplayInputs>(&r)) {
      for (const auto& e : in->events) fire_events += e.kind == ReplayEvent::Kind::kFire;
    }
  }
  CHECK(fire_events > 0);
  for (std::uint32_t threads : {1u, 2u, 3u}) {
    const auto check = server::check_replay(*replay, threads);
    INFO("threads " << threads << ": " << check.message);
    CHECK(check.ok);
    CHECK(check.hashes_checked >= 20);
  }
}

TEST_CASE("barricades through the real server: built on request, refused when they must be, sent to viewers, replayed") {
  const test::TempDir dir("swarmfield-barricade-test");
  const std::string file = dir.path + "/build.rpl";
  std::string summary;
  std::vector<protocol::MapDelta> seen, late_seen;
  {
    test::ServerProcess server(test::small_city({"--agents", "100", "--record", file, "--record-hash-every", "5",
                                                 "--barricades-per-player", "3", "--build-range", "4"}));
    const auto ports = test::wait_listening(server);
    REQUIRE_MESSAGE(ports.has_value(), server.err());
    test::RawClient viewer;
    REQUIRE(test::join(viewer, ports->tcp, protocol::Role::kViewer).has_value());
    test::Inputs viewer_inputs;
    protocol::Input viewer_build = viewer_inputs.make(0, 0, 64.0f, test::now_us());
    viewer_build.build_id = 1;  // a viewer builds nothing: refused, counted once however often repeated
    viewer_build.build_x = viewer_build.build_y = 30;
    REQUIRE(viewer.send(viewer_build));
    viewer_build.sequence = ++viewer_inputs.sequence;
    REQUIRE(viewer.send(viewer_build));
    test::RawClient player;
    const auto welcome = test::join(player, ports->tcp, protocol::Role::kPlayer);
    REQUIRE(welcome.has_value());
    const auto first = player.read_snapshot(2s);
    REQUIRE(first.has_value());
    float px = -1.0f, py = -1.0f;
    for (const auto& pl : first->players) {
      if (pl.id == welcome->player_id) px = pl.x, py = pl.y;
    }
    REQUIRE(px >= 0.0f);
    // Eight requests round the player, two cells off, then one far out of reach and one off the
    // map: some land on walls or over the budget of 3 (refused), at most 3 stand. Each request is
    // repeated in three inputs (as a client does until its next): built once.
    test::Inputs inputs;
    const int cx = static_cast<int>(px), cy = static_cast<int>(py);
    const int offsets[][2] = {{2, 0}, {-2, 0}, {0, 2}, {0, -2}, {2, 2}, {-2, -2}, {2, -2}, {-2, 2}, {30, 30}};
    std::uint32_t id = 0;
    for (const auto& o : offsets) {
      ++id;
      for (int repeat = 0; repeat < 3; ++repeat) {
        protocol::Input in = inputs.make(0, 0, 64.0f, test::now_us());
        in.build_id = id;
        in.build_x = std::clamp(cx + o[0], 0, 63);
        in.build_y = std::clamp(cy + o[1], 0, 63);
        REQUIRE(player.send(in));
      }
      REQUIRE(player.read_snapshot(2s).has_value());
    }
    // The viewer learns each barricade from MapDelta messages (cost 255, whole).
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    std::size_t standing = 0;
    while (standing < 3 && std::chrono::steady_clock::now() < deadline) {
      const auto delta = viewer.read_until<protocol::MapDelta>(500ms);
      if (!delta) continue;
      seen.push_back(*delta);
      for (const auto& c : delta->cells) standing += c.barricade > 0 ? 1 : 0;
    }
    // A viewer that joins now gets the standing barricades after the map.
    test::RawClient late;
    REQUIRE(test::join(late, ports->tcp, protocol::Role::kViewer).has_value());
    if (const auto delta = late.read_until<protocol::MapDelta>(2s)) late_seen.push_back(*delta);
    summary = test::stop_and_summarize(server);
  }
  INFO(summary);
  const long long built = value_of(summary, "barricades_built");
  CHECK(built == 3);  // the budget
  CHECK(value_of(summary, "actions_refused") >= 1 + 9 - built);  // the viewer's, and the rest
  std::size_t cells = 0;
  std::uint32_t last_revision = 0;
  for (const auto& d : seen) {
    CHECK(d.revision > last_revision);
    last_revision = d.revision;
    for (const auto& c : d.cells) {
      CHECK(c.cost == 255);
      CHECK(c.barricade == 255);
      ++cells;
    }
  }
  CHECK(cells == static_cast<std::size_t>(built));
  REQUIRE(late_seen.size() == 1);
  CHECK(late_seen[0].cells.size() == static_cast<std::size_t>(built));
  CHECK(late_seen[0].revision > last_revision);
  std::string error;
  const auto replay = server::read_replay(file, error);
  REQUIRE_MESSAGE(replay.has_value(), error);
  std::size_t build_events = 0;
  for (const auto& r : replay->records) {
    if (const auto* in = std::get_if<server::ReplayInputs>(&r)) {
      for (const auto& e : in->events) build_events += e.kind == ReplayEvent::Kind::kBuild;
    }
  }
  CHECK(build_events == static_cast<std::size_t>(built));
  for (std::uint32_t threads : {1u, 2u}) {
    const auto check = server::check_replay(*replay, threads);
    INFO("threads " << threads << ": " << check.message);
    CHECK(check.ok);
  }
}

TEST_CASE("waves and Lua rules through the real server: a [[waves]] table spawns its comings, counted, and the match replays") {
  const test::TempDir dir("swarmfield-waves-test");
  const std::string file = dir.path + "/waves.rpl";
  const std::string config = dir.path + "/waves.toml";
  std::ofstream(config) << "[[waves]]\nstart = 0.2\nkinds = { walker = 20 }\nzone = [0, 0, 31, 31]\nduration = 0.5\n"
                           "repeat = 1\nevery = 1\ngrowth = 2\n\n[[waves]]\nstart = 1.5\nkinds = { brute = 3 }\n";
  std::string summary;
  std::uint32_t agents_seen = 0;
  {
    // With the Lua rules too: the recording stores the script and the check re-runs it.
    test::ServerProcess server(test::small_city({"--agents", "0", "--config", config, "--record", file, "--rules",
                                                 std::string(SWARMFIELD_SOURCE_DIR) + "/server/rules/scripts/last_stand.lua"}));
    const auto ports = test::wait_listening(server);
    REQUIRE_MESSAGE(ports.has_value(), server.err());
    test::RawClient viewer;
    REQUIRE(test::join(viewer, ports->tcp, protocol::Role::kViewer).has_value());
    test::Inputs inputs;
    const auto deadline = std::chrono::steady_clock::now() + 4s;
    while (std::chrono::steady_clock::now() < deadline && agents_seen < 63) {
      REQUIRE(viewer.send(inputs.make(0, 0, 64.0f, test::now_us())));
      if (const auto snap = viewer.read_snapshot(500ms)) agents_seen = std::max(agents_seen, snap->total_agents);
    }
    summary = test::stop_and_summarize(server);
  }
  INFO(summary);
  CHECK(agents_seen == 20 + 40 + 3);
  CHECK(value_of(summary, "waves") == 3);
  std::string error;
  const auto replay = server::read_replay(file, error);
  REQUIRE_MESSAGE(replay.has_value(), error);
  const auto check = server::check_replay(*replay, 2);
  INFO(check.message);
  CHECK(check.ok);
}

TEST_CASE("replay: a stored config without the combat key (recorded before the horde rules) replays without them") {
  const auto parsed = [](const std::string& text) { return server::parse_stored_config(text, "stored"); };
  const std::string now = server::config_to_toml(server::parse_config_toml("", "empty").config);
  REQUIRE(now.find("\ncombat = true\n") != std::string::npos);
  const auto with = parsed(now);
  REQUIRE(with.action == server::ConfigParseResult::Action::kRun);
  CHECK(with.config.combat);
  std::string old = now;
  old.erase(old.find("\ncombat = true\n") + 1, std::string("combat = true\n").size());
  const auto without = parsed(old);
  REQUIRE(without.action == server::ConfigParseResult::Action::kRun);
  CHECK_FALSE(without.config.combat);
  CHECK_FALSE(server::world_params(without.config).combat.enabled);
  CHECK_FALSE(parsed("combat = false\n").config.combat);
  CHECK(parsed("  combat=true\n").config.combat);
  CHECK_FALSE(parsed("combat-x = 1\n").action == server::ConfigParseResult::Action::kRun);  // unknown key: refused
}
