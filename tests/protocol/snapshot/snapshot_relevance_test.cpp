// Relevance and budget: agents in the grown view rectangle, sorted by id; the nearest
// max_tracked tracked and the rest counted in the density grid; under a small allowance the
// nearest and longest-unsent go first and nobody starves; the token bucket pays back overspending.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "swarmfield/protocol/snapshot/snapshot_relevance.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;

namespace {

/// n agents spread over a side x side world (world units, cell size 1), ids shuffled.
struct World {
  std::vector<std::uint32_t> ids;
  std::vector<float> xs, ys, hs;
  World(std::size_t n, float side, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, side);
    for (std::size_t i = 0; i < n; ++i) {
      ids.push_back(static_cast<std::uint32_t>(i * 3 + 7));
      xs.push_back(u(rng));
      ys.push_back(u(rng));
      hs.push_back(u(rng));
    }
    std::shuffle(ids.begin(), ids.end(), rng);  // the swarm keeps agents in spatial order
  }
};

}  // namespace

TEST_CASE("quantized agents come out sorted by id with their own values") {
  World w(5000, 300.0f, sp::test::test_seed());
  sp::QuantizedAgents q;
  q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
  REQUIRE(q.size() == 5000);
  CHECK(std::is_sorted(q.ids.begin(), q.ids.end()));
  for (std::size_t k = 0; k < 5000; k += 97) {
    const auto i = static_cast<std::size_t>(std::find(w.ids.begin(), w.ids.end(), q.ids[k]) - w.ids.begin());
    CHECK(q.xs[k] == sp::quantize_agent_position(w.xs[i], 1.0f));
    CHECK(q.ys[k] == sp::quantize_agent_position(w.ys[i], 1.0f));
    CHECK(q.headings[k] == sp::quantize_heading(w.hs[i]));
  }
}

TEST_CASE("quantized agents are sorted by id whether ids are dense, sparse or repeated") {
  // Dense ids take the counting sort keyed by id, sparse ones (beyond 4 n + 65536) the radix
  // sort, and a repeated id (not a swarm's, but not to be lost) falls back to the radix sort.
  World w(3000, 100.0f, sp::test::test_seed());
  for (const std::uint32_t scale : {1u, 100000u}) {
    for (const bool repeat : {false, true}) {
      std::vector<std::uint32_t> ids = w.ids;
      for (auto& id : ids) id = id * scale + 3;
      if (repeat) ids[10] = ids[20];
      sp::QuantizedAgents q;
      q.assign(ids, w.xs, w.ys, w.hs, {}, 1.0f);
      REQUIRE(q.size() == ids.size());
      std::vector<std::uint32_t> want = ids;
      std::sort(want.begin(), want.end());
      CHECK(q.ids == want);
      for (std::size_t k = 0; k < q.size(); k += 37) {
        const auto i = static_cast<std::size_t>(std::find(ids.begin(), ids.end(), q.ids[k]) - ids.begin());
        if (repeat && (i == 10 || i == 20)) continue;
        CHECK(q.xs[k] == sp::quantize_agent_position(w.xs[i], 1.0f));
        CHECK(q.headings[k] == sp::quantize_heading(w.hs[i]));
      }
    }
  }
}

TEST_CASE("candidates are the agents inside the view plus margin, by id") {
  World w(20000, 500.0f, sp::test::test_seed());
  sp::QuantizedAgents q;
  q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
  const sp::QuantizedRect view = sp::quantize_view(100, 100, 200, 150, 4, 1.0f);
  sp::SnapshotSelector sel;
  sp::AgentCandidates c;
  sp::DensityGrid grid;
  sel.select(q, view, sp::AgentFrameView::empty(), 10, 1e9, {}, c, grid);
  std::set<std::uint32_t> expect;
  for (std::size_t i = 0; i < w.ids.size(); ++i) {
    if (w.xs[i] >= 96 && w.xs[i] < 204 && w.ys[i] >= 96 && w.ys[i] < 154) expect.insert(w.ids[i]);
  }
  // Points within a quantization step of the edge may fall either way.
  CHECK(std::abs(static_cast<long>(c.size()) - static_cast<long>(expect.size())) <= 3);
  CHECK(std::is_sorted(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.id < b.id; }));
  CHECK(std::all_of(c.begin(), c.end(), [](const sp::AgentCandidate& a) { return a.send == 1; }));
  CHECK(grid.empty());  // everything tracked: no grid
  CHECK(sel.stats().untracked == 0);
  // An empty view wants nothing.
  sel.select(q, sp::quantize_view(5, 5, 5, 50, 4, 1.0f), sp::AgentFrameView::empty(), 10, 1e9, {}, c, grid);
  CHECK(c.size() == 0);
}

TEST_CASE("the tile index selects exactly the agents a full scan selects, for any rectangle") {
  World w(30000, 700.0f, sp::test::test_seed());
  sp::QuantizedAgents q;
  q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
  std::mt19937_64 rng(sp::test::test_seed());
  std::uniform_real_distribution<float> u(-100.0f, 800.0f);
  sp::SnapshotSelector sel;
  sp::AgentCandidates c;
  sp::DensityGrid grid;
  for (int round = 0; round < 200; ++round) {
    const float x0 = u(rng), y0 = u(rng);
    const float x1 = x0 + std::fabs(u(rng)) / 2, y1 = y0 + std::fabs(u(rng)) / 2;
    const sp::QuantizedRect view = sp::quantize_view(x0, y0, x1, y1, static_cast<float>(round % 5), 1.0f);
    sp::RelevanceParams params;
    params.max_tracked = sp::kMaxFrameAgents;
    sel.select(q, view, sp::AgentFrameView::empty(), 10, 1e12, params, c, grid);
    std::vector<std::uint32_t> expect, got;
    for (std::size_t k = 0; k < q.size(); ++k) {
      if (q.xs[k] >= view.x0 && q.xs[k] < view.x1 && q.ys[k] >= view.y0 && q.ys[k] < view.y1) expect.push_back(q.ids[k]);
    }
    for (const sp::AgentCandidate& a : c) got.push_back(a.id);
    REQUIRE(got == expect);
  }
}

TEST_CASE("beyond max_tracked the nearest are tracked and the rest go to the density grid") {
  World w(50000, 1000.0f, sp::test::test_seed());
  sp::QuantizedAgents q;
  q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
  const sp::QuantizedRect view = sp::quantize_view(0, 0, 1000, 1000, 0, 1.0f);
  sp::RelevanceParams params;
  params.max_tracked = 2000;
  sp::SnapshotSelector sel;
  sp::AgentCandidates c;
  sp::DensityGrid grid;
  sel.select(q, view, sp::AgentFrameView::empty(), 10, 1e9, params, c, grid);
  CHECK(c.size() == 2000);
  CHECK(sel.stats().in_view >= 49990);  // a few round onto the far edge, outside
  CHECK(sel.stats().untracked == sel.stats().in_view - 2000);
  REQUIRE_FALSE(grid.empty());
  CHECK(grid.width <= sp::kMaxDensityGridSide);
  // Tracked agents are within ~sqrt(2000 / (pi * density)) of the centre; the grid's corner
  // squares hold untracked agents.
  double far = 0;
  for (const sp::AgentCandidate& a : c) far = std::max(far, std::hypot(a.x / 64.0 - 500.0, a.y / 64.0 - 500.0));
  CHECK(far < 150);
  CHECK(grid.level_at_cell(5, 5) > 0);
  CHECK(grid.level_at_cell(995, 995) > 0);
}

TEST_CASE("under a small allowance the nearest go first, and every agent is sent within a few snapshots") {
  World w(4000, 200.0f, sp::test::test_seed());
  sp::QuantizedAgents q;
  q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
  const sp::QuantizedRect view = sp::quantize_view(0, 0, 200, 200, 0, 1.0f);
  sp::SnapshotSelector sel;
  sp::SnapshotSender sender(1 << 16, /*reliable=*/true);
  sp::AgentCandidates c;
  sp::DensityGrid grid;
  std::vector<std::uint8_t> payload;
  sp::RelevanceParams params;
  std::map<std::uint32_t, std::uint32_t> last_sent;
  for (std::uint32_t tick = 1; tick <= 60; ++tick) {
    // 1000 bytes a snapshot: about 140 new agents or ~1300 updates at the estimates.
    sel.select(q, view, sender.next_baseline(), tick, 1000, params, c, grid);
    if (tick == 1) {
      CHECK(sel.stats().over_budget);
      double sent_d = 0, unsent_d = 0;
      std::size_t ns = 0, nu = 0;
      for (const sp::AgentCandidate& a : c) {
        const double d = std::hypot(a.x / 64.0 - 100.0, a.y / 64.0 - 100.0);
        (a.send ? sent_d : unsent_d) += d;
        (a.send ? ns : nu) += 1;
      }
      REQUIRE(ns > 0);
      REQUIRE(nu > 0);
      CHECK(sent_d / static_cast<double>(ns) < 0.5 * unsent_d / static_cast<double>(nu));
      CHECK_FALSE(grid.empty());  // agents not yet sent show in the grid
    }
    for (const sp::AgentCandidate& a : c) {
      if (a.send) last_sent[a.id] = tick;
    }
    sp::SnapshotHeader h;
    h.tick = tick;
    REQUIRE(sender.encode(h, c, grid, payload));
  }
  // Everyone got through, and nobody waited long at the end.
  CHECK(last_sent.size() == 4000);
  for (const auto& [id, t] : last_sent) CHECK(t > 40);
}

TEST_CASE("the token bucket pays back overspending and caps saving at two snapshots") {
  sp::SnapshotBudget b(1'000'000, 20);  // 6250 bytes a snapshot
  CHECK(b.per_snapshot_bytes() == doctest::Approx(6250));
  CHECK(b.allowance(0) == doctest::Approx(12500));  // full bucket: two snapshots' worth
  sp::SnapshotEncodeStats s;
  b.spent(12500 + 3000, s);
  CHECK(b.allowance(0) == doctest::Approx(3250));
  b.spent(0, s);
  CHECK(b.allowance(250) == doctest::Approx(9250));
  for (int i = 0; i < 10; ++i) (void)b.allowance(0);
  CHECK(b.allowance(0) == doctest::Approx(12500));
}

TEST_CASE("quantize_view refuses non-finite input and clamps to the position range") {
  CHECK(sp::quantize_view(std::nanf(""), 0, 10, 10, 1, 1).empty());
  CHECK(sp::quantize_view(0, 0, INFINITY, 10, 1, 1).empty());
  const auto r = sp::quantize_view(-1e9f, -1e9f, 1e9f, 1e9f, 0, 1);
  CHECK(r.x0 == -1);
  CHECK(r.x1 == std::int64_t{sp::kPositionMax} + 1);
}

TEST_CASE("a whole-map viewer of 100k agents at 1 Mbit/s gets bounded snapshots and fills its tracked set") {
  World w(100000, 1000.0f, sp::test::test_seed());
  sp::QuantizedAgents q;
  const sp::QuantizedRect view = sp::quantize_view(0, 0, 1000, 1000, 4, 1.0f);
  sp::SnapshotSelector sel;
  sp::SnapshotSender sender(8 * 16384);
  sp::SnapshotBudget budget(1'000'000, 20);
  sp::AgentCandidates c;
  sp::DensityGrid grid;
  std::vector<std::uint8_t> payload;
  std::size_t largest = 0, frame_size = 0;
  std::mt19937_64 rng(sp::test::test_seed());
  for (std::uint32_t tick = 1; tick <= 60; ++tick) {
    for (std::size_t i = 0; i < w.xs.size(); ++i) {  // everyone shuffles a little
      w.xs[i] = std::clamp(w.xs[i] + static_cast<float>(static_cast<int>(rng() % 5) - 2) * 0.05f, 0.0f, 999.9f);
    }
    q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
    sp::RelevanceParams params;
    params.update_bits = budget.update_bits();
    params.add_bits = budget.add_bits();
    sel.select(q, view, sender.next_baseline(), tick, budget.allowance(60), params, c, grid);
    sp::SnapshotHeader h;
    h.tick = tick;
    REQUIRE(sender.encode(h, c, grid, payload));
    budget.spent(payload.size(), sender.last_stats());
    sp::SnapshotAck ack;  // the client got everything
    ack.add(h.sequence);
    REQUIRE(sender.on_ack(ack));
    if (tick > 2) largest = std::max(largest, payload.size());
    frame_size = sender.last_frame().size();
    CHECK_FALSE(sender.last_frame().grid.empty());  // the untracked rest is shown as density
  }
  MESSAGE("largest snapshot " << largest << " bytes; frame " << frame_size << " agents");
  // 6250 bytes a snapshot, at most two snapshots' worth at once, estimates off by a little:
  // a handful of datagrams every time, never a hundred.
  CHECK(largest <= 2 * 6250 + 2000);
  CHECK(frame_size == 16384);  // the tracked set filled up within 3 s
}

TEST_CASE("agents waiting to be added age, so a budget busy with updates near the centre still adds them") {
  // 3000 agents near the view centre, 100 in the far corners.
  std::mt19937_64 rng(sp::test::test_seed());
  std::vector<std::uint32_t> ids;
  std::vector<float> xs, ys, hs;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::uint32_t i = 0; i < 3100; ++i) {
    ids.push_back(i + 1);
    if (i < 3000) {
      xs.push_back(100 + 10 * u(rng));
      ys.push_back(100 + 10 * u(rng));
    } else {
      xs.push_back(i % 2 ? 3 + u(rng) : 197 + u(rng));
      ys.push_back(i % 4 < 2 ? 3 + u(rng) : 197 + u(rng));
    }
    hs.push_back(0);
  }
  sp::QuantizedAgents q;
  q.assign(ids, xs, ys, hs, {}, 1.0f);
  sp::SnapshotSelector sel;
  sp::SnapshotSender sender(1 << 16, /*reliable=*/true);
  sp::AgentCandidates c;
  sp::DensityGrid grid;
  std::vector<std::uint8_t> payload;
  sp::RelevanceParams params;
  params.update_bits = 6;
  params.add_bits = 56;
  auto snapshot = [&](std::uint32_t tick, const sp::QuantizedRect& view, double allowance) {
    sel.select(q, view, sender.next_baseline(), tick, allowance, params, c, grid);
    sp::SnapshotHeader h;
    h.tick = tick;
    REQUIRE(sender.encode(h, c, grid, payload));
  };
  // The centre first, with room to spare.
  for (std::uint32_t tick = 1; tick <= 3; ++tick) snapshot(tick, sp::quantize_view(80, 80, 120, 120, 0, 1.0f), 1e9);
  REQUIRE(sender.last_frame().size() == 3000);
  // Then, from tick 10 (the centre's agents 7 ticks old), the whole view with room to update a
  // third of the centre each snapshot: the centre's agents settle at an update every ~3 ticks
  // (priority ~3 x 7), the corners' start at 16 x 1 and must age past them.
  for (std::uint32_t tick = 10; tick <= 80; ++tick) snapshot(tick, sp::quantize_view(0, 0, 200, 200, 0, 1.0f), 750);
  CHECK(sender.last_frame().size() == 3100);
}

TEST_CASE("a view's relevance computed once and shared gives each client exactly what its own selection gives") {
  World w(30000, 600.0f, sp::test::test_seed() + 5);
  sp::QuantizedAgents q;
  q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
  const sp::QuantizedRect view = sp::quantize_view(0, 0, 600, 600, 0, 1.0f);
  sp::RelevanceParams params;
  params.max_tracked = 5000;
  sp::ViewRelevance shared;
  shared.compute(q, view, params);
  CHECK(shared.tracked().size() == 5000);
  CHECK(shared.untracked() == shared.in_view() - 5000);
  REQUIRE(shared.weights().size() == shared.tracked().size());
  // Two clients at different points of their streams (different baselines and budgets): the
  // shared form and the self-contained form agree on every candidate, flag and grid level.
  for (const double allowance : {400.0, 5000.0}) {
    sp::SnapshotSelector own, from_shared;
    sp::SnapshotSender sender(1 << 16, true);
    sp::AgentCandidates a, b;
    sp::DensityGrid ga, gb;
    std::vector<std::uint8_t> payload;
    for (std::uint32_t tick = 1; tick <= 5; ++tick) {
      own.select(q, view, sender.next_baseline(), tick, allowance, params, a, ga);
      from_shared.select(shared, sender.next_baseline(), tick, allowance, params, b, gb);
      CHECK(a == b);
      CHECK(ga == gb);
      CHECK(own.stats().sent == from_shared.stats().sent);
      CHECK(own.stats().untracked == from_shared.stats().untracked);
      sp::SnapshotHeader h;
      h.tick = tick;
      REQUIRE(sender.encode(h, a, ga, payload));
    }
  }
}

TEST_CASE("budgeted selection equals the priority rule applied agent by agent") {
  // The selector's merge with the baseline has fast paths (runs of ids both hold, a loop
  // skipped when everything fits); this is the rule of SNAPSHOTS.md written plainly: priority =
  // min(age x weight, 8191) / 8, age = ticks since the baseline's values (16 for an agent the
  // client lacks and that is not waiting yet), whole bins from the highest down as far as the
  // allowance pays, the next bin in id order with what is left.
  World w(30000, 400.0f, sp::test::test_seed());
  sp::QuantizedAgents q;
  q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
  sp::RelevanceParams params;
  params.max_tracked = 6000;
  params.update_bits = 7.5;
  params.add_bits = 50.0;
  sp::ViewRelevance relevance;
  relevance.compute(q, sp::quantize_view(0, 0, 400, 400, 4, 1.0f), params);
  const sp::AgentCandidates& tracked = relevance.tracked();
  REQUIRE(tracked.size() == 6000);
  std::mt19937_64 rng(sp::test::test_seed() + 1);
  const std::uint32_t tick = 500;
  for (int round = 0; round < 6; ++round) {
    // A baseline holding most tracked agents (some missing, a few extra ones), various ages.
    sp::AgentFrame base;
    base.sequence = 1;
    base.tick = tick - 1;
    for (const sp::AgentCandidate& c : tracked) {
      if (rng() % 100 < 8) {
        base.agents.push_back(sp::AgentState{c.id - 1, 0, 0, tick - 1, 0, 0, 0, 0});  // gone from view
      }
      if (rng() % 100 < (round == 0 ? 0u : 10u)) continue;  // the client lacks it
      base.agents.push_back(sp::AgentState{c.id, c.x, c.y, tick - 1 - static_cast<std::uint32_t>(rng() % 40), 0, 0, 0, 0});
    }
    std::sort(base.agents.begin(), base.agents.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    base.agents.erase(std::unique(base.agents.begin(), base.agents.end(),
                                  [](const auto& a, const auto& b) { return a.id == b.id; }),
                      base.agents.end());
    const double allowance = round == 5 ? 1e9 : 300.0 + 700.0 * round;  // the last one fits whole
    sp::SnapshotSelector selector;  // fresh: nobody is waiting yet
    sp::AgentCandidates out;
    sp::DensityGrid grid;
    selector.select(relevance, sp::AgentFrameView::of(base), tick, allowance, params, out, grid);
    REQUIRE(out.size() == tracked.size());

    // The rule, agent by agent.
    std::vector<std::uint32_t> prio(tracked.size());
    std::vector<bool> known(tracked.size());
    double total = 0;
    for (std::size_t k = 0; k < tracked.size(); ++k) {
      const auto it = std::lower_bound(base.agents.begin(), base.agents.end(), tracked[k].id,
                                       [](const sp::AgentState& a, std::uint32_t id) { return a.id < id; });
      known[k] = it != base.agents.end() && it->id == tracked[k].id;
      const std::uint32_t age = known[k] ? std::min<std::uint32_t>(tick - it->tick, 1023) : 16;
      prio[k] = std::min<std::uint32_t>(age * relevance.weights()[k], 8191) / 8;
      total += known[k] ? params.update_bits : params.add_bits;
    }
    std::vector<std::uint8_t> send(tracked.size(), 1);
    if (total > allowance * 8.0) {
      std::vector<std::uint32_t> n_known(1024, 0), n_new(1024, 0);
      for (std::size_t k = 0; k < tracked.size(); ++k) ++(known[k] ? n_known : n_new)[prio[k]];
      double left = allowance * 8.0;
      std::size_t threshold = 1024;
      while (threshold > 0) {
        const double bits = n_new[threshold - 1] * params.add_bits + n_known[threshold - 1] * params.update_bits;
        if (bits > left) break;
        left -= bits;
        --threshold;
      }
      for (std::size_t k = 0; k < tracked.size(); ++k) {
        if (prio[k] >= threshold) continue;
        const double cost = known[k] ? params.update_bits : params.add_bits;
        if (threshold > 0 && prio[k] == threshold - 1 && cost <= left) {
          left -= cost;
        } else {
          send[k] = 0;
        }
      }
    }
    std::size_t differ = 0, sent = 0;
    for (std::size_t k = 0; k < tracked.size(); ++k) {
      differ += out[k].send != send[k] ? 1 : 0;
      sent += send[k];
    }
    CHECK(differ == 0);
    CHECK(selector.stats().sent == sent);
    if (round < 5) CHECK(sent < tracked.size());
  }
}

TEST_CASE("snap_view: outward to steps of 1/16 to 1/8 of the extent, at least a tile; clipped to the bounds") {
  constexpr std::int64_t kCell = sp::kPositionUnitsPerCell;
  // A 300-cell view (+ 4 margin): 308 cells -> 19.25 -> a 32-cell step.
  const sp::QuantizedRect view = sp::quantize_view(300, 300, 600, 600, 4, 1.0f);
  const sp::QuantizedRect s = sp::snap_view(view, 10);
  CHECK(s.x0 == 288 * kCell);
  CHECK(s.y0 == 288 * kCell);
  CHECK(s.x1 == 608 * kCell);
  CHECK(s.y1 == 608 * kCell);
  CHECK(sp::contains(s, view));
  // Views a few cells apart snap alike; every snapped rectangle contains its view and is at
  // most a quarter larger per axis (plus the tile minimum for small views).
  for (int dx = 0; dx <= 4; ++dx) {  // x1 = 604 + dx cells: up to the step at 608
    const auto x = static_cast<float>(dx);
    const sp::QuantizedRect v = sp::quantize_view(300.0f + x, 300, 600.0f + x, 600, 4, 1.0f);
    CHECK(sp::snap_view(v, 10).x0 == s.x0);
    CHECK(sp::snap_view(v, 10).x1 == s.x1);
  }
  std::mt19937 rng(sp::test::test_seed() + 9);
  std::uniform_real_distribution<float> u(-50.0f, 1100.0f);
  for (int i = 0; i < 2000; ++i) {
    const sp::QuantizedRect v = sp::quantize_view(u(rng), u(rng), u(rng), u(rng), 4, 1.0f);
    const sp::QuantizedRect r = sp::snap_view(v, 10);
    REQUIRE(sp::contains(r, v));
    if (v.empty()) continue;
    CHECK(r.x1 - r.x0 <= std::max<std::int64_t>((v.x1 - v.x0) * 3 / 2, v.x1 - v.x0 + 2 * 1024));
    CHECK(r.y1 - r.y0 <= std::max<std::int64_t>((v.y1 - v.y0) * 3 / 2, v.y1 - v.y0 + 2 * 1024));
  }
  // Small views: the tile (16 cells) is the step.
  const sp::QuantizedRect small = sp::snap_view(sp::quantize_view(20, 20, 30, 30, 0, 1.0f), 10);
  CHECK(small.x0 == 16 * kCell);
  CHECK(small.x1 == 32 * kCell);
  // Bounds: what lies outside changes nothing; a whole-map view keeps the map's centre.
  const sp::QuantizedRect map{0, 0, 1025 * kCell, 1025 * kCell};
  const sp::QuantizedRect whole = sp::snap_view(sp::quantize_view(0, 0, 1024, 1024, 4, 1.0f), 10, map);
  CHECK(whole.x0 == 0);
  CHECK(whole.x1 == map.x1);
  CHECK(sp::snap_view(sp::quantize_view(50, 0, 1074, 1024, 4, 1.0f), 10, map).x0 == whole.x0);
  CHECK(sp::snap_view(sp::quantize_view(2000, 0, 3000, 10, 4, 1.0f), 10, map).empty());
  CHECK(sp::snap_view(sp::QuantizedRect{}, 10).empty());
}

TEST_CASE("a shared relevance filtered to a client's rectangle gives what the client's own relevance gives") {
  // The server's sharing rule (SnapshotWorldState): a client takes the agents of its own
  // rectangle from the relevance of a larger, snapped one. Under the cap, the candidates are
  // exactly those of its own relevance; the weights are the shared rectangle's.
  World w(20000, 600.0f, sp::test::test_seed() + 6);
  sp::QuantizedAgents q;
  q.assign(w.ids, w.xs, w.ys, w.hs, {}, 1.0f);
  sp::RelevanceParams params;
  const sp::QuantizedRect own = sp::quantize_view(137, 211, 377, 392, 4, 1.0f);
  sp::ViewRelevance shared, alone;
  shared.compute(q, sp::snap_view(own, q.tile_shift), params);
  alone.compute(q, own, params);
  REQUIRE(shared.in_view() > alone.in_view());
  sp::SnapshotSelector selector;
  sp::AgentCandidates out;
  sp::DensityGrid grid;
  selector.select(shared, own, sp::AgentFrameView::empty(), 1, 1e9, params, out, grid);
  CHECK(out == alone.tracked());
  CHECK(selector.stats().tracked == alone.tracked().size());
  // The rectangle containing the shared one: a plain copy of it.
  selector.select(shared, sp::quantize_view(0, 0, 600, 600, 4, 1.0f), sp::AgentFrameView::empty(), 1, 1e9, params, out,
                  grid);
  CHECK(out == shared.tracked());
  // Disjoint: nothing.
  selector.select(shared, sp::quantize_view(500, 10, 590, 40, 0, 1.0f), sp::AgentFrameView::empty(), 1, 1e9, params,
                  out, grid);
  CHECK(out.empty());
}

TEST_CASE("choose() and the flags apart encode the same bytes and frames as select() and the flags in the candidates") {
  // The server's path (no copy of the shared tracked list per client) against the copying one:
  // two streams, same relevance, budgets and baselines, compared snapshot by snapshot, for a
  // rectangle containing the shared one (the list itself) and one inside it (the client's own).
  World w(30000, 600.0f, sp::test::test_seed() + 7);
  sp::RelevanceParams params;
  params.max_tracked = 6000;
  for (const sp::QuantizedRect view :
       {sp::quantize_view(0, 0, 600, 600, 4, 1.0f), sp::quantize_view(101, 73, 433, 389, 4, 1.0f)}) {
    sp::SnapshotSelector copying, choosing;
    sp::SnapshotSender a(1 << 16, false), b(1 << 16, false);
    sp::AgentCandidates out;
    sp::DensityGrid ga, gb;
    std::vector<std::uint8_t> pa, pb;
    std::mt19937_64 rng(sp::test::test_seed() + 8);
    std::normal_distribution<float> step(0.0f, 0.3f);
    std::vector<float> xs = w.xs, ys = w.ys;
    for (std::uint32_t tick = 1; tick <= 12; ++tick) {
      for (std::size_t i = 0; i < xs.size(); ++i) {
        xs[i] = std::clamp(xs[i] + step(rng), 0.0f, 599.0f);
        ys[i] = std::clamp(ys[i] + step(rng), 0.0f, 599.0f);
      }
      sp::QuantizedAgents q;
      q.assign(w.ids, xs, ys, w.hs, {}, 1.0f);
      sp::ViewRelevance shared;
      shared.compute(q, sp::snap_view(view, q.tile_shift), params);
      const double allowance = tick % 3 == 0 ? 30000.0 : 2500.0;
      copying.select(shared, view, a.next_baseline(), tick, allowance, params, out, ga);
      const sp::CandidateSelection chosen = choosing.choose(shared, view, b.next_baseline(), tick, allowance, params, gb);
      REQUIRE(chosen.candidates.size() == out.size());
      REQUIRE(chosen.send.size() == out.size());
      for (std::size_t k = 0; k < out.size(); ++k) {
        CHECK(chosen.candidates[k].id == out[k].id);
        CHECK((chosen.send[k] != 0) == (out[k].send != 0));
      }
      CHECK(ga == gb);
      CHECK(copying.stats().sent == choosing.stats().sent);
      CHECK(copying.stats().untracked == choosing.stats().untracked);
      sp::SnapshotHeader ha, hb;
      ha.tick = hb.tick = tick;
      REQUIRE(a.encode(ha, out, ga, pa));
      REQUIRE(b.encode(hb, chosen, gb, pb));
      CHECK(pa == pb);
      CHECK(a.last_frame() == b.last_frame());
      // Every other snapshot acknowledged: baselines one and two snapshots back.
      if (tick % 2 == 0) {
        sp::SnapshotAck ack;
        ack.add(ha.sequence);
        REQUIRE(a.on_ack(ack));
        REQUIRE(b.on_ack(ack));
      }
    }
  }
}

TEST_CASE("a relevance's list is checked once: invalid candidates are still refused by the encoder") {
  // Ids must be unique (QuantizedAgents::assign's precondition); a world breaking it gives a
  // tracked list that is not strictly increasing, which the relevance reports, so choose()
  // does not vouch for it and the encoder checks it and refuses. Flags of the wrong length too.
  const std::vector<std::uint32_t> ids = {5, 9, 9, 12};
  const std::vector<float> xs = {10, 11, 12, 13}, ys = {10, 10, 10, 10}, hs = {0, 0, 0, 0};
  sp::QuantizedAgents q;
  q.assign(ids, xs, ys, hs, {}, 1.0f);
  const sp::QuantizedRect view = sp::quantize_view(0, 0, 64, 64, 0, 1.0f);
  sp::RelevanceParams params;
  sp::ViewRelevance relevance;
  relevance.compute(q, view, params);
  REQUIRE(relevance.tracked().size() == 4);
  CHECK_FALSE(relevance.tracked_valid());
  sp::SnapshotSelector selector;
  sp::DensityGrid grid;
  sp::SnapshotSender sender;
  const sp::CandidateSelection chosen =
      selector.choose(relevance, view, sender.next_baseline(), 1, 1e9, params, grid);
  CHECK_FALSE(chosen.checked);
  sp::SnapshotHeader h;
  h.tick = 1;
  std::vector<std::uint8_t> payload;
  CHECK_FALSE(sender.encode(h, chosen, grid, payload));
  // Unique ids: checked, encoded; flags of another length: refused.
  const std::vector<std::uint32_t> unique = {5, 9, 10, 12};
  q.assign(unique, xs, ys, hs, {}, 1.0f);
  relevance.compute(q, view, params);
  CHECK(relevance.tracked_valid());
  const sp::CandidateSelection ok = selector.choose(relevance, view, sender.next_baseline(), 1, 1e9, params, grid);
  CHECK(ok.checked);
  sp::CandidateSelection short_flags = ok;
  short_flags.send = ok.send.first(ok.send.size() - 1);
  CHECK_FALSE(sender.encode(h, short_flags, grid, payload));
  CHECK(sender.encode(h, ok, grid, payload));
}
