#pragma once
// spdlog setup for the server: plain text lines or one JSON object per line, on stderr
// (stdout is kept for the exit summary line).
#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "swarmfield/server/config/server_config.hpp"

namespace swarmfield::server {

/// Escapes `text` for use inside a JSON string literal (RFC 8259): quote, backslash and
/// control characters (as \n, \t, ... or \u00XX). Bytes >= 0x80 pass through unchanged.
[[nodiscard]] std::string json_escape(std::string_view text);

/// The fields a JSON log line carries besides the message, as `,"key":value` pairs to append to
/// the object: every `key=value` of the message (key [a-z_][a-z0-9_]*; the value up to the next
/// space, trailing ',;)' dropped, or the text between quotes after `key='`), and the ids the
/// server's messages name in words: `client N`, `player N`, `tick N`, `connection N`. The first of a key wins;
/// time, level and msg are never fields; a quoted text that is no key's value (a client's name)
/// is skipped whole, so a peer's string adds no field. Whole numbers and decimals are JSON numbers, anything
/// else an escaped string. Empty when the message names nothing.
[[nodiscard]] std::string log_fields(std::string_view message);

/// Creates the logger "swarmfield" writing to stderr in `format` at `level` (one of
/// trace..off; an unknown name means info), registers it as spdlog's default and returns it.
/// JSON lines look like {"time":"2024-01-01T12:00:00.123Z","level":"info","msg":"...",...}, the
/// message's fields (log_fields) after msg: `client 3 left ... tick=90` gives "client":3,"tick":90.
std::shared_ptr<spdlog::logger> setup_logging(LogFormat format, const std::string& level);

}  // namespace swarmfield::server
