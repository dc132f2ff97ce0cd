// Delta snapshot codec: full and delta snapshots decode to exactly the frame the encoder built
// (values, predictor state, grid), with and without prediction, under churn, partial sends, kind
// changes and escapes; a wrong baseline, truncation and corruption are refused without crashing.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "snapshot_test_support.hpp"
#include "swarmfield/protocol/snapshot/snapshot_codec.hpp"
#include "swarmfield/protocol/snapshot/snapshot_history.hpp"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
using sp::test::SyntheticCrowd;

namespace {

sp::SnapshotHeader make_header(std::uint32_t sequence, std::uint32_t tick, std::uint32_t distance) {
  sp::SnapshotHeader h;
  h.sequence = sequence;
  h.tick = tick;
  h.baseline_distance = distance;
  h.echo_client_time_us = 123456789ull * sequence;
  h.total_agents = 100000;
  h.rebuilds = 77;
  h.wave = 3;
  // The second is dead; the first fired 40 shots, scores past 2^32 and aims at 192/256 of a turn.
  h.players = {{1, 10.5f, 20.25f, 3, 73.5f, 12, 40, (std::int64_t{1} << 40) + 5, 192},
               {9, 500.0f, 1.0f, 0, 0.0f, 0, 0, -25, 0}};
  return h;
}

/// Encodes against `baseline` (frame of sequence - distance), decodes, checks both frames agree.
void round_trip(sp::SnapshotEncoder& enc, sp::SnapshotDecoder& dec, const sp::SnapshotHeader& h,
                const sp::AgentFrame* baseline, const sp::AgentCandidates& c, const sp::DensityGrid& grid,
                sp::AgentFrame& out_frame) {
  std::vector<std::uint8_t> payload;
  const sp::AgentFrameView bv = baseline ? sp::AgentFrameView::of(*baseline) : sp::AgentFrameView::empty();
  REQUIRE(enc.encode(h, bv, c, grid, payload, out_frame));
  sp::SnapshotHeader dh;
  sp::AgentFrame decoded;
  std::string error;
  REQUIRE_MESSAGE(dec.decode(payload, bv, dh, decoded, &error), error);
  CHECK(dh == h);
  REQUIRE(decoded == out_frame);
}

}  // namespace

TEST_CASE("a full snapshot decodes to the candidates it was built from") {
  SyntheticCrowd crowd(3000, sp::test::test_seed());
  sp::AgentCandidates c;
  crowd.candidates(c);
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentFrame frame;
  round_trip(enc, dec, make_header(1, 100, 0), nullptr, c, {}, frame);
  REQUIRE(frame.size() == c.size());
  for (std::size_t k = 0; k < c.size(); ++k) {
    const sp::AgentState& a = frame.agents[k];
    REQUIRE(a.id == c[k].id);
    REQUIRE(a.x == c[k].x);
    REQUIRE(a.y == c[k].y);
    REQUIRE(a.heading == c[k].heading);
    REQUIRE(a.kind == c[k].kind);
  }
  CHECK(enc.stats().added == 3000);
}

TEST_CASE("a chain of deltas with churn, partial sends, kind changes and jumps stays exact") {
  const std::uint64_t seed = sp::test::test_seed();
  INFO("seed " << seed);
  for (bool predict : {true, false}) {
    SyntheticCrowd crowd(2000, seed);
    std::mt19937_64 rng(seed + 1);
    sp::SnapshotEncoder enc;
    sp::SnapshotDecoder dec;
    sp::AgentCandidates c;
    crowd.candidates(c);
    sp::AgentFrame prev, next;
    sp::SnapshotHeader h = make_header(1, 10, 0);
    h.predicted = predict;
    round_trip(enc, dec, h, nullptr, c, {}, prev);
    std::uint32_t tick = 10;
    for (std::uint32_t seq = 2; seq < 40; ++seq) {
      tick += 1 + static_cast<std::uint32_t>(rng() % 2);
      crowd.step(1, 1, 15);
      crowd.set_kind(rng() % crowd.size(), static_cast<std::uint8_t>(rng()));
      crowd.teleport(rng() % crowd.size(), static_cast<std::uint32_t>(rng() % 10000), static_cast<std::uint32_t>(rng() % 10000));
      crowd.turn(rng() % crowd.size(), static_cast<std::uint8_t>(rng()));
      crowd.candidates(c, seq % 5 == 0 ? 60 : 100);
      h = make_header(seq, tick, 1);
      h.predicted = predict;
      round_trip(enc, dec, h, &prev, c, {}, next);
      // Stale agents keep the baseline's values and tick.
      for (const sp::AgentState& a : next.agents) {
        if (a.tick != tick) {
          CHECK(a.tick < tick);
        }
      }
      std::swap(prev, next);
    }
  }
}

TEST_CASE("every sent agent arrives with its exact quantized values; unsent ones keep the baseline's") {
  SyntheticCrowd crowd(500, sp::test::test_seed());
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentCandidates c;
  crowd.candidates(c);
  sp::AgentFrame base, next;
  round_trip(enc, dec, make_header(1, 5, 0), nullptr, c, {}, base);
  crowd.step(2, 3, 20);
  crowd.candidates(c, 50);
  round_trip(enc, dec, make_header(2, 7, 1), &base, c, {}, next);
  std::size_t bi = 0, ni = 0;
  for (std::size_t k = 0; k < c.size(); ++k) {
    while (ni < next.size() && next.agents[ni].id < c[k].id) ++ni;
    while (bi < base.size() && base.agents[bi].id < c[k].id) ++bi;
    const bool in_base = bi < base.size() && base.agents[bi].id == c[k].id;
    const bool in_next = ni < next.size() && next.agents[ni].id == c[k].id;
    if (c[k].send) {
      REQUIRE(in_next);
      CHECK(next.agents[ni].x == c[k].x);
      CHECK(next.agents[ni].y == c[k].y);
      CHECK(next.agents[ni].heading == c[k].heading);
      CHECK(next.agents[ni].tick == 7);
    } else if (in_base) {
      REQUIRE(in_next);
      CHECK(next.agents[ni] == base.agents[bi]);  // stale: the baseline's values and predictor state
    } else {
      CHECK_FALSE(in_next);  // not added until sent
    }
  }
  // Baseline agents that are no longer candidates are gone.
  CHECK(next.size() <= c.size());
}

TEST_CASE("an agent crowd at rest costs a fraction of a bit per agent") {
  SyntheticCrowd crowd(10000, sp::test::test_seed());
  sp::SnapshotEncoder enc;
  sp::AgentCandidates c;
  crowd.candidates(c);
  sp::AgentFrame base, next;
  std::vector<std::uint8_t> payload;
  REQUIRE(enc.encode(make_header(1, 1, 0), sp::AgentFrameView::empty(), c, {}, payload, base));
  // Nobody moved (step 0): residuals against the baseline are all zero... except predicted
  // motion, which is zero for fresh agents.
  REQUIRE(enc.encode(make_header(2, 2, 1), sp::AgentFrameView::of(base), c, {}, payload, next));
  INFO("payload " << payload.size());
  CHECK(payload.size() < 10000 / 8 / 4 + 200);  // < 1/4 bit per agent plus headers and tables
}

TEST_CASE("the density grid travels as changes against the baseline's grid") {
  SyntheticCrowd crowd(100, sp::test::test_seed());
  sp::AgentCandidates c;
  crowd.candidates(c);
  sp::DensityGrid grid;
  sp::set_density_grid_geometry(grid, 0, 0, 1024, 700);
  for (std::size_t k = 0; k < grid.levels.size(); ++k) grid.levels[k] = static_cast<std::uint8_t>((k * 7) % 16);
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentFrame base, next;
  round_trip(enc, dec, make_header(1, 1, 0), nullptr, c, grid, base);
  const std::size_t full_bits = enc.stats().grid_bits;
  grid.levels[5] = 15;
  round_trip(enc, dec, make_header(2, 2, 1), &base, c, grid, next);
  CHECK(next.grid == grid);
  CHECK(enc.stats().grid_bits < full_bits / 20);
}

TEST_CASE("decoding against the wrong baseline, or with a tick not after it, fails") {
  SyntheticCrowd crowd(200, sp::test::test_seed());
  sp::AgentCandidates c;
  crowd.candidates(c);
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentFrame base, next, out;
  std::vector<std::uint8_t> payload;
  REQUIRE(enc.encode(make_header(1, 1, 0), sp::AgentFrameView::empty(), c, {}, payload, base));
  REQUIRE(enc.encode(make_header(3, 4, 2), sp::AgentFrameView::of(base), c, {}, payload, next));
  sp::SnapshotHeader h;
  std::string error;
  CHECK_FALSE(dec.decode(payload, sp::AgentFrameView::of(next), h, out, &error));  // sequence 3, not 1
  CHECK(error == "wrong baseline frame");
  CHECK_FALSE(dec.decode(payload, sp::AgentFrameView::empty(), h, out, &error));
  // The encoder refuses a tick that does not advance, and unsorted candidates.
  CHECK_FALSE(enc.encode(make_header(2, 1, 1), sp::AgentFrameView::of(base), c, {}, payload, next));
  std::swap(c[0].id, c[1].id);
  CHECK_FALSE(enc.encode(make_header(1, 1, 0), sp::AgentFrameView::empty(), c, {}, payload, next));
}

TEST_CASE("every truncation and many corruptions of a payload are refused or decode in range") {
  SyntheticCrowd crowd(300, sp::test::test_seed());
  sp::AgentCandidates c;
  crowd.candidates(c);
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentFrame base, next, out;
  std::vector<std::uint8_t> payload;
  sp::DensityGrid grid;
  sp::set_density_grid_geometry(grid, 0, 0, 300, 300);
  REQUIRE(enc.encode(make_header(1, 1, 0), sp::AgentFrameView::empty(), c, grid, payload, base));
  crowd.step(1, 4, 10);
  crowd.candidates(c, 70);
  REQUIRE(enc.encode(make_header(2, 3, 1), sp::AgentFrameView::of(base), c, grid, payload, next));
  const sp::AgentFrameView bv = sp::AgentFrameView::of(base);
  sp::SnapshotHeader h;
  for (std::size_t len = 0; len < payload.size(); ++len) {
    CHECK_FALSE(dec.decode(std::span(payload).first(len), bv, h, out));
  }
  std::mt19937_64 rng(sp::test::test_seed());
  std::size_t accepted = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::uint8_t> bad = payload;
    bad[rng() % bad.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
    if (dec.decode(bad, bv, h, out)) {
      ++accepted;
      for (std::size_t k = 0; k < out.size(); ++k) {
        REQUIRE(out.agents[k].x <= sp::kPositionMax);
        REQUIRE(out.agents[k].y <= sp::kPositionMax);
        if (k > 0) REQUIRE(out.agents[k].id > out.agents[k - 1].id);
      }
    }
  }
  MESSAGE("corrupted payloads accepted (in range): " << accepted << " of 2000");
}

TEST_CASE("at most 255 players travel; the rest are dropped, not garbled") {
  sp::SnapshotHeader h = make_header(1, 1, 0);
  h.players.clear();
  for (std::uint32_t p = 0; p < 300; ++p) h.players.push_back({p, static_cast<float>(p), 1.0f, p});
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentFrame frame, out;
  std::vector<std::uint8_t> payload;
  REQUIRE(enc.encode(h, sp::AgentFrameView::empty(), sp::AgentCandidates{}, {}, payload, frame));
  sp::SnapshotHeader got;
  std::string error;
  REQUIRE_MESSAGE(dec.decode(payload, sp::AgentFrameView::empty(), got, out, &error), error);
  REQUIRE(got.players.size() == sp::kMaxSnapshotPlayers);
  CHECK(got.players.back() == h.players[sp::kMaxSnapshotPlayers - 1]);
}

TEST_CASE("players carry health, kills, shots, score and aim; the wave travels; a bad health is refused") {
  sp::SnapshotHeader h = make_header(1, 1, 0);
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentFrame frame, out;
  std::vector<std::uint8_t> payload;
  REQUIRE(enc.encode(h, sp::AgentFrameView::empty(), sp::AgentCandidates{}, {}, payload, frame));
  REQUIRE(payload[0] == sp::kSnapshotFormat);
  sp::SnapshotHeader got;
  std::string error;
  REQUIRE_MESSAGE(dec.decode(payload, sp::AgentFrameView::empty(), got, out, &error), error);
  REQUIRE(got.players.size() == 2);
  CHECK(got.players[0].health == 73.5f);
  CHECK(got.players[0].kills == 12);
  CHECK(got.players[1].health == 0.0f);
  CHECK(got.players[0].shots == 40);
  CHECK(got.players[0].score == (std::int64_t{1} << 40) + 5);
  CHECK(got.players[1].score == -25);
  CHECK(got.players[0].aim == 192);
  CHECK(got.wave == 3);
  CHECK(got == h);
  // The first player's health is 16 bytes into its record.
  for (const float bad : {std::nanf(""), -1.0f, std::numeric_limits<float>::infinity()}) {
    std::vector<std::uint8_t> hostile = payload;
    const auto bits = std::bit_cast<std::uint32_t>(bad);
    for (int b = 0; b < 4; ++b) hostile[sp::kSnapshotHeaderBytes + 16 + b] = static_cast<std::uint8_t>(bits >> (8 * b));
    CHECK_FALSE(dec.decode(hostile, sp::AgentFrameView::empty(), got, out, &error));
    CHECK(error.find("health") != std::string::npos);
  }
  // The old format bytes (players of 16 and 24 bytes, no wave) are refused, not misread.
  for (const std::uint8_t format : {std::uint8_t{0xD1}, std::uint8_t{0xD2}}) {
    std::vector<std::uint8_t> old = payload;
    old[0] = format;
    CHECK_FALSE(dec.decode(old, sp::AgentFrameView::empty(), got, out, &error));
  }
}

TEST_CASE("removed agents that died are flagged as deaths, with their baseline values; others are not") {
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentCandidates first;
  for (std::uint32_t id = 1; id <= 40; ++id) first.push_back({id * 3, 1000 + id * 64, 2000, static_cast<std::uint8_t>(id), 1, 1});
  sp::AgentFrame f1;
  round_trip(enc, dec, make_header(1, 10, 0), nullptr, first, {}, f1);
  CHECK(dec.deaths().empty());
  // Next snapshot: ids 6, 30 and 99 (never held) died; 9 and 60 left the view; the rest stay.
  const std::vector<std::uint32_t> died = {6, 30, 99};
  enc.set_recent_deaths(died);
  sp::AgentCandidates second;
  for (const auto& c : first) {
    if (c.id != 6 && c.id != 30 && c.id != 9 && c.id != 60) second.push_back(c);
  }
  std::vector<std::uint8_t> payload;
  sp::AgentFrame f2;
  REQUIRE(enc.encode(make_header(2, 11, 1), sp::AgentFrameView::of(f1), second, {}, payload, f2));
  CHECK(enc.stats().removed == 4);
  CHECK(enc.stats().died == 2);
  sp::SnapshotHeader got;
  sp::AgentFrame out;
  std::string error;
  REQUIRE_MESSAGE(dec.decode(payload, sp::AgentFrameView::of(f1), got, out, &error), error);
  CHECK(out == f2);
  REQUIRE(dec.deaths().size() == 2);
  CHECK(dec.deaths()[0].id == 6);
  CHECK(dec.deaths()[0].x == 1000 + 2 * 64);
  CHECK(dec.deaths()[1].id == 30);
  CHECK(dec.deaths()[1].heading == 10);
  // With no deaths set, the same step flags nothing, and costs no more.
  const std::size_t flagged_size = payload.size();
  enc.set_recent_deaths({});
  REQUIRE(enc.encode(make_header(2, 11, 1), sp::AgentFrameView::of(f1), second, {}, payload, f2));
  REQUIRE(dec.decode(payload, sp::AgentFrameView::of(f1), got, out, &error));
  CHECK(dec.deaths().empty());
  CHECK(payload.size() <= flagged_size);
}

TEST_CASE("a hostile death list is refused: more deaths than removals, or an index past the removals") {
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentCandidates first = {{5, 100, 100, 0, 0, 1}, {7, 200, 100, 0, 0, 1}};
  sp::AgentFrame f1;
  round_trip(enc, dec, make_header(1, 10, 0), nullptr, first, {}, f1);
  const std::vector<std::uint32_t> died = {5};
  enc.set_recent_deaths(died);
  std::vector<std::uint8_t> payload;
  sp::AgentFrame f2;
  REQUIRE(enc.encode(make_header(2, 11, 1), sp::AgentFrameView::of(f1), {{7, 200, 100, 0, 0, 0}}, {}, payload, f2));
  sp::SnapshotHeader got;
  sp::AgentFrame out;
  std::string error;
  REQUIRE_MESSAGE(dec.decode(payload, sp::AgentFrameView::of(f1), got, out, &error), error);
  REQUIRE(dec.deaths().size() == 1);
  // Flip every bit of the bit section in turn: the decoder never crashes or reads out of range,
  // and any death it reports is an agent of the baseline that it removed.
  const std::size_t bit_start = sp::kSnapshotHeaderBytes + 2 * sp::kSnapshotPlayerBytes + 4;
  std::size_t refused = 0;
  for (std::size_t byte = bit_start; byte < payload.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::vector<std::uint8_t> bad = payload;
      bad[byte] ^= static_cast<std::uint8_t>(1u << bit);
      if (!dec.decode(bad, sp::AgentFrameView::of(f1), got, out, &error)) {
        ++refused;
        continue;
      }
      for (const sp::AgentState& a : dec.deaths()) {
        CHECK((a.id == 5 || a.id == 7));
        CHECK_FALSE(std::any_of(out.agents.begin(), out.agents.end(), [&](const sp::AgentState& o) { return o.id == a.id; }));
      }
    }
  }
  CHECK(refused > 0);
}

TEST_CASE("positions quantize to 1/64 cell in 20 bits") {
  CHECK(sp::quantize_agent_position(0.0f, 1.0f) == 0);
  CHECK(sp::quantize_agent_position(1.0f, 1.0f) == 64);
  CHECK(sp::quantize_agent_position(8191.99f, 1.0f) == 524287);
  CHECK(sp::quantize_agent_position(1e9f, 1.0f) == sp::kPositionMax);
  CHECK(sp::quantize_agent_position(-3.0f, 1.0f) == 0);
  CHECK(sp::quantize_agent_position(std::nanf(""), 1.0f) == 0);
  CHECK(sp::quantize_agent_position(2.0f, 2.0f) == 64);  // world units / cell size
  for (float w : {0.3f, 17.77f, 1023.9f, 8000.123f}) {
    CHECK(std::fabs(sp::dequantize_agent_position(sp::quantize_agent_position(w, 1.0f), 1.0f) - w) <= 1.0f / 128 + 1e-3f);
  }
}

TEST_CASE("position residuals turn into the velocity's frame and back; speed classes") {
  // Every velocity direction (signs, which component is larger, ties) and every residual in range.
  for (const auto& [vx, vy] : std::vector<std::pair<std::int16_t, std::int16_t>>{
           {0, 0}, {40, 3}, {-40, 3}, {40, -3}, {-40, -3}, {3, 40}, {-3, 40}, {3, -40}, {-3, -40}, {20, 20}, {-20, 20}, {32767, -32767}}) {
    const sp::VelocityFrame f = sp::velocity_frame(vx, vy);
    for (std::int32_t rx = -3; rx <= 3; ++rx) {
      for (std::int32_t ry = -3; ry <= 3; ++ry) {
        const auto [a, b] = sp::to_velocity_frame(f, rx, ry);
        CHECK(std::max(std::abs(a), std::abs(b)) == std::max(std::abs(rx), std::abs(ry)));
        const auto back = sp::from_velocity_frame(f, a, b);
        CHECK(back[0] == rx);
        CHECK(back[1] == ry);
      }
    }
  }
  // An agent ahead of its prediction by 2 steps lands on (2, 0) whichever way it walks.
  CHECK(sp::to_velocity_frame(sp::velocity_frame(-40, 3), -2, 0) == std::array<std::int32_t, 2>{2, 0});
  CHECK(sp::to_velocity_frame(sp::velocity_frame(3, -40), 0, -2) == std::array<std::int32_t, 2>{2, 0});
  CHECK(sp::to_velocity_frame(sp::velocity_frame(40, 3), 2, 0) == std::array<std::int32_t, 2>{2, 0});
  CHECK(sp::speed_class(3, -3) == 0);
  CHECK(sp::speed_class(-4, 0) == 1);
  CHECK(sp::speed_class(0, 15) == 1);
  CHECK(sp::speed_class(-16, 0) == 2);
  CHECK(sp::speed_class(63, -63) == 2);
  CHECK(sp::speed_class(0, -64) == 3);
  CHECK(sp::speed_class(-32767, 0) == 3);
}

TEST_CASE("coarse positions and headings: both ends hold the same frame, within half a step of the truth, for fewer bytes") {
  const std::uint64_t seed = sp::test::test_seed();
  INFO("seed " << seed);
  std::size_t bytes[sp::kMaxPrecisionShift + 1] = {};
  for (unsigned shift = 0; shift <= sp::kMaxPrecisionShift; ++shift) {
    CAPTURE(shift);
    SyntheticCrowd crowd(2000, seed);
    std::mt19937_64 rng(seed + 1);
    sp::SnapshotEncoder enc;
    sp::SnapshotDecoder dec;
    sp::AgentCandidates c;
    crowd.candidates(c);
    sp::AgentFrame prev, next;
    sp::SnapshotHeader h = make_header(1, 10, 0);
    h.precision_shift = static_cast<std::uint8_t>(shift);
    round_trip(enc, dec, h, nullptr, c, {}, prev);
    std::uint32_t tick = 10;
    const std::int64_t step = std::int64_t{1} << shift;
    for (std::uint32_t seq = 2; seq < 30; ++seq) {
      tick += 1 + static_cast<std::uint32_t>(rng() % 3);
      crowd.step(1, 1, 15);
      // Jumps (escaped residuals), including to both ends of the position range.
      crowd.teleport(rng() % crowd.size(), static_cast<std::uint32_t>(rng() % 10000), static_cast<std::uint32_t>(rng() % 10000));
      crowd.teleport(rng() % crowd.size(), sp::kPositionMax, 0);
      crowd.turn(rng() % crowd.size(), static_cast<std::uint8_t>(rng()));  // an escaped heading
      crowd.candidates(c, 60);
      h = make_header(seq, tick, 1);
      h.precision_shift = static_cast<std::uint8_t>(shift);
      std::vector<std::uint8_t> payload;
      REQUIRE(enc.encode(h, sp::AgentFrameView::of(prev), c, {}, payload, next));
      bytes[shift] += payload.size();
      sp::SnapshotHeader dh;
      sp::AgentFrame decoded;
      std::string error;
      REQUIRE_MESSAGE(dec.decode(payload, sp::AgentFrameView::of(prev), dh, decoded, &error), error);
      CHECK(dh.precision_shift == shift);
      REQUIRE(decoded == next);
      // Sent agents within half a step of their true position (less than a whole step within a
      // step of the range's ends, where the nearer step count would leave the range).
      std::size_t ni = 0;
      for (const sp::AgentCandidate& a : c) {
        if (!a.send) continue;
        while (ni < next.size() && next.agents[ni].id < a.id) ++ni;
        REQUIRE(ni < next.size());
        REQUIRE(next.agents[ni].id == a.id);
        const std::int64_t ex = std::llabs(std::int64_t{next.agents[ni].x} - std::int64_t{a.x});
        const std::int64_t ey = std::llabs(std::int64_t{next.agents[ni].y} - std::int64_t{a.y});
        const auto near_end = [&](std::uint32_t v) { return v < step || v > sp::kPositionMax - step; };
        CHECK(ex <= (near_end(a.x) ? step - 1 : step / 2));
        CHECK(ey <= (near_end(a.y) ? step - 1 : step / 2));
        CHECK(next.agents[ni].x <= sp::kPositionMax);
        CHECK(next.agents[ni].y <= sp::kPositionMax);
        // The heading within half a heading step (2^min(shift, 3) of 256 per turn), either way round.
        const int hstep = 1 << sp::heading_shift(shift);
        const int turn = static_cast<std::int8_t>(static_cast<std::uint8_t>(next.agents[ni].heading - a.heading));
        CHECK(std::abs(turn) <= hstep / 2);
      }
      std::swap(prev, next);
    }
  }
  for (unsigned shift = 1; shift <= sp::kMaxPrecisionShift; ++shift) {
    CAPTURE(shift);
    CHECK(bytes[shift] < bytes[shift - 1]);
  }
}

TEST_CASE("a precision shift past the largest is refused by both ends") {
  SyntheticCrowd crowd(100, sp::test::test_seed());
  sp::SnapshotEncoder enc;
  sp::SnapshotDecoder dec;
  sp::AgentCandidates c;
  crowd.candidates(c);
  sp::AgentFrame frame;
  std::vector<std::uint8_t> payload;
  sp::SnapshotHeader h = make_header(1, 1, 0);
  h.precision_shift = sp::kMaxPrecisionShift + 1;
  CHECK_FALSE(enc.encode(h, sp::AgentFrameView::empty(), c, {}, payload, frame));
  h.precision_shift = sp::kMaxPrecisionShift;
  REQUIRE(enc.encode(h, sp::AgentFrameView::empty(), c, {}, payload, frame));
  sp::SnapshotHeader dh;
  sp::AgentFrame decoded;
  std::string error;
  for (unsigned shift = sp::kMaxPrecisionShift + 1; shift < 8; ++shift) {
    payload[1] = static_cast<std::uint8_t>((payload[1] & ~0x1Cu) | (shift << 2));
    CHECK_FALSE(dec.decode(payload, sp::AgentFrameView::empty(), dh, decoded, &error));
    CHECK(error.find("precision") != std::string::npos);
  }
}

TEST_CASE("the view's extent picks the precision: steps of half a pixel of a 1024-pixel view") {
  CHECK(sp::view_precision_shift(60.0f) == 0);     // a follow camera: exact
  CHECK(sp::view_precision_shift(63.9f) == 0);
  CHECK(sp::view_precision_shift(64.0f) == 1);
  CHECK(sp::view_precision_shift(127.9f) == 1);
  CHECK(sp::view_precision_shift(128.0f) == 2);
  CHECK(sp::view_precision_shift(258.0f) == 3);    // a whole 256-cell map (1/8 cell)
  CHECK(sp::view_precision_shift(512.0f) == 4);
  CHECK(sp::view_precision_shift(1025.0f) == 4);   // a whole 1024-cell map (1/4 cell, the coarsest)
  CHECK(sp::view_precision_shift(1e9f) == sp::kMaxPrecisionShift);
  CHECK(sp::view_precision_shift(0.0f) == 0);
  CHECK(sp::view_precision_shift(-5.0f) == 0);
  CHECK(sp::view_precision_shift(std::numeric_limits<float>::quiet_NaN()) == 0);
  CHECK(sp::view_precision_shift(std::numeric_limits<float>::infinity()) == 0);
}
