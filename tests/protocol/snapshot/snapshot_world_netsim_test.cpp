// The whole snapshot path on real swarm motion through the simulated bad network (25% loss, 25%
// duplicates, 100 ms jitter): a World on Boston_0_256 with agents chasing a moving player, a
// client whose view follows the player, relevance + budget + codec + fragments + acks. At every
// snapshot the client decodes, its frame equals the server's for that sequence; every agent sent
// in it is within quantization (1/128 cell) of the world's true position at that tick; the
// frame holds only agents the relevance rules chose; with a loose budget it holds all of them.
// Seeded (printed; SWARMFIELD_TEST_SEED=<seed> replays).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

#include "benchmark_maps.hpp"
#include "network_simulator.hpp"
#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"
#include "swarmfield/protocol/snapshot/snapshot_relevance.hpp"
#include "swarmfield/protocol/snapshot/snapshot_sender.hpp"
#include "swarmfield/sim/world.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
namespace sim = swarmfield::sim;

namespace {

constexpr double kTickMs = 1000.0 / 30.0;

struct Sent {
  sp::AgentFrame frame;
  std::vector<std::uint32_t> candidate_ids;
  std::unordered_map<std::uint32_t, std::pair<float, float>> truth;  // id -> world position
};

struct Result {
  std::size_t sent = 0, decoded = 0, over_budget = 0, checked = 0, complete = 0, bad = 0;
  std::size_t max_datagram = 0;
};

Result run(double bits_per_second, std::uint64_t seed) {
  sim::WorldParams wp;
  wp.spawner.initial_agents = 3000;
  wp.seed = seed;
  sim::World world(sim::test::boston_256(), wp);
  const std::uint32_t player = world.add_player({128, 128});
  sp::test::NetworkConditions net;
  net.latency_ms = 60;
  net.jitter_ms = 100;
  net.loss = 0.25;
  net.duplicate = 0.25;
  sp::test::NetworkSimulator link(net, seed);
  sp::SnapshotSender sender(1 << 16);
  sp::SnapshotReceiver receiver(1 << 18);
  sp::FragmentAssembler assembler;
  sp::SnapshotSelector selector;
  sp::SnapshotBudget budget(bits_per_second, 20);
  sp::QuantizedAgents quantized;
  sp::AgentCandidates candidates;
  sp::DensityGrid grid;
  std::vector<std::uint8_t> payload;
  std::vector<std::vector<std::uint8_t>> fragments;
  std::map<std::uint32_t, Sent> sent;
  Result r;
  const float cell = world.map().cell_size();
  for (int tick = 1; tick <= 20 * 30; ++tick) {
    const double now = tick * kTickMs;
    for (const auto& p : link.receive(0, now)) sender.on_ack(sp::test::parse_ack(p));
    // The player walks a slow circle; the swarm follows.
    const float a = static_cast<float>(tick) * 0.01f;
    world.set_player_intent(player, {std::cos(a), std::sin(a)});
    world.step(1.0f / 30.0f);
    if ((tick * 2) / 3 == ((tick - 1) * 2) / 3) continue;
    const sim::Vec2 at = world.find_player(player)->position;
    const auto& s = world.swarm();
    quantized.assign(s.ids(), s.xs(), s.ys(), s.headings(), {}, cell);
    const sp::QuantizedRect view = sp::quantize_view(at.x - 40, at.y - 30, at.x + 40, at.y + 30, 4, cell);
    sp::RelevanceParams params;
    params.update_bits = budget.update_bits();
    params.add_bits = budget.add_bits();
    selector.select(quantized, view, sender.next_baseline(), static_cast<std::uint32_t>(world.tick()),
                    budget.allowance(40), params, candidates, grid);
    if (selector.stats().over_budget) ++r.over_budget;
    sp::SnapshotHeader h;
    h.tick = static_cast<std::uint32_t>(world.tick());
    h.total_agents = static_cast<std::uint32_t>(s.size());
    REQUIRE(sender.encode(h, candidates, grid, payload));
    budget.spent(payload.size(), sender.last_stats());
    Sent& record = sent[h.sequence];
    record.frame = sender.last_frame();
    record.candidate_ids.clear();
    for (const sp::AgentCandidate& c : candidates) record.candidate_ids.push_back(c.id);
    for (std::size_t i = 0; i < s.size(); ++i) record.truth[s.ids()[i]] = {s.xs()[i], s.ys()[i]};
    const std::size_t n = sp::split_snapshot(payload, h.sequence, fragments);
    REQUIRE(n > 0);
    for (std::size_t i = 0; i < n; ++i) {
      r.max_datagram = std::max(r.max_datagram, fragments[i].size() + sp::kPacketOverheadBytes);
      link.send(1, now, fragments[i]);
    }
    ++r.sent;
    // Client.
    for (const auto& p : link.receive(1, now)) {
      const auto whole = assembler.add(p);
      if (!whole) continue;
      std::string error;
      const auto res = receiver.receive(*whole, &error);
      if (res == sp::SnapshotReceiver::Result::kMalformed || res == sp::SnapshotReceiver::Result::kNoBaseline) {
        ++r.bad;
        MESSAGE(error);
      }
      if (res != sp::SnapshotReceiver::Result::kDecoded) continue;
      ++r.decoded;
      const Sent& want = sent.at(receiver.header().sequence);
      const sp::AgentFrame& f = receiver.frame();
      REQUIRE(f == want.frame);
      std::size_t c = 0;
      for (const sp::AgentState& agent : f.agents) {
        while (c < want.candidate_ids.size() && want.candidate_ids[c] < agent.id) ++c;
        REQUIRE(c < want.candidate_ids.size());  // only relevant agents
        REQUIRE(want.candidate_ids[c] == agent.id);
        if (agent.tick != f.tick) continue;  // not sent in this snapshot: keeps its older values
        const auto [x, y] = want.truth.at(agent.id);
        REQUIRE(std::fabs(sp::dequantize_agent_position(agent.x, cell) - x) <= cell / 128 + 1e-4f);
        REQUIRE(std::fabs(sp::dequantize_agent_position(agent.y, cell) - y) <= cell / 128 + 1e-4f);
        ++r.checked;
      }
      if (f.size() == want.candidate_ids.size()) ++r.complete;
    }
    link.send(0, now, sp::test::ack_bytes(receiver.ack()));
  }
  return r;
}

}  // namespace

TEST_CASE("world netsim: 1 Mbit/s, bad network: decoded frames equal the server's and the truth") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("world netsim seed " << seed);
  const Result r = run(1'000'000, seed);
  MESSAGE("sent " << r.sent << " decoded " << r.decoded << " over budget " << r.over_budget << " complete "
                  << r.complete << " agents checked " << r.checked << " max datagram " << r.max_datagram);
  CHECK(r.bad == 0);
  CHECK(r.decoded >= r.sent / 5);
  CHECK(r.checked > 1000);
  CHECK(r.max_datagram <= sp::kMaxDatagramBytes);
  CHECK(r.complete >= r.decoded * 9 / 10);  // the budget covers the view: all relevant agents held
}

TEST_CASE("world netsim: 64 kbit/s: partial snapshots still decode exactly") {
  const Result r = run(64'000, sp::test::test_seed() + 1);
  MESSAGE("sent " << r.sent << " decoded " << r.decoded << " over budget " << r.over_budget << " complete " << r.complete);
  CHECK(r.bad == 0);
  CHECK(r.over_budget > r.sent / 2);
  CHECK(r.decoded >= r.sent / 5);
  CHECK(r.checked > 1000);
}
