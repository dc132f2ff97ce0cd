#pragma once
// Plain C++ views of every protocol message, and their FlatBuffers encode/verify-decode.
// Callers never touch generated FlatBuffers code; decoders run the FlatBuffers verifier and
// range-check every field before returning a value. No sockets here.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace swarmfield::protocol {

inline constexpr std::uint16_t kProtocolVersion = 1;
inline constexpr std::size_t kMaxNameBytes = 64;
inline constexpr std::size_t kMaxReasonBytes = 256;
inline constexpr std::size_t kMaxPlayersPerSnapshot = 256;
inline constexpr std::size_t kMaxAgentsPerSnapshot = 200000;
inline constexpr std::size_t kMapChunkBytes = 48 * 1024;  ///< compressed map bytes per MapChunk

enum class Role : std::uint8_t { kViewer = 0, kPlayer = 1 };

enum class ErrorCode : std::uint16_t {
  kBadMessage = 1,       ///< failed verification / unexpected message
  kVersionMismatch = 2,  ///< reason names both versions
  kServerFull = 3,
  kFrameTooLarge = 4,
  kShuttingDown = 5,
};

// ---- TCP messages --------------------------------------------------------------------------
struct Hello {
  std::uint16_t protocol_version = kProtocolVersion;
  Role role = Role::kViewer;
  std::string name;  ///< <= kMaxNameBytes
};
struct MapInfo {
  std::int32_t width = 0;   ///< cells
  std::int32_t height = 0;  ///< cells
  float cell_size = 1.0f;   ///< world units per cell
  std::uint32_t raw_bytes = 0;         ///< width*height cost bytes once decompressed
  std::uint32_t compressed_bytes = 0;  ///< zstd size of the cost bytes
  std::uint32_t chunk_count = 0;       ///< MapChunk messages that follow Welcome
  std::string name;                    ///< map label (file name or "city-seed-N")
};
struct Welcome {
  std::uint32_t client_id = 0;
  std::uint64_t session_token = 0;  ///< proves UDP datagrams come from this client
  std::uint16_t tick_hz = 30;
  std::uint16_t snapshot_hz = 20;
  std::uint16_t udp_port = 0;
  std::uint32_t player_id = 0;  ///< world player id for Role::kPlayer, 0 for viewers
  MapInfo map;
};
struct MapChunk {
  std::uint32_t index = 0;  ///< 0..chunk_count-1
  std::vector<std::uint8_t> bytes;  ///< slice of the zstd-compressed cost bytes
};
struct Error {
  ErrorCode code = ErrorCode::kBadMessage;
  std::string reason;
};
struct Bye {
  std::string reason;
};

// ---- Messages that travel in UDP datagrams (or TCP frames for a client without UDP) --------
/// Client -> server. View rectangle in world units (x0,y0)-(x1,y1); empty = no agents wanted.
struct Input {
  std::uint32_t sequence = 0;
  float move_x = 0.0f;  ///< move intent, |(x,y)| <= 1 (clamped by the server anyway)
  float move_y = 0.0f;
  float view_x0 = 0.0f, view_y0 = 0.0f, view_x1 = 0.0f, view_y1 = 0.0f;
  std::uint32_t ack_tick = 0;      ///< newest snapshot tick received (delta baselines, later)
  std::uint64_t client_time_us = 0; ///< echoed back in snapshots for RTT
};

struct PlayerState {
  std::uint32_t id = 0;
  float x = 0.0f, y = 0.0f;  ///< world units, not quantized (few players)
  std::uint32_t contacts = 0;
};

/// Agents quantized: position = q / kPositionScale world units (uint16: 0 .. 2047.97 at 1/32),
/// heading = q * 2*pi / 256 radians. Parallel arrays of equal length, sorted by id.
inline constexpr float kPositionScale = 32.0f;
struct AgentBlock {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint16_t> xs;
  std::vector<std::uint16_t> ys;
  std::vector<std::uint8_t> headings;
};

struct Snapshot {
  std::uint32_t tick = 0;
  std::uint32_t baseline_tick = 0;  ///< 0 = full snapshot (delta encoding: later issue)
  std::uint64_t echo_client_time_us = 0;  ///< last Input.client_time_us seen from this client
  std::uint32_t total_agents = 0;   ///< in the world, not only in view
  std::uint64_t rebuilds = 0;
  std::vector<PlayerState> players;
  AgentBlock agents;
};

using TcpMessage = std::variant<Hello, Welcome, MapChunk, Error, Bye, Input, Snapshot>;
using UdpMessage = std::variant<Input, Snapshot>;

/// Encodes one TCP message as a FlatBuffers envelope (no length prefix; see framing.hpp).
[[nodiscard]] std::vector<std::uint8_t> encode_tcp_message(const TcpMessage& message);

/// Verifies and decodes a TCP envelope. nullopt (with `error` set) if the buffer fails the
/// verifier, is empty, or any field is out of range (names too long, arrays of unequal length,
/// non-finite floats, ...).
[[nodiscard]] std::optional<TcpMessage> decode_tcp_message(std::span<const std::uint8_t> bytes,
                                                           std::string* error = nullptr);

/// Quantizes a world position to the wire (clamped to the uint16 range) and back.
[[nodiscard]] std::uint16_t quantize_position(float world) noexcept;
[[nodiscard]] float dequantize_position(std::uint16_t q) noexcept;
[[nodiscard]] std::uint8_t quantize_heading(float radians) noexcept;
[[nodiscard]] float dequantize_heading(std::uint8_t q) noexcept;

}  // namespace swarmfield::protocol
