// libFuzzer target: the capped zstd_decompress of the map transfer (map_transfer.hpp) on
// arbitrary bytes. It must never return more than its cap, and what it returns must compress
// and decompress to itself.
#include <cstdint>
#include <cstdlib>

#include "swarmfield/protocol/transport/compression.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sp = swarmfield::protocol;
  constexpr std::size_t kCap = 256 * 1024;
  const auto raw = sp::zstd_decompress({data, size}, kCap);
  if (!raw) return 0;
  if (raw->size() > kCap) std::abort();
  const auto again = sp::zstd_decompress(sp::zstd_compress(*raw), kCap);
  if (!again || *again != *raw) std::abort();
  return 0;
}
