#pragma once
// Reconnects: a Welcome may carry a 256-bit resume secret. A client whose connection drops
// says Hello with its proof (Hello.resume = resume_proof(secret), never the secret) within the
// server's grace period and gets its player back (server: --reconnect-grace). Each resume gives the session fresh keys and a fresh secret, all
// derived from the secret just used (libsodium crypto_kdf, BLAKE2b): both ends compute them,
// so a client of a token session can open the sealed stream of its resumed session although
// no key travels, and a secret works once. No sockets, no clocks.
#include <array>
#include <cstdint>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/transport/session_credentials.hpp"

namespace swarmfield::protocol {

using ResumeSecret = std::array<std::uint8_t, kResumeSecretBytes>;

/// What a resume gives the session, derived from the secret it was resumed with.
struct ResumedKeys {
  SessionKey client_to_server{};
  SessionKey server_to_client{};
  ResumeSecret next{};  ///< the secret of the next resume
};

/// A fresh secret from the CSPRNG (a new session's first).
[[nodiscard]] ResumeSecret make_resume_secret();
/// The keys and next secret of the session resumed with `secret` (deterministic).
[[nodiscard]] ResumedKeys derive_resumed_keys(const ResumeSecret& secret);
using ResumeProof = std::array<std::uint8_t, kResumeSecretBytes>;
/// What a resuming Hello carries (Hello.resume): a one-way name of `secret` (keyed BLAKE2b-256).
/// An on-path reader who copies it learns nothing it could derive the resumed keys from.
[[nodiscard]] ResumeProof resume_proof(const ResumeSecret& secret);
/// What a server indexes its lost sessions by: a hash of the proof, so a lookup's timing says
/// nothing about a valid proof's bytes.
[[nodiscard]] std::array<std::uint8_t, 32> resume_index(const ResumeProof& proof);

}  // namespace swarmfield::protocol
