// Shared spectator streams (--spectator-join-interval) through the real server binary on
// 127.0.0.1: TCP viewers whose snapshots cover the same area are sent one encoding; every
// snapshot each of them receives decodes (across a join, which restarts the shared stream, and
// a leave, which restarts the viewer's own), and two members hold the same agents at the same
// tick. Asserts on counts, sequences and frames, never on wall-clock time (waits are bounded
// only so that a broken server fails instead of hanging).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loopback_support.hpp"

using namespace swarmfield;
using namespace std::chrono_literals;
using test::RawClient;
using test::ServerProcess;

namespace {

// A TCP viewer that decodes every snapshot it reads with its own receiver and counts those
// that do not decode (a stream sent against a baseline it does not hold).
struct Spectator {
  RawClient client;
  protocol::SnapshotReceiver receiver;
  std::uint32_t inputs = 0;
  std::size_t decoded = 0;
  std::size_t undecodable = 0;
  std::size_t own_echo = 0;              // echoed a client time this viewer sent
  std::size_t foreign_echo = 0;          // echoed a client time this viewer never sent
  std::vector<std::uint64_t> sent_times;  // client times of its inputs
  std::map<std::uint32_t, std::vector<protocol::AgentState>> frames;  // by tick

  float view[4] = {0, 0, 0, 0};
  std::uint64_t serial = 0;  // 0..7, tags this viewer's client times

  bool look_at(float x0, float y0, float x1, float y1) {
    view[0] = x0;
    view[1] = y0;
    view[2] = x1;
    view[3] = y1;
    protocol::Input in;
    in.sequence = ++inputs;
    in.view_x0 = x0;
    in.view_y0 = y0;
    in.view_x1 = x1;
    in.view_y1 = y1;
    in.snapshot_ack = receiver.ack();
    in.client_time_us = test::now_us() * 8 + serial;  // unique across the viewers
    sent_times.push_back(in.client_time_us);
    return client.send(in);
  }
  // Reads the next snapshot; false on timeout or close.
  bool read_one() {
    auto data = client.read_until<protocol::SnapshotData>(3s);
    if (!data) return false;
    if (receiver.receive(data->payload) != protocol::SnapshotReceiver::Result::kDecoded) {
      ++undecodable;
      return true;
    }
    ++decoded;
    const std::uint64_t echo = receiver.header().echo_client_time_us;
    const bool own = std::find(sent_times.begin(), sent_times.end(), echo) != sent_times.end();
    own_echo += own ? 1 : 0;
    foreign_echo += echo != 0 && !own ? 1 : 0;
    frames[receiver.header().tick] = receiver.frame().agents;
    return true;
  }
};

// Reads `n` snapshots from each spectator in turn (so none falls behind), keeping their views.
void read_round(std::vector<Spectator*> spectators, int n) {
  for (int i = 0; i < n; ++i) {
    for (Spectator* s : spectators) {
      REQUIRE(s->read_one());
      // The view again with the acknowledgement (the server closes a silent client).
      if (i % 20 == 19) REQUIRE(s->look_at(s->view[0], s->view[1], s->view[2], s->view[3]));
    }
  }
}

// a and b join as viewers (b's client times tagged 1) and look at the whole side x side map.
void join_watching_whole_map(std::uint16_t port, Spectator& a, Spectator& b, float side) {
  b.serial = 1;
  REQUIRE(test::join(a.client, port, protocol::Role::kViewer).has_value());
  REQUIRE(test::join(b.client, port, protocol::Role::kViewer).has_value());
  REQUIRE(a.look_at(0, 0, side, side));
  REQUIRE(b.look_at(0, 0, side, side));
}

// Ticks both decoded with the same agents / ticks both decoded.
std::pair<std::size_t, std::size_t> same_frames(const Spectator& a, const Spectator& b, std::uint32_t from_tick) {
  std::size_t same = 0, both = 0;
  for (const auto& [tick, agents] : a.frames) {
    if (tick < from_tick) continue;
    const auto it = b.frames.find(tick);
    if (it == b.frames.end()) continue;
    ++both;
    if (it->second == agents) ++same;
  }
  return {same, both};
}

}  // namespace

TEST_CASE("spectator streams: viewers of one area share an encoding; every snapshot decodes across joins and leaves") {
  for (const bool sharing : {true, false}) {
    CAPTURE(sharing);
    ServerProcess server(test::small_city(
        {"--agents", "3000", "--seed", "5", "--threads", "1", "--spectator-join-interval", sharing ? "1" : "0"}));
    const auto ports = test::wait_listening(server);
    REQUIRE_MESSAGE(ports.has_value(), server.err());
    Spectator a, b, c;
    b.serial = 1;
    c.serial = 2;
    REQUIRE(test::join(a.client, ports->tcp, protocol::Role::kViewer).has_value());
    REQUIRE(test::join(b.client, ports->tcp, protocol::Role::kViewer).has_value());
    // Whole-map views from windows of two shapes: the same area once clipped to the map.
    REQUIRE(a.look_at(0, 0, 64, 64));
    REQUIRE(b.look_at(-30, 0, 94, 64));
    read_round({&a, &b}, 60);
    // A third joins later: the shared stream restarts for it (a full snapshot for all three).
    REQUIRE(test::join(c.client, ports->tcp, protocol::Role::kViewer).has_value());
    REQUIRE(c.look_at(0, -10, 64, 74));
    read_round({&a, &b, &c}, 60);
    const std::uint32_t shared_from = c.frames.begin()->first;
    // b looks elsewhere: it leaves, its own stream restarts.
    REQUIRE(b.look_at(10, 10, 30, 30));
    read_round({&a, &b, &c}, 40);
    const std::string out = test::stop_and_summarize(server);
    INFO("summary: " << out);
    for (const Spectator* s : {&a, &b, &c}) {
      CHECK(s->undecodable == 0);
      CHECK(s->foreign_echo == 0);  // one encoding, each its own echo time
      CHECK(s->own_echo * 10 >= s->decoded * 9);
      CHECK(s->decoded >= 100);
    }
    const auto [same_ac, both_ac] = same_frames(a, c, shared_from);
    MESSAGE("sharing " << sharing << ": a and c decoded " << both_ac << " ticks alike, " << same_ac
                       << " with the same agents; shared " << test::summary_value(out, "snapshots_shared") << " of "
                       << test::summary_value(out, "snapshots_sent") << " sent, " << test::summary_value(out, "shared_encodes")
                       << " shared encodes, " << test::summary_value(out, "spectator_joins") << " joins");
    CHECK(both_ac >= 40);
    if (sharing) {
      // After c joined, a and c hold the same agents at every tick (one encoding).
      CHECK(same_ac == both_ac);
      CHECK(test::summary_value(out, "spectator_joins") >= 2);
      // Most snapshots came from a shared encoding, at least two per encode.
      CHECK(test::summary_value(out, "snapshots_shared") * 10 >= test::summary_value(out, "snapshots_sent") * 7);
      CHECK(test::summary_value(out, "shared_encodes") * 2 <= test::summary_value(out, "snapshots_shared"));
    } else {
      CHECK(test::summary_value(out, "snapshots_shared") == 0);
      CHECK(test::summary_value(out, "shared_encodes") == 0);
    }
  }
}

TEST_CASE("spectator streams: a late spectator waits for the join interval on its own stream; the members are not restarted") {
  // Joins restart the shared stream (a full snapshot for every member): past the stream's first
  // 2 s, at most one per --spectator-join-interval, however many spectators come and go.
  ServerProcess server(test::small_city({"--agents", "3000", "--seed", "5", "--threads", "1", "--spectator-join-interval", "600"}));
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  Spectator a, b;
  join_watching_whole_map(ports->tcp, a, b, 64.0f);
  read_round({&a, &b}, 80);  // 4 s at 20 Hz: past the burst window
  std::vector<Spectator> late(3);
  for (std::size_t i = 0; i < late.size(); ++i) {
    late[i].serial = 2 + i;
    REQUIRE(test::join(late[i].client, ports->tcp, protocol::Role::kViewer).has_value());
    REQUIRE(late[i].look_at(0, 0, 64, 64));
  }
  std::vector<Spectator*> all{&a, &b};
  for (Spectator& s : late) all.push_back(&s);
  read_round(all, 40);
  const std::string out = test::stop_and_summarize(server);
  INFO("summary: " << out);
  for (const Spectator* s : all) CHECK(s->undecodable == 0);
  // One start (a and b); the late ones on their own streams.
  CHECK(test::summary_value(out, "spectator_joins") == 1);
  const auto [same_ab, both_ab] = same_frames(a, b, 0);
  const auto [same_al, both_al] = same_frames(a, late[0], 0);
  MESSAGE("a and b alike at " << same_ab << " of " << both_ab << " ticks; a and a late one at " << same_al << " of " << both_al);
  CHECK(both_ab >= 100);
  CHECK(same_ab == both_ab);
  CHECK(both_al >= 20);
  CHECK(same_al < both_al);
}

TEST_CASE("spectator streams: many small views do not starve a shared whole-map stream of its relevance") {
  // Found by attack: the relevance of each view is computed once per tick up to a bound (64
  // rectangles or 8 x (agents + tiles) of work), then a view takes the best cover computed. A
  // shared stream asked for its relevance after every client, so 70 viewers with small views
  // used the bound up and the whole-map stream carried only what a small rectangle covers:
  // 3,000 agents -> 114.
  ServerProcess server({"--port", "0", "--bind", "127.0.0.1", "--city-size", "256", "--agents", "3000", "--seed", "5",
                        "--threads", "1", "--max-clients", "128"});
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  Spectator a, b;
  join_watching_whole_map(ports->tcp, a, b, 256.0f);
  read_round({&a, &b}, 60);
  const std::size_t before = a.frames.rbegin()->second.size();
  std::vector<std::unique_ptr<Spectator>> small;
  for (int i = 0; i < 70; ++i) {
    auto s = std::make_unique<Spectator>();
    s->serial = 3;
    char from[32];
    std::snprintf(from, sizeof from, "127.0.%d.%d", 1 + i / 6, 2 + i % 6);  // within the per-address limits
    REQUIRE(test::join(s->client, ports->tcp, protocol::Role::kViewer, 0, from).has_value());
    const float x0 = static_cast<float>((i % 9) * 28), y0 = static_cast<float>((i / 9) * 28);
    REQUIRE(s->look_at(x0, y0, x0 + 20, y0 + 20));
    small.push_back(std::move(s));
  }
  // The small viewers are not read: their queues fill and they are skipped, which is fine, the
  // relevance of each view is still asked for while its client is not behind.
  read_round({&a, &b}, 40);
  const std::size_t after = a.frames.rbegin()->second.size();
  const std::string out = test::stop_and_summarize(server);
  INFO("summary: " << out);
  MESSAGE("whole-map members hold " << before << " agents before 70 small views, " << after << " after");
  CHECK(a.undecodable == 0);
  CHECK(b.undecodable == 0);
  CHECK(test::summary_value(out, "snapshots_shared") > 0);
  CHECK(before >= 2900);
  CHECK(after * 10 >= before * 9);
}

namespace {

// A viewer on UDP: decodes what its socket brings and acknowledges each snapshot at once, as the
// client library does, unless `acking` is off.
struct UdpSpectator {
  RawClient client;
  std::uint16_t udp_port = 0;
  std::uint32_t inputs = 0;
  bool acking = true;
  std::size_t decoded = 0;
  std::size_t deltas = 0;
  std::int64_t last_ack_us = 0, longest_ack_gap_us = 0;  // between its acks: was this process starved?
  std::map<std::uint32_t, std::vector<protocol::AgentState>> frames;  // by tick

  bool look_at_whole_map(float side) {
    protocol::Input in;
    in.sequence = ++inputs;
    in.view_x1 = side;
    in.view_y1 = side;
    if (acking) in.snapshot_ack = client.snapshot_ack();
    in.client_time_us = test::now_us();
    return client.udp_send_input(udp_port, in);
  }
  // Waits for one snapshot, then takes every one already queued on the socket, and acknowledges
  // once, the newest: a client that fell behind (a loaded machine starves this process while the
  // server keeps sending) catches up as the client library does, instead of acknowledging each
  // backlogged frame in turn, which would leave its acks the whole backlog old. Returns how many
  // it decoded (0 after 3 s without one).
  std::size_t read_some() {
    std::size_t n = 0;
    for (auto wait = std::chrono::milliseconds(3s); auto s = client.udp_snapshot(wait); wait = 1ms) {
      ++n;
      ++decoded;
      if (s->baseline_distance != 0) ++deltas;
      frames[s->tick] = s->frame.agents;
    }
    if (n > 0 && acking) {
      if (!client.udp_send_ack(udp_port)) return 0;
      const auto t = static_cast<std::int64_t>(test::now_us());
      if (last_ack_us != 0) longest_ack_gap_us = std::max(longest_ack_gap_us, t - last_ack_us);
      last_ack_us = t;
    }
    return n;
  }
};

// Until every spectator decoded at least `n` more snapshots.
void read_udp_round(std::vector<UdpSpectator*> spectators, std::size_t n) {
  std::vector<std::size_t> got(spectators.size(), 0);
  for (int round = 1;; ++round) {
    bool all = true;
    for (std::size_t k = 0; k < spectators.size(); ++k) {  // all read all along: acks stay fresh
      const std::size_t m = spectators[k]->read_some();
      REQUIRE(m > 0);
      got[k] += m;
      all = all && got[k] >= n;
    }
    if (round % 20 == 0) {
      for (UdpSpectator* s : spectators) REQUIRE(s->look_at_whole_map(64.0f));  // the server closes a silent client
    }
    if (all) return;
  }
}

template <class A, class B>
std::pair<std::size_t, std::size_t> same_ticks(const A& a, const B& b) {
  std::size_t same = 0, both = 0;
  for (const auto& [tick, agents] : a) {
    const auto it = b.find(tick);
    if (it == b.end()) continue;
    ++both;
    if (it->second == agents) ++same;
  }
  return {same, both};
}

}  // namespace

TEST_CASE("spectator streams over UDP: one encoding against what every member acknowledged; a member that stops acknowledging goes back to its own stream") {
  // --ack-timeout 60: these viewers read UDP only. On a loaded machine their acks can stall for
  // the default 3 s; the server then streams over TCP, which they do not read, and back on UDP
  // its deltas name frames they never decoded (seen as no-baseline snapshots under a parallel
  // build). The test is about the shared stream, not that fallback.
  ServerProcess server(test::small_city(
      {"--agents", "3000", "--seed", "5", "--threads", "1", "--spectator-join-interval", "1", "--ack-timeout", "60"}));
  const auto ports = test::wait_listening(server);
  REQUIRE_MESSAGE(ports.has_value(), server.err());
  UdpSpectator a, b, c;
  for (UdpSpectator* s : {&a, &b, &c}) {
    REQUIRE(test::join(s->client, ports->tcp, protocol::Role::kViewer).has_value());
    REQUIRE(s->client.udp_open());
    REQUIRE(s->client.udp_confirm(ports->udp, 5s));
    s->udp_port = ports->udp;
    REQUIRE(s->look_at_whole_map(64.0f));
  }
  read_udp_round({&a, &b, &c}, 60);
  const std::size_t b_before = b.frames.size();
  // b goes silent about what it decodes: the shared stream may not wait for it.
  b.acking = false;
  read_udp_round({&a, &b, &c}, 60);
  const std::string out = test::stop_and_summarize(server);
  INFO("summary: " << out);
  CHECK(test::summary_value(out, "udp_unbound") == 0);  // never fell back to TCP
  const auto [same_ac, both_ac] = same_ticks(a.frames, c.frames);
  MESSAGE("a " << a.decoded << " decoded (" << a.deltas << " deltas), c " << c.decoded << ", b " << b.decoded
               << "; a and c alike at " << same_ac << " of " << both_ac << " ticks; shared "
               << test::summary_value(out, "snapshots_shared") << " of " << test::summary_value(out, "snapshots_sent")
               << " from " << test::summary_value(out, "shared_encodes") << " encodes, lags "
               << test::summary_value(out, "spectator_lags") << "; longest gap between acks a "
               << a.longest_ack_gap_us / 1000 << " ms, c " << c.longest_ack_gap_us / 1000 << " ms");
  for (const UdpSpectator* s : {&a, &b, &c}) {
    CHECK(s->client.no_baseline() == 0);  // never a delta against a frame it does not hold
    CHECK(s->decoded >= 120);
  }
  // Deltas all along for those that acknowledge (a full snapshot at the stream's start, at joins
  // and, should a loaded machine delay a or c's acks past the lag, when it goes back).
  CHECK(a.deltas + 8 >= a.decoded);
  CHECK(c.deltas + 8 >= c.decoded);
  // a and c were sent one encoding: the same agents at (nearly) every tick both decoded.
  CHECK(both_ac >= 110);
  CHECK(same_ac * 10 >= both_ac * 8);
  // b, silent, went back to its own stream, which still reaches it, and stays there: it may join
  // again only while it acknowledges its own stream (a silent client would restart the shared
  // stream for its members at every join interval). 1 unless the machine delayed a or c too.
  CHECK(test::summary_value(out, "spectator_lags") >= 1);
  std::size_t b_last_alike = 0, b_last = 0;
  for (auto it = b.frames.rbegin(); it != b.frames.rend() && b_last < 20; ++it, ++b_last) {
    const auto ia = a.frames.find(it->first);
    if (ia != a.frames.end() && ia->second == it->second) ++b_last_alike;
  }
  CHECK(b_last == 20);
  CHECK(b_last_alike == 0);  // not back in the shared stream
  CHECK(b.frames.size() >= b_before + 50);
  const auto [same_ab_late, both_ab_late] = same_ticks(a.frames, b.frames);
  CHECK(same_ab_late < both_ab_late);
  CHECK(test::summary_value(out, "snapshots_shared") * 2 >= test::summary_value(out, "snapshots_sent"));
  CHECK(test::summary_value(out, "shared_encodes") * 2 <= test::summary_value(out, "snapshots_shared"));
}
