#pragma once
// Reading map files from disk into a GridMap (the sim library parses; this reads the bytes).
#include <string>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/map/map_parse.hpp"

namespace swarmfield::io {

/// Largest map file accepted (bytes); a 8192 x 8192 MovingAI map is ~67 MB.
inline constexpr std::size_t kMaxMapFileBytes = 128u * 1024u * 1024u;

/// Reads `path` and parses it: MovingAI `.map` when the text starts with "type", otherwise an
/// ASCII map (`#` blocked; see sim::parse_ascii_map). On failure returns false, leaves `out`
/// untouched and fills `error` with the file name as source: a missing or unreadable file
/// (line 0, with the OS reason), no regular file, a file above kMaxMapFileBytes, or the parser's
/// error.
[[nodiscard]] bool read_map_file(const std::string& path, sim::GridMap& out, sim::MapError& error);

/// Reads a whole regular file into `text`. False with a reason ("cannot open file: No such file
/// or directory", "is a FIFO, not a regular file", ...) in `error` when it cannot be opened or
/// read, is no regular file (a directory, FIFO, device or socket: opened without blocking and
/// refused, never read), or is larger than `max_bytes`.
[[nodiscard]] bool read_text_file(const std::string& path, std::string& text, std::string& error,
                                  std::size_t max_bytes = kMaxMapFileBytes);

}  // namespace swarmfield::io
