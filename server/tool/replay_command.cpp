// `swarmfield-tool replay FILE [--threads N]`: re-simulates a recording made with
// `swarmfield-server --record FILE` and checks every stored state hash.
//   exit 0: all match; 1: the state differs (names the first tick); 2: the file is unreadable,
//   corrupt or truncated (names the byte offset; --allow-truncated checks a recording cut short up
//   to its last state hash), or a bad option.
// Last line: ticks=T hashes=H result=ok|differs first_bad_tick=X seconds=S ticks_per_s=R
#include <cstdio>
#include <memory>
#include <string>

#include "swarmfield/server/replay/replay_file.hpp"
#include "swarmfield/server/replay/replay_playback.hpp"
#include "tool_commands.hpp"

namespace swarmfield::tool {

namespace {
struct ReplayOptions {
  std::string path;
  std::uint32_t threads = 1;
  bool allow_truncated = false;
};
}  // namespace

void add_replay_command(CLI::App& app) {
  auto options = std::make_shared<ReplayOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Re-simulate a recording (swarmfield-server --record) and check its state hashes: exit 0 if all match, "
                "1 naming the first tick that differs, 2 for a broken file");
  cmd->add_option("FILE", options->path, "Replay file")->required();
  cmd->add_option("--threads", options->threads, "Threads stepping the swarm (1..64); the result must not depend on it")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("--allow-truncated", options->allow_truncated,
                "A recording cut short (its server crashed): check it up to its last state hash instead of refusing it");
  cmd->callback([options] {
    std::string error;
    std::string truncation;
    const auto replay =
        server::read_replay(options->path, error, server::ReplayReadOptions{options->allow_truncated}, &truncation);
    if (!replay) {
      std::fprintf(stderr, "error: %s\n", error.c_str());
      set_exit_code(2);
      return;
    }
    if (!truncation.empty()) std::fprintf(stderr, "warning: %s\n", truncation.c_str());
    std::fprintf(stderr, "replay %s: map '%s' %dx%d, %zu records\n", options->path.c_str(),
                 replay->header.map_name.c_str(), replay->header.width, replay->header.height, replay->records.size());
    const server::ReplayCheck check = server::check_replay(*replay, options->threads);
    if (!check.ok) std::fprintf(stderr, "%s\n", check.message.c_str());
    std::printf("ticks=%llu hashes=%llu result=%s first_bad_tick=%llu seconds=%.3f ticks_per_s=%.0f\n",
                static_cast<unsigned long long>(check.ticks), static_cast<unsigned long long>(check.hashes_checked),
                check.ok ? "ok" : "differs", static_cast<unsigned long long>(check.first_bad_tick), check.seconds,
                check.seconds > 0.0 ? static_cast<double>(check.ticks) / check.seconds : 0.0);
    set_exit_code(check.ok ? 0 : 1);
  });
}

}  // namespace swarmfield::tool
