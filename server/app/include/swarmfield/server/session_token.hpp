#pragma once
// Session tokens: 64-bit random values that prove a UDP datagram comes from a client that
// completed the TCP handshake. The generator is seeded once per process from std::random_device
// so tokens are not predictable from the world seed or from earlier runs.
#include <cstdint>
#include <random>

namespace swarmfield::server {

class TokenGenerator {
 public:
  /// Seeds from std::random_device (several words through a seed_seq).
  TokenGenerator();
  /// Deterministic seeding, for tests only.
  explicit TokenGenerator(std::uint64_t seed) : rng_(seed) {}
  /// A non-zero token (0 means "no token" on the wire).
  [[nodiscard]] std::uint64_t next() noexcept;

 private:
  std::mt19937_64 rng_;
};

}  // namespace swarmfield::server
