#include "swarmfield/protocol/transport/resume.hpp"

#include <sodium.h>

namespace swarmfield::protocol {
namespace {

static_assert(kResumeSecretBytes == crypto_kdf_KEYBYTES);
constexpr char kContext[crypto_kdf_CONTEXTBYTES + 1] = "swfresum";

template <std::size_t N>
void derive(std::array<std::uint8_t, N>& out, std::uint64_t id, const ResumeSecret& secret) {
  crypto_kdf_derive_from_key(out.data(), out.size(), id, kContext, secret.data());
}

}  // namespace

ResumeSecret make_resume_secret() {
  ResumeSecret s{};
  random_bytes(s);
  return s;
}

ResumedKeys derive_resumed_keys(const ResumeSecret& secret) {
  init_crypto();
  ResumedKeys k;
  derive(k.client_to_server, 1, secret);
  derive(k.server_to_client, 2, secret);
  derive(k.next, 3, secret);
  return k;
}

ResumeProof resume_proof(const ResumeSecret& secret) {
  init_crypto();
  static constexpr unsigned char kProofKey[] = "swarmfield resume proof";
  ResumeProof p{};
  crypto_generichash(p.data(), p.size(), secret.data(), secret.size(), kProofKey, sizeof kProofKey - 1);
  return p;
}

std::array<std::uint8_t, 32> resume_index(const ResumeProof& proof) {
  init_crypto();
  std::array<std::uint8_t, 32> h{};
  crypto_generichash(h.data(), h.size(), proof.data(), proof.size(), nullptr, 0);
  return h;
}

}  // namespace swarmfield::protocol
