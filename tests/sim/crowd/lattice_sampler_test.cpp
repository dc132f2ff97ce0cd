// The steering phase's fast paths of NavigationSet::sample() (server/sim/src/crowd/
// lattice_sampler.hpp): wherever LatticeSampler::sample() answers, its answer is the full
// sampler's, exactly in status, goal and target and within a few float roundings in direction,
// on a real street map with several goals and size classes 1 and 2, at unit and non-unit cell
// sizes, at random points over the whole map (mostly beyond the any-angle range), at points near
// the goals (in the range, goals in sight and waypoints), and at lattice points, cell borders and
// the map border. It must also answer often (both paths taken), or the steering would pay the
// full sampler everywhere.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <vector>

#include "benchmark_maps.hpp"
#include "lattice_sampler.hpp"
#include "swarm_test_support.hpp"
#include "swarmfield/sim/nav/navigation_set.hpp"
#include "swarmfield/sim/nav/size_classes/size_class.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::crowd_detail::LatticeSampler;
using swarmfield::sim::test::SplitMix;

namespace {

bool same_bits(Vec2 a, Vec2 b) { return std::memcmp(&a, &b, sizeof(Vec2)) == 0; }

/// The fast path normalizes the interior blend by one reciprocal and takes a single target's
/// unit vector directly, where the sampler divides its sum by its length: the directions differ
/// by a few float roundings (components of unit vectors: ulps of at most 6e-8).
constexpr float kDirectionTolerance = 2.5e-7f;

struct Tally {
  float max_direction_error = 0.0f;
  std::size_t points = 0, answered = 0, differing = 0;
  std::size_t interior = 0;  // answered with kGoalInSight / kFollow (all four samples in range)
  std::size_t beyond = 0;    // answered with kFollowFlow (none in range)
};

void compare(const NavigationSet& nav, const LatticeSampler& fast, const GridMap& map, int size_class, Vec2 p,
             Tally& t) {
  ++t.points;
  NavSample got;
  if (!fast.sample(map, p, got)) return;
  ++t.answered;
  (got.status == NavStatus::kFollowFlow ? t.beyond : t.interior) += 1;
  const NavSample want = nav.sample(size_class, p);
  const float err = std::max(std::abs(got.direction.x - want.direction.x), std::abs(got.direction.y - want.direction.y));
  t.max_direction_error = std::max(t.max_direction_error, err);
  const bool same = err <= kDirectionTolerance && same_bits(got.target, want.target) && got.goal == want.goal &&
                    got.status == want.status;
  if (!same) {
    if (t.differing == 0) {
      MESSAGE(std::setprecision(9) << "class " << size_class << ", first difference at (" << p.x << ", " << p.y
                                   << "): got status " << static_cast<int>(got.status) << " dir (" << got.direction.x
                                   << ", " << got.direction.y << ") target (" << got.target.x << ", " << got.target.y
                                   << ") goal " << got.goal << "; want status " << static_cast<int>(want.status)
                                   << " dir (" << want.direction.x << ", " << want.direction.y << ") target ("
                                   << want.target.x << ", " << want.target.y << ") goal " << want.goal);
    }
    ++t.differing;
  }
}

/// Every comparison for one map (world units = cells * cell size) and its goals.
void check_map(const GridMap& map, const std::vector<Vec2>& goals) {
  NavigationSet nav;
  REQUIRE(nav.update(map, goals, static_cast<SizeClassMask>(size_class_bit(1) | size_class_bit(2))));
  const float cs = map.cell_size();
  const float world_w = static_cast<float>(map.width()) * cs, world_h = static_cast<float>(map.height()) * cs;
  for (const int size_class : {1, 2}) {
    REQUIRE(nav.has_class(size_class));
    const LatticeSampler fast(nav, map, size_class);
    Tally t;
    SplitMix rng{0x5EED0000u + static_cast<std::uint64_t>(size_class)};
    // Anywhere on the map, a little beyond its border too.
    for (int i = 0; i < 150000; ++i) {
      compare(nav, fast, map, size_class, {rng.uniform(-2.0f * cs, world_w + 2.0f * cs), rng.uniform(-2.0f * cs, world_h + 2.0f * cs)}, t);
    }
    // Near the goals: the any-angle region (in sight, waypoints, the goal itself).
    for (int i = 0; i < 150000; ++i) {
      const Vec2 g = goals[static_cast<std::size_t>(i) % goals.size()];
      const float r = (i % 3 == 0 ? 4.0f : 60.0f) * cs;
      compare(nav, fast, map, size_class, {g.x + rng.uniform(-r, r), g.y + rng.uniform(-r, r)}, t);
    }
    // Exactly on lattice points, cell borders and the goals.
    for (const Vec2 g : goals) {
      compare(nav, fast, map, size_class, g, t);
      for (int dy = -40; dy <= 40; ++dy) {
        for (int dx = -40; dx <= 40; ++dx) {
          const float bx = std::floor(g.x / cs) * cs, by = std::floor(g.y / cs) * cs;
          compare(nav, fast, map, size_class, {bx + static_cast<float>(dx) * 0.5f * cs, by + static_cast<float>(dy) * 0.5f * cs}, t);
        }
      }
    }
    MESSAGE("class " << size_class << ", cell size " << cs << ": " << t.points << " points, " << t.answered
                     << " answered (" << t.interior << " in the any-angle range, " << t.beyond << " beyond it), "
                     << t.differing << " differ from NavigationSet::sample(); largest direction difference "
                     << t.max_direction_error);
    CHECK(t.differing == 0);
    // Both paths carry real load: most points of the map are beyond the range (class 1 only),
    // and most near the goals are inside it.
    CHECK(t.interior > t.points / 5);
    if (size_class == 1) {
      CHECK(t.beyond > t.points / 10);
    } else {
      CHECK(t.beyond == 0);
    }
  }
}

}  // namespace

TEST_CASE("LatticeSampler answers as NavigationSet::sample() on a street map, unit cells") {
  const GridMap map = test::read_benchmark_map("street/Boston_0_512.map");
  // Goals off their cell centres (players stand anywhere), one of them near another.
  std::vector<Vec2> goals;
  for (const CellCoord c : {CellCoord{256, 256}, CellCoord{100, 400}, CellCoord{400, 90}, CellCoord{262, 250}}) {
    // The nearest walkable cell to the wanted one (scanning outward along the row).
    CellCoord w = c;
    for (std::int32_t d = 0; d < 200 && !map.walkable(w); ++d) w = {c.x + d, c.y};
    REQUIRE(map.walkable(w));
    goals.push_back({static_cast<float>(w.x) + 0.3f, static_cast<float>(w.y) + 0.71f});
  }
  check_map(map, goals);
}

TEST_CASE("LatticeSampler answers as NavigationSet::sample() with cells of 0.5 and 2 world units") {
  const GridMap unit = test::read_benchmark_map("street/Boston_0_256.map");
  for (const float cs : {0.5f, 2.0f}) {
    const GridMap map = GridMap::from_costs(unit.width(), unit.height(), unit.costs(), cs);
    std::vector<Vec2> goals;
    for (const CellCoord c : {CellCoord{128, 128}, CellCoord{40, 200}}) {
      CellCoord w = c;
      for (std::int32_t d = 0; d < 100 && !map.walkable(w); ++d) w = {c.x + d, c.y};
      REQUIRE(map.walkable(w));
      goals.push_back({(static_cast<float>(w.x) + 0.4f) * cs, (static_cast<float>(w.y) + 0.55f) * cs});
    }
    check_map(map, goals);
  }
}

TEST_CASE("far bits: no region cell in the 3x3 block of a far cell nor on the border, every other cell far") {
  // Widths that are and are not multiples of 64 (rows start mid-word), goals near the borders.
  for (const std::int32_t w : {512, 300, 77}) {
    const GridMap full = test::read_benchmark_map("street/Boston_0_512.map");
    std::vector<std::uint8_t> costs;
    for (std::int32_t y = 0; y < 240; ++y) {
      for (std::int32_t x = 0; x < w; ++x) costs.push_back(full.costs()[static_cast<std::size_t>(y) * 512 + static_cast<std::size_t>(x)]);
    }
    const GridMap map = GridMap::from_costs(w, 240, costs);
    std::vector<Vec2> goals;
    for (const CellCoord c : {CellCoord{w / 2, 120}, CellCoord{1, 1}, CellCoord{w - 2, 238}}) {
      CellCoord g = c;
      for (std::int32_t d = 0; d < 60 && !map.walkable(g); ++d) g = {c.x + (c.x > w / 2 ? -d : d), c.y};
      REQUIRE(map.walkable(g));
      goals.push_back(map.cell_center(g));
    }
    NavigationSet nav;
    nav.set_any_angle_range(30.0f);  // a small region, so far and near cells both abound
    REQUIRE(nav.update(map, goals, size_class_bit(1)));
    const AnyAngleField& field = nav.fields(1).any_angle();
    std::vector<std::uint64_t> far, scratch;
    crowd_detail::build_far_bits(field, far, scratch);
    std::size_t far_cells = 0, truly_far = 0, wrong = 0, missed_inside_rows = 0;
    for (std::int32_t y = 0; y < 240; ++y) {
      for (std::int32_t x = 0; x < w; ++x) {
        bool near = false;
        for (std::int32_t dy = -1; dy <= 1; ++dy) {
          for (std::int32_t dx = -1; dx <= 1; ++dx) near = near || field.has_waypoint(x + dx, y + dy);
        }
        const std::size_t i = static_cast<std::size_t>(y) * static_cast<std::size_t>(w) + static_cast<std::size_t>(x);
        const bool is_far = ((far[i >> 6] >> (i & 63u)) & 1u) != 0;
        far_cells += is_far ? 1 : 0;
        truly_far += near ? 0 : 1;
        const bool border = x == 0 || y == 0 || x == w - 1 || y == 239;
        if (is_far && (near || border)) ++wrong;
        if (!is_far && !near && !border) ++missed_inside_rows;  // only the row-end wrap may clear
      }
    }
    MESSAGE("width " << w << ": " << far_cells << " far cells of " << truly_far << " without a region cell in their block");
    CHECK(wrong == 0);
    CHECK(missed_inside_rows == 0);
    CHECK(far_cells > truly_far / 2);
    CHECK(far_cells < static_cast<std::size_t>(w) * 240);
  }
}

TEST_CASE("LatticeSampler::sample_at_cell answers as NavigationSet::sample(), far bits or not") {
  const GridMap map = test::read_benchmark_map("street/Boston_0_512.map");
  std::vector<Vec2> goals;
  for (const CellCoord c : {CellCoord{256, 256}, CellCoord{100, 400}}) {
    CellCoord g = c;
    for (std::int32_t d = 0; d < 200 && !map.walkable(g); ++d) g = {c.x + d, c.y};
    REQUIRE(map.walkable(g));
    goals.push_back({static_cast<float>(g.x) + 0.3f, static_cast<float>(g.y) + 0.71f});
  }
  NavigationSet nav;
  REQUIRE(nav.update(map, goals, size_class_bit(1)));
  std::vector<std::uint64_t> far, scratch;
  crowd_detail::build_far_bits(nav.fields(1).any_angle(), far, scratch);
  LatticeSampler fast(nav, map, 1);
  fast.set_far_bits(far.data());
  SplitMix rng{0xFA4u};
  std::size_t answered = 0, differing = 0, beyond = 0;
  for (int i = 0; i < 300000; ++i) {
    const Vec2 p = i % 2 == 0 ? Vec2{rng.uniform(-1.0f, 513.0f), rng.uniform(-1.0f, 513.0f)}
                              : goals[static_cast<std::size_t>(i / 2) % goals.size()] + Vec2{rng.uniform(-110.0f, 110.0f), rng.uniform(-110.0f, 110.0f)};
    const CellCoord c = map.world_to_cell(p);
    NavSample got;
    if (!fast.sample_at_cell(map, p, c.x, c.y, got)) continue;
    ++answered;
    beyond += got.status == NavStatus::kFollowFlow ? 1 : 0;
    const NavSample want = nav.sample(1, p);
    const float err = std::max(std::abs(got.direction.x - want.direction.x), std::abs(got.direction.y - want.direction.y));
    if (!(err <= kDirectionTolerance && same_bits(got.target, want.target) && got.goal == want.goal &&
          got.status == want.status)) {
      ++differing;
    }
  }
  MESSAGE(answered << " of 300000 answered (" << beyond << " beyond the range), " << differing << " differ");
  CHECK(differing == 0);
  CHECK(beyond > 100000);
}

TEST_CASE("LatticeSampler without the class's fields answers nothing") {
  const GridMap map(16, 16);
  NavigationSet nav;
  const Vec2 goal{8.5f, 8.5f};
  REQUIRE(nav.update(map, std::span<const Vec2>(&goal, 1), size_class_bit(1)));
  const LatticeSampler absent(nav, map, 2);
  NavSample s;
  CHECK_FALSE(absent.sample(map, {4.5f, 4.5f}, s));
  const LatticeSampler empty;
  CHECK_FALSE(empty.sample(map, {4.5f, 4.5f}, s));
  const LatticeSampler present(nav, map, 1);
  CHECK(present.sample(map, {4.5f, 4.5f}, s));
  CHECK(s.status == NavStatus::kGoalInSight);
}
