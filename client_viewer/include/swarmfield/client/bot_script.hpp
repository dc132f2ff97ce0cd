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
//   build X Y            ask the server for a barricade at map cell (X, Y); takes no time
//   repeat               start over from the first command (must be the last command)
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace swarmfield::client {

enum class BotCommandKind : std::uint8_t { kGoto, kWait, kWander, kRepeat, kFire, kCease, kKite, kBuild };

struct BotCommand {
  BotCommandKind kind = BotCommandKind::kWait;
  float x = 0.0f;        ///< goto: target, world units
  float y = 0.0f;
  float seconds = 0.0f;  ///< wait/wander: duration; goto: timeout (0 = default from distance);
                         ///< fire: how long to hold the trigger when `timed`
  bool timed = false;    ///< fire: S was given (else the trigger is held until cease or the end)
  std::int32_t cell_x = 0;  ///< build: the cell, map cells (0-based column), 0..kMaxScriptCell
  std::int32_t cell_y = 0;  ///< build: 0-based row
  /// build: `~N` -- cell_x / cell_y is an offset (-kMaxScriptCell..kMaxScriptCell) from the
  /// bot's own cell when the command runs, each coordinate on its own (`build ~2 ~0`).
  bool relative_x = false;
  bool relative_y = false;
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
/// Largest cell coordinate a `build` may name (map cells): no map has more than 8192 cells a
/// side (protocol::kMaxMapSide). Whether the cell lies inside the server's map is known only
/// once connected (BotBrain skips it then).
inline constexpr std::int32_t kMaxScriptCell = 8191;

/// Parses script text. Errors (first one wins): unknown command, missing or extra arguments,
/// an argument that is not a finite decimal number, a duration/timeout that is negative, zero (for
/// timeouts) or above kMaxScriptSeconds (a fire's S has a wait's limits; one past a float's range
/// is named against these limits too), a build cell that is not a whole number, negative or
/// above kMaxScriptCell, a `repeat` that is not the last
/// command, a script with no commands, and a `repeat` with nothing before it.
/// `out` is untouched on failure.
[[nodiscard]] bool parse_bot_script(std::string_view text, std::string_view source, BotScript& out,
                                    BotScriptError& error);

/// Largest script file load_bot_script() reads (a script of a few thousand lines is ~100 KB).
inline constexpr std::uintmax_t kMaxBotScriptBytes = std::uintmax_t{16} << 20;  // 16 MiB

/// Reads and parses a file; a file that can not be read is an error with line 0: a folder, a
/// file that is not a regular file (a FIFO, a device: "is a FIFO, not a script file"), one over
/// kMaxBotScriptBytes, or one that can not be opened or read.
[[nodiscard]] bool load_bot_script(const std::string& path, BotScript& out, BotScriptError& error);

/// The script used when none is given: wander for a while, pause, repeat.
[[nodiscard]] std::string_view default_bot_script() noexcept;

}  // namespace swarmfield::client
