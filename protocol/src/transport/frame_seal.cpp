#include "swarmfield/protocol/transport/frame_seal.hpp"

#include <sodium.h>

#include "byte_order.hpp"
#include "session_nonce.hpp"
#include "swarmfield/protocol/transport/framing.hpp"

namespace swarmfield::protocol {

static_assert(kFrameTagBytes == crypto_aead_chacha20poly1305_ietf_ABYTES);

bool FrameSeal::seal(std::span<const std::uint8_t> payload, std::vector<std::uint8_t>& out) {
  if (payload.size() + kFrameTagBytes > kMaxFrameBytes) return false;
  init_crypto();
  const std::size_t at = out.size();
  const std::size_t sealed_size = payload.size() + kFrameTagBytes;
  out.resize(at + 4 + sealed_size);
  detail::store_u32_le(out.data() + at, static_cast<std::uint32_t>(sealed_size));
  const detail::Nonce nonce = detail::make_nonce(counter_, direction_);
  static const std::uint8_t kEmpty = 0;  // libsodium wants a valid pointer even for 0 bytes
  unsigned long long written = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt(out.data() + at + 4, &written, payload.empty() ? &kEmpty : payload.data(),
                                            payload.size(), nullptr, 0, nullptr, nonce.data(), key_.data());
  ++counter_;
  return true;
}

bool FrameSeal::open(std::span<const std::uint8_t> sealed, std::vector<std::uint8_t>& plain) {
  plain.clear();
  if (sealed.size() < kFrameTagBytes) return false;
  init_crypto();
  plain.reserve(1);  // libsodium wants a valid pointer even for 0 bytes
  plain.resize(sealed.size() - kFrameTagBytes);
  const detail::Nonce nonce = detail::make_nonce(counter_, direction_);
  unsigned long long length = 0;
  if (crypto_aead_chacha20poly1305_ietf_decrypt(plain.data(), &length, nullptr,
                                                sealed.data(), sealed.size(), nullptr, 0, nonce.data(),
                                                key_.data()) != 0) {
    plain.clear();
    return false;
  }
  ++counter_;
  return true;
}

}  // namespace swarmfield::protocol
