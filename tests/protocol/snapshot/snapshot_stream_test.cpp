// Sender and receiver: acks move the baseline forward; lost snapshots and lost acks fall back to
// older baselines or a full snapshot; duplicates and stale snapshots are dropped; hostile acks
// are ignored; a reliable sender deltas against the previous snapshot.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "snapshot_test_support.hpp"
#include "swarmfield/protocol/transport/snapshot_ack.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
using Result = sp::SnapshotReceiver::Result;

TEST_CASE("acks record the newest sequence and the 32 before it") {
  sp::SnapshotAck a;
  CHECK_FALSE(a.has(1));
  a.add(5);
  CHECK(a.latest == 5);
  CHECK(a.received == 0);
  a.add(3);
  CHECK(a.has(3));
  CHECK_FALSE(a.has(4));
  a.add(7);
  CHECK(a.has(7));
  CHECK(a.has(5));
  CHECK(a.has(3));
  CHECK_FALSE(a.has(6));
  a.add(7 + 32);
  CHECK(a.has(7));  // exactly 32 back
  CHECK_FALSE(a.has(5));
  a.add(200);
  CHECK(a.received == 0);
  a.add(200 - 40);  // too old to record
  CHECK(a.received == 0);
  CHECK_FALSE(a.has(0));
}

TEST_CASE("the sender deltas against the newest acknowledged frame") {
  sp::test::SyntheticCrowd crowd(400, sp::test::test_seed());
  sp::SnapshotSender sender(100000);
  sp::SnapshotReceiver receiver(100000);
  sp::AgentCandidates c;
  std::vector<std::uint8_t> payload;
  std::uint32_t tick = 0;
  auto send = [&] {
    crowd.step(1);
    crowd.candidates(c);
    sp::SnapshotHeader h;
    h.tick = ++tick;
    REQUIRE(sender.encode(h, c, {}, payload));
    return h;
  };
  sp::SnapshotHeader h = send();
  CHECK(h.baseline_distance == 0);  // nothing acked: full
  REQUIRE(receiver.receive(payload) == Result::kDecoded);
  CHECK(receiver.frame() == sender.last_frame());
  h = send();
  CHECK(h.baseline_distance == 0);  // the ack has not arrived yet
  REQUIRE(receiver.receive(payload) == Result::kDecoded);
  REQUIRE(sender.on_ack(receiver.ack()));
  h = send();
  CHECK(h.baseline_distance == 1);
  REQUIRE(receiver.receive(payload) == Result::kDecoded);
  CHECK(receiver.frame() == sender.last_frame());
  // Lose the next two: the receiver cannot ack them, the sender keeps its baseline.
  send();
  send();
  REQUIRE(sender.on_ack(receiver.ack()));
  h = send();
  CHECK(h.baseline_distance == 3);
  REQUIRE(receiver.receive(payload) == Result::kDecoded);
  CHECK(receiver.frame() == sender.last_frame());
  // A duplicate is stale.
  CHECK(receiver.receive(payload) == Result::kStale);
}

TEST_CASE("common_acks: the sequences both acks report") {
  sp::SnapshotAck a, b;
  CHECK(sp::common_acks(a, b).latest == 0);  // none yet on one side: nothing in common
  for (std::uint32_t s : {1u, 2u, 4u, 5u, 7u}) a.add(s);
  for (std::uint32_t s : {2u, 3u, 5u, 6u}) b.add(s);
  const sp::SnapshotAck c = sp::common_acks(a, b);
  CHECK(c.latest == 5);
  CHECK(c.has(2));
  CHECK_FALSE(c.has(1));
  CHECK_FALSE(c.has(3));
  CHECK_FALSE(c.has(4));
  CHECK_FALSE(c.has(6));
  CHECK(sp::common_acks(c, c) == c);
  // 32 back from the older latest is the window.
  sp::SnapshotAck old, late;
  old.add(10);
  late.add(10);
  late.add(40);
  CHECK(sp::common_acks(old, late).latest == 10);
  late.add(43);  // 10 is 33 back now: forgotten
  CHECK(sp::common_acks(old, late).latest == 0);
}

TEST_CASE("a stream shared by two receivers deltas against the newest frame both acknowledged") {
  sp::test::SyntheticCrowd crowd(400, sp::test::test_seed());
  sp::SnapshotSender sender(100000);
  sp::SnapshotReceiver a(100000), b(100000);
  sp::AgentCandidates c;
  std::vector<std::uint8_t> payload;
  std::uint32_t tick = 0;
  std::size_t decoded = 0;
  // Every snapshot reaches a; b loses every third. The baseline is always one both hold, so
  // each snapshot decodes at both ends whatever the losses.
  for (int i = 0; i < 30; ++i) {
    sender.set_acks(sp::common_acks(a.ack(), b.ack()));
    crowd.step(1);
    crowd.candidates(c);
    sp::SnapshotHeader h;
    h.tick = ++tick;
    REQUIRE(sender.encode(h, c, {}, payload));
    REQUIRE(a.receive(payload) == Result::kDecoded);
    CHECK(a.frame() == sender.last_frame());
    if (i % 3 != 2) {
      REQUIRE(b.receive(payload) == Result::kDecoded);
      CHECK(b.frame() == sender.last_frame());
      ++decoded;
    }
    if (i > 2) {
      CHECK(h.baseline_distance != 0);
      // Against what b lacks, never: after a loss the baseline goes back past it.
      CHECK(b.ack().has(h.sequence - h.baseline_distance));
    }
  }
  CHECK(decoded == 20);
  // Acks of sequences not sent are dropped by set_acks.
  sp::SnapshotAck future;
  future.add(sender.next_sequence() + 5);
  sender.set_acks(future);
  CHECK(sender.newest_acked() == 0);
  CHECK(sender.next_baseline().size() == 0);
}

TEST_CASE("a snapshot whose baseline the receiver lacks is not decoded and not acked") {
  sp::test::SyntheticCrowd crowd(100, sp::test::test_seed());
  sp::SnapshotSender sender(100000);
  sp::SnapshotReceiver receiver(100000);
  sp::AgentCandidates c;
  crowd.candidates(c);
  std::vector<std::uint8_t> payload;
  sp::SnapshotHeader h;
  h.tick = 1;
  REQUIRE(sender.encode(h, c, {}, payload));
  // A lying ack: claims sequence 1 although the receiver never got it.
  sp::SnapshotAck lie;
  lie.add(1);
  REQUIRE(sender.on_ack(lie));
  h.tick = 2;
  REQUIRE(sender.encode(h, c, {}, payload));
  CHECK(h.baseline_distance == 1);
  std::string error;
  CHECK(receiver.receive(payload, &error) == Result::kNoBaseline);
  CHECK(receiver.ack().latest == 0);
}

TEST_CASE("acks of sequences never sent are ignored") {
  sp::SnapshotSender sender(1000);
  sp::SnapshotAck a;
  a.add(5);
  CHECK_FALSE(sender.on_ack(a));
  CHECK(sender.newest_acked() == 0);
  CHECK(sender.next_baseline().size() == 0);
}

TEST_CASE("after more than 32 unacknowledged snapshots the sender starts over with a full one") {
  sp::test::SyntheticCrowd crowd(50, sp::test::test_seed());
  sp::SnapshotSender sender(100000);
  sp::SnapshotReceiver receiver(100000);
  sp::AgentCandidates c;
  std::vector<std::uint8_t> payload;
  crowd.candidates(c);
  sp::SnapshotHeader h;
  h.tick = 1;
  REQUIRE(sender.encode(h, c, {}, payload));
  REQUIRE(receiver.receive(payload) == Result::kDecoded);
  REQUIRE(sender.on_ack(receiver.ack()));
  for (std::uint32_t t = 2; t < 40; ++t) {
    h.tick = t;
    REQUIRE(sender.encode(h, c, {}, payload));
    if (t <= sp::kSnapshotHistorySize + 1) {  // distance 32 is the farthest baseline
      CHECK(h.baseline_distance == t - 1);
    } else {
      CHECK(h.baseline_distance == 0);
    }
  }
  REQUIRE(receiver.receive(payload) == Result::kDecoded);
  CHECK(receiver.frame() == sender.last_frame());
}

TEST_CASE("a reliable sender deltas against the previous snapshot without acks") {
  sp::test::SyntheticCrowd crowd(100, sp::test::test_seed());
  sp::SnapshotSender sender(100000, /*reliable=*/true);
  sp::SnapshotReceiver receiver(100000);
  sp::AgentCandidates c;
  std::vector<std::uint8_t> payload;
  for (std::uint32_t t = 1; t < 10; ++t) {
    crowd.step(1);
    crowd.candidates(c);
    sp::SnapshotHeader h;
    h.tick = t;
    REQUIRE(sender.encode(h, c, {}, payload));
    CHECK(h.baseline_distance == (t == 1 ? 0u : 1u));
    REQUIRE(receiver.receive(payload) == Result::kDecoded);
    CHECK(receiver.frame() == sender.last_frame());
  }
}

TEST_CASE("frames encoded straight into the history equal frames encoded apart and copied there") {
  // A small history (frames of ~300 agents, room for 2 of them): once its pool has grown, the
  // sender encodes into it unless the room would overlap the baseline; both ways must give the
  // payloads and frames of a plain encoder whose frames are kept apart.
  sp::test::SyntheticCrowd crowd(300, sp::test::test_seed());
  sp::SnapshotSender sender(800);
  sp::SnapshotReceiver receiver(100000);
  sp::SnapshotEncoder reference;
  sp::AgentFrame previous, next;
  sp::AgentCandidates c;
  std::vector<std::uint8_t> payload, expected;
  for (std::uint32_t tick = 1; tick <= 60; ++tick) {
    crowd.step(1, 1, tick % 3);                      // some agents leave, some arrive
    crowd.candidates(c, tick % 4 == 0 ? 100 : 60);  // partly stale
    sp::SnapshotHeader h;
    h.tick = tick;
    REQUIRE(sender.encode(h, c, {}, payload));
    CHECK(h.baseline_distance == (tick == 1 ? 0u : 1u));
    sp::SnapshotHeader r = h;
    REQUIRE(reference.encode(r, tick == 1 ? sp::AgentFrameView::empty() : sp::AgentFrameView::of(previous), c, {},
                             expected, next));
    CHECK(payload == expected);
    REQUIRE(receiver.receive(payload) == Result::kDecoded);
    CHECK(receiver.frame() == next);
    CHECK(sender.last_frame() == next);
    REQUIRE(sender.on_ack(receiver.ack()));
    std::swap(previous, next);
  }
}

TEST_CASE("a death is reported once: again in a later snapshot from an older baseline, or after a loss") {
  sp::SnapshotSender sender(1000);
  sp::SnapshotReceiver receiver(1000);
  std::vector<std::uint8_t> p1, p2, p3;
  sp::AgentCandidates all = {{1, 100, 100, 0, 0, 1}, {2, 200, 100, 0, 0, 1}, {3, 300, 100, 0, 0, 1}};
  sp::SnapshotHeader h;
  h.tick = 1;
  REQUIRE(sender.encode(h, all, {}, p1));
  REQUIRE(receiver.receive(p1) == Result::kDecoded);
  REQUIRE(sender.on_ack(receiver.ack()));
  // Agent 2 dies. Snapshot 2 (against 1) flags it; its ack is lost, so snapshot 3 is encoded
  // against frame 1 again and flags it again.
  const std::vector<std::uint32_t> died = {2};
  sender.set_recent_deaths(died);
  sp::AgentCandidates left = {{1, 101, 100, 0, 0, 1}, {3, 301, 100, 0, 0, 1}};
  h = {};
  h.tick = 2;
  REQUIRE(sender.encode(h, left, {}, p2));
  CHECK(sender.last_stats().died == 1);
  h = {};
  h.tick = 3;
  REQUIRE(sender.encode(h, left, {}, p3));
  CHECK(h.baseline_distance == 2);
  CHECK(sender.last_stats().died == 1);
  REQUIRE(receiver.receive(p2) == Result::kDecoded);
  REQUIRE(receiver.deaths().size() == 1);
  CHECK(receiver.deaths()[0].id == 2);
  CHECK(receiver.deaths()[0].x == 200);
  REQUIRE(receiver.receive(p3) == Result::kDecoded);
  CHECK(receiver.deaths().empty());  // already reported by snapshot 2
  // Had snapshot 2 been lost, snapshot 3 would have reported it.
  sp::SnapshotReceiver lossy(1000);
  REQUIRE(lossy.receive(p1) == Result::kDecoded);
  REQUIRE(lossy.receive(p3) == Result::kDecoded);
  REQUIRE(lossy.deaths().size() == 1);
  CHECK(lossy.deaths()[0].id == 2);
}
