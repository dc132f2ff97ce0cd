// write_map_file / encode_movingai_map: a GridMap to disk in the format its name says.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/io/png_map.hpp"
#include "swarmfield/io/png_writer.hpp"
#include "swarmfield/io/tiled_map.hpp"

namespace swarmfield::io {

namespace {

/// Writes `bytes` to `tmp` (created, truncated) and renames it over `path`: readers never see a
/// partial file, and a failure removes `tmp`.
bool write_replacing(const std::string& path, const std::string& tmp, const std::string& bytes, std::string& error) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = path + ": cannot create file: " + std::strerror(errno);
    return false;
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = path + ": cannot write file: " + std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    error = path + ": cannot write file: " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

bool rename_over(const std::string& tmp, const std::string& path, std::string& error) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": cannot replace file: " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace

bool encode_movingai_map(const sim::GridMap& map, std::string& text, std::string& error, std::uint8_t swamp_cost) {
  std::string s = "type octile\nheight " + std::to_string(map.height()) + "\nwidth " + std::to_string(map.width()) +
                  "\nmap\n";
  s.reserve(s.size() + map.cell_count() + static_cast<std::size_t>(map.height()));
  for (std::int32_t y = 0; y < map.height(); ++y) {
    for (std::int32_t x = 0; x < map.width(); ++x) {
      const std::uint8_t c = map.cost(x, y);
      if (c == sim::kDefaultCost) {
        s += '.';
      } else if (c == sim::kBlockedCost) {
        s += '@';
      } else if (c == swamp_cost) {
        s += 'S';
      } else {
        error = "cell (" + std::to_string(x) + ", " + std::to_string(y) + ") has cost " + std::to_string(c) +
                ", which a MovingAI .map can not hold (1 '.', " + std::to_string(swamp_cost) +
                " 'S', walls '@'); use .tmj or .png";
        return false;
      }
    }
    s += '\n';
  }
  text = std::move(s);
  return true;
}

bool write_map_file(const std::string& path, const sim::GridMap& map, const std::vector<sim::CellCoord>& spawns,
                    std::string& error, bool* dropped_spawns) {
  if (dropped_spawns != nullptr) *dropped_spawns = false;
  if (map.cell_count() == 0) {
    error = path + ": the map is empty";
    return false;
  }
  const std::string tmp = path + ".tmp";
  switch (map_format_of(path)) {
    case MapFormat::kPng: {
      std::vector<std::uint8_t> rgb;
      std::string why;
      if (!png_map_pixels(map, spawns, rgb, why)) {
        error = path + ": " + why;
        return false;
      }
      // write_png_rgb names the file it writes; say the real one.
      if (!write_png_rgb(tmp, map.width(), map.height(), rgb, why)) {
        error = path + ": " + why;
        return false;
      }
      return rename_over(tmp, path, error);
    }
    case MapFormat::kTiled:
      return write_replacing(path, tmp, encode_tiled_map(map, spawns), error) && rename_over(tmp, path, error);
    case MapFormat::kMovingAi: {
      std::string text;
      std::string why;
      if (!encode_movingai_map(map, text, why)) {
        error = path + ": " + why;
        return false;
      }
      if (dropped_spawns != nullptr) *dropped_spawns = !spawns.empty();
      return write_replacing(path, tmp, text, error) && rename_over(tmp, path, error);
    }
  }
  return false;
}

}  // namespace swarmfield::io
