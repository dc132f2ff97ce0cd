// libFuzzer target: replay files (swarmfield-tool replay FILE, swarmfield-server --replay FILE).
// Checked: no crash, no sanitizer report; a refusal names the byte offset; an accepted file has
// a header whose map holds width * height cost bytes and ends with its end record, and encoding
// what was read gives a file that reads back to the same records. Inputs whose first byte is
// odd get every record's CRC-32 recomputed first, so mutations reach the payload decoders
// instead of stopping at the checksum.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "swarmfield/server/replay/replay_file.hpp"

namespace {

// Rewrites the CRC of every whole record after the 12-byte file start (layout: replay_file.hpp).
void fix_checksums(std::vector<std::uint8_t>& b) {
  std::size_t pos = 12;
  while (pos + 9 <= b.size()) {
    const std::uint32_t length = static_cast<std::uint32_t>(b[pos + 1]) | static_cast<std::uint32_t>(b[pos + 2]) << 8 |
                                 static_cast<std::uint32_t>(b[pos + 3]) << 16 | static_cast<std::uint32_t>(b[pos + 4]) << 24;
    if (b.size() - pos - 9 < length) return;
    const uLong crc = crc32(crc32(0L, Z_NULL, 0), b.data() + pos, 5 + length);
    for (int i = 0; i < 4; ++i) b[pos + 5 + length + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(crc >> (8 * i));
    pos += 9 + length;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace server = swarmfield::server;
  if (size == 0) return 0;
  std::vector<std::uint8_t> bytes(data + 1, data + size);
  if ((data[0] & 1) != 0) fix_checksums(bytes);
  std::string error;
  const auto replay = server::parse_replay(bytes, "fuzz", error);
  if (!replay) {
    if (error.rfind("replay fuzz: byte ", 0) != 0) std::abort();
    return 0;
  }
  const auto& h = replay->header;
  if (h.costs.size() != static_cast<std::size_t>(h.width) * static_cast<std::size_t>(h.height)) std::abort();
  if (replay->records.empty() || !std::holds_alternative<server::ReplayEnd>(replay->records.back())) std::abort();
  const auto again = server::parse_replay(server::encode_replay(*replay), "again", error);
  if (!again || again->records.size() != replay->records.size() || again->header.costs != h.costs) std::abort();
  return 0;
}
