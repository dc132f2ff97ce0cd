// Snapshot history: frames come back intact by sequence; a slot reused by a newer sequence or
// agents overwritten in the circular pool make a frame unavailable, never wrong.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <span>

#include "swarmfield/protocol/snapshot/snapshot_history.hpp"

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

TEST_CASE("reserve gives room clear of every frame still available, never over the kept frame; commit stores it") {
  sp::SnapshotHistory h(250);
  CHECK(h.reserve(100, sp::AgentFrameView::empty()).empty());  // the pool has not grown yet
  REQUIRE(h.store(make_frame(1, 100)));
  REQUIRE(h.store(make_frame(2, 100)));  // the pool is now 200 entries
  const auto f2 = h.find(2);
  REQUIRE(f2.has_value());
  CHECK(h.reserve(251, *f2).empty());  // larger than the capacity
  // In the ring the next frame starts at its front (address 250), over frame 1 only once it
  // holds agents: frame 1 stays available until then, so there is no room without growing.
  CHECK(h.reserve(100, *f2).empty());
  CHECK(h.pool_allocated() == 200);
  h.grow_for(100);  // past both frames
  CHECK(h.pool_allocated() == 300);
  const auto f2_moved = h.find(2);  // growing moved the pool
  REQUIRE(f2_moved.has_value());
  const std::span<sp::AgentState> room = h.reserve(50, *f2_moved);
  REQUIRE(room.size() == 50);
  CHECK(room.data() == f2_moved->agents.data() + 100);  // right after frame 2
  const sp::AgentFrame want = make_frame(3, 40);
  std::copy(want.agents.begin(), want.agents.end(), room.begin());
  h.commit(3, want.tick, want.agents.size(), want.grid);  // ring addresses 200..240
  sp::AgentFrame copy;
  const auto f3 = h.find(3);
  REQUIRE(f3.has_value());
  f3->copy_to(copy);
  CHECK(copy == want);
  // Frame 4 (120 agents) starts at the ring's front (address 250) and ends at 370: frames 1
  // (0..100) and 2 (100..200) are overwritten there, so it reuses their memory; frame 3 stays.
  REQUIRE(h.store(make_frame(4, 120)));
  CHECK(h.pool_allocated() == 300);
  const auto f4 = h.find(4);
  REQUIRE(f4.has_value());
  CHECK(f4->agents.data() == h.find(3)->agents.data() - 200);  // at the pool's front
  f4->copy_to(copy);
  CHECK(copy == make_frame(4, 120));
  CHECK_FALSE(h.find(1).has_value());  // overwritten in the ring
  CHECK_FALSE(h.find(2).has_value());
  const auto still3 = h.find(3);
  REQUIRE(still3.has_value());
  still3->copy_to(copy);
  CHECK(copy == make_frame(3, 40));
}

namespace {

// Stores 3000 frames of mixed sizes (by store() and by reserve()/commit() at random) and checks
// after each that find() agrees with a reference model of the fixed-capacity ring (frame
// addresses and the overwrite rule) and returns the frames intact. Returns the largest
// pool_allocated() seen.
std::size_t check_against_ring(sp::HistoryPool pool) {
  const std::size_t capacity = 1000;
  sp::SnapshotHistory h(capacity, pool);
  std::size_t most_allocated = h.pool_allocated();
  std::uint64_t head = 0;
  std::array<std::uint64_t, sp::kSnapshotHistorySize> begin{};
  std::array<std::uint32_t, sp::kSnapshotHistorySize> seq{};
  std::array<std::size_t, sp::kSnapshotHistorySize> size{};
  std::uint32_t state = 12345;
  const auto next = [&](std::uint32_t mod) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % mod;
  };
  const auto ring_begin = [&](std::size_t n) {
    const std::size_t at = head % capacity;
    return at + n > capacity ? head + (capacity - at) : head;
  };
  for (std::uint32_t s = 1; s <= 3000; ++s) {
    // Mostly small frames (a bot's view), now and then one of up to 400 agents.
    const std::size_t n = next(10) == 0 ? next(401) : next(60);
    const sp::AgentFrame f = make_frame(s, n);
    const std::size_t room_size = n + next(40);  // reserve() asks for at most, commits n
    const std::span<sp::AgentState> room = next(2) == 0 ? h.reserve(room_size, sp::AgentFrameView::empty())
                                                        : std::span<sp::AgentState>{};
    std::uint64_t b = 0;
    if (!room.empty()) {
      std::copy(f.agents.begin(), f.agents.end(), room.begin());
      b = ring_begin(room_size);
      h.commit(s, f.tick, n, f.grid);
    } else {
      b = ring_begin(n);
      REQUIRE(h.store(f));
    }
    const auto i = s % sp::kSnapshotHistorySize;
    begin[i] = b;
    seq[i] = s;
    size[i] = n;
    head = b + n;
    most_allocated = std::max(most_allocated, h.pool_allocated());
    for (std::uint32_t back = 0; back < sp::kSnapshotHistorySize && back < s; ++back) {
      const std::uint32_t q = s - back;
      const auto j = q % sp::kSnapshotHistorySize;
      const bool expected = seq[j] == q && head <= begin[j] + capacity;
      const auto v = h.find(q);
      REQUIRE(v.has_value() == expected);
      if (expected) {
        sp::AgentFrame copy;
        v->copy_to(copy);
        REQUIRE(copy == make_frame(q, size[j]));
      }
    }
  }
  return most_allocated;
}

}  // namespace

TEST_CASE("availability follows the fixed ring exactly while memory follows the available frames") {
  // Memory: at most about twice what the ring can keep available.
  CHECK(check_against_ring(sp::HistoryPool::kOnDemand) <= 2 * 1000 + 400);
}

TEST_CASE("a fixed pool keeps the same availability in exactly its capacity, allocated once") {
  CHECK(check_against_ring(sp::HistoryPool::kFixed) == 1000);
}

TEST_CASE("a fixed pool is taken whole with the first frame that holds agents, not before") {
  sp::SnapshotHistory h(5000, sp::HistoryPool::kFixed);
  for (std::uint32_t s = 1; s <= 3; ++s) REQUIRE(h.store(make_frame(s, 0)));  // nothing in view
  CHECK(h.pool_allocated() == 0);
  CHECK(h.find(3).has_value());
  REQUIRE(h.store(make_frame(4, 10)));
  CHECK(h.pool_allocated() == 5000);
  const sp::AgentState* base = h.find(4)->agents.data();  // ring address 0: the pool's front
  for (std::uint32_t s = 5; s <= 200; ++s) {
    REQUIRE(h.store(make_frame(s, 10 * s)));
    CHECK(h.pool_allocated() == 5000);  // frames of up to 2000 agents: never grown
    const auto v = h.find(s);
    REQUIRE(v.has_value());
    const std::ptrdiff_t at = v->agents.data() - base;  // in the same block, never moved
    CHECK(at >= 0);
    CHECK(at + static_cast<std::ptrdiff_t>(v->agents.size()) <= 5000);
  }
}

TEST_CASE("a client sent small frames keeps a small pool, not the whole capacity") {
  sp::SnapshotHistory h(8 * 16384);  // the server's default capacity
  for (std::uint32_t s = 1; s <= 2000; ++s) {
    REQUIRE(h.store(make_frame(s, 300)));
    const auto newest = h.find(s);
    REQUIRE(newest.has_value());
  }
  for (std::uint32_t back = 0; back < sp::kSnapshotHistorySize; ++back) CHECK(h.find(2000 - back).has_value());
  // 32 frames of 300 agents are available; the fixed ring would have grown to 131072 entries.
  CHECK(h.pool_allocated() <= 2 * (sp::kSnapshotHistorySize + 1) * 300);
}
