// libFuzzer target: decompress_snapshot and the capped zstd_decompress on arbitrary bytes.
// A decoded snapshot must survive compress -> decompress unchanged; zstd_decompress must
// never return more than its cap.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "swarmfield/protocol/datagram.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sp = swarmfield::protocol;
  std::string error;
  const auto snapshot = sp::decompress_snapshot({data, size}, &error);
  if (snapshot) {
    const auto again = sp::decompress_snapshot(sp::compress_snapshot(*snapshot));
    if (!again || !(*again == *snapshot)) std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  constexpr std::size_t kCap = 256 * 1024;
  const auto raw = sp::zstd_decompress({data, size}, kCap);
  if (raw && raw->size() > kCap) std::abort();
  return 0;
}
