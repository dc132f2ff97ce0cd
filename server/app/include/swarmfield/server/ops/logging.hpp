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

/// Creates the logger "swarmfield" writing to stderr in `format` at `level` (one of
/// trace..off; an unknown name means info), registers it as spdlog's default and returns it.
/// JSON lines look like {"time":"2024-01-01T12:00:00.123Z","level":"info","msg":"..."}.
std::shared_ptr<spdlog::logger> setup_logging(LogFormat format, const std::string& level);

}  // namespace swarmfield::server
