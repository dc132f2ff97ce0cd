// Interpolation between snapshots by agent id, including agents that appear and disappear.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>

#include "swarmfield/client/snapshot_interpolation.hpp"

namespace client = swarmfield::client;
namespace protocol = swarmfield::protocol;

namespace {

/// A decoded snapshot with these agents (id, x, y, heading; any order: kept sorted by id as
/// SnapshotState promises) and kinds = id % 3.
client::SnapshotState make(std::uint32_t tick, std::initializer_list<std::tuple<std::uint32_t, float, float, float>> agents) {
  client::SnapshotState s;
  s.tick = tick;
  s.total_agents = static_cast<std::uint32_t>(agents.size()) + 100;
  for (const auto& [id, x, y, h] : agents) {
    s.agents.push_back({id, x, y, h, static_cast<std::uint8_t>(id % 3)});
  }
  std::sort(s.agents.begin(), s.agents.end(), [](const auto& p, const auto& q) { return p.id < q.id; });
  return s;
}

const client::RenderAgent* find(const client::InterpolatedFrame& f, std::uint32_t id) {
  for (const auto& a : f.agents) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("agents in both snapshots are lerped by id") {
  const auto a = make(10, {{1, 10.0f, 20.0f, 0.0f}, {2, 100.0f, 100.0f, 1.0f}});
  const auto b = make(12, {{1, 14.0f, 16.0f, 0.0f}, {2, 100.0f, 110.0f, 1.0f}});
  client::InterpolatedFrame f;
  client::interpolate_snapshots(a, b, 0.25f, f);
  CHECK(f.tick == doctest::Approx(10.5));
  CHECK(f.total_agents == b.total_agents);
  REQUIRE(f.agents.size() == 2);
  const auto* one = find(f, 1);
  const auto* two = find(f, 2);
  REQUIRE(one);
  REQUIRE(two);
  CHECK(one->x == doctest::Approx(11.0).epsilon(1e-4));
  CHECK(one->y == doctest::Approx(19.0).epsilon(1e-4));
  CHECK(two->y == doctest::Approx(102.5).epsilon(1e-4));

  client::interpolate_snapshots(a, b, 0.0f, f);
  CHECK(find(f, 1)->x == doctest::Approx(10.0));
  client::interpolate_snapshots(a, b, 1.0f, f);
  CHECK(find(f, 1)->x == doctest::Approx(14.0));
  client::interpolate_snapshots(a, b, 7.0f, f);  // clamped
  CHECK(find(f, 1)->x == doctest::Approx(14.0));
}

TEST_CASE("unpack_frame: dequantized agents by id, stale ones where the predictor puts them, grid and header") {
  protocol::SnapshotHeader h;
  h.sequence = 7;
  h.tick = 20;
  h.echo_client_time_us = 555;
  h.total_agents = 1000;
  h.rebuilds = 4;
  h.players = {{3, 1.5f, 2.5f, 9}};
  protocol::AgentFrame frame;
  frame.tick = 20;
  // Agent 1 updated at tick 20; agent 2 last updated at tick 16 moving +2 position units
  // (1/64 cell) per tick in x: predicted 4 ticks on, +8 units.
  frame.agents.push_back({1, 64 * 10, 64 * 20, 20, 0, 0, 64, 2});
  frame.agents.push_back({2, 64 * 30, 64 * 5, 16, 32, 0, 0, 1});
  protocol::set_density_grid_geometry(frame.grid, 0, 0, 64, 64);
  frame.grid.levels.assign(static_cast<std::size_t>(frame.grid.width) * frame.grid.height, 0);
  frame.grid.levels[0] = 3;  // 4..7 agents
  client::SnapshotState s;
  client::unpack_frame(h, frame, 0.5f, s);
  CHECK(s.sequence == 7);
  CHECK(s.tick == 20);
  CHECK(s.echo_client_time_us == 555);
  CHECK(s.total_agents == 1000);
  CHECK(s.rebuilds == 4);
  REQUIRE(s.players.size() == 1);
  CHECK(s.players[0].contacts == 9);
  CHECK(s.updated == 1);
  CHECK(s.cell_size == 0.5f);
  REQUIRE(s.agents.size() == 2);
  CHECK(s.agents[0].x == doctest::Approx(5.0));  // 10 cells of 0.5 world units
  CHECK(s.agents[0].y == doctest::Approx(10.0));
  CHECK(s.agents[0].heading == doctest::Approx(std::numbers::pi / 2).epsilon(1e-5));
  CHECK(s.agents[0].kind == 2);
  CHECK(s.agents[1].x == doctest::Approx((64.0 * 30 + 8) / 64.0 * 0.5));
  CHECK(s.agents[1].y == doctest::Approx(2.5));
  CHECK(s.density == frame.grid);
  CHECK(client::density_agents_floor(s.density) == 4);
}

TEST_CASE("appearing agents show at their new position, disappearing ones are dropped") {
  const auto a = make(10, {{1, 10.0f, 10.0f, 0.0f}, {2, 20.0f, 20.0f, 0.0f}});
  const auto b = make(12, {{2, 22.0f, 20.0f, 0.0f}, {3, 30.0f, 40.0f, 0.0f}});
  client::InterpolatedFrame f;
  client::interpolate_snapshots(a, b, 0.5f, f);
  CHECK(find(f, 1) == nullptr);  // gone in the newer snapshot
  REQUIRE(find(f, 2));
  CHECK(find(f, 2)->x == doctest::Approx(21.0));
  REQUIRE(find(f, 3));  // new: no older position to blend from
  CHECK(find(f, 3)->x == doctest::Approx(30.0));
  CHECK(find(f, 3)->y == doctest::Approx(40.0));
  CHECK(f.agents.size() == 2);
}

TEST_CASE("headings blend along the shorter arc") {
  const float pi = std::numbers::pi_v<float>;
  const auto a = make(1, {{1, 0.0f, 0.0f, 2.0f * pi - 0.2f}});
  const auto b = make(2, {{1, 0.0f, 0.0f, 0.2f}});
  client::InterpolatedFrame f;
  client::interpolate_snapshots(a, b, 0.5f, f);
  const float h = f.agents[0].heading;
  // Halfway between -0.2 and 0.2 through 0, not through pi.
  CHECK(std::abs(std::sin(h)) < 0.05f);
  CHECK(std::cos(h) > 0.99f);
}

TEST_CASE("players are lerped by id; the newer snapshot's density grid is shown") {
  auto a = make(1, {{1, 1.0f, 1.0f, 0.0f}});
  auto b = make(3, {{1, 3.0f, 1.0f, 0.0f}, {2, 5.0f, 5.0f, 0.0f}});
  a.players = {{7, 0.0f, 0.0f, 1}};
  b.players = {{7, 10.0f, 20.0f, 2, 35.0f, 12}, {8, 1.0f, 1.0f, 0, 0.0f, 3}};
  protocol::set_density_grid_geometry(b.density, 0, 0, 128, 128);
  b.density.levels.assign(static_cast<std::size_t>(b.density.width) * b.density.height, 1);
  b.cell_size = 2.0f;
  client::InterpolatedFrame f;
  client::interpolate_snapshots(a, b, 0.5f, f);
  CHECK(f.agents.size() == 2);
  REQUIRE(f.players.size() == 2);
  CHECK(f.players[0].x == doctest::Approx(5.0));
  CHECK(f.players[0].y == doctest::Approx(10.0));
  CHECK(f.players[0].contacts == 2);
  // Health and kills are the newer snapshot's (a frame between two snapshots showed every
  // player dead with 0 kills in the HUD).
  CHECK(f.players[0].health == 35.0f);
  CHECK(f.players[0].kills == 12);
  CHECK(f.players[1].x == doctest::Approx(1.0));
  CHECK(f.players[1].health == 0.0f);
  CHECK(f.players[1].kills == 3);
  CHECK(f.density == b.density);
  CHECK(f.density_cell_size == 2.0f);
  client::unpack_snapshot(a, f);
  CHECK(f.density.empty());
}

TEST_CASE("interpolate_history picks the bracketing pair and clamps at both ends") {
  std::deque<client::ReceivedSnapshot> history;
  client::InterpolatedFrame f;
  CHECK_FALSE(client::interpolate_history(history, 5.0, f));
  const auto now = std::chrono::steady_clock::now();
  history.push_back({make(10, {{1, 0.0f, 0.0f, 0.0f}}), now});
  history.push_back({make(12, {{1, 2.0f, 0.0f, 0.0f}}), now});
  history.push_back({make(14, {{1, 6.0f, 0.0f, 0.0f}}), now});
  REQUIRE(client::interpolate_history(history, 13.0, f));
  CHECK(f.agents[0].x == doctest::Approx(4.0));
  REQUIRE(client::interpolate_history(history, 11.5, f));
  CHECK(f.agents[0].x == doctest::Approx(1.5));
  REQUIRE(client::interpolate_history(history, 3.0, f));  // before the oldest
  CHECK(f.agents[0].x == doctest::Approx(0.0));
  CHECK(f.tick == doctest::Approx(10.0));
  REQUIRE(client::interpolate_history(history, 99.0, f));  // after the newest: no extrapolation
  CHECK(f.agents[0].x == doctest::Approx(6.0));
}

TEST_CASE("the interpolation clock follows the server tick and renders behind it") {
  using namespace std::chrono;
  client::InterpolationClock clock(30.0);
  CHECK_FALSE(clock.valid());
  const auto t0 = steady_clock::time_point(seconds(1000));
  // Snapshots every 50 ms (1.5 ticks at 30 Hz) with +-5 ms jitter.
  for (int i = 0; i < 40; ++i) {
    const auto jitter = milliseconds((i % 3) * 5 - 5);
    clock.observe(static_cast<std::uint32_t>(300 + i * 3 / 2), t0 + milliseconds(50 * i) + jitter);
  }
  REQUIRE(clock.valid());
  const auto now = t0 + milliseconds(50 * 39);
  const double estimate = clock.render_tick(now, 0.0);
  CHECK(std::abs(estimate - (300 + 39 * 1.5)) < 1.5);
  CHECK(clock.render_tick(now, 3.0) == doctest::Approx(estimate - 3.0));
  // A jump of far more than a second (server restart) resets the estimate.
  clock.observe(10, now);
  CHECK(std::abs(clock.render_tick(now, 0.0) - 10.0) < 0.01);
}

TEST_CASE("each agent keeps its kind through unpacking and interpolation") {
  auto a = make(10, {{1, 10.0f, 20.0f, 0.0f}, {2, 100.0f, 100.0f, 1.0f}, {3, 5.0f, 5.0f, 0.0f}});
  auto b = make(12, {{3, 6.0f, 5.0f, 0.0f}, {1, 14.0f, 16.0f, 0.0f}, {2, 100.0f, 110.0f, 1.0f}});
  b.agents[0].kind = 7;  // the newer snapshot's kind wins
  client::InterpolatedFrame f;
  client::interpolate_snapshots(a, b, 0.5f, f);
  REQUIRE(find(f, 1) != nullptr);
  CHECK(find(f, 1)->kind == 7);
  CHECK(find(f, 2)->kind == 2);
  CHECK(find(f, 3)->kind == 0);
  client::unpack_snapshot(a, f);
  CHECK(find(f, 1)->kind == 1);
}
