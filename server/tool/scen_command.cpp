// `swarmfield-tool scen MAP SCEN`: checks integration-field distances against the optimal
// lengths of a MovingAI scenario file.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/io/scen_file.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "tool_commands.hpp"

namespace swarmfield::tool {

namespace {

struct ScenOptions {
  std::string map_path;
  std::string scen_path;
  int every = 1;
  double tolerance = 1e-4;
  bool no_progress = false;
};

/// Relative error of a computed length; lengths below 1 (only 0 on a grid) use the absolute
/// error so start == goal queries are checked too. Infinite when the start is unreachable.
double relative_error(double got, double expected) {
  if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
  return std::fabs(got - expected) / std::max(expected, 1.0);
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int run_scen(const ScenOptions& opt) {
  // Also checked on the command line (strict_values): a NaN tolerance would pass every line.
  if (!(std::isfinite(opt.tolerance) && opt.tolerance > 0.0)) {
    std::fprintf(stderr, "error: --tolerance must be a finite number > 0 (got %g)\n", opt.tolerance);
    return 2;
  }
  sim::GridMap map;
  sim::MapError map_error;
  if (!io::read_map_file(opt.map_path, map, map_error)) {
    std::fprintf(stderr, "error: %s\n", map_error.to_string().c_str());
    return 2;
  }
  std::vector<io::ScenLine> lines;
  std::string error;
  if (!io::read_scen_file(opt.scen_path, lines, error)) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 2;
  }
  if (lines.empty()) {
    std::fprintf(stderr, "error: %s has no scenario lines (expected 'version 1' and tab-separated problems)\n",
                 opt.scen_path.c_str());
    return 2;
  }
  bool warned_name = false;
  for (const io::ScenLine& s : lines) {
    if (s.map_width != map.width() || s.map_height != map.height()) {
      std::fprintf(stderr, "error: %s:%d: scenario is for a %dx%d map but %s is %dx%d (wrong map file?)\n",
                   opt.scen_path.c_str(), s.line, s.map_width, s.map_height, opt.map_path.c_str(), map.width(),
                   map.height());
      return 2;
    }
    const bool start_in = map.in_bounds(s.start_x, s.start_y);
    const bool goal_in = map.in_bounds(s.goal_x, s.goal_y);
    if (!start_in || !goal_in) {
      std::fprintf(stderr, "error: %s:%d: %s (%d,%d) is outside the %dx%d map\n", opt.scen_path.c_str(), s.line,
                   start_in ? "goal" : "start", start_in ? s.goal_x : s.start_x, start_in ? s.goal_y : s.start_y,
                   map.width(), map.height());
      return 2;
    }
    if (!warned_name && s.map_name != base_name(opt.map_path)) {
      std::fprintf(stderr, "warning: %s names map '%s', checking against '%s'\n", opt.scen_path.c_str(),
                   s.map_name.c_str(), opt.map_path.c_str());
      warned_name = true;
    }
  }

  const bool tty = isatty(STDERR_FILENO) != 0;
  const bool progress = !opt.no_progress && lines.size() > 200;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point begin = Clock::now();
  Clock::time_point last_report = begin;

  sim::IntegrationField field;
  bool have_field = false;
  sim::CellCoord field_goal{};
  std::uint32_t settled_bound = 0;
  std::size_t checked = 0;
  std::size_t mismatches = 0;
  std::size_t builds = 0;
  double max_rel = 0.0;
  for (std::size_t i = 0; i < lines.size(); i += static_cast<std::size_t>(opt.every)) {
    const io::ScenLine& s = lines[i];
    const sim::CellCoord goal{s.goal_x, s.goal_y};
    // Each search stops once the start is settled (build_until); every value up to the
    // start's is then exact, so a following problem with the same goal and a start no farther
    // away reuses the field.
    const bool reuse = have_field && goal == field_goal && field.reachable(s.start_x, s.start_y) &&
                       field.raw(s.start_x, s.start_y) <= settled_bound;
    if (!reuse) {
      const sim::CellCoord goals[1] = {goal};
      field.build_until(map, goals, {s.start_x, s.start_y});
      field_goal = goal;
      have_field = true;
      settled_bound = field.reachable(s.start_x, s.start_y) ? field.raw(s.start_x, s.start_y) : 0;
      ++builds;
    }
    const double got = field.cost_to_goal(s.start_x, s.start_y);
    const double rel = relative_error(got, s.optimal_length);
    ++checked;
    max_rel = std::max(max_rel, rel);
    if (rel > opt.tolerance) {
      ++mismatches;
      const char* note = !map.walkable(goal)                  ? " (goal is blocked or off the map)"
                         : !map.walkable(s.start_x, s.start_y) ? " (start is blocked or off the map)"
                         : !std::isfinite(got)                 ? " (start unreachable from goal)"
                                                               : "";
      std::printf("mismatch line=%d start=(%d,%d) goal=(%d,%d) expected=%.8f got=%.8f rel_err=%.3g%s\n", s.line,
                  s.start_x, s.start_y, s.goal_x, s.goal_y, s.optimal_length, got, rel, note);
    }
    if (progress) {
      const Clock::time_point now = Clock::now();
      if (now - last_report >= std::chrono::seconds(tty ? 1 : 10)) {
        last_report = now;
        std::fprintf(stderr, tty ? "\rscen: %zu/%zu checked, %zu mismatches" : "scen: %zu/%zu checked, %zu mismatches\n",
                     i + 1, lines.size(), mismatches);
        std::fflush(stderr);
      }
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - begin).count();
  if (progress && tty) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "scen: %zu problems checked with %zu field builds in %.2f s\n", checked, builds, secs);
  std::printf("checked=%zu mismatches=%zu max_rel_err=%.3g\n", checked, mismatches, max_rel);
  std::fflush(stdout);
  return mismatches > 0 ? 1 : 0;
}

}  // namespace

void add_scen_command(CLI::App& app) {
  auto opt = std::make_shared<ScenOptions>();
  CLI::App* cmd = app.add_subcommand("scen", "Check integration-field distances against a MovingAI .scen file");
  cmd->footer(
      "For every problem line the integration field is built with the goal as its only source\n"
      "and its value at the start is compared with the optimal length (octile, no corner\n"
      "cutting). The search stops once the start is settled; consecutive lines with the same\n"
      "goal reuse it. Each mismatch (relative error above the tolerance; absolute error for\n"
      "lengths below 1) is printed on stdout as one line; the last line is\n"
      "  checked=N mismatches=M max_rel_err=E\n"
      "Progress and timing go to stderr.\n"
      "Exit status: 0 all match, 1 some mismatch, 2 unreadable or inconsistent input.\n"
      "Example: swarmfield-tool scen street/Boston_0_512.map street/Boston_0_512.map.scen");
  cmd->add_option("MAP", opt->map_path, "MovingAI .map file (or ASCII map)")->required();
  cmd->add_option("SCEN", opt->scen_path, "MovingAI .scen file for that map")->required();
  cmd->add_option("--every", opt->every, "check only every Nth problem line (default 1: all)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--tolerance", opt->tolerance,
                  "largest accepted relative error, a finite number in 1e-12..1 (default 1e-4)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            // Not CLI::Range: it prints the bounds as "0.000000 to 1.000000" (0 is refused).
            double v = 0.0;
            if (!CLI::detail::lexical_cast(value, v)) return {};  // the conversion reports it
            return v >= 1e-12 && v <= 1.0 ? std::string{}
                                          : "must be a relative error in 1e-12..1 (got " + value + ")";
          },
          "1e-12..1"));
  cmd->add_flag("--no-progress", opt->no_progress, "do not print progress on stderr");
  cmd->callback([opt] { set_exit_code(run_scen(*opt)); });
}

}  // namespace swarmfield::tool
