// The snapshot stream through a simulated bad network (25% loss, 25% duplicates, 100 ms jitter,
// so packets also reorder): server codec -> fragments -> network -> assembler -> client codec,
// acks back through the same network. At every snapshot the client decodes (and so acknowledges)
// its frame equals, bit for bit, the frame the server recorded for that sequence, and every agent
// sent in it carries exactly the quantized truth of that tick. Seeded: the seed is printed, and
// SWARMFIELD_TEST_SEED=<seed> replays a run.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "network_simulator.hpp"
#include "snapshot_test_support.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
using sp::test::NetworkConditions;
using sp::test::NetworkSimulator;

namespace {

constexpr int kServer = 0;
constexpr int kClient = 1;
constexpr double kTickMs = 1000.0 / 30.0;

struct RunResult {
  std::size_t sent = 0;
  std::size_t decoded = 0;
  std::size_t stale = 0;
  std::size_t no_baseline = 0;
  std::size_t malformed = 0;
  std::size_t deltas = 0;
  std::size_t checked_agents = 0;
  double longest_gap_ms = 0;
};

RunResult run(const NetworkConditions& net, std::uint64_t seed, std::size_t agents, int seconds) {
  NetworkSimulator sim(net, seed);
  sp::test::SyntheticCrowd crowd(agents, seed + 1);
  sp::SnapshotSender sender(64 * 1024);
  sp::SnapshotReceiver receiver(64 * 1024);
  sp::FragmentAssembler assembler;
  sp::AgentCandidates candidates;
  std::vector<std::uint8_t> payload;
  std::vector<std::vector<std::uint8_t>> fragments;
  // What the server sent, by sequence: its frame and the candidates (the truth) of that tick.
  std::map<std::uint32_t, std::pair<sp::AgentFrame, sp::AgentCandidates>> sent;
  RunResult r;
  double last_decode_ms = 0;
  const int ticks = seconds * 30;
  for (int tick = 1; tick <= ticks; ++tick) {
    const double now = tick * kTickMs;
    // Server: acks in, world step, a snapshot on 2 ticks out of 3 (20 Hz at 30 Hz).
    for (const auto& packet : sim.receive(kServer, now)) sender.on_ack(sp::test::parse_ack(packet));
    crowd.step(1, 2, 3);
    if ((tick * 2) / 3 != ((tick - 1) * 2) / 3) {
      crowd.candidates(candidates, 90);
      sp::SnapshotHeader h;
      h.tick = static_cast<std::uint32_t>(tick);
      REQUIRE(sender.encode(h, candidates, {}, payload));
      sent[h.sequence] = {sender.last_frame(), candidates};
      const std::size_t n = sp::split_snapshot(payload, h.sequence, fragments);
      REQUIRE(n > 0);
      for (std::size_t i = 0; i < n; ++i) {
        REQUIRE(fragments[i].size() + sp::kPacketOverheadBytes <= sp::kMaxDatagramBytes);
        sim.send(kClient, now, fragments[i]);
      }
      ++r.sent;
      if (h.baseline_distance != 0) ++r.deltas;
    }
    // Client: fragments in, decode, check, ack out (every tick, as inputs are).
    for (const auto& packet : sim.receive(kClient, now)) {
      const auto whole = assembler.add(packet);
      if (!whole) continue;
      std::string error;
      switch (receiver.receive(*whole, &error)) {
        case sp::SnapshotReceiver::Result::kDecoded: {
          ++r.decoded;
          r.longest_gap_ms = std::max(r.longest_gap_ms, now - last_decode_ms);
          last_decode_ms = now;
          const auto& [frame, truth] = sent.at(receiver.header().sequence);
          REQUIRE(receiver.frame() == frame);
          // Agents sent in this snapshot carry the truth of its tick exactly.
          std::size_t f = 0;
          for (const sp::AgentCandidate& t : truth) {
            if (!t.send) continue;
            while (f < frame.size() && frame.agents[f].id < t.id) ++f;
            REQUIRE(f < frame.size());
            const sp::AgentState& a = frame.agents[f];
            REQUIRE(a.id == t.id);
            REQUIRE(a.x == t.x);
            REQUIRE(a.y == t.y);
            REQUIRE(a.heading == t.heading);
            REQUIRE(a.kind == t.kind);
            ++r.checked_agents;
          }
          break;
        }
        case sp::SnapshotReceiver::Result::kStale: ++r.stale; break;
        case sp::SnapshotReceiver::Result::kNoBaseline: ++r.no_baseline; break;
        case sp::SnapshotReceiver::Result::kMalformed: ++r.malformed; MESSAGE(error); break;
      }
    }
    sim.send(kServer, now, sp::test::ack_bytes(receiver.ack()));
  }
  return r;
}

}  // namespace

TEST_CASE("netsim: 25% loss, 25% duplicates, 100 ms jitter: every decoded frame equals the server's") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("netsim seed " << seed << " (replay: SWARMFIELD_TEST_SEED=" << seed << ")");
  NetworkConditions net;
  net.latency_ms = 60;
  net.jitter_ms = 100;
  net.loss = 0.25;
  net.duplicate = 0.25;
  const RunResult r = run(net, seed, 400, 30);
  MESSAGE("sent " << r.sent << " decoded " << r.decoded << " deltas " << r.deltas << " stale " << r.stale
                  << " longest gap " << r.longest_gap_ms << " ms, agents checked " << r.checked_agents);
  CHECK(r.malformed == 0);
  CHECK(r.no_baseline == 0);  // the server only uses baselines the client acknowledged
  CHECK(r.decoded >= r.sent / 5);
  CHECK(r.deltas >= r.sent / 2);  // acks get through: mostly deltas, not full snapshots
  CHECK(r.longest_gap_ms < 3000);
}

TEST_CASE("netsim: a perfect network decodes every snapshot, all but the first as deltas") {
  NetworkConditions net;
  net.latency_ms = 30;
  const RunResult r = run(net, sp::test::test_seed(), 1000, 5);
  CHECK(r.decoded == r.sent - 1);  // the last one is still on its way
  CHECK(r.deltas == r.sent - 2);   // the first ack (after 30 + 30 ms) is in time for the third
  CHECK(r.malformed == 0);
}
