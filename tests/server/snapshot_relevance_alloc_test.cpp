// The shared relevances of a snapshot tick (SnapshotWorldState::relevance, issue 22 item 4)
// allocate nothing once warm, and however the clients' rectangles vary from tick to tick their
// allocations stay bounded (each of the at most kMaxRelevancesPerTick relevances grows its
// vectors geometrically up to max_tracked agents and a 64 x 64 grid; the O(world) working
// memory is shared). Replaces the global operator new with a counting one, which is why this
// test is an executable of its own.
#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "allocation_counter.hpp"
#include "swarmfield/server/snapshot_builder.hpp"

using namespace swarmfield;

namespace {

struct Scene {
  std::vector<std::uint32_t> ids;
  std::vector<float> xs, ys, hs;
  server::SnapshotWorldState world;
  protocol::RelevanceParams params;

  Scene() {
    std::mt19937 rng(21);
    std::uniform_real_distribution<float> u(0.0f, 512.0f);
    for (std::uint32_t i = 0; i < 20000; ++i) {
      ids.push_back(i * 2 + 1);
      xs.push_back(u(rng));
      ys.push_back(u(rng));
      hs.push_back(0.0f);
    }
  }
  // One snapshot tick: 60 whole-map rectangles one cell apart, then 100 random ones from
  // `rectangles` (the bound stops the computations), asked for as ClientSnapshotStream::prepare
  // asks. Returns the relevances computed.
  std::size_t tick(std::uint32_t t, std::mt19937& rectangles) {
    world.assign(server::AgentArrays{ids, xs, ys, hs}, {}, t, 0, 1.0f);
    world.set_map_size(512, 512);
    for (int v = 0; v < 60; ++v) {
      const auto x = static_cast<float>(v);
      static_cast<void>(world.relevance(protocol::quantize_view(x, 0, 512.0f + x, 512.0f, 4, 1.0f), params));
    }
    std::uniform_real_distribution<float> corner(-8.0f, 520.0f);
    for (int v = 0; v < 100; ++v) {
      const float x0 = corner(rectangles), y0 = corner(rectangles), x1 = corner(rectangles), y1 = corner(rectangles);
      static_cast<void>(world.relevance(protocol::quantize_view(x0, y0, x1, y1, 4, 1.0f), params));
    }
    return world.relevances_computed();
  }
};

}  // namespace

TEST_CASE("snapshot relevances: no allocation once warm when the rectangles repeat") {
  Scene scene;
  for (std::uint32_t t = 1; t <= 3; ++t) {
    std::mt19937 same(5);
    static_cast<void>(scene.tick(t, same));
  }
  const std::size_t before = g_allocations.load();
  std::size_t computed = 0;
  for (std::uint32_t t = 4; t <= 13; ++t) {
    std::mt19937 same(5);  // the same rectangles every tick
    computed += scene.tick(t, same);
  }
  const std::size_t allocations = g_allocations.load() - before;  // before doctest's messages allocate
  CHECK(allocations == 0);
  MESSAGE((static_cast<double>(computed) / 10.0) << " relevances per tick");
}

TEST_CASE("snapshot relevances: allocations stay bounded however the rectangles vary") {
  Scene scene;
  std::mt19937 varying(6);
  std::size_t first = 0, last = 0;
  for (std::uint32_t t = 1; t <= 400; ++t) {
    const std::size_t a0 = g_allocations.load();
    static_cast<void>(scene.tick(t, varying));
    (t <= 200 ? first : last) += g_allocations.load() - a0;
  }
  MESSAGE(first << " allocations in ticks 1..200, " << last << " in 201..400");
  // Per relevance slot, about 6 vectors that each double at most 17 times.
  CHECK(first + last <= server::SnapshotWorldState::kMaxRelevancesPerTick * 6 * 17);
  CHECK(last < first);
}
