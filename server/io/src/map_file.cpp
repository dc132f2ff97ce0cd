// read_map_file / read_text_file.
#include "swarmfield/io/map_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace swarmfield::io {

bool read_text_file(const std::string& path, std::string& text, std::string& error, std::size_t max_bytes) {
  errno = 0;
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) {
    error = std::string("cannot open file: ") + std::strerror(errno);
    return false;
  }
  std::string data;
  char buf[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buf, 1, sizeof buf, f.get());
    if (got > 0) {
      if (data.size() + got > max_bytes) {
        error = "file is larger than " + std::to_string(max_bytes) + " bytes";
        return false;
      }
      data.append(buf, got);
    }
    if (got < sizeof buf) {
      if (std::ferror(f.get())) {
        error = std::string("cannot read file: ") + std::strerror(errno);
        return false;
      }
      break;
    }
  }
  text = std::move(data);
  return true;
}

bool read_map_file(const std::string& path, sim::GridMap& out, sim::MapError& error) {
  std::string text;
  std::string reason;
  if (!read_text_file(path, text, reason)) {
    error = {path, 0, reason};
    return false;
  }
  if (text.compare(0, 4, "type") == 0) return sim::parse_movingai_map(text, path, out, error);
  return sim::parse_ascii_map(text, path, out, error);
}

}  // namespace swarmfield::io
