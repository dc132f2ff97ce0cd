#pragma once
// Connect tokens as clients read them (--token-file): one token per line in its text form
// ("swft1:...", protocol/transport/connect_token.hpp), as `swarmfield-tool token` prints them
// or a backend hands them out. A token is single-use, so N bots need N lines.
#include <cstddef>
#include <string>
#include <vector>

#include "swarmfield/protocol/transport/connect_token.hpp"

namespace swarmfield::client {

/// Largest token file read: a line is ~1.5 KB, so this holds a couple of thousand tokens.
inline constexpr std::size_t kMaxTokenFileBytes = std::size_t{4} << 20;

/// Reads the tokens of `path` (a regular file, at most kMaxTokenFileBytes; blank lines and lines
/// starting with '#' skipped). Needs at least `needed` tokens. False with `error` naming the file
/// and the line (1-based) of a token that does not read, or saying how many are missing.
[[nodiscard]] bool read_token_file(const std::string& path, std::size_t needed,
                                   std::vector<protocol::ConnectToken>& tokens, std::string& error);

}  // namespace swarmfield::client
