// Procedural city: determinism, connectivity, that it contains the promised parts.
#include <doctest/doctest.h>

#include <array>
#include <vector>

#include "swarmfield/sim/map/city_generator.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"

using namespace swarmfield::sim;

namespace {

std::array<std::size_t, 256> cost_histogram(const GridMap& m) {
  std::array<std::size_t, 256> h{};
  for (const std::uint8_t c : m.costs()) ++h[c];
  return h;
}

/// Walkable cells reachable from `start` under the movement rule (8-neighbours, no corner
/// cutting), counted with the integration field.
std::size_t reachable_from(const GridMap& m, CellCoord start) {
  IntegrationField f;
  const CellCoord goals[1] = {start};
  f.build(m, goals);
  return f.reachable_count();
}

/// Blocked cells whose 4 neighbours are all walkable (trees, fountain-free plaza props).
std::size_t isolated_blocked(const GridMap& m) {
  std::size_t n = 0;
  for (std::int32_t y = 1; y + 1 < m.height(); ++y)
    for (std::int32_t x = 1; x + 1 < m.width(); ++x)
      if (!m.walkable(x, y) && m.walkable(x + 1, y) && m.walkable(x - 1, y) && m.walkable(x, y + 1) &&
          m.walkable(x, y - 1))
        ++n;
  return n;
}

}  // namespace

TEST_CASE("city: same params give a byte-identical map") {
  for (const std::int32_t size : {64, 256, 512}) {
    CAPTURE(size);
    const GridMap a = generate_city({size, size, 42});
    const GridMap b = generate_city({size, size, 42});
    CHECK(a.width() == size);
    CHECK(a.height() == size);
    CHECK(a.costs() == b.costs());
  }
}

TEST_CASE("city: different seeds give different cities") {
  std::vector<std::vector<std::uint8_t>> maps;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) maps.push_back(generate_city({256, 256, seed}).costs());
  for (std::size_t i = 0; i < maps.size(); ++i)
    for (std::size_t j = i + 1; j < maps.size(); ++j) CHECK(maps[i] != maps[j]);
}

TEST_CASE("city: every walkable cell is connected to every other") {
  for (const std::uint64_t seed : {1ull, 2ull, 3ull, 77ull, 123456789ull}) {
    for (const std::int32_t size : {32, 100, 256, 512}) {
      CAPTURE(seed);
      CAPTURE(size);
      const GridMap m = generate_city({size, size, seed});
      REQUIRE(m.walkable(0, 0));
      CHECK(reachable_from(m, {0, 0}) == m.walkable_count());
    }
  }
}

TEST_CASE("city: has roads, sidewalks, alleys, buildings and plaza props; border is road") {
  for (const std::uint64_t seed : {1ull, 9ull, 2024ull}) {
    CAPTURE(seed);
    const GridMap m = generate_city({512, 512, seed});
    const auto h = cost_histogram(m);
    const double n = static_cast<double>(m.cell_count());
    CHECK(h[1] / n > 0.20);             // roads and plazas
    CHECK(h[2] / n > 0.05);             // sidewalks
    CHECK(h[3] > 200);                  // alleys
    CHECK(h[kBlockedCost] / n > 0.20);  // buildings
    CHECK(h[kBlockedCost] / n < 0.70);
    CHECK(h[1] + h[2] + h[3] + h[kBlockedCost] == m.cell_count());  // no other costs
    CHECK(isolated_blocked(m) > 5);                                  // trees on plazas
    for (std::int32_t i = 0; i < 512; ++i) {
      CHECK(m.cost(i, 0) == 1);
      CHECK(m.cost(0, i) == 1);
      CHECK(m.cost(i, 511) == 1);
      CHECK(m.cost(511, i) == 1);
    }
  }
}

TEST_CASE("city: sizes are clamped") {
  const GridMap small = generate_city({4, -3, 1});
  CHECK(small.width() == 32);
  CHECK(small.height() == 32);
  const GridMap wide = generate_city({300, 40, 5});
  CHECK(wide.width() == 300);
  CHECK(wide.height() == 40);
  CHECK(reachable_from(wide, {0, 0}) == wide.walkable_count());
}
