#pragma once
// Connect tokens, after netcode's (github.com/mas-bandwidth/netcode, STANDARD.md "Connect
// Token"): a backend (matchmaker) that shares a 256-bit key with the game servers issues a token
// per player and match. The client reads the public part (which servers, when it expires, the
// session keys); the private part, sealed with the shared key (libsodium
// XChaCha20-Poly1305-IETF; the version, protocol id and expiry are the associated data), holds
// the same keys, the client id, the role and name, and the servers it is good for. The client
// sends only the sealed part (in Hello); the server opens it, so the keys never travel over
// the game's stream and a client can not change its role, name or expiry. No sockets, no
// clocks: callers pass the time (Unix seconds).
//
// Text form (what `swarmfield-tool token` prints and clients read): "swft1:" + base64 (URL-safe,
// no padding) of the binary public token (layout in connect_token.cpp, kConnectTokenBytes max).
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/transport/session_credentials.hpp"

namespace swarmfield::protocol {

/// Names the game and the protocol generation a token is for: a token made for another game
/// (or for protocol 3's successor) is refused even under the same key.
inline constexpr std::uint64_t kConnectProtocolId = 0x5357'4652'4D00'0003ull;  // "SWFRM", 3
inline constexpr std::size_t kTokenKeyBytes = 32;                              ///< the shared key
inline constexpr std::size_t kTokenNonceBytes = 24;                            ///< XChaCha20 nonce
inline constexpr std::size_t kTokenTagBytes = 16;
/// Sealed private part: 1008 bytes of zero-padded plaintext plus the tag, 1024 like netcode's.
inline constexpr std::size_t kTokenPrivateBytes = 1024;
inline constexpr std::size_t kMaxTokenServers = 8;
inline constexpr std::size_t kMaxTokenAddressBytes = 64;  ///< "host:port"
// What Hello carries (messages.hpp): protocol id (8), expiry (8), nonce, sealed private part.
static_assert(kHelloTokenBytes == 8 + 8 + kTokenNonceBytes + kTokenPrivateBytes);

using TokenKey = std::array<std::uint8_t, kTokenKeyBytes>;
using TokenNonce = std::array<std::uint8_t, kTokenNonceBytes>;

/// What the backend decides for one player and match.
struct TokenGrant {
  std::uint64_t client_id = 0;  ///< the backend's id of the player (logged; the rules may use it)
  Role role = Role::kViewer;    ///< spectators get kViewer
  std::string name;             ///< <= kMaxNameBytes, no control characters
  std::vector<std::string> server_addresses;  ///< 1..kMaxTokenServers "host:port", each <= kMaxTokenAddressBytes
  std::uint32_t timeout_s = 0;  ///< idle timeout the server applies to this client; 0 = the server's own
};

/// The public token the client holds.
struct ConnectToken {
  std::uint64_t protocol_id = kConnectProtocolId;
  std::uint64_t create_unix_s = 0;
  std::uint64_t expire_unix_s = 0;  ///< the server refuses the token from this second on
  std::uint32_t timeout_s = 0;
  std::vector<std::string> server_addresses;
  SessionKey client_to_server{};  ///< seals the client's frames and packets
  SessionKey server_to_client{};  ///< seals the server's frames and packets
  TokenNonce nonce{};
  std::array<std::uint8_t, kTokenPrivateBytes> sealed{};  ///< opaque to the client

  friend bool operator==(const ConnectToken&, const ConnectToken&) = default;
};

/// What the server learns from an opened token.
struct OpenedToken {
  TokenGrant grant;
  SessionKey client_to_server{};
  SessionKey server_to_client{};
  std::uint64_t expire_unix_s = 0;
  /// The sealed part's tag: unique per token (a fresh random nonce and keys each), the key of
  /// the server's used-token set.
  std::array<std::uint8_t, kTokenTagBytes> tag{};
};

/// Why a token was refused.
enum class TokenRefusal : std::uint8_t { kMalformed, kWrongProtocol, kExpired, kForged, kWrongServer, kReplayed };
[[nodiscard]] const char* token_refusal_name(TokenRefusal refusal) noexcept;

/// The wall clock in Unix seconds: tokens expire by it (the backend that issues them and the
/// servers that read them agree on the wall clock, not on a steady one).
[[nodiscard]] inline std::uint64_t unix_seconds() {
  const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count());
}

/// Issues a token valid from `now_unix_s` for `valid_for_s` seconds (> 0) with fresh session
/// keys and nonce from the CSPRNG. nullopt (with `error`) when the grant breaks a limit above.
[[nodiscard]] std::optional<ConnectToken> issue_connect_token(const TokenKey& key, const TokenGrant& grant,
                                                              std::uint64_t now_unix_s, std::uint64_t valid_for_s,
                                                              std::string* error = nullptr,
                                                              std::uint64_t protocol_id = kConnectProtocolId);

/// The token's text form, and back. Reading checks the layout and limits, not the seal (only a
/// server can), and never reads past the text; nullopt with `error` naming what is wrong.
[[nodiscard]] std::string encode_connect_token(const ConnectToken& token);
[[nodiscard]] std::optional<ConnectToken> decode_connect_token(std::string_view text, std::string* error = nullptr);

/// The bytes a client puts in Hello.connect_token (kHelloTokenBytes).
[[nodiscard]] std::vector<std::uint8_t> hello_token_bytes(const ConnectToken& token);

/// Server side: opens Hello.connect_token with `key`. Refuses (returning the reason, `error`
/// in words) a wrong length (kMalformed), another protocol id (kWrongProtocol), an expiry at or
/// before `now_unix_s` (kExpired), a seal that does not open under `key` or any changed byte
/// (kForged). Replays and the server address are the caller's checks (it knows its addresses
/// and the tokens it took).
struct TokenOpenResult {
  std::optional<OpenedToken> token;
  TokenRefusal refusal = TokenRefusal::kMalformed;  ///< when token is empty
  std::string error;
};
[[nodiscard]] TokenOpenResult open_hello_token(std::span<const std::uint8_t> hello_bytes, const TokenKey& key,
                                               std::uint64_t now_unix_s);

/// The keys a token session seals with (its TCP frames both ways and its UDP packets): each of
/// the token's keys hashed with the server's fresh salt (keyed BLAKE2b-256, the token key as the
/// key). A token's Hello replayed to another server, or to this one after a restart, gets
/// another salt and so other keys: no two sessions ever seal with the same key and nonce.
struct TokenSessionKeys {
  SessionKey client_to_server{};
  SessionKey server_to_client{};
};
[[nodiscard]] TokenSessionKeys derive_token_session_keys(const SessionKey& client_to_server,
                                                         const SessionKey& server_to_client,
                                                         std::span<const std::uint8_t, kSessionSaltBytes> salt);

/// A key as text: 64 hex digits (a key file holds this, whitespace round it allowed). nullopt
/// with `error` otherwise.
[[nodiscard]] std::optional<TokenKey> parse_token_key(std::string_view text, std::string* error = nullptr);
[[nodiscard]] std::string format_token_key(const TokenKey& key);
/// A fresh key from the CSPRNG.
[[nodiscard]] TokenKey make_token_key();

}  // namespace swarmfield::protocol
