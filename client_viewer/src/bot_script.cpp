#include "swarmfield/client/bot_script.hpp"

#include "swarmfield/cli/file_kind.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace swarmfield::client {

std::string BotScriptError::to_string() const {
  if (line > 0) return source + ":" + std::to_string(line) + ": " + message;
  return source + ": " + message;
}

namespace {

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// Why a word is not a number a script can use; a duration's caller needs to tell "too large"
// apart, since its own limit (86400 s) binds long before a float's does.
enum class NumberProblem : std::uint8_t { kNone, kNotDecimal, kNotFinite, kTooLarge, kTooSmall };

// A finite float in decimal (an optional sign) into `value`: kNone, else why `word` is not one.
NumberProblem parse_number(std::string_view word, float& value) {
  if (!word.empty() && word.front() == '+') word.remove_prefix(1);
  const char* const last = word.data() + word.size();
  float v = 0.0f;
  const auto [end, ec] = std::from_chars(word.data(), last, v);
  // from_chars stops at the first byte that is no part of a decimal number: "0x10" reads as "0"
  // and was called "not a finite number", which sends the writer looking for the wrong mistake.
  if (word.empty() || end != last) return NumberProblem::kNotDecimal;
  if (ec == std::errc::result_out_of_range) {
    double d = 0.0;  // out of a float's range: past its largest, or nearer 0 than its smallest
    const auto [end_d, ec_d] = std::from_chars(word.data(), last, d);
    return ec_d == std::errc::result_out_of_range || std::fabs(d) > 1.0 ? NumberProblem::kTooLarge
                                                                        : NumberProblem::kTooSmall;
  }
  if (ec != std::errc()) return NumberProblem::kNotDecimal;
  if (!std::isfinite(v)) return NumberProblem::kNotFinite;  // nan, inf, infinity
  value = v;
  return NumberProblem::kNone;
}

std::string_view describe(NumberProblem problem) {
  switch (problem) {
    case NumberProblem::kNone: break;
    case NumberProblem::kNotDecimal: return "is not a decimal number (like 12, -3.5 or 1e2)";
    case NumberProblem::kNotFinite: return "is not a finite number";
    case NumberProblem::kTooLarge: return "is too large (at most 3.4e38)";
    case NumberProblem::kTooSmall: return "is too close to 0 for a float (write 0 or a larger value)";
  }
  return {};
}

// A whole number in decimal (an optional sign), into `value`: kNone, kTooLarge for one beyond
// long long (so the caller can name its own limit), else kNotDecimal.
NumberProblem parse_integer(std::string_view word, long long& value) {
  if (!word.empty() && word.front() == '+') word.remove_prefix(1);
  if (word.empty()) return NumberProblem::kNotDecimal;
  long long v = 0;
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
  if (end != word.data() + word.size()) return NumberProblem::kNotDecimal;
  if (ec == std::errc::result_out_of_range) return NumberProblem::kTooLarge;
  if (ec != std::errc()) return NumberProblem::kNotDecimal;
  value = v;
  return NumberProblem::kNone;
}

// Built with append(): GCC 12 at -O3 raises a false -Wrestrict on "'" + std::string (GCC bug 105329).
// At most 40 bytes, and bytes other than printable ASCII as \xNN: a binary file named as a
// script must not put control characters (terminal escapes, newlines) or a whole megabyte of
// itself into the error line.
std::string quoted(std::string_view word) {
  constexpr std::size_t kMax = 40;
  std::string out;
  out.reserve(std::min(word.size(), kMax) + 5);
  out.append(1, '\'');
  for (const char c : word.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.append(1, c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", u);
      out.append(buf);
    }
  }
  if (word.size() > kMax) out.append("...");
  out.append(1, '\'');
  return out;
}

}  // namespace

bool parse_bot_script(std::string_view text, std::string_view source, BotScript& out, BotScriptError& error) {
  // A UTF-8 byte order mark (Windows Notepad saves one) is no part of the first command: it was
  // "unknown command '\xEF\xBB\xBFgoto'".
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  BotScript script;
  script.source = std::string(source);
  error = BotScriptError{std::string(source), 0, {}};
  auto fail = [&](int line, std::string message) {
    error.line = line;
    error.message = std::move(message);
    return false;
  };

  int line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto words = split_words(line);
    if (words.empty()) continue;

    if (!script.commands.empty() && script.commands.back().kind == BotCommandKind::kRepeat) {
      return fail(line_no, "command after 'repeat' (line " + std::to_string(script.commands.back().line) +
                               ") would never run; 'repeat' must be the last command");
    }
    BotCommand cmd;
    cmd.line = line_no;
    const std::string_view name = words[0];
    const std::size_t args = words.size() - 1;
    auto want_args = [&](std::size_t lo, std::size_t hi, const char* usage) {
      if (args < lo || args > hi) {
        fail(line_no, std::string("'") + std::string(name) + "' takes " +
                          (lo == hi ? std::to_string(lo) : std::to_string(lo) + " or " + std::to_string(hi)) +
                          " argument(s), got " + std::to_string(args) + " (usage: " + usage + ")");
        return false;
      }
      return true;
    };
    auto number_failed = [&](std::size_t index, const char* what, NumberProblem problem) {
      fail(line_no, std::string(what) + " " + quoted(words[index]) + " " + std::string(describe(problem)));
      return false;
    };
    auto number = [&](std::size_t index, const char* what, float& v) {
      const NumberProblem problem = parse_number(words[index], v);
      return problem == NumberProblem::kNone || number_failed(index, what, problem);
    };
    auto cell = [&](std::size_t index, const char* what, std::int32_t& v, bool& relative) {
      long long n = 0;
      std::string_view word = words[index];
      relative = !word.empty() && word.front() == '~';
      if (relative) word.remove_prefix(1);
      if (relative && word.empty()) {
        v = 0;  // `~`: the bot's own row or column
        return true;
      }
      const NumberProblem problem = parse_integer(word, n);
      if (problem == NumberProblem::kNotDecimal) {
        fail(line_no, std::string(what) + " " + quoted(words[index]) +
                          " is not a whole number (map cells; ~N for N cells from the bot's own)");
        return false;
      }
      // Past long long is past the cell limit too: name that limit (it was "not a whole number").
      if (relative && (problem == NumberProblem::kTooLarge || n < -kMaxScriptCell || n > kMaxScriptCell)) {
        fail(line_no, std::string(what) + " " + quoted(words[index]) + " must be within ~-" +
                          std::to_string(kMaxScriptCell) + "..~" + std::to_string(kMaxScriptCell) + " (map cells)");
        return false;
      }
      if (!relative && (problem == NumberProblem::kTooLarge || n < 0 || n > kMaxScriptCell)) {
        fail(line_no, std::string(what) + " " + quoted(words[index]) + " must be >= 0 and <= " +
                          std::to_string(kMaxScriptCell) + " (map cells)");
        return false;
      }
      v = static_cast<std::int32_t>(n);
      return true;
    };
    auto duration = [&](std::size_t index, const char* what, bool allow_zero, float& v) {
      auto out_of_range = [&] {
        fail(line_no, std::string(what) + " " + quoted(words[index]) + " must be " +
                          (allow_zero ? ">= 0" : "> 0") + " and <= " +
                          std::to_string(static_cast<int>(kMaxScriptSeconds)) + " seconds");
        return false;
      };
      const NumberProblem problem = parse_number(words[index], v);
      // Past a float's range is past a duration's too: its limit is the one to name (`wait 1e308`
      // said "at most 3.4e38" while anything over 86400 is refused).
      if (problem == NumberProblem::kTooLarge) return out_of_range();
      if (problem != NumberProblem::kNone) return number_failed(index, what, problem);
      if (v < 0.0f || (!allow_zero && v == 0.0f) || v > kMaxScriptSeconds) return out_of_range();
      return true;
    };

    if (name == "goto") {
      cmd.kind = BotCommandKind::kGoto;
      if (!want_args(2, 3, "goto X Y [TIMEOUT_SECONDS]")) return false;
      if (!number(1, "X", cmd.x) || !number(2, "Y", cmd.y)) return false;
      if (args == 3 && !duration(3, "timeout", false, cmd.seconds)) return false;
    } else if (name == "wait") {
      cmd.kind = BotCommandKind::kWait;
      if (!want_args(1, 1, "wait SECONDS")) return false;
      if (!duration(1, "duration", true, cmd.seconds)) return false;
    } else if (name == "wander") {
      cmd.kind = BotCommandKind::kWander;
      if (!want_args(1, 1, "wander SECONDS")) return false;
      if (!duration(1, "duration", true, cmd.seconds)) return false;
    } else if (name == "kite") {
      cmd.kind = BotCommandKind::kKite;
      if (!want_args(1, 1, "kite SECONDS")) return false;
      if (!duration(1, "duration", true, cmd.seconds)) return false;
    } else if (name == "fire") {
      cmd.kind = BotCommandKind::kFire;
      if (!want_args(0, 1, "fire [SECONDS]")) return false;
      cmd.timed = args == 1;
      if (cmd.timed && !duration(1, "duration", true, cmd.seconds)) return false;
    } else if (name == "build") {
      cmd.kind = BotCommandKind::kBuild;
      if (!want_args(2, 2, "build X Y")) return false;
      if (!cell(1, "cell X", cmd.cell_x, cmd.relative_x) || !cell(2, "cell Y", cmd.cell_y, cmd.relative_y)) return false;
    } else if (name == "cease") {
      cmd.kind = BotCommandKind::kCease;
      if (!want_args(0, 0, "cease")) return false;
    } else if (name == "repeat") {
      cmd.kind = BotCommandKind::kRepeat;
      if (!want_args(0, 0, "repeat")) return false;
      if (script.commands.empty()) return fail(line_no, "'repeat' with no command before it");
    } else {
      return fail(line_no, "unknown command " + quoted(name) + " (expected goto, wait, wander, kite, fire, cease, build or repeat)");
    }
    script.commands.push_back(cmd);
  }
  if (script.commands.empty()) return fail(0, "script has no commands");
  out = std::move(script);
  return true;
}

bool load_bot_script(const std::string& path, BotScript& out, BotScriptError& error) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st)) {  // an ifstream opens a folder and reads nothing
    error = BotScriptError{path, 0, "is a folder, not a script file"};
    return false;
  }
  // Only a regular file, checked before opening: a FIFO's open waits for a writer (the bot
  // hangs), and a device never ends (/dev/zero grew the bot past 650 MB in 6 s).
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    error = BotScriptError{path, 0, std::string("is ") + cli::file_kind(st) + ", not a script file"};
    return false;
  }
  if (!ec && std::filesystem::exists(st)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > kMaxBotScriptBytes) {
      error = BotScriptError{path, 0, "is larger than " + std::to_string(kMaxBotScriptBytes >> 20) +
                                          " MiB, the limit of a bot script"};
      return false;
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = BotScriptError{path, 0, "can not open the script file"};
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    error = BotScriptError{path, 0, "can not read the script file"};
    return false;
  }
  return parse_bot_script(text.str(), path, out, error);
}

std::string_view default_bot_script() noexcept {
  return "# built-in: roam the map, pause, roam again\n"
         "wander 20\n"
         "wait 1\n"
         "repeat\n";
}

}  // namespace swarmfield::client
