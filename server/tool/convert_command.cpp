// `swarmfield-tool convert IN OUT`: a map from one format to another (.map, .tmj/.json, .png,
// each picked by its file's extension; io::map_format_of).
//   exit 0: written; 2: IN unreadable or malformed, OUT not writable, or a map OUT's format can
//   not hold (a cost other than 1/3/wall in a .map, a spawn cell of cost > 1 in a .png).
// Last line: converted=IN -> OUT width=W height=H walkable=N spawns=S
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/io/map_file.hpp"
#include "tool_commands.hpp"

namespace swarmfield::tool {

namespace {

struct ConvertOptions {
  std::string in;
  std::string out;
};

/// True when both paths name the same existing file (converting a file over itself would lose
/// it on a refusal halfway).
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/// OUT's extension names a format the tool writes (.map, .tmj, .json, .png; any case). Reading
/// takes any name as MovingAI or ASCII text, but a file written as "out.xyz" or "out" would
/// be MovingAI text under a name that says nothing, or something else.
bool names_map_format(std::string_view path) {
  const std::size_t dot = path.find_last_of("./");
  if (dot == std::string_view::npos || path[dot] != '.') return false;
  std::string ext;
  for (const char c : path.substr(dot + 1)) ext += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return ext == "map" || ext == "tmj" || ext == "json" || ext == "png";
}

int run_convert(const ConvertOptions& opt) {
  if (!names_map_format(opt.out)) {
    std::fprintf(stderr, "error: %s: the output's extension names no map format; end it in .map, .tmj, .json or .png\n",
                 opt.out.c_str());
    return 2;
  }
  if (same_file(opt.in, opt.out)) {
    std::fprintf(stderr, "error: %s: input and output are the same file\n", opt.out.c_str());
    return 2;
  }
  sim::GridMap map;
  sim::MapError map_error;
  std::vector<sim::CellCoord> spawns;
  if (!io::read_map_file(opt.in, map, map_error, &spawns)) {
    std::fprintf(stderr, "error: %s\n", map_error.to_string().c_str());
    return 2;
  }
  std::string error;
  bool dropped = false;
  if (!io::write_map_file(opt.out, map, spawns, error, &dropped)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 2;
  }
  if (dropped)
    std::fprintf(stderr, "note: %s: a MovingAI .map has no spawn cells; the %zu of %s were dropped\n", opt.out.c_str(),
                 spawns.size(), opt.in.c_str());
  std::printf("converted=%s -> %s width=%d height=%d walkable=%zu spawns=%zu\n", opt.in.c_str(), opt.out.c_str(),
              map.width(), map.height(), map.walkable_count(), dropped ? std::size_t{0} : spawns.size());
  return 0;
}

}  // namespace

void add_convert_command(CLI::App& app) {
  auto opt = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Convert a map between MovingAI .map, Tiled .tmj (or .json) and .png, formats picked by the file extensions; "
      "OUT is replaced if it exists. Exit 0 when written, 2 when IN is unreadable or malformed, OUT can not be "
      "written, or OUT's format can not hold the map (a .map holds costs 1, 3 and walls only). See the README's "
      "\"Map formats\" for the Tiled properties and the PNG colour table");
  cmd->add_option("IN", opt->in, "Map to read (.map, .tmj/.json, .png)")->required();
  cmd->add_option("OUT", opt->out, "Map to write (.map, .tmj/.json, .png)")->required();
  cmd->callback([opt] { set_exit_code(run_convert(*opt)); });
}

}  // namespace swarmfield::tool
