// Session tokens and keys from libsodium's CSPRNG.
#include "swarmfield/protocol/transport/session_credentials.hpp"

#include <sodium.h>

#include <algorithm>
#include <stdexcept>

namespace swarmfield::protocol {

void init_crypto() {
  // sodium_init() is thread-safe and idempotent (0 = done now, 1 = already done).
  static const int status = sodium_init();
  if (status < 0) throw std::runtime_error("libsodium could not be initialized (no random source?)");
}

void random_bytes(std::span<std::uint8_t> out) {
  init_crypto();
  randombytes_buf(out.data(), out.size());
}

SessionCredentials make_session_credentials() {
  init_crypto();
  SessionCredentials c;
  // An all-zero token is what an unset field looks like: never hand one out.
  do {
    randombytes_buf(c.token.data(), c.token.size());
  } while (std::all_of(c.token.begin(), c.token.end(), [](std::uint8_t b) { return b == 0; }));
  static_assert(kSessionKeyBytes == crypto_aead_chacha20poly1305_ietf_KEYBYTES);
  crypto_aead_chacha20poly1305_ietf_keygen(c.client_to_server.data());
  crypto_aead_chacha20poly1305_ietf_keygen(c.server_to_client.data());
  return c;
}

}  // namespace swarmfield::protocol
