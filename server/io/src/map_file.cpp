// read_map_file / read_text_file / map_format_of.
#include "swarmfield/io/map_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "swarmfield/io/png_map.hpp"
#include "swarmfield/io/tiled_map.hpp"

namespace swarmfield::io {

namespace {

// What a path that is not a regular file names, for the message.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

bool read_text_file(const std::string& path, std::string& text, std::string& error, std::size_t max_bytes) {
  // Opened without blocking (a FIFO's open waits for a writer; a terminal or a device never
  // ends), then refused unless it is a regular file.
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)};
  if (file.fd < 0) {
    error = std::string("cannot open file: ") + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0) {
    error = std::string("cannot read file: ") + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = std::string("is ") + file_kind(st.st_mode) + ", not a regular file";
    return false;
  }
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const ssize_t got = ::read(file.fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      error = std::string("cannot read file: ") + std::strerror(errno);
      return false;
    }
    if (got == 0) break;
    if (data.size() + static_cast<std::size_t>(got) > max_bytes) {
      error = "file is larger than " + std::to_string(max_bytes) + " bytes";
      return false;
    }
    data.append(buf, static_cast<std::size_t>(got));
  }
  text = std::move(data);
  return true;
}

namespace {

bool has_map_extension(std::string_view path) noexcept {
  if (path.size() < 4) return false;
  std::string ext;
  for (const char c : path.substr(path.size() - 4)) ext += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return ext == ".map";
}

}  // namespace

MapFormat map_format_of(std::string_view path) noexcept {
  const std::size_t dot = path.find_last_of("./");
  if (dot == std::string_view::npos || path[dot] != '.') return MapFormat::kMovingAi;
  std::string ext;
  for (const char c : path.substr(dot + 1)) ext += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  if (ext == "tmj" || ext == "json") return MapFormat::kTiled;
  if (ext == "png") return MapFormat::kPng;
  return MapFormat::kMovingAi;
}

bool read_map_file(const std::string& path, sim::GridMap& out, sim::MapError& error,
                   std::vector<sim::CellCoord>* spawns) {
  const MapFormat format = map_format_of(path);
  std::string text;
  std::string reason;
  if (!read_text_file(path, text, reason, format == MapFormat::kTiled ? kMaxTiledFileBytes : kMaxMapFileBytes)) {
    error = {path, 0, reason};
    return false;
  }
  switch (format) {
    case MapFormat::kTiled: return parse_tiled_map(text, path, out, error, spawns);
    case MapFormat::kPng: return parse_png_map(text, path, out, error, spawns);
    case MapFormat::kMovingAi: break;
  }
  // A .map file is MovingAI's format, header and all: a text without one ("hello world", a
  // Tiled file saved as .map) is refused, not read as a one-row ASCII map. The ASCII test
  // format ('#' walls, any other printable character walkable) is for other names (e.g. .txt).
  // A UTF-8 byte order mark (Windows Notepad saves one) is no part of the text: it was
  // "expected header 'type octile', found \"\xEF\xBB\xBFtype octile\"".
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
  const bool movingai = text.compare(0, 4, "type") == 0 || has_map_extension(path);
  const bool ok = movingai ? sim::parse_movingai_map(text, path, out, error) : sim::parse_ascii_map(text, path, out, error);
  if (ok && spawns != nullptr) spawns->clear();
  return ok;
}

}  // namespace swarmfield::io
