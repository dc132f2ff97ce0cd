#pragma once
// Session secrets handed out in Welcome over TCP: a 128-bit session token that names the
// session in every UDP packet, and one 256-bit key per direction for packet authentication
// (packet.hpp). All from libsodium's CSPRNG (randombytes_buf: getrandom(2) on Linux), never
// from a seeded engine: a token or key must not be predictable from earlier ones.
#include <array>
#include <cstdint>
#include <span>

namespace swarmfield::protocol {

inline constexpr std::size_t kSessionTokenBytes = 16;
inline constexpr std::size_t kSessionKeyBytes = 32;  ///< crypto_aead_chacha20poly1305_ietf_KEYBYTES

using SessionToken = std::array<std::uint8_t, kSessionTokenBytes>;
using SessionKey = std::array<std::uint8_t, kSessionKeyBytes>;

struct SessionCredentials {
  SessionToken token{};
  SessionKey client_to_server{};  ///< seals the client's packets
  SessionKey server_to_client{};  ///< seals the server's packets

  friend bool operator==(const SessionCredentials&, const SessionCredentials&) = default;
};

/// Initializes libsodium once (thread-safe; later calls are cheap). Throws std::runtime_error
/// if it can not (no usable random source): nothing secure can run then.
void init_crypto();

/// Fills `out` from the CSPRNG.
void random_bytes(std::span<std::uint8_t> out);

/// A fresh token (never all zero) and two fresh keys.
[[nodiscard]] SessionCredentials make_session_credentials();

}  // namespace swarmfield::protocol
