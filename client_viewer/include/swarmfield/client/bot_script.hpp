#pragma once
// The bot's script language (client_viewer/BOT_SCRIPT.md): one command per line, `#` starts
// a comment, blank lines are ignored.
//   goto X Y [TIMEOUT]   walk to world position (X, Y); give up after TIMEOUT seconds
//   wait S               stand still S seconds
//   wander S             seeded random walk for S seconds
//   kite S               for S seconds, back away from the nearest enemies while firing at them
//   fire [S]             from here on hold the trigger (aimed at the nearest agent), for S seconds
//                        if given; takes no time itself
//   cease                let go of the trigger
//   repeat               start over from the first command (must be the last command)
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace swarmfield::client {

enum class BotCommandKind : std::uint8_t { kGoto, kWait, kWander, kRepeat, kFire, kCease, kKite };

struct BotCommand {
  BotCommandKind kind = BotCommandKind::kWait;
  float x = 0.0f;        ///< goto: target, world units
  float y = 0.0f;
  float seconds = 0.0f;  ///< wait/wander: duration; goto: timeout (0 = default from distance);
                         ///< fire: how long to hold the trigger when `timed`
  bool timed = false;    ///< fire: S was given (else the trigger is held until cease or the end)
  int line = 0;          ///< 1-based source line, for messages (0: not from the file, e.g. --fire)
};

struct BotScript {
  std::string source;  ///< file name (for messages)
  std::vector<BotCommand> commands;
  [[nodiscard]] bool repeats() const noexcept {
    return !commands.empty() && commands.back().kind == BotCommandKind::kRepeat;
  }
};

/// Where and why a script failed to parse. `line` is 1-based (0 = whole file).
struct BotScriptError {
  std::string source;
  int line = 0;
  std::string message;
  /// "source:line: message" (or "source: message" when line == 0).
  [[nodiscard]] std::string to_string() const;
};

/// Longest duration/timeout a script may ask for, seconds (one day).
inline constexpr float kMaxScriptSeconds = 86400.0f;

/// Parses script text. Errors (first one wins): unknown command, missing or extra arguments,
/// an argument that is not a finite number, a duration/timeout that is negative, zero (for
/// timeouts) or above kMaxScriptSeconds (a fire's S has a wait's limits), a `repeat` that is
/// not the last command, a script with no commands, and a `repeat` with nothing before it.
/// `out` is untouched on failure.
[[nodiscard]] bool parse_bot_script(std::string_view text, std::string_view source, BotScript& out,
                                    BotScriptError& error);

/// Reads and parses a file; a file that can not be read is an error with line 0.
[[nodiscard]] bool load_bot_script(const std::string& path, BotScript& out, BotScriptError& error);

/// The script used when none is given: wander for a while, pause, repeat.
[[nodiscard]] std::string_view default_bot_script() noexcept;

}  // namespace swarmfield::client
