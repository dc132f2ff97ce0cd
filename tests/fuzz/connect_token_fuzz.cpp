// libFuzzer target: connect tokens (connect_token.hpp) as a client reads them and as a server
// opens them. The input is a token's text; decode_connect_token must never crash or read past
// it, a decoded token must encode back to a token that decodes equal, and its Hello bytes are
// opened with the fuzzer's fixed key (fuzz_session.hpp: the seeds are sealed with it, so
// mutations reach the expiry, protocol and seal checks). The same bytes, raw, are also opened
// as a Hello's token: random bytes never open (a forged token), and every refusal is named.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_session.hpp"
#include "swarmfield/protocol/transport/connect_token.hpp"

namespace {

namespace sp = swarmfield::protocol;

void open_checked(std::span<const std::uint8_t> bytes, const sp::TokenKey& key) {
  const sp::TokenOpenResult r = sp::open_hello_token(bytes, key, 1'000'000);
  if (!r.token && r.error.empty()) std::abort();
  if (r.token && (r.token->grant.server_addresses.empty() || r.token->grant.name.size() > sp::kMaxNameBytes)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const sp::TokenKey key = sp::fuzz_token_key();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto token = sp::decode_connect_token(text, &error);
  if (!token) {
    if (error.empty()) std::abort();
  } else {
    const auto again = sp::decode_connect_token(sp::encode_connect_token(*token));
    if (!again || !(*again == *token)) std::abort();
    open_checked(sp::hello_token_bytes(*token), key);
  }
  open_checked(std::span<const std::uint8_t>(data, size), key);
  return 0;
}
