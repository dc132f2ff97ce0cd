#pragma once
// Sealed TCP frames of a token session (connect_token.hpp): once the server accepts a connect
// token, every frame after the Hello, either way, is sealed with the session key of its
// direction (libsodium ChaCha20-Poly1305-IETF). The nonce is a direction word (3 client ->
// server, 4 server -> client; UDP uses 1 and 2, so nonces never repeat under a key) and the
// frame's index in its stream. The index is implicit: TCP keeps order, so a frame an on-path
// attacker injects, drops, replays or reorders fails to open, and the stream is then dead (close
// it). The length prefix stays clear (the reader needs it); the sealed payload is the
// ciphertext and a 16-byte tag. No sockets.
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/transport/session_credentials.hpp"

namespace swarmfield::protocol {

inline constexpr std::size_t kFrameTagBytes = 16;

/// One direction of a sealed stream: the sender's seal() and the receiver's open() each count
/// the frames they have passed.
class FrameSeal {
 public:
  FrameSeal(const SessionKey& key, Direction direction) noexcept : key_(key), direction_(direction) {}

  /// Appends one whole frame (4-byte length, then `payload` sealed) to `out`. False (out
  /// unchanged, nothing counted) when the sealed payload would pass kMaxFrameBytes.
  [[nodiscard]] bool seal(std::span<const std::uint8_t> payload, std::vector<std::uint8_t>& out);
  /// Opens the next frame's payload (as FrameDecoder returned it, without its length) into
  /// `plain`. False (plain cleared) when it does not open as the next frame of this stream:
  /// forged, changed, replayed, reordered or a frame missing before it.
  [[nodiscard]] bool open(std::span<const std::uint8_t> sealed, std::vector<std::uint8_t>& plain);
  /// Frames sealed or opened so far.
  [[nodiscard]] std::uint64_t frames() const noexcept { return counter_; }

 private:
  SessionKey key_;
  Direction direction_;
  std::uint64_t counter_ = 0;
};

}  // namespace swarmfield::protocol
