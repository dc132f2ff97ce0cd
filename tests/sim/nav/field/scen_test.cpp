// MovingAI scenario check: the integration field reproduces every .scen optimal length under
// SWARMFIELD_MAPS_DIR within 1e-4 relative. Built twice: the default test checks all of the small
// maps and an evenly spread subset of the big ones; with SWARMFIELD_SCEN_FULL defined (ctest
// label scen-full) it checks every line. SWARMFIELD_SCEN_FILTER=<substring> limits the files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "swarmfield/io/map_file.hpp"
#include "swarmfield/io/scen_file.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

using namespace swarmfield;

namespace {

#ifdef SWARMFIELD_SCEN_FULL
constexpr bool kFull = true;
#define SCEN_TEST_NAME "scenarios: every line of every .scen file"
#else
constexpr bool kFull = false;
#define SCEN_TEST_NAME "scenarios: a quick subset of every .scen file"
#endif

std::vector<std::filesystem::path> scen_files() {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path root(SWARMFIELD_MAPS_DIR);
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".scen") out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// Lines to skip between checks: everything on maps up to ~110k cells; on bigger maps about
/// 40 M cell-builds worth of lines (~150 lines at 512x512, ~40 at 1024x1024), spread evenly.
std::size_t stride_for(const sim::GridMap& map, std::size_t lines) {
  if (kFull) return 1;
  const std::size_t cells = map.cell_count();
  if (cells <= 110000) return 1;
  const std::size_t budget = std::max<std::size_t>(1, 40000000 / cells);
  return std::max<std::size_t>(1, (lines + budget - 1) / budget);
}

}  // namespace

TEST_CASE(SCEN_TEST_NAME) {
  const char* filter = std::getenv("SWARMFIELD_SCEN_FILTER");
  const std::vector<std::filesystem::path> files = scen_files();
  INFO("maps dir: " << SWARMFIELD_MAPS_DIR);
  REQUIRE_FALSE(files.empty());
  std::size_t files_checked = 0;
  for (const std::filesystem::path& scen_path : files) {
    if (filter != nullptr && scen_path.filename().string().find(filter) == std::string::npos) continue;
    CAPTURE(scen_path.string());
    std::filesystem::path map_path = scen_path;
    map_path.replace_extension();  // X.map.scen -> X.map
    sim::GridMap map;
    sim::MapError map_error;
    const bool map_ok = io::read_map_file(map_path.string(), map, map_error);
    INFO(map_error.to_string());
    REQUIRE(map_ok);
    std::vector<io::ScenLine> lines;
    std::string error;
    const bool scen_ok = io::read_scen_file(scen_path.string(), lines, error);
    INFO(error);
    REQUIRE(scen_ok);
    REQUIRE_FALSE(lines.empty());

    const std::size_t stride = stride_for(map, lines.size());
    sim::IntegrationField field;
    std::size_t checked = 0;
    std::size_t mismatches = 0;
    double max_rel = 0.0;
    for (std::size_t i = 0; i < lines.size(); i += stride) {
      const io::ScenLine& s = lines[i];
      REQUIRE(s.map_width == map.width());
      REQUIRE(s.map_height == map.height());
      // Search from the goal until the start is settled (values up to it are exact).
      const sim::CellCoord goal{s.goal_x, s.goal_y};
      const sim::CellCoord goals[1] = {goal};
      field.build_until(map, goals, {s.start_x, s.start_y});
      const double got = field.cost_to_goal(s.start_x, s.start_y);
      const double rel = std::isfinite(got) ? std::fabs(got - s.optimal_length) / std::max(s.optimal_length, 1.0)
                                            : INFINITY;
      max_rel = std::max(max_rel, rel);
      ++checked;
      if (rel > 1e-4) {
        if (++mismatches <= 10)
          FAIL_CHECK("line " << s.line << ": start (" << s.start_x << "," << s.start_y << ") goal (" << s.goal_x
                             << "," << s.goal_y << ") expected " << s.optimal_length << " got " << got);
      }
    }
    CHECK(mismatches == 0);
    MESSAGE(scen_path.filename().string() << ": checked " << checked << " of " << lines.size()
                                          << " lines, mismatches " << mismatches << ", max_rel_err " << max_rel);
    ++files_checked;
  }
  CHECK(files_checked > 0);
}
