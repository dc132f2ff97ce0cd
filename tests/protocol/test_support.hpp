#pragma once
// Helpers shared by the protocol tests: seeded random generators and sample messages.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <numbers>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "swarmfield/protocol/messages.hpp"

namespace swarmfield::protocol::test {

/// Seed for randomized tests: SWARMFIELD_TEST_SEED if set, else a fixed default. Printed by the
/// callers so a failure can be replayed with the same seed.
inline std::uint64_t test_seed() {
  if (const char* env = std::getenv("SWARMFIELD_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return 20240611;
}

/// How the agents of a generated snapshot are laid out on a 512x512 world.
enum class Layout { kSpread, kPacked };

/// A snapshot of `n` agents: ids increasing with small random gaps (as a server's sorted
/// slots with some dead agents), positions uniform over 512x512 (kSpread) or normal with
/// sigma 12 around (300, 200) (kPacked, the swarm closing in on a player), headings random
/// (kSpread) or pointing at the centre (kPacked).
inline Snapshot make_snapshot(std::size_t n, Layout layout, std::uint64_t seed, std::uint32_t tick = 1234) {
  std::mt19937_64 rng(seed);
  Snapshot s;
  s.tick = tick;
  s.baseline_tick = 0;
  s.echo_client_time_us = 987654321;
  s.total_agents = static_cast<std::uint32_t>(n + 17);
  s.rebuilds = 42;
  s.players = {{1, 300.5f, 200.25f, 3}, {2, 10.0f, 500.0f, 0}};
  s.agents.ids.resize(n);
  s.agents.xs.resize(n);
  s.agents.ys.resize(n);
  s.agents.headings.resize(n);
  std::uniform_real_distribution<float> uniform(0.0f, 512.0f);
  std::normal_distribution<float> normal(0.0f, 12.0f);
  std::uniform_int_distribution<int> gap(1, 3);
  std::uint32_t id = 100;
  for (std::size_t i = 0; i < n; ++i) {
    id += static_cast<std::uint32_t>(gap(rng));
    s.agents.ids[i] = id;
    float x = 0.0f;
    float y = 0.0f;
    float heading = 0.0f;
    if (layout == Layout::kSpread) {
      x = uniform(rng);
      y = uniform(rng);
      heading = uniform(rng) / 512.0f * 2.0f * std::numbers::pi_v<float>;
    } else {
      x = 300.0f + normal(rng);
      y = 200.0f + normal(rng);
      heading = std::atan2(200.0f - y, 300.0f - x);
    }
    s.agents.xs[i] = quantize_position(x);
    s.agents.ys[i] = quantize_position(y);
    s.agents.headings[i] = quantize_heading(heading);
  }
  return s;
}

/// One sample of every TCP message kind, with every field away from its default so that a
/// field lost in encoding shows up.
inline std::vector<TcpMessage> sample_messages() {
  std::vector<TcpMessage> out;
  out.emplace_back(Hello{kProtocolVersion, Role::kPlayer, "bot-7 \xC3\xA9t\xC3\xA9"});  // UTF-8 name
  Welcome w;
  w.client_id = 77;
  for (std::size_t i = 0; i < w.udp.token.size(); ++i) w.udp.token[i] = static_cast<std::uint8_t>(0xF0 + i);
  for (std::size_t i = 0; i < kSessionKeyBytes; ++i) {
    w.udp.client_to_server[i] = static_cast<std::uint8_t>(i);
    w.udp.server_to_client[i] = static_cast<std::uint8_t>(255 - i);
  }
  w.tick_hz = 30;
  w.snapshot_hz = 20;
  w.udp_port = 40123;
  w.player_id = 5;
  w.map = MapInfo{512, 256, 0.5f, 512u * 256u, 70000, map_chunk_count(70000), "Boston_0_512.map"};
  w.kinds = {{"runner", 0.25f, 0xF2A33A}, {"walker", 0.35f, 0xE04848}, {"brute", 0.8f, 0x9A5BD6}};
  out.emplace_back(w);
  out.emplace_back(MapChunk{2, std::vector<std::uint8_t>(1000, 0xAB), 3});
  out.emplace_back(Error{ErrorCode::kVersionMismatch, "protocol version 9 requested, server speaks 1"});
  out.emplace_back(Bye{"server shutting down"});
  out.emplace_back(Input{99, 0.6f, -0.8f, 10.0f, 20.0f, 110.0f, 95.5f, 1200, 123456789012ull});
  out.emplace_back(make_snapshot(10, Layout::kSpread, 1));     // small: plain Snapshot table
  out.emplace_back(make_snapshot(3000, Layout::kPacked, 2));   // large: CompressedSnapshot
  Snapshot kinded = make_snapshot(12, Layout::kPacked, 3);     // with each agent's kind
  kinded.agents.kinds.resize(kinded.agents.ids.size());
  for (std::size_t i = 0; i < kinded.agents.kinds.size(); ++i) kinded.agents.kinds[i] = static_cast<std::uint8_t>(i % 3);
  out.emplace_back(kinded);
  return out;
}

/// Independent re-statement of the documented limits: any value decode_tcp_message returns
/// must satisfy these (used on decodes of mutated buffers).
inline bool satisfies_limits(const TcpMessage& message) {
  struct Check {
    static bool finite(float v) { return std::isfinite(v); }
    bool operator()(const Hello& m) const { return m.name.size() <= kMaxNameBytes && m.role <= Role::kPlayer; }
    bool operator()(const Welcome& m) const {
      return m.map.width >= 1 && m.map.width <= kMaxMapSide && m.map.height >= 1 && m.map.height <= kMaxMapSide &&
             finite(m.map.cell_size) && m.map.cell_size > 0 &&
             m.map.raw_bytes == static_cast<std::uint32_t>(m.map.width * m.map.height) &&
             m.map.chunk_count == map_chunk_count(m.map.compressed_bytes) && m.map.name.size() <= kMaxNameBytes &&
             m.tick_hz >= 1 && m.snapshot_hz >= 1 &&
             std::any_of(m.udp.token.begin(), m.udp.token.end(), [](std::uint8_t b) { return b != 0; }) &&
             m.kinds.size() <= kMaxKinds && std::all_of(m.kinds.begin(), m.kinds.end(), [](const KindInfo& k) {
               return k.name.size() <= kMaxNameBytes && finite(k.radius) && k.radius > 0.0f && k.colour <= 0xFFFFFFu;
             });
    }
    bool operator()(const MapChunk& m) const {
      return !m.bytes.empty() && m.bytes.size() <= kMapChunkBytes && (m.count == 0 || m.index < m.count);
    }
    bool operator()(const Error& m) const {
      const auto c = static_cast<int>(m.code);
      return c >= 1 && c <= 5 && m.reason.size() <= kMaxReasonBytes;
    }
    bool operator()(const Bye& m) const { return m.reason.size() <= kMaxReasonBytes; }
    bool operator()(const Input& m) const {
      for (float v : {m.move_x, m.move_y, m.view_x0, m.view_y0, m.view_x1, m.view_y1}) {
        if (!finite(v) || std::fabs(v) > kMaxWireCoordinate) return false;
      }
      return true;
    }
    bool operator()(const Snapshot& m) const {
      if (m.players.size() > kMaxPlayersPerSnapshot) return false;
      for (const auto& p : m.players) {
        if (!finite(p.x) || !finite(p.y)) return false;
      }
      const auto n = m.agents.ids.size();
      return n <= kMaxAgentsPerSnapshot && m.agents.xs.size() == n && m.agents.ys.size() == n &&
             m.agents.headings.size() == n && m.baseline_tick <= m.tick &&
             (m.agents.kinds.empty() || m.agents.kinds.size() == n) &&
             std::all_of(m.agents.kinds.begin(), m.agents.kinds.end(), [](std::uint8_t k) { return k < kMaxKinds; });
    }
  };
  return std::visit(Check{}, message);
}

}  // namespace swarmfield::protocol::test
