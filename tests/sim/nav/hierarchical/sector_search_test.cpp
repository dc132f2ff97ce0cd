// The sector fields' bucket-queue search (SectorSearch) and the sector builds on it against a
// frozen copy of the binary-heap Dijkstra they replaced (reference_sector_search.*): values
// and flow directions bit for bit, on random grids with random seed values (far apart, near
// saturation, duplicated, unreachable), costs 1..254 with walls of 255, and unit costs.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "reference_sector_search.hpp"
#include "sector_test_maps.hpp"
#include "swarmfield/sim/nav/field/flow_field.hpp"
#include "swarmfield/sim/nav/field/integration_field.hpp"
#include "swarmfield/sim/nav/hierarchical/portal_routes.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_fields.hpp"
#include "swarmfield/sim/nav/hierarchical/sector_search.hpp"
#include "test_maps.hpp"

using namespace swarmfield::sim;

namespace {

/// A seed value of one of several kinds: small, anywhere in the range, a distant multiple of a
/// sector's span, near saturation, unreachable.
std::uint32_t random_seed_value(test::TestRng& rng) {
  switch (rng.below(6)) {
    case 0: return static_cast<std::uint32_t>(rng.below(20000));
    case 1: return static_cast<std::uint32_t>(rng.next() % kUnreachable);
    case 2: return static_cast<std::uint32_t>(rng.below(4000)) * 1000003u + static_cast<std::uint32_t>(rng.below(985));
    case 3: return kUnreachable - 1 - static_cast<std::uint32_t>(rng.below(400000));
    case 4: return kUnreachable;
    default: return static_cast<std::uint32_t>(1000000 + rng.below(2000000));
  }
}

/// A random cost map: walls of cost 255, the rest 1..9 mostly, some cells 200..254 (the
/// largest steps), unless `unit`.
GridMap random_cost_map(std::uint64_t seed, std::int32_t w, std::int32_t h, bool unit) {
  test::TestRng rng{seed};
  GridMap m(w, h);
  for (std::int32_t y = 0; y < h; ++y)
    for (std::int32_t x = 0; x < w; ++x) {
      const int roll = rng.below(100);
      if (roll < 18) {
        m.set_cost(x, y, kBlockedCost);
      } else if (!unit) {
        m.set_cost(x, y, static_cast<std::uint8_t>(roll < 26 ? 200 + rng.below(55) : 1 + rng.below(9)));
      }
    }
  // A few straight walls with gaps, so that sectors have several entrances.
  for (int k = 0; k < 4; ++k) {
    const std::int32_t at = 5 + rng.below(std::min(w, h) - 10);
    for (std::int32_t i = 0; i < std::max(w, h); ++i) {
      if (rng.below(12) == 0) continue;
      if (k % 2 == 0 && i < w) m.set_cost(i, at, kBlockedCost);
      if (k % 2 == 1 && i < h) m.set_cost(at, i, kBlockedCost);
    }
  }
  return m;
}

}  // namespace

TEST_CASE("sector search: the bucket queue gives the heap Dijkstra's values on random grids and seeds") {
  SectorSearch search;  // reused across trials, as SectorFields does (buckets keep their capacity)
  std::size_t reached_total = 0, saturated = 0, far_apart = 0;
  for (std::uint64_t trial = 1; trial <= 600; ++trial) {
    CAPTURE(trial);
    test::TestRng rng{trial * 7919};
    const auto lw = static_cast<std::size_t>(3 + rng.below(68));
    const auto lh = static_cast<std::size_t>(3 + rng.below(68));
    const bool unit = trial % 3 == 0;
    std::vector<std::uint8_t> open(lw * lh), step(lw * lh, 1);
    for (std::size_t y = 0; y < lh; ++y)
      for (std::size_t x = 0; x < lw; ++x) {
        const std::size_t i = y * lw + x;
        const bool ring = x == 0 || y == 0 || x + 1 == lw || y + 1 == lh;
        const int roll = rng.below(100);
        if (ring) {
          open[i] = roll < 35 ? SectorSearch::kSeedCell : SectorSearch::kBlockedCell;
        } else {
          open[i] = roll < 20 ? SectorSearch::kBlockedCell : SectorSearch::kInnerCell;
          if (!unit) step[i] = static_cast<std::uint8_t>(roll < 30 ? 200 + rng.below(55) : 1 + rng.below(254));
        }
      }
    std::vector<std::uint64_t> seeds;
    const int count = rng.below(24);
    for (int k = 0; k < count; ++k) {
      std::uint32_t cell = 0;
      do {
        cell = static_cast<std::uint32_t>(rng.below(static_cast<std::int32_t>(lw * lh)));
      } while (open[cell] == SectorSearch::kBlockedCell && rng.below(4) != 0);  // now and then a blocked one
      // Every fourth trial small values only (sums that cannot saturate take another path).
      const auto value = [&] { return trial % 4 == 1 ? static_cast<std::uint32_t>(rng.below(3000000)) : random_seed_value(rng); };
      seeds.push_back(std::uint64_t{value()} << 32 | cell);
      if (rng.below(5) == 0) seeds.push_back(std::uint64_t{value()} << 32 | cell);  // the same cell again
    }
    std::uint32_t lo = kUnreachable, hi = 0;
    for (const std::uint64_t s : seeds) {
      const auto v = static_cast<std::uint32_t>(s >> 32);
      if (v == kUnreachable) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (lo != kUnreachable && hi - lo > 400u * kOrthogonalStep) ++far_apart;  // beyond a ring of buckets
    const std::vector<std::uint32_t> want = test::reference_sector_search(lw, lh, open.data(), step.data(), seeds);
    std::vector<std::uint32_t> got(lw * lh, 12345);
    search.run(lw, lh, open.data(), step.data(), unit, seeds, got.data());
    for (std::size_t i = 0; i < lw * lh; ++i) {
      CAPTURE(i);
      REQUIRE(got[i] == want[i]);
      reached_total += want[i] != kUnreachable ? 1 : 0;
      saturated += want[i] == kUnreachable - 1 ? 1 : 0;
    }
  }
  MESSAGE("cells reached " << reached_total << ", saturated " << saturated << ", trials with seeds far apart " << far_apart);
  CHECK(reached_total > 100000);
  CHECK(saturated > 0);
  CHECK(far_apart > 100);
}

TEST_CASE("sector search: sector builds equal the heap Dijkstra's values and directions on random cost maps") {
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    const bool unit = seed % 4 == 0;
    const std::int32_t side = seed % 2 == 0 ? 32 : 16;
    const GridMap m = random_cost_map(seed, 150 + static_cast<std::int32_t>(seed) * 3, 110 + static_cast<std::int32_t>(seed), unit);
    const std::vector<CellCoord> goals = test::walkable_goals(m, seed * 131, 1 + static_cast<int>(seed % 4));
    SectorGraph graph;
    graph.build(m, side);
    PortalRoutes routes;
    routes.build(graph, m, goals);
    SectorFields fields;
    fields.set_routes(graph, routes);
    std::size_t reached = 0, directed = 0;
    for (std::uint32_t s = 0; s < graph.sector_count(); ++s) {
      CAPTURE(s);
      fields.build_sector(m, s);
      const test::ReferenceSector ref = test::reference_build_sector(m, graph, routes, s);
      const SectorGraph::Rect r = graph.sector_rect(s);
      for (std::int32_t y = 0; y < r.h; ++y)
        for (std::int32_t x = 0; x < r.w; ++x) {
          const CellCoord c{r.x0 + x, r.y0 + y};
          CAPTURE(c.x);
          CAPTURE(c.y);
          const std::uint32_t want = ref.values[static_cast<std::size_t>(y + 1) * static_cast<std::size_t>(r.w + 2) +
                                                static_cast<std::size_t>(x + 1)];
          REQUIRE(fields.value(c) == want);
          const std::uint8_t code = ref.dirs[static_cast<std::size_t>(y) * static_cast<std::size_t>(r.w) + static_cast<std::size_t>(x)];
          REQUIRE(fields.direction(c) == (code == 9 ? FlowDirection::kNone : static_cast<FlowDirection>(code)));
          reached += want != kUnreachable ? 1 : 0;
          directed += code < 8 ? 1 : 0;
        }
    }
    CHECK(reached > static_cast<std::size_t>(m.width() * m.height()) / 3);
    CHECK(directed > static_cast<std::size_t>(m.width() * m.height()) / 3);
  }
}
