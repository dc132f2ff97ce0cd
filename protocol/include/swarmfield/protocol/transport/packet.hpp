#pragma once
// The UDP packet layer: every datagram is a clear header followed by a body sealed with the
// session's key (libsodium ChaCha20-Poly1305-IETF AEAD; the header is the associated data),
// after netcode.io. Keys and the session token come from the server's Welcome over TCP. No
// sockets, no clocks. The wire format and the handshake are described in protocol/README.md.
//
//   offset size
//   0      1    packet type (PacketType)
//   1      1    kPacketVersion
//   2      16   session token (SessionToken; identifies the session, proves nothing)
//   18     4    sequence: low 32 bits of the sender's 64-bit packet counter (little-endian)
//   22     4    ack: low 32 bits of the newest sequence received from the peer (0 = none)
//   26     n    body, encrypted
//   26+n   16   authentication tag
//
// The AEAD nonce is a direction word and the sender's full 64-bit counter, so a nonce is never
// reused under a key; the receiver rebuilds the 64-bit value from the 32 wire bits (a wrong
// rebuild fails authentication) and runs it through a ReplayWindow.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "swarmfield/protocol/transport/sequence.hpp"
#include "swarmfield/protocol/transport/session_credentials.hpp"

namespace swarmfield::protocol {

enum class PacketType : std::uint8_t {
  kConnectRequest = 1,     ///< client -> server; padded to kConnectRequestBytes
  kChallenge = 2,          ///< server -> client; body: kChallengeBytes random bytes
  kChallengeResponse = 3,  ///< client -> server; body: the challenge bytes echoed
  kData = 4,               ///< either way once the address is confirmed; body: a datagram body or empty (keep-alive)
};

/// Which key sealed a packet (also part of the nonce).
/// UDP packets use 1 and 2; the TCP frames of a token session (frame_seal.hpp) 3 and 4, so a
/// nonce never repeats under a session key across the two transports.
enum class Direction : std::uint8_t {
  kClientToServer = 1,
  kServerToClient = 2,
  kTcpClientToServer = 3,
  kTcpServerToClient = 4,
};

inline constexpr std::size_t kMaxDatagramBytes = 1200;  ///< every UDP datagram, either way
inline constexpr std::uint8_t kPacketVersion = 2;
inline constexpr std::size_t kPacketHeaderBytes = 26;
inline constexpr std::size_t kPacketTagBytes = 16;
inline constexpr std::size_t kPacketOverheadBytes = kPacketHeaderBytes + kPacketTagBytes;
/// Largest body of one packet (a datagram is at most kMaxDatagramBytes).
inline constexpr std::size_t kMaxPacketBodyBytes = kMaxDatagramBytes - kPacketOverheadBytes;
inline constexpr std::size_t kChallengeBytes = 16;
/// A connect request is exactly this long (zero padding inside the sealed body), so the
/// challenge it may earn (kPacketOverheadBytes + kChallengeBytes = 58 bytes) is 20 times
/// smaller: the server never amplifies a forged source address.
inline constexpr std::size_t kConnectRequestBytes = kMaxDatagramBytes;
inline constexpr std::size_t kChallengePacketBytes = kPacketOverheadBytes + kChallengeBytes;

using Challenge = std::array<std::uint8_t, kChallengeBytes>;

struct PacketHeader {
  PacketType type = PacketType::kData;
  SessionToken token{};
  std::uint32_t sequence = 0;
  std::uint32_t ack = 0;
};

/// Reads the clear header of a received datagram. nullopt when it is shorter than
/// kPacketOverheadBytes or longer than kMaxDatagramBytes, has an unknown type or version, or a
/// size its type never has (a connect request other than kConnectRequestBytes, a challenge or
/// response other than kChallengePacketBytes). Nothing here is authenticated yet.
[[nodiscard]] std::optional<PacketHeader> read_packet_header(std::span<const std::uint8_t> datagram) noexcept;

/// Seals `body` (<= kMaxPacketBodyBytes) into one datagram with the header's type, token and
/// ack and `sequence` (its low 32 bits go on the wire, all 64 into the nonce).
/// Empty when the body is too large.
[[nodiscard]] std::vector<std::uint8_t> seal_packet(const PacketHeader& header, std::uint64_t sequence,
                                                    std::span<const std::uint8_t> body, const SessionKey& key,
                                                    Direction direction);

/// Verifies the tag over header + ciphertext with the nonce of `sequence` and decrypts the body
/// into `body`. False (body cleared) when authentication fails: wrong key, wrong sequence,
/// any changed byte. The header must have been read by read_packet_header.
[[nodiscard]] bool open_packet(std::span<const std::uint8_t> datagram, std::uint64_t sequence, const SessionKey& key,
                               Direction direction, std::vector<std::uint8_t>& body);

/// Constant-time comparison (a challenge is a secret until answered).
[[nodiscard]] bool same_challenge(const Challenge& a, const Challenge& b) noexcept;

/// One end of a session's packet stream: seals with our key and counter, opens with the peer's
/// key through a replay window, and keeps the acks both ways. The server holds one per client,
/// the client one for its server.
class PacketChannel {
 public:
  enum class Side : std::uint8_t { kClient, kServer };
  enum class OpenResult : std::uint8_t {
    kOk,
    kMalformed,     ///< header unreadable (read_packet_header failed)
    kWrongSession,  ///< the header's token is not this session's
    kDuplicate,     ///< a sequence already accepted (a replay or a network duplicate)
    kTooOld,        ///< behind the replay window
    kTooFarAhead,   ///< more than the window's max jump ahead of the newest accepted
    kBadAuth,       ///< the tag did not verify (forged, corrupted, wrong key)
  };

  PacketChannel(Side side, const SessionCredentials& credentials) noexcept;

  /// Seals `body` as the next packet of `type`: sequence = next_send_sequence() (then
  /// advanced), ack = the newest sequence received. A connect request is padded to
  /// kConnectRequestBytes (pass an empty body). Empty when the body is too large.
  [[nodiscard]] std::vector<std::uint8_t> seal(PacketType type, std::span<const std::uint8_t> body);

  /// Checks and opens a received datagram: header, token, replay window, then the tag. Only a
  /// packet that authenticates is recorded (window, newest received, peer ack), so forged
  /// packets change nothing. On kOk, `header` and `body` hold the packet.
  OpenResult open(std::span<const std::uint8_t> datagram, PacketHeader& header, std::vector<std::uint8_t>& body);

  [[nodiscard]] const SessionToken& token() const noexcept { return credentials_.token; }
  /// The 64-bit sequence the next seal() uses (starts at 1).
  [[nodiscard]] std::uint64_t next_send_sequence() const noexcept { return next_send_; }
  /// Newest sequence received and authenticated from the peer (0: none yet).
  [[nodiscard]] std::uint64_t newest_received() const noexcept { return window_.newest(); }
  /// Newest of our sequences the peer says it received (0: none yet); acks that claim a
  /// sequence we never sent are ignored.
  [[nodiscard]] std::uint64_t peer_ack() const noexcept { return peer_ack_; }

 private:
  Side side_;
  SessionCredentials credentials_;
  std::uint64_t next_send_ = 1;
  std::uint64_t peer_ack_ = 0;
  ReplayWindow window_;
};

[[nodiscard]] const char* to_string(PacketChannel::OpenResult result) noexcept;

}  // namespace swarmfield::protocol
