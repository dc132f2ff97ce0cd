// UDP packet layer: clear header + ChaCha20-Poly1305-IETF sealed body (libsodium), after
// netcode.io's packet encryption.
#include "swarmfield/protocol/transport/packet.hpp"

#include <sodium.h>

#include <algorithm>
#include <cstring>

#include "byte_order.hpp"
#include "session_nonce.hpp"

namespace swarmfield::protocol {
namespace {

using detail::load_u32_le;
using detail::store_u32_le;

static_assert(kPacketTagBytes == crypto_aead_chacha20poly1305_ietf_ABYTES);
static_assert(crypto_aead_chacha20poly1305_ietf_NPUBBYTES == 12);
static_assert(kChallengePacketBytes <= kConnectRequestBytes, "a challenge must never be larger than its request");

constexpr std::size_t kTokenOffset = 2;
constexpr std::size_t kSequenceOffset = kTokenOffset + kSessionTokenBytes;
constexpr std::size_t kAckOffset = kSequenceOffset + 4;
static_assert(kAckOffset + 4 == kPacketHeaderBytes);

using detail::make_nonce;
using detail::Nonce;

bool valid_type(std::uint8_t t) noexcept {
  return t >= static_cast<std::uint8_t>(PacketType::kConnectRequest) && t <= static_cast<std::uint8_t>(PacketType::kData);
}

// Packets each side may receive: the server never gets a challenge, the client never gets a
// request or a response.
bool receivable(PacketChannel::Side side, PacketType type) noexcept {
  if (side == PacketChannel::Side::kServer) return type != PacketType::kChallenge;
  return type == PacketType::kChallenge || type == PacketType::kData;
}

}  // namespace

std::optional<PacketHeader> read_packet_header(std::span<const std::uint8_t> d) noexcept {
  if (d.size() < kPacketOverheadBytes || d.size() > kMaxDatagramBytes) return std::nullopt;
  if (!valid_type(d[0]) || d[1] != kPacketVersion) return std::nullopt;
  PacketHeader h;
  h.type = static_cast<PacketType>(d[0]);
  switch (h.type) {
    case PacketType::kConnectRequest:
      if (d.size() != kConnectRequestBytes) return std::nullopt;
      break;
    case PacketType::kChallenge:
    case PacketType::kChallengeResponse:
      if (d.size() != kChallengePacketBytes) return std::nullopt;
      break;
    case PacketType::kData:
      break;
  }
  std::memcpy(h.token.data(), d.data() + kTokenOffset, kSessionTokenBytes);
  h.sequence = load_u32_le(d.data() + kSequenceOffset);
  h.ack = load_u32_le(d.data() + kAckOffset);
  return h;
}

std::vector<std::uint8_t> seal_packet(const PacketHeader& header, std::uint64_t sequence,
                                      std::span<const std::uint8_t> body, const SessionKey& key, Direction direction) {
  if (body.size() > kMaxPacketBodyBytes) return {};
  init_crypto();
  std::vector<std::uint8_t> out(kPacketOverheadBytes + body.size());
  out[0] = static_cast<std::uint8_t>(header.type);
  out[1] = kPacketVersion;
  std::memcpy(out.data() + kTokenOffset, header.token.data(), kSessionTokenBytes);
  store_u32_le(out.data() + kSequenceOffset, static_cast<std::uint32_t>(sequence));
  store_u32_le(out.data() + kAckOffset, header.ack);
  const Nonce nonce = make_nonce(sequence, direction);
  static const std::uint8_t kEmpty = 0;  // libsodium wants a valid pointer even for 0 bytes
  unsigned long long sealed = 0;
  crypto_aead_chacha20poly1305_ietf_encrypt(out.data() + kPacketHeaderBytes, &sealed,
                                            body.empty() ? &kEmpty : body.data(), body.size(), out.data(),
                                            kPacketHeaderBytes, nullptr, nonce.data(), key.data());
  return out;
}

bool open_packet(std::span<const std::uint8_t> datagram, std::uint64_t sequence, const SessionKey& key,
                 Direction direction, std::vector<std::uint8_t>& body) {
  body.clear();
  if (datagram.size() < kPacketOverheadBytes || datagram.size() > kMaxDatagramBytes) return false;
  init_crypto();
  const Nonce nonce = make_nonce(sequence, direction);
  std::array<std::uint8_t, kMaxPacketBodyBytes> plain;  // decrypt in place of a stack buffer, copy once verified
  unsigned long long length = 0;
  if (crypto_aead_chacha20poly1305_ietf_decrypt(plain.data(), &length, nullptr, datagram.data() + kPacketHeaderBytes,
                                                datagram.size() - kPacketHeaderBytes, datagram.data(),
                                                kPacketHeaderBytes, nonce.data(), key.data()) != 0) {
    return false;
  }
  body.assign(plain.begin(), plain.begin() + static_cast<std::ptrdiff_t>(length));
  return true;
}

bool same_challenge(const Challenge& a, const Challenge& b) noexcept {
  return sodium_memcmp(a.data(), b.data(), kChallengeBytes) == 0;
}

PacketChannel::PacketChannel(Side side, const SessionCredentials& credentials) noexcept
    : side_(side), credentials_(credentials) {}

std::vector<std::uint8_t> PacketChannel::seal(PacketType type, std::span<const std::uint8_t> body) {
  PacketHeader h;
  h.type = type;
  h.token = credentials_.token;
  h.ack = static_cast<std::uint32_t>(window_.newest());
  static const std::array<std::uint8_t, kConnectRequestBytes - kPacketOverheadBytes> kPadding{};
  if (type == PacketType::kConnectRequest) body = kPadding;
  if (body.size() > kMaxPacketBodyBytes) return {};
  const bool client = side_ == Side::kClient;
  auto out = seal_packet(h, next_send_, body, client ? credentials_.client_to_server : credentials_.server_to_client,
                         client ? Direction::kClientToServer : Direction::kServerToClient);
  ++next_send_;
  return out;
}

PacketChannel::OpenResult PacketChannel::open(std::span<const std::uint8_t> datagram, PacketHeader& header,
                                              std::vector<std::uint8_t>& body) {
  body.clear();
  const auto h = read_packet_header(datagram);
  if (!h || !receivable(side_, h->type)) return OpenResult::kMalformed;
  if (sodium_memcmp(h->token.data(), credentials_.token.data(), kSessionTokenBytes) != 0) return OpenResult::kWrongSession;
  const std::uint64_t sequence = window_.extend(h->sequence);
  switch (window_.check(sequence)) {
    case ReplayWindow::Verdict::kFresh: break;
    case ReplayWindow::Verdict::kDuplicate: return OpenResult::kDuplicate;
    case ReplayWindow::Verdict::kTooOld: return OpenResult::kTooOld;
    case ReplayWindow::Verdict::kTooFarAhead: return OpenResult::kTooFarAhead;
  }
  const bool client = side_ == Side::kClient;
  if (!open_packet(datagram, sequence, client ? credentials_.server_to_client : credentials_.client_to_server,
                   client ? Direction::kServerToClient : Direction::kClientToServer, body)) {
    return OpenResult::kBadAuth;
  }
  window_.accept(sequence);
  if (h->ack != 0 && next_send_ > 1) {
    const std::uint64_t ack = extend_sequence(h->ack, next_send_ - 1);
    if (ack < next_send_ && ack > peer_ack_) peer_ack_ = ack;
  }
  header = *h;
  return OpenResult::kOk;
}

const char* to_string(PacketChannel::OpenResult result) noexcept {
  switch (result) {
    case PacketChannel::OpenResult::kOk: return "ok";
    case PacketChannel::OpenResult::kMalformed: return "malformed";
    case PacketChannel::OpenResult::kWrongSession: return "wrong session";
    case PacketChannel::OpenResult::kDuplicate: return "duplicate";
    case PacketChannel::OpenResult::kTooOld: return "too old";
    case PacketChannel::OpenResult::kTooFarAhead: return "too far ahead";
    case PacketChannel::OpenResult::kBadAuth: return "bad authentication";
  }
  return "?";
}

}  // namespace swarmfield::protocol
