// Wrapping sequence comparison, 32 -> 64 bit extension and the replay window, including the
// "input freeze" of one value ~2^31 ahead and a seeded comparison against a reference model.
#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <set>

#include "swarmfield/protocol/transport/sequence.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
using Verdict = sp::ReplayWindow::Verdict;

TEST_CASE("sequence_newer handles wrap-around") {
  CHECK(sp::sequence_newer(2, 1));
  CHECK_FALSE(sp::sequence_newer(1, 2));
  CHECK_FALSE(sp::sequence_newer(5, 5));
  CHECK(sp::sequence_newer(0, 0xFFFFFFFFu));
  CHECK(sp::sequence_newer(3, 0xFFFFFFF0u));
  CHECK_FALSE(sp::sequence_newer(0xFFFFFFF0u, 3));
}

TEST_CASE("sequence_advances: forward by a bounded step only, across the wrap too") {
  CHECK(sp::sequence_advances(11, 10));
  CHECK(sp::sequence_advances(10 + sp::kMaxSequenceJump, 10));
  CHECK_FALSE(sp::sequence_advances(10 + sp::kMaxSequenceJump + 1, 10));
  CHECK_FALSE(sp::sequence_advances(10, 10));
  CHECK_FALSE(sp::sequence_advances(9, 10));
  CHECK(sp::sequence_advances(2, 0xFFFFFFFEu));  // wrapped: 4 steps
  // The input freeze: one value ~2^31 ahead is "newer" by RFC 1982, and every genuine value
  // after it would be older. It does not advance the counter here.
  const std::uint32_t newest = 1000;
  const std::uint32_t hostile = newest + 0x7FFFFFF0u;
  CHECK(sp::sequence_newer(hostile, newest));
  CHECK_FALSE(sp::sequence_advances(hostile, newest));
  CHECK(sp::sequence_advances(newest + 1, newest));
}

TEST_CASE("extend_sequence keeps counting across 2^32 and picks the value nearest the reference") {
  constexpr std::uint64_t kEpoch = std::uint64_t{1} << 32;
  CHECK(sp::extend_sequence(5, 0) == 5);
  CHECK(sp::extend_sequence(0xFFFFFFFFu, 0) == 0xFFFFFFFFu);  // nothing below epoch 0
  CHECK(sp::extend_sequence(2, kEpoch - 3) == kEpoch + 2);     // just wrapped
  CHECK(sp::extend_sequence(0xFFFFFFFEu, kEpoch + 1) == kEpoch - 2);  // a late one from before the wrap
  CHECK(sp::extend_sequence(7, 5 * kEpoch + 100) == 5 * kEpoch + 7);
  CHECK(sp::extend_sequence(0x90000000u, 5 * kEpoch + 100) == 4 * kEpoch + 0x90000000u);
  CHECK(sp::extend_sequence(0x70000000u, 5 * kEpoch + 100) == 5 * kEpoch + 0x70000000u);
}

TEST_CASE("replay window: each value once, nothing far behind or far ahead") {
  sp::ReplayWindow w(1000);
  CHECK(w.check(0) == Verdict::kTooOld);  // never sent
  CHECK(w.check(1) == Verdict::kFresh);
  w.accept(1);
  CHECK(w.check(1) == Verdict::kDuplicate);
  CHECK(w.check(1001) == Verdict::kFresh);
  CHECK(w.check(1002) == Verdict::kTooFarAhead);
  w.accept(5);
  w.accept(3);  // late but within the window
  CHECK(w.check(3) == Verdict::kDuplicate);
  CHECK(w.check(4) == Verdict::kFresh);
  CHECK(w.newest() == 5);
  w.accept(5 + sp::ReplayWindow::kWindow);
  CHECK(w.check(5) == Verdict::kTooOld);
  CHECK(w.check(6) == Verdict::kFresh);  // inside the window and never seen
  CHECK(w.check(5 + sp::ReplayWindow::kWindow) == Verdict::kDuplicate);
  w.reset();
  CHECK(w.check(3) == Verdict::kFresh);
}

TEST_CASE("replay window across the 32-bit wrap, fed from wire sequences") {
  constexpr std::uint64_t kEpoch = std::uint64_t{1} << 32;
  sp::ReplayWindow w(std::numeric_limits<std::uint64_t>::max());
  w.accept(kEpoch - 10);
  for (std::uint64_t s = kEpoch - 9; s < kEpoch + 10; ++s) {
    const std::uint64_t extended = w.extend(static_cast<std::uint32_t>(s));
    CHECK(extended == s);
    CHECK(w.check(extended) == Verdict::kFresh);
    w.accept(extended);
  }
  // A replay of a value from before the wrap is recognised, not taken for a new epoch.
  CHECK(w.check(w.extend(static_cast<std::uint32_t>(kEpoch - 5))) == Verdict::kDuplicate);
}

TEST_CASE("replay window agrees with a set-based model on seeded random traffic") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("replay window seed " << seed);
  std::mt19937_64 rng(seed);
  constexpr std::uint64_t kJump = 5000;
  sp::ReplayWindow w(kJump);
  std::set<std::uint64_t> accepted;
  std::uint64_t newest = 0;
  for (int i = 0; i < 200000; ++i) {
    // Mostly near the newest, sometimes far behind or ahead.
    const std::int64_t offset = static_cast<std::int64_t>(rng() % 3000) - 2000 +
                                ((rng() % 50 == 0) ? static_cast<std::int64_t>(rng() % 20000) - 10000 : 0);
    const std::int64_t candidate = static_cast<std::int64_t>(newest) + offset;
    if (candidate < 0) continue;
    const auto s = static_cast<std::uint64_t>(candidate);
    Verdict expected;
    if (s > newest) {
      expected = s - newest > kJump ? Verdict::kTooFarAhead : Verdict::kFresh;
    } else if (s == 0 || newest - s >= sp::ReplayWindow::kWindow) {
      expected = Verdict::kTooOld;
    } else {
      expected = accepted.count(s) ? Verdict::kDuplicate : Verdict::kFresh;
    }
    REQUIRE(w.check(s) == expected);
    if (expected == Verdict::kFresh) {
      w.accept(s);
      accepted.insert(s);
      newest = std::max(newest, s);
    }
  }
  CHECK(w.newest() == newest);
}
