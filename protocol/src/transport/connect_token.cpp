#include "swarmfield/protocol/transport/connect_token.hpp"

#include <sodium.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace swarmfield::protocol {
namespace {

static_assert(kTokenKeyBytes == crypto_aead_xchacha20poly1305_ietf_KEYBYTES);
static_assert(kTokenNonceBytes == crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
static_assert(kTokenTagBytes == crypto_aead_xchacha20poly1305_ietf_ABYTES);

// Public token (binary, then base64):
//   magic[8] protocol_id u64 create u64 expire u64 timeout u32 client_to_server[32]
//   server_to_client[32] nonce[24] server_count u8 {len u8, bytes}* sealed[1024]
// Private plaintext (kPrivatePlainBytes, zero padded), sealed with the associated data
// magic + protocol_id + expire (so neither can be changed in the public part):
//   client_id u64 timeout u32 client_to_server[32] server_to_client[32] role u8
//   name_len u8 name server_count u8 {len u8, bytes}*
constexpr std::array<std::uint8_t, 8> kMagic = {'S', 'W', 'F', 'C', 'T', '1', 0, 0};
constexpr std::string_view kTextPrefix = "swft1:";
constexpr std::size_t kPrivatePlainBytes = kTokenPrivateBytes - kTokenTagBytes;
constexpr std::size_t kAdBytes = 8 + 8 + 8;

void fail(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
}

class Writer {
 public:
  explicit Writer(std::vector<std::uint8_t>& out) : out_(out) {}
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u32(std::uint32_t v) { uint(v, 4); }
  void u64(std::uint64_t v) { uint(v, 8); }
  void text(std::string_view s) {
    u8(static_cast<std::uint8_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }

 private:
  void uint(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& out_;
};

// Bounds-checked reads: every read past the end sets failed() and yields zeros.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  bool bytes(std::span<std::uint8_t> out) {
    if (!take(out.size())) return false;
    std::memcpy(out.data(), in_.data() + at_ - out.size(), out.size());
    return true;
  }
  std::uint8_t u8() { return take(1) ? in_[at_ - 1] : 0; }
  std::uint32_t u32() { return static_cast<std::uint32_t>(uint(4)); }
  std::uint64_t u64() { return uint(8); }
  bool text(std::size_t limit, std::string& out) {
    const std::size_t n = u8();
    if (failed_ || n > limit || !take(n)) return false;
    out.assign(reinterpret_cast<const char*>(in_.data() + at_ - n), n);
    return true;
  }
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  [[nodiscard]] std::size_t left() const noexcept { return in_.size() - at_; }

 private:
  bool take(std::size_t n) {
    if (failed_ || in_.size() - at_ < n) {
      failed_ = true;
      return false;
    }
    at_ += n;
    return true;
  }
  std::uint64_t uint(int n) {
    if (!take(static_cast<std::size_t>(n))) return 0;
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= std::uint64_t{in_[at_ - static_cast<std::size_t>(n) + static_cast<std::size_t>(i)]} << (8 * i);
    return v;
  }
  std::span<const std::uint8_t> in_;
  std::size_t at_ = 0;
  bool failed_ = false;
};

bool printable(std::string_view s, bool allow_space) {
  return std::all_of(s.begin(), s.end(), [&](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u != 0x7f && (allow_space || u != ' ');
  });
}

bool check_addresses(const std::vector<std::string>& addresses, std::string* error) {
  if (addresses.empty() || addresses.size() > kMaxTokenServers) {
    fail(error, "a token names 1.." + std::to_string(kMaxTokenServers) + " servers, not " +
                    std::to_string(addresses.size()));
    return false;
  }
  // host:port, the port after the last ':' (an IPv6 host has its own) a number 1..65535: a
  // token naming no possible port is good for no server.
  const auto port_ok = [](std::string_view a) {
    const std::size_t colon = a.rfind(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    const std::string_view port = a.substr(colon + 1);
    if (port.empty() || port.size() > 5) return false;
    unsigned value = 0;
    for (const char c : port) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    return value >= 1 && value <= 65535;
  };
  for (const std::string& a : addresses) {
    if (a.empty() || a.size() > kMaxTokenAddressBytes || !printable(a, false) || !port_ok(a)) {
      fail(error, "server address '" + std::string(printable(a, false) ? a : "?") + "' is not host:port (1.." +
                      std::to_string(kMaxTokenAddressBytes) + " printable bytes, a port 1..65535)");
      return false;
    }
  }
  return true;
}

bool check_name(std::string_view name, std::string* error) {
  if (name.size() > kMaxNameBytes || !printable(name, true)) {
    fail(error, "the name must be at most " + std::to_string(kMaxNameBytes) + " bytes without control characters");
    return false;
  }
  return true;
}

std::array<std::uint8_t, kAdBytes> associated_data(std::uint64_t protocol_id, std::uint64_t expire) {
  std::array<std::uint8_t, kAdBytes> ad{};
  std::copy(kMagic.begin(), kMagic.end(), ad.begin());
  for (int i = 0; i < 8; ++i) {
    ad[static_cast<std::size_t>(8 + i)] = static_cast<std::uint8_t>(protocol_id >> (8 * i));
    ad[static_cast<std::size_t>(16 + i)] = static_cast<std::uint8_t>(expire >> (8 * i));
  }
  return ad;
}

}  // namespace

const char* token_refusal_name(TokenRefusal refusal) noexcept {
  switch (refusal) {
    case TokenRefusal::kMalformed: return "malformed";
    case TokenRefusal::kWrongProtocol: return "wrong protocol";
    case TokenRefusal::kExpired: return "expired";
    case TokenRefusal::kForged: return "forged";
    case TokenRefusal::kWrongServer: return "wrong server";
    case TokenRefusal::kReplayed: return "replayed";
  }
  return "?";
}

std::optional<ConnectToken> issue_connect_token(const TokenKey& key, const TokenGrant& grant, std::uint64_t now_unix_s,
                                                std::uint64_t valid_for_s, std::string* error,
                                                std::uint64_t protocol_id) {
  init_crypto();
  if (valid_for_s == 0) {
    fail(error, "a token must be valid for at least 1 s");
    return std::nullopt;
  }
  if (!check_addresses(grant.server_addresses, error) || !check_name(grant.name, error)) return std::nullopt;
  if (grant.role != Role::kViewer && grant.role != Role::kPlayer) {
    fail(error, "unknown role");
    return std::nullopt;
  }
  ConnectToken token;
  token.protocol_id = protocol_id;
  token.create_unix_s = now_unix_s;
  token.expire_unix_s = now_unix_s + valid_for_s;
  token.timeout_s = grant.timeout_s;
  token.server_addresses = grant.server_addresses;
  random_bytes(token.client_to_server);
  random_bytes(token.server_to_client);
  random_bytes(token.nonce);

  std::vector<std::uint8_t> plain;
  plain.reserve(kPrivatePlainBytes);
  Writer w(plain);
  w.u64(grant.client_id);
  w.u32(grant.timeout_s);
  w.bytes(token.client_to_server);
  w.bytes(token.server_to_client);
  w.u8(static_cast<std::uint8_t>(grant.role));
  w.text(grant.name);
  w.u8(static_cast<std::uint8_t>(grant.server_addresses.size()));
  for (const std::string& a : grant.server_addresses) w.text(a);
  plain.resize(kPrivatePlainBytes, 0);  // the limits above keep it well inside (<= 663 bytes)

  const auto ad = associated_data(token.protocol_id, token.expire_unix_s);
  unsigned long long sealed_len = 0;
  crypto_aead_xchacha20poly1305_ietf_encrypt(token.sealed.data(), &sealed_len, plain.data(), plain.size(), ad.data(),
                                             ad.size(), nullptr, token.nonce.data(), key.data());
  sodium_memzero(plain.data(), plain.size());
  return token;
}

std::string encode_connect_token(const ConnectToken& token) {
  std::vector<std::uint8_t> bin;
  Writer w(bin);
  w.bytes(kMagic);
  w.u64(token.protocol_id);
  w.u64(token.create_unix_s);
  w.u64(token.expire_unix_s);
  w.u32(token.timeout_s);
  w.bytes(token.client_to_server);
  w.bytes(token.server_to_client);
  w.bytes(token.nonce);
  w.u8(static_cast<std::uint8_t>(token.server_addresses.size()));
  for (const std::string& a : token.server_addresses) w.text(a.substr(0, kMaxTokenAddressBytes));
  w.bytes(token.sealed);
  const int variant = sodium_base64_VARIANT_URLSAFE_NO_PADDING;
  std::string text(sodium_base64_encoded_len(bin.size(), variant), '\0');
  sodium_bin2base64(text.data(), text.size(), bin.data(), bin.size(), variant);
  text.resize(std::strlen(text.c_str()));
  sodium_memzero(bin.data(), bin.size());
  return std::string(kTextPrefix) + text;
}

std::optional<ConnectToken> decode_connect_token(std::string_view text, std::string* error) {
  init_crypto();
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\n')) text.remove_prefix(1);
  if (!text.starts_with(kTextPrefix)) {
    fail(error, "not a connect token: it must start with 'swft1:' (made by swarmfield-tool token)");
    return std::nullopt;
  }
  text.remove_prefix(kTextPrefix.size());
  constexpr std::size_t kMaxBinary = 8 + 8 * 3 + 4 + 32 * 2 + kTokenNonceBytes + 1 +
                                     kMaxTokenServers * (1 + kMaxTokenAddressBytes) + kTokenPrivateBytes;
  if (text.size() > (kMaxBinary * 4) / 3 + 4) {
    fail(error, "the connect token is too long");
    return std::nullopt;
  }
  std::vector<std::uint8_t> bin(kMaxBinary);
  std::size_t bin_len = 0;
  if (sodium_base642bin(bin.data(), bin.size(), text.data(), text.size(), nullptr, &bin_len, nullptr,
                        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0) {
    fail(error, "the connect token is not valid base64 (URL-safe, no padding)");
    return std::nullopt;
  }
  bin.resize(bin_len);
  Reader r(bin);
  std::array<std::uint8_t, 8> magic{};
  r.bytes(magic);
  if (magic != kMagic) {
    fail(error, "the connect token has an unknown version");
    return std::nullopt;
  }
  ConnectToken token;
  token.protocol_id = r.u64();
  token.create_unix_s = r.u64();
  token.expire_unix_s = r.u64();
  token.timeout_s = r.u32();
  r.bytes(token.client_to_server);
  r.bytes(token.server_to_client);
  r.bytes(token.nonce);
  const std::size_t servers = r.u8();
  if (servers == 0 || servers > kMaxTokenServers) {
    fail(error, "the connect token names " + std::to_string(servers) + " servers (1.." +
                    std::to_string(kMaxTokenServers) + ")");
    return std::nullopt;
  }
  token.server_addresses.resize(servers);
  for (std::string& a : token.server_addresses) r.text(kMaxTokenAddressBytes, a);
  r.bytes(token.sealed);
  if (r.failed() || r.left() != 0) {
    fail(error, "the connect token is cut short or has bytes after its end");
    return std::nullopt;
  }
  if (!check_addresses(token.server_addresses, error)) return std::nullopt;
  return token;
}

std::vector<std::uint8_t> hello_token_bytes(const ConnectToken& token) {
  std::vector<std::uint8_t> out;
  out.reserve(kHelloTokenBytes);
  Writer w(out);
  w.u64(token.protocol_id);
  w.u64(token.expire_unix_s);
  w.bytes(token.nonce);
  w.bytes(token.sealed);
  return out;
}

TokenOpenResult open_hello_token(std::span<const std::uint8_t> hello_bytes, const TokenKey& key,
                                 std::uint64_t now_unix_s) {
  init_crypto();
  TokenOpenResult result;
  if (hello_bytes.size() != kHelloTokenBytes) {
    result.error = "a connect token is " + std::to_string(kHelloTokenBytes) + " bytes, not " +
                   std::to_string(hello_bytes.size());
    return result;
  }
  Reader r(hello_bytes);
  const std::uint64_t protocol_id = r.u64();
  const std::uint64_t expire = r.u64();
  TokenNonce nonce{};
  r.bytes(nonce);
  const std::span<const std::uint8_t> sealed = hello_bytes.subspan(8 + 8 + kTokenNonceBytes);
  if (protocol_id != kConnectProtocolId) {
    result.refusal = TokenRefusal::kWrongProtocol;
    result.error = "the token is for another game or protocol";
    return result;
  }
  if (expire <= now_unix_s) {
    result.refusal = TokenRefusal::kExpired;
    result.error = "the token expired " + std::to_string(now_unix_s - expire) + " s ago";
    return result;
  }
  std::array<std::uint8_t, kPrivatePlainBytes> plain{};
  unsigned long long plain_len = 0;
  const auto ad = associated_data(protocol_id, expire);
  if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain.data(), &plain_len, nullptr, sealed.data(), sealed.size(),
                                                 ad.data(), ad.size(), nonce.data(), key.data()) != 0 ||
      plain_len != kPrivatePlainBytes) {
    result.refusal = TokenRefusal::kForged;
    result.error = "the token's seal does not open with this server's key";
    return result;
  }
  OpenedToken opened;
  Reader p(plain);
  opened.grant.client_id = p.u64();
  opened.grant.timeout_s = p.u32();
  p.bytes(opened.client_to_server);
  p.bytes(opened.server_to_client);
  const std::uint8_t role = p.u8();
  p.text(kMaxNameBytes, opened.grant.name);
  const std::size_t servers = p.u8();
  if (servers <= kMaxTokenServers) {
    opened.grant.server_addresses.resize(servers);
    for (std::string& a : opened.grant.server_addresses) p.text(kMaxTokenAddressBytes, a);
  }
  sodium_memzero(plain.data(), plain.size());
  // Only the key's holders can seal, so a bad layout here is a broken backend, not an attacker.
  if (p.failed() || role > static_cast<std::uint8_t>(Role::kPlayer) || servers > kMaxTokenServers ||
      !check_name(opened.grant.name, nullptr) || !check_addresses(opened.grant.server_addresses, nullptr)) {
    result.refusal = TokenRefusal::kMalformed;
    result.error = "the token's private part is malformed (its issuer is broken)";
    return result;
  }
  opened.grant.role = static_cast<Role>(role);
  opened.expire_unix_s = expire;
  std::copy(sealed.end() - static_cast<std::ptrdiff_t>(kTokenTagBytes), sealed.end(), opened.tag.begin());
  result.token = std::move(opened);
  return result;
}

TokenSessionKeys derive_token_session_keys(const SessionKey& client_to_server, const SessionKey& server_to_client,
                                           std::span<const std::uint8_t, kSessionSaltBytes> salt) {
  init_crypto();
  TokenSessionKeys keys;
  const auto derive = [&](SessionKey& out, const SessionKey& key, std::uint8_t direction) {
    std::array<std::uint8_t, kSessionSaltBytes + 1> message{};
    std::copy(salt.begin(), salt.end(), message.begin());
    message.back() = direction;
    crypto_generichash(out.data(), out.size(), message.data(), message.size(), key.data(), key.size());
  };
  derive(keys.client_to_server, client_to_server, 1);
  derive(keys.server_to_client, server_to_client, 2);
  return keys;
}

std::optional<TokenKey> parse_token_key(std::string_view text, std::string* error) {
  init_crypto();
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) text.remove_suffix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) text.remove_prefix(1);
  TokenKey key{};
  std::size_t len = 0;
  if (text.size() != 2 * kTokenKeyBytes ||
      sodium_hex2bin(key.data(), key.size(), text.data(), text.size(), nullptr, &len, nullptr) != 0 ||
      len != kTokenKeyBytes) {
    fail(error, "a token key is " + std::to_string(2 * kTokenKeyBytes) +
                    " hex digits (make one with swarmfield-tool token --new-key FILE)");
    return std::nullopt;
  }
  return key;
}

std::string format_token_key(const TokenKey& key) {
  std::string hex(2 * kTokenKeyBytes + 1, '\0');
  sodium_bin2hex(hex.data(), hex.size(), key.data(), key.size());
  hex.resize(2 * kTokenKeyBytes);
  return hex;
}

TokenKey make_token_key() {
  TokenKey key{};
  random_bytes(key);
  return key;
}

}  // namespace swarmfield::protocol
