#include "swarmfield/server/session_token.hpp"

#include <array>

namespace swarmfield::server {

TokenGenerator::TokenGenerator() {
  std::random_device rd;
  std::array<std::uint32_t, 8> words{};
  for (auto& w : words) w = rd();
  std::seed_seq seq(words.begin(), words.end());
  rng_.seed(seq);
}

std::uint64_t TokenGenerator::next() noexcept {
  std::uint64_t t = 0;
  while (t == 0) t = rng_();
  return t;
}

}  // namespace swarmfield::server
