#pragma once
// Plain C++ views of every protocol message, and their FlatBuffers encode/verify-decode.
// Callers never touch generated FlatBuffers code; decoders run the FlatBuffers verifier and
// range-check every field before returning a value. No sockets here.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "swarmfield/protocol/transport/session_credentials.hpp"
#include "swarmfield/protocol/transport/snapshot_ack.hpp"

namespace swarmfield::protocol {

/// 2: UDP packets sealed per session (packet.hpp), Welcome carries UdpSession credentials.
/// 3: delta snapshots (SNAPSHOTS.md): SnapshotData over TCP, raw fragments over UDP, acks in
///    Input and SnapshotAck; the FlatBuffers Snapshot / CompressedSnapshot are gone.
inline constexpr std::uint16_t kProtocolVersion = 3;
inline constexpr std::size_t kMaxNameBytes = 64;
/// `text` as a name every decoder accepts (Hello, MapInfo, KindInfo): invalid UTF-8 bytes, control
/// characters and the hidden formatting characters names may not hold each become '?', and the
/// result is cut to at most kMaxNameBytes without splitting a character. For names the sender
/// did not choose for the wire (a map's file name).
[[nodiscard]] std::string clean_name(std::string_view text);
/// Hello.connect_token's size when present (connect_token.hpp: protocol id, expiry, nonce and
/// the sealed private part).
inline constexpr std::size_t kHelloTokenBytes = 8 + 8 + 24 + 1024;
/// Hello.resume and Welcome.resume when present.
inline constexpr std::size_t kResumeSecretBytes = 32;
inline constexpr std::size_t kMaxReasonBytes = 256;
inline constexpr std::size_t kMapChunkBytes = 48 * 1024;  ///< compressed map bytes per MapChunk
inline constexpr std::int32_t kMaxMapSide = 8192;          ///< cells per side accepted in MapInfo
/// Largest |value| accepted for Input move / view / aim coordinates (world units); bounds keep the
/// server's arithmetic on them finite.
inline constexpr float kMaxWireCoordinate = 1.0e6f;

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
  /// Empty (a server with --auth open), or what connect_token.hpp's hello_token_bytes() made
  /// of the client's connect token (exactly kHelloTokenBytes; the decoder refuses other sizes
  /// above 0). The server then takes the role and name from the token, not from this Hello.
  std::vector<std::uint8_t> connect_token;
  /// Empty, or the proof of the resume secret of the session this client lost (resume.hpp
  /// resume_proof(Welcome.resume); exactly kResumeSecretBytes): the server gives it its player
  /// back. Never the secret itself, which derives the resumed session's keys.
  std::vector<std::uint8_t> resume;

  friend bool operator==(const Hello&, const Hello&) = default;
};
struct MapInfo {
  std::int32_t width = 0;   ///< cells
  std::int32_t height = 0;  ///< cells
  float cell_size = 1.0f;   ///< world units per cell
  std::uint32_t raw_bytes = 0;         ///< width*height cost bytes once decompressed
  std::uint32_t compressed_bytes = 0;  ///< zstd size of the cost bytes
  std::uint32_t chunk_count = 0;       ///< MapChunk messages that follow Welcome
  std::string name;                    ///< map label (file name or "city-seed-N"), <= kMaxNameBytes

  friend bool operator==(const MapInfo&, const MapInfo&) = default;
};
/// An enemy kind as viewers draw it (sim::AgentKind's name, radius and colour).
inline constexpr std::size_t kMaxKinds = 16;
struct KindInfo {
  std::string name;         ///< <= kMaxNameBytes
  float radius = 0.35f;     ///< world units, finite, in (0, 1024]
  std::uint32_t colour = 0; ///< 0xRRGGBB

  friend bool operator==(const KindInfo&, const KindInfo&) = default;
};
struct Welcome {
  std::uint32_t client_id = 0;
  /// UDP session token and keys (packet.hpp): only this client can seal packets for its
  /// session. Secret: anyone who reads them can speak for the client over UDP.
  SessionCredentials udp;
  std::uint16_t tick_hz = 30;
  std::uint16_t snapshot_hz = 20;
  std::uint16_t udp_port = 0;
  std::uint32_t player_id = 0;  ///< world player id for Role::kPlayer, 0 for viewers
  MapInfo map;
  std::vector<KindInfo> kinds;  ///< the world's enemy kinds (<= kMaxKinds); agents index it
  /// Empty (the server keeps no lost sessions), or the secret a Hello can resume this session
  /// with after the connection drops (exactly kResumeSecretBytes, resume.hpp). Secret.
  std::vector<std::uint8_t> resume;

  friend bool operator==(const Welcome&, const Welcome&) = default;
};
struct MapChunk {
  std::uint32_t index = 0;  ///< 0..chunk_count-1
  std::vector<std::uint8_t> bytes;  ///< slice of the zstd-compressed cost bytes, 1..kMapChunkBytes
  std::uint32_t count = 0;  ///< MapInfo::chunk_count; 0 = not stated (then index is not checked)

  friend bool operator==(const MapChunk&, const MapChunk&) = default;
};
struct Error {
  ErrorCode code = ErrorCode::kBadMessage;
  std::string reason;

  friend bool operator==(const Error&, const Error&) = default;
};
struct Bye {
  std::string reason;

  friend bool operator==(const Bye&, const Bye&) = default;
};

// ---- Messages that travel in UDP datagrams (or TCP frames for a client without UDP) --------
/// Client -> server. View rectangle in world units (x0,y0)-(x1,y1); empty = no agents wanted.
struct Input {
  std::uint32_t sequence = 0;
  float move_x = 0.0f;  ///< move intent, |(x,y)| <= 1 (clamped by the server anyway)
  float move_y = 0.0f;
  float view_x0 = 0.0f, view_y0 = 0.0f, view_x1 = 0.0f, view_y1 = 0.0f;
  SnapshotAck snapshot_ack;          ///< snapshots decoded (newest sequence + the 32 before it)
  std::uint64_t client_time_us = 0;  ///< echoed back in snapshots for RTT
  /// Trigger held: the server fires whenever the gun is ready while this is set (the World
  /// decides range, cone, rate and damage). Absent on the wire (an older encoder) = false.
  bool fire = false;
  /// Aim direction in world units from the player's position, need not be unit length; the
  /// same bounds as move / view. Meaningless without `fire`.
  float aim_x = 0.0f;
  float aim_y = 0.0f;
  /// Build request: a barricade at cell (build_x, build_y). 0 = none. A client numbers its
  /// requests 1, 2, 3, ... and repeats its newest one in every Input until it makes another,
  /// so a lost datagram does not lose it; the server applies each id at most once. Absent on
  /// the wire (an older encoder) = 0.
  std::uint32_t build_id = 0;
  /// The cell to build on, map cells (0-based column / row), each in [0, kMaxMapSide) (the
  /// decoder refuses the Input otherwise, with or without a request, like the aim). Meaningless
  /// with build_id 0 (then 0, 0).
  std::int32_t build_x = 0, build_y = 0;

  friend bool operator==(const Input&, const Input&) = default;
};

/// A player as snapshots carry it (SnapshotHeader::players).
struct PlayerState {
  std::uint32_t id = 0;
  float x = 0.0f, y = 0.0f;  ///< world units, not quantized (few players)
  std::uint32_t contacts = 0;
  /// Hit points left (the server's horde rules; full and constant without them); 0 while the
  /// player is dead, waiting to respawn. Finite, >= 0.
  float health = 0.0f;
  std::uint32_t kills = 0;  ///< agents its shots killed
  std::uint32_t shots = 0;  ///< shots it fired so far: a client draws a shot when this grows
  std::int64_t score = 0;   ///< its score under the server's rules (0 without them)
  std::uint8_t aim = 0;     ///< direction of its shots, 256 steps per turn (quantize_heading)

  friend bool operator==(const PlayerState&, const PlayerState&) = default;
};

/// Largest delta snapshot payload (SNAPSHOTS.md) accepted in a SnapshotData message: what 128
/// UDP fragments carry (snapshot_fragments.hpp checks that it matches).
inline constexpr std::size_t kMaxSnapshotPayloadBytes = 128 * 1152;

/// Server -> client over TCP: one delta snapshot payload, decoded by SnapshotReceiver.
struct SnapshotData {
  std::vector<std::uint8_t> payload;  ///< 1..kMaxSnapshotPayloadBytes

  friend bool operator==(const SnapshotData&, const SnapshotData&) = default;
};

/// One cell of a MapDelta: its cost now and its barricade.
struct MapCellChange {
  std::uint16_t x = 0;  ///< map cells, 0-based column
  std::uint16_t y = 0;  ///< map cells, 0-based row
  /// The cell's cost now, the GridMap convention: 1..254 passable, 255 blocked. Never 0, and
  /// 255 wherever `barricade` > 0 (the decoder refuses either).
  std::uint8_t cost = 1;
  /// 0 = the cell holds no barricade; else the barricade's health as a fraction of full,
  /// 1..255 (255 = whole).
  std::uint8_t barricade = 0;

  friend bool operator==(const MapCellChange&, const MapCellChange&) = default;
};

/// Most cells one MapDelta may list; the decoder refuses more. An encoder's caller with more
/// changes splits them over several messages, each with its own, increasing revision (a client
/// ignores a delta whose revision is not newer than the last it applied).
inline constexpr std::size_t kMaxMapDeltaCells = 4096;

/// Server -> client over TCP: some cells of the map changed (barricades built, damaged or
/// destroyed).
struct MapDelta {
  /// Counts the server's map changes, increasing: a client may ignore a delta whose revision is
  /// not newer than the last it applied.
  std::uint32_t revision = 0;
  std::vector<MapCellChange> cells;  ///< 1..kMaxMapDeltaCells

  friend bool operator==(const MapDelta&, const MapDelta&) = default;
};

/// Server -> client, in the clear, the first answer to a Hello with a connect token: the salt
/// the session's keys are derived from (connect_token.hpp derive_token_session_keys).
inline constexpr std::size_t kSessionSaltBytes = 32;
struct SessionSalt {
  std::array<std::uint8_t, kSessionSaltBytes> salt{};

  friend bool operator==(const SessionSalt&, const SessionSalt&) = default;
};

using TcpMessage = std::variant<Hello, Welcome, MapChunk, Error, Bye, Input, SnapshotData, MapDelta, SessionSalt>;

/// Sets of envelope message types, for decode_tcp_message's `allowed` (bit i = the i-th member
/// of the schema's Message union: Hello, Welcome, MapChunk, Error, Bye, Input, SnapshotData,
/// MapDelta, SessionSalt).
enum class MessageSet : std::uint32_t {
  kAny = 0xFFFFFFFFu,
  /// What a client may send a server: Hello, Input, Bye.
  kFromClient = (1u << 0) | (1u << 5) | (1u << 4),
  /// What a server may send a client: Welcome, MapChunk, Error, Bye, SnapshotData, MapDelta,
  /// SessionSalt.
  kFromServer = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 4) | (1u << 6) | (1u << 7) | (1u << 8),
};

/// Encodes one TCP message as a FlatBuffers envelope (no length prefix; see framing.hpp).
/// Strings longer than their limit (kMaxNameBytes, kMaxReasonBytes) are cut at a UTF-8
/// character boundary so that the peer accepts them; nothing else is checked or changed here.
[[nodiscard]] std::vector<std::uint8_t> encode_tcp_message(const TcpMessage& message);

/// Verifies and decodes a TCP envelope. nullopt (with `error` set to a short sentence naming the
/// field) if the buffer fails the FlatBuffers verifier (depth <= 8, <= 64 tables), is empty or
/// holds an unknown message type or one outside `allowed` (refused by its type alone, before its
/// body is read or anything decompressed), or any field is out of range:
///  - strings: valid UTF-8; names <= kMaxNameBytes without control characters, reasons
///    <= kMaxReasonBytes;
///  - enums (Role, ErrorCode) one of the declared values;
///  - floats finite; Input move/view/aim coordinates within +-kMaxWireCoordinate;
///  - MapInfo: 1..kMaxMapSide cells per side, cell_size in (0, 1024], raw_bytes = width*height,
///    chunk_count = map_chunk_count(compressed_bytes), compressed_bytes > 0;
///    Welcome: tick_hz and snapshot_hz in 1..1000, udp present with a 16-byte non-zero token and
///    two 32-byte keys; <= kMaxKinds kinds, each with a name like Hello.name, a finite radius in
///    (0, 1024] and a colour <= 0xFFFFFF;
///  - MapChunk: 1..kMapChunkBytes bytes, index < count when count != 0;
///  - Input: snapshot_ack_bits only with a snapshot_ack (bits of sequences before 1 are refused);
///    build_x and build_y in [0, kMaxMapSide) (with or without a build_id);
///  - SnapshotData: 1..kMaxSnapshotPayloadBytes bytes (their contents are SnapshotReceiver's to
///    check);
///  - MapDelta: 1..kMaxMapDeltaCells cells, each with x and y < kMaxMapSide, a cost of 1..255,
///    and cost 255 when it holds a barricade (whether a cell lies inside the receiver's map is
///    the receiver's to check).
[[nodiscard]] std::optional<TcpMessage> decode_tcp_message(std::span<const std::uint8_t> bytes,
                                                           std::string* error = nullptr,
                                                           MessageSet allowed = MessageSet::kAny);

/// Number of MapChunk messages that carry `compressed_bytes` (ceil(compressed / kMapChunkBytes)).
[[nodiscard]] constexpr std::uint32_t map_chunk_count(std::uint32_t compressed_bytes) noexcept {
  return static_cast<std::uint32_t>((std::uint64_t{compressed_bytes} + kMapChunkBytes - 1) / kMapChunkBytes);
}

/// Heading in radians (any value; wrapped into [0, 2*pi)) to 256 steps per turn and back
/// (result in [0, 2*pi)). Error <= pi/256 (circular). NaN and infinities give 0.
[[nodiscard]] std::uint8_t quantize_heading(float radians) noexcept;
[[nodiscard]] float dequantize_heading(std::uint8_t q) noexcept;

}  // namespace swarmfield::protocol
