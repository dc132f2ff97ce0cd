#pragma once
// What a path that is not a regular file names, for the messages of the programs' file inputs
// (config, key file, rules script, bot script): they are refused before they are opened, since a
// FIFO's open waits for a writer and a device never ends.
#include <filesystem>

namespace swarmfield::cli {

/// "a directory", "a FIFO", "a character device", "a block device", "a socket" or "a special
/// file" (a status that is none of those, a regular file included: call it for the others).
[[nodiscard]] inline const char* file_kind(const std::filesystem::file_status& st) noexcept {
  return std::filesystem::is_directory(st)        ? "a directory"
         : std::filesystem::is_fifo(st)           ? "a FIFO"
         : std::filesystem::is_character_file(st) ? "a character device"
         : std::filesystem::is_block_file(st)     ? "a block device"
         : std::filesystem::is_socket(st)         ? "a socket"
                                                  : "a special file";
}

}  // namespace swarmfield::cli
