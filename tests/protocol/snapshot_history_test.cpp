// Snapshot history: frames come back intact by sequence; a slot reused by a newer sequence or
// agents overwritten in the circular pool make a frame unavailable, never wrong.
#include <doctest/doctest.h>

#include "swarmfield/protocol/snapshot_history.hpp"

namespace sp = swarmfield::protocol;

namespace {

sp::AgentFrame make_frame(std::uint32_t sequence, std::size_t n) {
  sp::AgentFrame f;
  f.sequence = sequence;
  f.tick = sequence * 2;
  for (std::size_t i = 0; i < n; ++i) {
    f.agents.push_back(sp::AgentState{static_cast<std::uint32_t>(i * 3 + sequence), static_cast<std::uint32_t>(i + sequence),
                                      static_cast<std::uint32_t>(i * 2), sequence, static_cast<std::int16_t>(i), -1,
                                      static_cast<std::uint8_t>(i), static_cast<std::uint8_t>(sequence)});
  }
  sp::set_density_grid_geometry(f.grid, 0, 0, static_cast<std::int32_t>(10 + sequence), 10);
  return f;
}

}  // namespace

TEST_CASE("stored frames come back equal by sequence") {
  sp::SnapshotHistory h(1000);
  for (std::uint32_t s = 1; s <= 5; ++s) REQUIRE(h.store(make_frame(s, 100)));
  for (std::uint32_t s = 1; s <= 5; ++s) {
    const auto v = h.find(s);
    REQUIRE(v.has_value());
    sp::AgentFrame copy;
    v->copy_to(copy);
    CHECK(copy == make_frame(s, 100));
  }
  CHECK_FALSE(h.find(6).has_value());
  CHECK_FALSE(h.find(0).has_value());
}

TEST_CASE("a ring slot reused by sequence + 32 hides the older frame") {
  sp::SnapshotHistory h(100000);
  REQUIRE(h.store(make_frame(3, 10)));
  REQUIRE(h.store(make_frame(3 + sp::kSnapshotHistorySize, 10)));
  CHECK_FALSE(h.find(3).has_value());
  CHECK(h.find(3 + sp::kSnapshotHistorySize).has_value());
}

TEST_CASE("frames whose agents the pool overwrote are unavailable; newer ones stay intact") {
  sp::SnapshotHistory h(250);
  for (std::uint32_t s = 1; s <= 10; ++s) {
    REQUIRE(h.store(make_frame(s, 100)));
    // At most two frames of 100 fit in 250 entries (each frame is kept contiguous).
    for (std::uint32_t old = 1; old + 2 <= s; ++old) CHECK_FALSE(h.find(old).has_value());
    const auto v = h.find(s);
    REQUIRE(v.has_value());
    sp::AgentFrame copy;
    v->copy_to(copy);
    CHECK(copy == make_frame(s, 100));
    if (s > 1) {
      const auto prev = h.find(s - 1);
      if (prev) {
        prev->copy_to(copy);
        CHECK(copy == make_frame(s - 1, 100));
      }
    }
  }
  CHECK_FALSE(h.store(make_frame(11, 251)));  // larger than the pool
  h.clear();
  CHECK_FALSE(h.find(10).has_value());
}
