#include "swarmfield/server/net/used_tokens.hpp"

#include <iterator>

namespace swarmfield::server {

UsedTokens::Take UsedTokens::take(const Tag& tag, std::uint64_t expire_unix_s, std::uint64_t now_unix_s) {
  if (const auto it = expiry_.find(tag); it != expiry_.end()) {
    if (it->second > now_unix_s) return Take::kReplayed;
    expiry_.erase(it);
  }
  if (expiry_.size() >= capacity_) forget_expired(now_unix_s);
  if (expiry_.size() >= capacity_) return Take::kFull;
  expiry_.emplace(tag, expire_unix_s);
  return Take::kTaken;
}

void UsedTokens::forget_expired(std::uint64_t now_unix_s) {
  std::erase_if(expiry_, [now_unix_s](const auto& entry) { return entry.second <= now_unix_s; });
}

}  // namespace swarmfield::server
