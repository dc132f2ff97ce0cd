// `swarmfield-tool field`: builds the integration + flow field for a map (file or generated
// city), reports the build time and writes a picture of it.
#include <algorithm>
#include <charconv>
#include <cstdarg>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "field_image.hpp"
#include "swarmfield/io/map_file.hpp"
#include "swarmfield/io/png_writer.hpp"
#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/field_mode.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/hierarchical/near_fields.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_fields.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_graph.hpp"
#include "tool_commands.hpp"

namespace swarmfield::tool {

namespace {

// Largest picture side, pixels: an 8192-cell map at 1 px per cell (an RGB image of 192 MiB).
constexpr std::int32_t kMaxImageSide = 8192;

struct FieldOptions {
  std::string map_path;
  std::optional<std::uint64_t> city_seed;
  std::int32_t size = 256;
  std::vector<std::string> goals;
  std::string png_path;
  int repeat = 5;
  std::int32_t pixels_per_cell = 0;  // 0 = automatic
  std::int32_t arrow_step = 0;       // 0 = automatic
  std::string field_mode = "auto";
};

bool parse_goal(const std::string& text, sim::CellCoord& out) {
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos) return false;
  const char* b = text.data();
  const auto [p1, e1] = std::from_chars(b, b + comma, out.x);
  const auto [p2, e2] = std::from_chars(b + comma + 1, b + text.size(), out.y);
  return comma > 0 && e1 == std::errc() && p1 == b + comma && e2 == std::errc() && p2 == b + text.size() &&
         comma + 1 < text.size();
}

/// Walkable cell nearest to `c` (Chebyshev rings), or false if the map has none.
bool nearest_walkable(const sim::GridMap& map, sim::CellCoord c, sim::CellCoord& out) {
  const std::int32_t max_r = std::max(map.width(), map.height());
  for (std::int32_t r = 0; r <= max_r; ++r) {
    for (std::int32_t dy = -r; dy <= r; ++dy) {
      for (std::int32_t dx = -r; dx <= r; ++dx) {
        if (std::max(std::abs(dx), std::abs(dy)) != r) continue;
        if (map.walkable(c.x + dx, c.y + dy)) {
          out = {c.x + dx, c.y + dy};
          return true;
        }
      }
    }
  }
  return false;
}

/// Prints "error: ..." on stderr after flushing what stdout already holds, so the two streams
/// appear in order on a terminal.
[[gnu::format(printf, 1, 2)]] void fail_message(const char* format, ...) {
  std::fflush(stdout);
  std::fputs("error: ", stderr);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

/// Hierarchical mode: the sector graph, the routes for the goals (and for the first goal moved
/// by one cell: what a goal change costs), then every sector's field once, timed.
void run_hierarchical(const sim::GridMap& map, const std::vector<sim::CellCoord>& goals, int repeat) {
  sim::SectorGraph graph;
  Clock::time_point t = Clock::now();
  graph.build(map);
  const double graph_ms = ms_since(t);
  std::printf("sector graph: %zu sectors of %d cells, %zu portals, %zu edges, built in %.1f ms\n",
              graph.sector_count(), graph.sector_side(), graph.node_count(), graph.edge_count(), graph_ms);
  std::vector<sim::CellCoord> moved = goals;
  for (const sim::CellCoord o : sim::kDirectionOffsets) {
    if (map.walkable(goals[0].x + o.x, goals[0].y + o.y)) {
      moved[0] = {goals[0].x + o.x, goals[0].y + o.y};
      break;
    }
  }
  sim::PortalRoutes routes;
  std::vector<double> t_routes;
  for (int i = 0; i < repeat; ++i) {
    t = Clock::now();
    routes.build(graph, map, (i % 2) != 0 ? moved : goals);
    t_routes.push_back(ms_since(t));
  }
  routes.build(graph, map, goals);
  std::printf("routes (goal change): %.2f ms (median of %d builds, %zu portals settled)\n", median(t_routes), repeat,
              routes.settled());
  // The near fields (exact windows with the any-angle layer round each goal): what a goal
  // change adds, all at once.
  sim::NearFields near;
  near.update(map, goals, 0);
  std::vector<double> t_near;
  for (int i = 0; i < repeat; ++i) {
    t = Clock::now();
    near.update(map, (i % 2) == 0 ? moved : goals, 0);
    t_near.push_back(ms_since(t));
  }
  std::printf("near fields (goal change): %.2f ms (median of %d builds; %zu windows of %dx%d cells, %.1f MiB)\n",
              median(t_near), repeat, near.window_count(), near.window_fields(0).integration().width(),
              near.window_fields(0).integration().height(), static_cast<double>(near.memory_bytes()) / (1024.0 * 1024.0));
  sim::SectorFields fields;
  fields.set_routes(graph, routes);
  fields.set_max_fields(graph.sector_count());
  std::vector<double> t_sector;
  t_sector.reserve(graph.sector_count());
  t = Clock::now();
  for (std::uint32_t s = 0; s < graph.sector_count(); ++s) {
    const Clock::time_point a = Clock::now();
    fields.build_sector(map, s);
    t_sector.push_back(ms_since(a));
  }
  const double all_ms = ms_since(t);
  std::size_t reached = 0;
  for (std::int32_t y = 0; y < map.height(); ++y)
    for (std::int32_t x = 0; x < map.width(); ++x) reached += fields.value({x, y}) != sim::kUnreachable ? 1 : 0;
  std::printf("sector fields: %llu built, %.3f ms each (median; max %.3f), %.1f ms for all, %.1f MiB for all\n",
              static_cast<unsigned long long>(fields.build_count()), median(t_sector),
              t_sector.empty() ? 0.0 : *std::max_element(t_sector.begin(), t_sector.end()), all_ms,
              static_cast<double>(fields.memory_bytes()) / (1024.0 * 1024.0));
  std::printf("reachable: %zu of %zu walkable cells\n", reached, map.walkable_count());
}

int run_field(const FieldOptions& opt) {
  sim::GridMap map;
  std::string label;
  if (opt.city_seed) {
    if (!opt.map_path.empty()) {
      fail_message("give either MAP or --city-seed, not both\n");
      return 2;
    }
    map = sim::generate_city({opt.size, opt.size, *opt.city_seed});
    label = "city seed " + std::to_string(*opt.city_seed);
  } else {
    if (opt.map_path.empty()) {
      fail_message("no map: give a MAP file or --city-seed S [--size N]\n");
      return 2;
    }
    sim::MapError error;
    if (!io::read_map_file(opt.map_path, map, error)) {
      fail_message("%s\n", error.to_string().c_str());
      return 2;
    }
    label = opt.map_path;
  }
  std::printf("map: %s, %dx%d cells, %zu walkable\n", label.c_str(), map.width(), map.height(), map.walkable_count());

  std::vector<sim::CellCoord> goals;
  for (const std::string& g : opt.goals) {
    sim::CellCoord c;
    if (!parse_goal(g, c)) {
      fail_message("bad --goal '%s': expected X,Y in cells, e.g. --goal 12,40\n", g.c_str());
      return 2;
    }
    if (!map.in_bounds(c.x, c.y)) {
      fail_message("goal (%d,%d) is outside the map (x 0..%d, y 0..%d)\n", c.x, c.y, map.width() - 1,
                   map.height() - 1);
      return 2;
    }
    if (!map.walkable(c)) {
      sim::CellCoord near{};
      if (nearest_walkable(map, c, near)) {
        fail_message("goal (%d,%d) is on a blocked cell; nearest walkable cell: %d,%d\n", c.x, c.y,
                     near.x, near.y);
      } else {
        fail_message("goal (%d,%d) is on a blocked cell and the map has no walkable cell\n", c.x, c.y);
      }
      return 2;
    }
    goals.push_back(c);
  }
  if (goals.empty()) {
    sim::CellCoord c{};
    if (!nearest_walkable(map, {map.width() / 2, map.height() / 2}, c)) {
      fail_message("the map has no walkable cell\n");
      return 2;
    }
    goals.push_back(c);
    std::printf("goal: %d,%d (walkable cell nearest the centre; choose with --goal X,Y)\n", c.x, c.y);
  }

  const std::optional<sim::FieldMode> requested = sim::parse_field_mode(opt.field_mode);
  if (!requested) {
    fail_message("bad --field-mode '%s': expected whole, hierarchical or auto\n", opt.field_mode.c_str());
    return 2;
  }
  const sim::FieldMode mode = sim::resolve_field_mode(*requested, map.width(), map.height());
  std::printf("field mode: %s%s\n", std::string(sim::field_mode_name(mode)).c_str(),
              *requested == sim::FieldMode::kAuto ? " (auto: hierarchical from 4096 cells a side)" : "");
  if (mode == sim::FieldMode::kHierarchical) {
    if (!opt.png_path.empty()) {
      fail_message("--png draws the whole-map field: add --field-mode whole\n");
      return 2;
    }
    run_hierarchical(map, goals, opt.repeat);
    return 0;
  }
  // The picture's size, checked before any work: --scale 64 on a 4096 map asked for a 262144 px
  // square (std::bad_alloc, abort), on a 512 map for 3 GiB of pixels.
  const std::int32_t side = std::max(map.width(), map.height());
  const std::int32_t pixels_per_cell = opt.pixels_per_cell > 0 ? opt.pixels_per_cell : std::clamp(2048 / side, 1, 8);
  if (!opt.png_path.empty() && static_cast<std::int64_t>(side) * pixels_per_cell > kMaxImageSide) {
    fail_message("--scale %d: the picture would be %lld px a side (at most %d); use --scale %d or less for this %dx%d map\n",
                 pixels_per_cell, static_cast<long long>(side) * pixels_per_cell, kMaxImageSide,
                 std::max(1, kMaxImageSide / side), map.width(), map.height());
    return 2;
  }

  // Time full rebuilds; the first one also warms the buffers, as in the server.
  sim::IntegrationField integration;
  sim::FlowField flow;
  std::vector<double> t_int;
  std::vector<double> t_flow;
  std::vector<double> t_total;
  for (int i = 0; i < opt.repeat; ++i) {
    const Clock::time_point a = Clock::now();
    integration.build(map, goals);
    const Clock::time_point b = Clock::now();
    flow.build(map, integration);
    const Clock::time_point c = Clock::now();
    t_int.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    t_flow.push_back(std::chrono::duration<double, std::milli>(c - b).count());
    t_total.push_back(std::chrono::duration<double, std::milli>(c - a).count());
  }
  std::printf("build: integration %.2f ms + flow %.2f ms, total %.2f ms (median of %d builds)\n", median(t_int),
              median(t_flow), median(t_total), opt.repeat);
  std::printf("reachable: %zu of %zu walkable cells\n", integration.reachable_count(), map.walkable_count());

  if (!opt.png_path.empty()) {
    FieldImageOptions img_opt;
    img_opt.pixels_per_cell = pixels_per_cell;
    img_opt.arrow_step = opt.arrow_step > 0 ? opt.arrow_step : std::clamp(side / 32, 4, 16);
    const RgbImage img = render_field_image(map, integration, flow, goals, img_opt);
    std::string error;
    if (!io::write_png_rgb(opt.png_path, img.width, img.height, img.rgb, error)) {
      fail_message("%s\n", error.c_str());
      return 2;
    }
    std::printf("wrote %s (%dx%d px, %d px per cell, arrows every %d cells)\n", opt.png_path.c_str(), img.width,
                img.height, img_opt.pixels_per_cell, img_opt.arrow_step);
  }
  return 0;
}

}  // namespace

void add_field_command(CLI::App& app) {
  auto opt = std::make_shared<FieldOptions>();
  CLI::App* cmd =
      app.add_subcommand("field", "Build the integration + flow field for a map, time it, draw it as a PNG");
  cmd->footer(
      "The map is a file (MovingAI .map, or an ASCII map with '#' walls) or a generated city\n"
      "(--city-seed, --size). Prints the build time (median of --repeat builds, integration and\n"
      "flow separately) and the number of reachable cells. With --png, writes a picture: heat map\n"
      "of the cost to the nearest goal (yellow near, purple far) with iso-cost contours, walls\n"
      "dark, walkable-but-unreachable cells grey, smoothed flow arrows on a coarser grid and the\n"
      "goals as red discs.\n"
      "With --field-mode hierarchical (auto from 4096 cells a side) it prints the sector graph's\n"
      "size and build time, the route time of a goal change, and every sector field's build time.\n"
      "Exit status: 0 done, 2 bad map, bad goal, bad mode or unwritable PNG.\n"
      "Examples:\n"
      "  swarmfield-tool field street/Boston_0_512.map --goal 256,256 --png boston.png\n"
      "  swarmfield-tool field --city-seed 7 --size 512 --goal 10,10 --goal 500,500 --png city.png\n"
      "  swarmfield-tool field --city-seed 7 --size 8192 --field-mode auto");
  auto* map_opt =
      cmd->add_option("MAP", opt->map_path, "map file: MovingAI .map (or ASCII map), Tiled .tmj or .png (see the README)");
  cmd->add_option("--city-seed", opt->city_seed, "use a generated city with this seed instead of a map file");
  // A map file has its own size: --size with one is refused, not ignored.
  auto* size_opt = cmd->add_option("--size", opt->size, "side of the generated city in cells (32..8192, default 256)")
                       ->check(CLI::Range(32, 8192));
  map_opt->excludes(size_opt);
  cmd->add_option("--goal", opt->goals,
                  "goal cell X,Y (column,row from the top-left); repeat for several goals\n"
                  "(default: the walkable cell nearest the map centre)")
      ->allow_extra_args(false);
  cmd->add_option("--png", opt->png_path, "write the picture to this PNG file");
  cmd->add_option("--repeat", opt->repeat, "builds to time; the median is reported (default 5)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--scale", opt->pixels_per_cell, "pixels per cell in the picture (default: ~2048 px wide, 1..8; the picture is at most 8192 px a side)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--arrow-step", opt->arrow_step, "cells between flow arrows (default: side/32, 4..16)")
      ->check(CLI::Range(2, 1024));
  cmd->add_option("--field-mode", opt->field_mode,
                  "whole: one whole-map field; hierarchical: sector graph, routes and per-sector fields\n"
                  "(reports sector build counts and times); auto (default): hierarchical from 4096 cells a side");
  cmd->callback([opt] { set_exit_code(run_field(*opt)); });
}

}  // namespace swarmfield::tool
