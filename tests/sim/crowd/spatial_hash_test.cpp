// SpatialHash: queries against brute force, storage reuse, degenerate input.
#include "swarmfield/sim/crowd/spatial_hash.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "swarm_test_support.hpp"
#include "swarmfield/sim/worker_pool.hpp"

using namespace swarmfield::sim;
using swarmfield::sim::test::SplitMix;

namespace {

/// Hash cell of a coordinate: floor(v * (1 / cell)) in float (the class multiplies by the
/// reciprocal, so values exactly on a border round the same way), clamped to the grid (NaN and
/// negatives to 0). Written independently of the class.
std::int32_t expected_cell(float v, float cell, std::int32_t count) {
  if (!(v >= 0.0f)) return 0;
  const float c = std::floor(v * (1.0f / cell));
  return static_cast<std::int32_t>(std::min<float>(c, static_cast<float>(count - 1)));
}

std::vector<std::uint32_t> query(const SpatialHash& h, Vec2 p) {
  std::vector<std::uint32_t> out;
  h.for_each_near(p, [&](std::uint32_t i) { out.push_back(i); });
  return out;
}

}  // namespace

TEST_CASE("spatial hash query equals brute force over random positions") {
  const std::uint64_t seed = swarmfield::sim::test::test_seed(20240611);
  SplitMix rng{seed};
  struct Config {
    float w, h, cell;
    std::size_t n;
  };
  for (const Config cfg : {Config{50.0f, 30.0f, 0.9f, 3000}, Config{64.0f, 64.0f, 1.0f, 500}, Config{17.0f, 5.0f, 2.5f, 200},
                           Config{10.0f, 10.0f, 0.9f, 0}}) {
    CAPTURE(cfg.w);
    CAPTURE(cfg.cell);
    SpatialHash h;
    h.configure(cfg.w, cfg.h, cfg.cell);
    REQUIRE(h.columns() == static_cast<std::int32_t>(std::ceil(cfg.w / cfg.cell)));
    REQUIRE(h.rows() == static_cast<std::int32_t>(std::ceil(cfg.h / cfg.cell)));
    std::vector<float> xs(cfg.n), ys(cfg.n);
    for (std::size_t i = 0; i < cfg.n; ++i) {
      // Mostly inside, some outside the world (clamped to border cells), a few exactly on
      // cell borders.
      xs[i] = rng.uniform(-2.0f, cfg.w + 2.0f);
      ys[i] = rng.uniform(-2.0f, cfg.h + 2.0f);
      if (i % 17 == 0) xs[i] = std::floor(xs[i] / cfg.cell) * cfg.cell;
    }
    h.rebuild(xs, ys);
    for (int q = 0; q < 300; ++q) {
      const Vec2 p{rng.uniform(-1.0f, cfg.w + 1.0f), rng.uniform(-1.0f, cfg.h + 1.0f)};
      std::vector<std::uint32_t> got = query(h, p);
      std::vector<std::uint32_t> want;
      const std::int32_t qx = expected_cell(p.x, cfg.cell, h.columns());
      const std::int32_t qy = expected_cell(p.y, cfg.cell, h.rows());
      for (std::size_t i = 0; i < cfg.n; ++i) {
        const std::int32_t cx = expected_cell(xs[i], cfg.cell, h.columns());
        const std::int32_t cy = expected_cell(ys[i], cfg.cell, h.rows());
        if (std::abs(cx - qx) <= 1 && std::abs(cy - qy) <= 1) want.push_back(static_cast<std::uint32_t>(i));
      }
      std::vector<std::uint32_t> sorted = got;
      std::sort(sorted.begin(), sorted.end());
      CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // no duplicates
      REQUIRE(sorted == want);
      // The property the swarm relies on: everything within one cell size of p is returned.
      for (std::size_t i = 0; i < cfg.n; ++i) {
        if (std::hypot(xs[i] - p.x, ys[i] - p.y) < cfg.cell && xs[i] >= 0.0f && ys[i] >= 0.0f) {
          CHECK(std::binary_search(sorted.begin(), sorted.end(), static_cast<std::uint32_t>(i)));
        }
      }
    }
  }
}

TEST_CASE("spatial hash query within a radius passes every slot within it, in the full block's order") {
  // The swarm's gather keeps the slots with !(d2 >= r2), d2 = dx * dx + dy * dy in float: the
  // pruned block must keep exactly those, in the same order, whatever the rounding (points on
  // and near column and row edges, radii from a tenth of a cell to a whole one, a big grid, some
  // positions outside the world or NaN).
  const std::uint64_t seed = swarmfield::sim::test::test_seed(20261205);
  SplitMix rng{seed};
  struct Config {
    float w, cell;
    std::size_t n;
  };
  for (const Config cfg : {Config{40.0f, 2.057f, 4000}, Config{1024.0f, 2.057f, 100000}, Config{30.0f, 0.9f, 3000}}) {
    CAPTURE(cfg.w);
    SpatialHash h;
    h.configure(cfg.w, cfg.w, cfg.cell);
    std::vector<float> xs(cfg.n), ys(cfg.n);
    for (std::size_t i = 0; i < cfg.n; ++i) {
      xs[i] = rng.uniform(-1.0f, cfg.w + 1.0f);
      ys[i] = rng.uniform(-1.0f, cfg.w + 1.0f);
      if (i % 7 == 0) xs[i] = std::floor(xs[i] / cfg.cell) * cfg.cell;  // on a column edge
      if (i % 11 == 0) ys[i] = std::nextafter(std::floor(ys[i] / cfg.cell) * cfg.cell, 0.0f);
      if (i % 101 == 0) ys[i] = std::numeric_limits<float>::quiet_NaN();
    }
    h.rebuild(xs, ys);
    const float* sx = h.sorted_xs().data();
    const float* sy = h.sorted_ys().data();
    for (int q = 0; q < 3000; ++q) {
      const std::size_t at = static_cast<std::size_t>(rng.below(static_cast<std::int32_t>(cfg.n)));
      Vec2 p{xs[at], ys[at]};  // an item's own position, as the swarm asks (on edges too)
      if (q % 3 == 0) p = {rng.uniform(0.0f, cfg.w), rng.uniform(0.0f, cfg.w)};
      const float radius = cfg.cell * (q % 4 == 0 ? 1.0f : rng.uniform(0.1f, 1.0f));
      const float r2 = radius * radius;
      const auto within = [&](std::uint32_t s) {
        const float dx = p.x - sx[s], dy = p.y - sy[s];
        return !(dx * dx + dy * dy >= r2);
      };
      std::vector<std::uint32_t> want, got;
      h.for_each_range_near(p, [&](std::uint32_t b, std::uint32_t e) {
        for (std::uint32_t s = b; s < e; ++s) {
          if (within(s)) want.push_back(s);
        }
      });
      h.for_each_range_within(p, std::sqrt(r2), [&](std::uint32_t b, std::uint32_t e) {
        for (std::uint32_t s = b; s < e; ++s) {
          if (within(s)) got.push_back(s);
        }
      });
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("spatial hash rebuild is deterministic and handles shrinking input") {
  SpatialHash h;
  h.configure(20.0f, 20.0f, 1.0f);
  const std::vector<float> xs = {1.5f, 1.2f, 1.7f, 10.0f, 1.1f};
  const std::vector<float> ys = {1.5f, 1.9f, 1.1f, 10.0f, 1.3f};
  h.rebuild(xs, ys);
  // Items of one cell come back in ascending index order (stable counting sort).
  const std::vector<std::uint32_t> first = query(h, {1.5f, 1.5f});
  CHECK(first == std::vector<std::uint32_t>{0, 1, 2, 4});
  h.rebuild(xs, ys);
  CHECK(query(h, {1.5f, 1.5f}) == first);
  // Fewer items: stale ones must not linger.
  h.rebuild(std::span<const float>(xs).first(2), std::span<const float>(ys).first(2));
  CHECK(query(h, {1.5f, 1.5f}) == std::vector<std::uint32_t>{0, 1});
  CHECK(query(h, {10.0f, 10.0f}).empty());
}

TEST_CASE("spatial hash survives degenerate configuration and positions") {
  SpatialHash h;
  h.configure(std::numeric_limits<float>::quiet_NaN(), -5.0f, 0.0f);
  CHECK(h.columns() >= 1);
  CHECK(h.rows() >= 1);
  const std::vector<float> xs = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -1e30f};
  const std::vector<float> ys = {0.0f, -std::numeric_limits<float>::infinity(), 1e30f};
  h.rebuild(xs, ys);
  CHECK(query(h, {0.0f, 0.0f}).size() == 3);  // everything clamps into the single cell
  // A huge world with a tiny cell is capped instead of allocating gigabytes.
  SpatialHash big;
  big.configure(1e7f, 1e7f, 0.01f);
  CHECK(static_cast<double>(big.columns()) * big.rows() <= static_cast<double>(1u << 24));
}

TEST_CASE("spatial hash without configure does not crash") {
  SpatialHash h;
  const std::vector<float> xs = {1.0f}, ys = {1.0f};
  h.rebuild(xs, ys);
  CHECK(query(h, {1.0f, 1.0f}) == std::vector<std::uint32_t>{0});
}

TEST_CASE("parallel rebuild equals the stable counting sort for any pool, chunking and band split") {
  const std::uint64_t seed = swarmfield::sim::test::test_seed(777);
  SplitMix rng{seed};
  WorkerPool two(2), three(3);
  struct Config {
    float w, h, cell;
    std::size_t n, reserved;
  };
  // Many items over several item chunks (4096) and bands (one per hash row up to 4096 rows,
  // then two or more rows per band); few rows; more items than reserved (grows once); no item
  // at all.
  for (const Config cfg : {Config{1024.0f, 1024.0f, 0.9f, 30000, 30000}, Config{300.0f, 7.0f, 0.9f, 9000, 100},
                           Config{50.0f, 3000.0f, 1.0f, 12345, 20000}, Config{12.0f, 9000.0f, 1.0f, 20000, 20000},
                           Config{10.0f, 10.0f, 1.0f, 0, 0}}) {
    CAPTURE(cfg.w);
    CAPTURE(cfg.h);
    CAPTURE(cfg.n);
    std::vector<float> xs(cfg.n), ys(cfg.n);
    for (std::size_t i = 0; i < cfg.n; ++i) {
      // Clustered (many items per cell, as in a crowd), some outside the world or NaN.
      xs[i] = i % 3 == 0 ? rng.uniform(0.0f, 8.0f) : rng.uniform(-2.0f, cfg.w + 2.0f);
      ys[i] = rng.uniform(-2.0f, cfg.h + 2.0f);
      if (i % 1001 == 0) xs[i] = std::numeric_limits<float>::quiet_NaN();
    }
    // Reference, written independently: indices stably sorted by row-major cell.
    SpatialHash probe;
    probe.configure(cfg.w, cfg.h, cfg.cell);
    auto cell_of = [&](std::size_t i) {
      return static_cast<std::int64_t>(expected_cell(ys[i], cfg.cell, probe.rows())) * probe.columns() +
             expected_cell(xs[i], cfg.cell, probe.columns());
    };
    std::vector<std::uint32_t> want(cfg.n);
    for (std::size_t i = 0; i < cfg.n; ++i) want[i] = static_cast<std::uint32_t>(i);
    std::stable_sort(want.begin(), want.end(), [&](std::uint32_t a, std::uint32_t b) { return cell_of(a) < cell_of(b); });

    for (WorkerPool* pool : {static_cast<WorkerPool*>(nullptr), &two, &three}) {
      CAPTURE(pool == nullptr ? 1 : pool->threads());
      SpatialHash h;
      h.configure(cfg.w, cfg.h, cfg.cell);
      h.reserve(cfg.reserved);
      for (int round = 0; round < 2; ++round) {  // the second rebuild reuses the storage
        h.rebuild(xs, ys, pool);
        REQUIRE(h.items().size() == cfg.n);
        CHECK(std::equal(want.begin(), want.end(), h.items().begin()));
        bool positions_follow = true;
        for (std::size_t k = 0; k < cfg.n; ++k) {
          const std::uint32_t i = h.items()[k];
          positions_follow = positions_follow && std::memcmp(&h.sorted_xs()[k], &xs[i], sizeof(float)) == 0 &&
                             std::memcmp(&h.sorted_ys()[k], &ys[i], sizeof(float)) == 0;
        }
        CHECK(positions_follow);
        // Queries see every cell's items: the cell starts are right everywhere.
        for (int q = 0; q < 50 && cfg.n > 0; ++q) {
          const std::size_t i = static_cast<std::size_t>(rng.below(static_cast<std::int32_t>(cfg.n)));
          if (!std::isfinite(xs[i])) continue;
          bool found = false;
          h.for_each_near({xs[i], ys[i]}, [&](std::uint32_t j) { found = found || j == i; });
          CHECK(found);
        }
      }
    }
  }
}

namespace {

/// 60 rebuilds of one hash over moving items in a w x h world; each must equal a freshly
/// configured hash, and queries brute force (see the test case below).
void check_moving_items(float w, float h, float cell, SplitMix& rng, WorkerPool& pool) {
  std::vector<float> xs, ys;
  SpatialHash h1, h2;
  h1.configure(w, h, cell);
  h2.configure(w, h, cell);
  h1.reserve(3000);
  std::size_t queries = 0;
  for (int round = 0; round < 60; ++round) {
    CAPTURE(round);
    // Resize: grow, shrink, sometimes to zero.
    const std::size_t n = round % 17 == 16 ? 0 : static_cast<std::size_t>(200 + rng.below(2500));
    while (xs.size() < n) {
      xs.push_back(rng.uniform(0.0f, w));
      ys.push_back(rng.uniform(0.0f, h));
    }
    xs.resize(n);
    ys.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int32_t r = rng.below(100);
      if (r < 80) {  // small step
        xs[i] += rng.uniform(-0.2f, 0.2f);
        ys[i] += rng.uniform(-0.2f, 0.2f);
      } else if (r < 95) {  // teleport
        xs[i] = rng.uniform(-3.0f, w + 3.0f);
        ys[i] = rng.uniform(-3.0f, h + 3.0f);
      } else if (r < 97) {
        xs[i] = std::numeric_limits<float>::quiet_NaN();
      } else if (r < 99) {  // onto a column at a bitmap byte border (columns 6..9, 62..65)
        xs[i] = std::min((static_cast<float>(6 + 56 * rng.below(2) + rng.below(4)) + 0.5f) * cell, w - 0.1f);
      }  // else: stays
    }
    h1.rebuild(xs, ys, round % 3 == 0 ? nullptr : &pool);
    SpatialHash fresh;
    fresh.configure(w, h, cell);
    fresh.rebuild(xs, ys);
    REQUIRE(h1.items().size() == n);
    CHECK(std::equal(fresh.items().begin(), fresh.items().end(), h1.items().begin()));
    for (int q = 0; q < 200; ++q) {
      const Vec2 p = q % 4 == 0 && n > 0
                         ? Vec2{xs[static_cast<std::size_t>(rng.below(static_cast<std::int32_t>(n)))], rng.uniform(0.0f, h)}
                         : Vec2{rng.uniform(-1.0f, w + 1.0f), rng.uniform(-1.0f, h + 1.0f)};
      const std::vector<std::uint32_t> got = query(h1, p);
      CHECK(got == query(fresh, p));  // same items, same order
      const std::int32_t qx = expected_cell(p.x, cell, h1.columns()), qy = expected_cell(p.y, cell, h1.rows());
      std::size_t want = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t cx = expected_cell(xs[i], cell, h1.columns()), cy = expected_cell(ys[i], cell, h1.rows());
        if (std::abs(cx - qx) <= 1 && std::abs(cy - qy) <= 1) ++want;
      }
      CHECK(got.size() == want);
      ++queries;
    }
    // A second hash rebuilt from the first one's sorted positions (nearly sorted input, the
    // swarm's case) gives the items in slot order 0..n-1.
    h2.rebuild(h1.sorted_xs(), h1.sorted_ys(), &pool);
    bool identity = h2.items().size() == n;
    for (std::size_t k = 0; identity && k < n; ++k) identity = h2.items()[k] == k;
    CHECK(identity);
  }
  CHECK(queries == 60 * 200);
}

}  // namespace

TEST_CASE("spatial hash over many rebuilds of moving items equals a fresh hash and brute force") {
  // Rebuilds only reset the cells the previous rebuild occupied: stale cells must never show.
  // Items walk (mostly within a cell, sometimes across), teleport, leave the world, turn NaN;
  // the count grows and shrinks. Half of the rounds run on a pool.
  const std::uint64_t seed = swarmfield::sim::test::test_seed(4711);
  SplitMix rng{seed};
  WorkerPool two(2);
  SUBCASE("wide grid: blocks straddle bitmap bytes") { check_moving_items(150.0f, 40.0f, 0.9f, rng, two); }
  SUBCASE("tall grid: more rows than bands, two hash rows per band") { check_moving_items(20.0f, 4600.0f, 1.0f, rng, two); }
}
