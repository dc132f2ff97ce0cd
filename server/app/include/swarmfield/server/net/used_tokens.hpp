#pragma once
// The connect tokens a server has taken, so that each is used once (netcode keeps the same
// "token entries"): an observer who copies a client's Hello can not join with it, and a player
// can not share one token with friends. Entries live until their token expires, when the token
// would be refused anyway. Bounded: past `capacity` live entries new tokens are refused (only
// the backend can make tokens, so a full table means a broken backend, not an attacker).
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>

#include "swarmfield/protocol/transport/connect_token.hpp"

namespace swarmfield::server {

class UsedTokens {
 public:
  using Tag = std::array<std::uint8_t, protocol::kTokenTagBytes>;
  enum class Take : std::uint8_t { kTaken, kReplayed, kFull };

  explicit UsedTokens(std::size_t capacity = 65536) : capacity_(capacity) {}

  /// Takes the token with `tag` (OpenedToken::tag) expiring at `expire_unix_s` at time
  /// `now_unix_s` (Unix seconds): kReplayed if it was taken before and has not expired, kFull
  /// if `capacity` unexpired tokens are held.
  Take take(const Tag& tag, std::uint64_t expire_unix_s, std::uint64_t now_unix_s);
  [[nodiscard]] std::size_t size() const noexcept { return expiry_.size(); }

 private:
  void forget_expired(std::uint64_t now_unix_s);
  std::size_t capacity_;
  std::map<Tag, std::uint64_t> expiry_;
};

}  // namespace swarmfield::server
