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

TEST_CASE("reserve gives room at the head of a grown pool, never over the kept frame; commit stores it") {
  sp::SnapshotHistory h(250);
  CHECK(h.reserve(100, sp::AgentFrameView::empty()).empty());  // the pool has not grown yet
  REQUIRE(h.store(make_frame(1, 100)));
  REQUIRE(h.store(make_frame(2, 100)));  // the pool is now 200 entries; the head at 200
  // 100 more would straddle the capacity: the room starts at the front, over frame 1.
  const auto f2 = h.find(2);
  REQUIRE(f2.has_value());
  CHECK(h.reserve(251, *f2).empty());  // larger than the pool
  CHECK(h.reserve(101, *f2).empty());  // from the front, 0..101 overlaps frame 2 at 100..200
  CHECK(h.reserve(100, *f2).size() == 100);  // 0..100: clear of it (nothing written: no commit needed)
  REQUIRE(h.store(make_frame(3, 40)));  // grows the pool to its capacity (250); head at 240
  const auto f3 = h.find(3);
  REQUIRE(f3.has_value());
  CHECK(h.reserve(201, *f3).empty());  // from the front, 0..201 overlaps frame 3 at 200..240
  const std::span<sp::AgentState> room = h.reserve(150, *f3);
  REQUIRE(room.size() == 150);
  const sp::AgentFrame want = make_frame(4, 120);
  std::copy(want.agents.begin(), want.agents.end(), room.begin());
  h.commit(4, want.tick, want.agents.size(), want.grid);
  const auto f4 = h.find(4);
  REQUIRE(f4.has_value());
  sp::AgentFrame copy;
  f4->copy_to(copy);
  CHECK(copy == want);
  CHECK_FALSE(h.find(1).has_value());  // overwritten
  CHECK_FALSE(h.find(2).has_value());  // overwritten (0..120 overlaps 100..200)
  const auto still3 = h.find(3);
  REQUIRE(still3.has_value());
  still3->copy_to(copy);
  CHECK(copy == make_frame(3, 40));
}
