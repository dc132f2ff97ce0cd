#pragma once
// Helpers shared by the protocol tests: seeds and sample messages.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <numbers>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "swarmfield/protocol/transport/messages.hpp"

namespace swarmfield::protocol::test {

/// Seed for randomized tests: SWARMFIELD_TEST_SEED if set, else a fixed default. Printed by the
/// callers so a failure can be replayed with the same seed.
inline std::uint64_t test_seed() {
  if (const char* env = std::getenv("SWARMFIELD_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return 20240611;
}

/// One sample of every TCP message kind, with every field away from its default so that a
/// field lost in encoding shows up.
inline std::vector<TcpMessage> sample_messages() {
  std::vector<TcpMessage> out;
  out.emplace_back(Hello{kProtocolVersion, Role::kPlayer, "bot-7 \xC3\xA9t\xC3\xA9", {}, {}});  // UTF-8 name
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
  out.emplace_back(Input{99, 0.6f, -0.8f, 10.0f, 20.0f, 110.0f, 95.5f, SnapshotAck{1200, 0xA5A5F00Fu}, 123456789012ull,
                         true, -3.5f, 12.25f, 7, 300, 41});
  std::vector<std::uint8_t> payload(3000);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 7 + 1);
  out.emplace_back(SnapshotData{payload});
  // A barricade built (whole), one damaged, one destroyed (back to a road of cost 2).
  out.emplace_back(MapDelta{4242, {{12, 7, 255, 255}, {13, 7, 255, 90}, {14, 8, 2, 0}, {8191, 0, 254, 0}}});
  SessionSalt salt;
  for (std::size_t i = 0; i < salt.salt.size(); ++i) salt.salt[i] = static_cast<std::uint8_t>(3 * i + 1);
  out.emplace_back(salt);
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
      for (float v : {m.move_x, m.move_y, m.view_x0, m.view_y0, m.view_x1, m.view_y1, m.aim_x, m.aim_y}) {
        if (!finite(v) || std::fabs(v) > kMaxWireCoordinate) return false;
      }
      // No ack bit may name a sequence before 1.
      const std::uint32_t latest = m.snapshot_ack.latest;
      for (std::uint32_t bit = 0; bit < 32; ++bit) {
        if (((m.snapshot_ack.received >> bit) & 1u) != 0 && latest < bit + 2) return false;
      }
      return m.build_x >= 0 && m.build_x < kMaxMapSide && m.build_y >= 0 && m.build_y < kMaxMapSide;
    }
    bool operator()(const SnapshotData& m) const {
      return !m.payload.empty() && m.payload.size() <= kMaxSnapshotPayloadBytes;
    }
    bool operator()(const MapDelta& m) const {
      return !m.cells.empty() && m.cells.size() <= kMaxMapDeltaCells &&
             std::all_of(m.cells.begin(), m.cells.end(), [](const MapCellChange& c) {
               return c.x < kMaxMapSide && c.y < kMaxMapSide && c.cost >= 1 && (c.barricade == 0 || c.cost == 255);
             });
    }
    bool operator()(const SessionSalt&) const { return true; }  // any 32 bytes
  };
  return std::visit(Check{}, message);
}

}  // namespace swarmfield::protocol::test
