// Snapshot fragments: every datagram fits 1200 bytes with the transport's overhead; payloads
// reassemble under reordering and duplicates; malformed, stale and inconsistent fragments are
// dropped; memory and age are bounded; a lost fragment costs one snapshot only.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;

namespace {

std::vector<std::uint8_t> payload_of(std::size_t n, std::uint8_t salt) {
  std::vector<std::uint8_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint8_t>(i * 31 + salt);
  return p;
}

}  // namespace

TEST_CASE("fragments fit the datagram limit and reassemble in any order, with duplicates") {
  std::mt19937_64 rng(sp::test::test_seed());
  sp::FragmentAssembler a;
  std::vector<std::vector<std::uint8_t>> frags;
  std::uint32_t seq = 1;
  for (std::size_t n : {std::size_t{1}, sp::kFragmentPayloadBytes, sp::kFragmentPayloadBytes + 1, std::size_t{50000},
                        sp::kMaxFragmentedSnapshotBytes}) {
    const auto p = payload_of(n, static_cast<std::uint8_t>(seq));
    const std::size_t count = sp::split_snapshot(p, seq, frags);
    REQUIRE(count == (n + sp::kFragmentPayloadBytes - 1) / sp::kFragmentPayloadBytes);
    std::vector<std::vector<std::uint8_t>> shuffled(frags.begin(), frags.begin() + static_cast<std::ptrdiff_t>(count));
    for (const auto& f : shuffled) CHECK(f.size() + sp::kPacketOverheadBytes <= sp::kMaxDatagramBytes);
    shuffled.push_back(shuffled.front());  // a duplicate
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::optional<std::vector<std::uint8_t>> got;
    for (const auto& f : shuffled) {
      const auto whole = a.add(f);
      if (whole) got.emplace(whole->begin(), whole->end());
    }
    REQUIRE(got.has_value());
    CHECK(*got == p);
    ++seq;
  }
  CHECK(sp::split_snapshot(payload_of(sp::kMaxFragmentedSnapshotBytes + 1, 0), 9, frags) == 0);
  CHECK(sp::split_snapshot({}, 9, frags) == 0);
}

TEST_CASE("a lost fragment costs its snapshot only; the next one completes") {
  sp::FragmentAssembler a;
  std::vector<std::vector<std::uint8_t>> frags;
  const auto p1 = payload_of(3000, 1), p2 = payload_of(3000, 2);
  REQUIRE(sp::split_snapshot(p1, 1, frags) == 3);
  CHECK_FALSE(a.add(frags[0]));
  CHECK_FALSE(a.add(frags[2]));  // fragment 1 lost
  REQUIRE(sp::split_snapshot(p2, 2, frags) == 3);
  CHECK_FALSE(a.add(frags[0]));
  CHECK_FALSE(a.add(frags[1]));
  const auto whole = a.add(frags[2]);
  REQUIRE(whole.has_value());
  CHECK(std::vector<std::uint8_t>(whole->begin(), whole->end()) == p2);
  CHECK(a.assembling() == 0);  // snapshot 1 abandoned: it can never be delivered now
  CHECK(a.abandoned() == 1);
  // A late fragment of snapshot 1 is stale.
  REQUIRE(sp::split_snapshot(p1, 1, frags) == 3);
  CHECK_FALSE(a.add(frags[1]));
  CHECK(a.stale() == 1);
}

TEST_CASE("malformed fragments are counted and dropped") {
  sp::FragmentAssembler a;
  auto frag = [](std::uint32_t seq, std::uint8_t index, std::uint8_t count, std::size_t body) {
    std::vector<std::uint8_t> f{static_cast<std::uint8_t>(seq), 0, 0, 0, index, count};
    f.resize(f.size() + body, 0xAA);
    return f;
  };
  CHECK_FALSE(a.add(std::vector<std::uint8_t>{1, 0, 0, 0, 0, 1}));              // no body
  CHECK_FALSE(a.add(frag(1, 0, 0, 10)));                                        // count 0
  CHECK_FALSE(a.add(frag(1, 2, 2, 10)));                                        // index >= count
  CHECK_FALSE(a.add(frag(1, 0, sp::kMaxFragmentsPerSnapshot + 1, 10)));         // too many
  CHECK_FALSE(a.add(frag(1, 0, 2, 10)));                                        // short non-last
  CHECK_FALSE(a.add(frag(1, 1, 2, sp::kFragmentPayloadBytes + 1)));             // body too big
  CHECK(a.malformed() == 6);
  CHECK_FALSE(a.add(frag(1, 1, 2, 10)));  // fine: the last of 2
  CHECK_FALSE(a.add(frag(1, 0, 3, sp::kFragmentPayloadBytes)));                 // count disagrees
  CHECK(a.malformed() == 7);
  CHECK(a.add(frag(1, 0, 2, sp::kFragmentPayloadBytes)).has_value());
}

TEST_CASE("at most kMaxAssembling partial snapshots; old ones age out") {
  sp::FragmentAssembler a;
  std::vector<std::vector<std::uint8_t>> frags;
  const auto p = payload_of(3000, 7);
  for (std::uint32_t seq = 1; seq <= 10; ++seq) {
    REQUIRE(sp::split_snapshot(p, seq, frags) == 3);
    CHECK_FALSE(a.add(frags[0]));
    CHECK(a.assembling() <= sp::kMaxAssembling);
  }
  CHECK(a.abandoned() == 10 - sp::kMaxAssembling);
  // Far behind the newest fragment seen: stale.
  REQUIRE(sp::split_snapshot(p, 1, frags) == 3);
  CHECK_FALSE(a.add(frags[1]));
  CHECK(a.stale() >= 1);
  REQUIRE(sp::split_snapshot(p, 10 + sp::kMaxFragmentAgeSequences + 1, frags) == 3);
  CHECK_FALSE(a.add(frags[0]));
  CHECK(a.assembling() == 1);  // everything older than the age limit went
}
