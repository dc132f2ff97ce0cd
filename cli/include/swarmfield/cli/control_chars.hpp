#pragma once
// Control characters in text that came from outside (a peer's name or Error/Bye reason, a config
// value, a log message): the one rule for what counts as one and how it is written when it must
// not appear raw (JSON log lines, TOML written back by --print-config, plain log lines, a
// terminal). Here beside the command-line helpers because every program prints text it did not
// write: the server (names, reasons, config values) and the clients (a server's reasons and names).
#include <cstdio>
#include <string>
#include <string_view>

namespace swarmfield::cli {

/// The C0 controls (0x00-0x1F) and DEL (0x7F).
[[nodiscard]] constexpr bool is_control_char(unsigned char c) noexcept { return c < 0x20 || c == 0x7f; }

/// Appends `c` as a \u00XX escape, which JSON and TOML strings both read back as `c`.
inline void append_unicode_escape(std::string& out, unsigned char c) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
  out += buffer;
}

/// `text` for a plain log line: every control character and every byte beyond ASCII becomes '?'.
[[nodiscard]] inline std::string printable_ascii(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    out += (c < 0x80 && !is_control_char(c)) ? ch : '?';
  }
  return out;
}

/// `text` for a quoted value of a log line (`name='...'`, `reason='...'`): as printable_ascii,
/// and a single quote becomes '?' too, so a peer's text can not close the quotes early and add
/// fields of its own to the line (ops/logging's JSON fields read `key='value'`).
[[nodiscard]] inline std::string quotable_ascii(std::string_view text) {
  std::string out = printable_ascii(text);
  for (char& ch : out) {
    if (ch == '\'') ch = '?';
  }
  return out;
}

}  // namespace swarmfield::cli
