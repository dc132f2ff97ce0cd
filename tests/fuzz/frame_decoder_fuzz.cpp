// libFuzzer target: FrameDecoder fed in fuzzer-chosen pieces, checked against a one-shot
// reference parse of the same stream, with its memory bound.
// Input layout: [limit byte][piece-size seed byte][stream...].
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "swarmfield/protocol/transport/framing.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sp = swarmfield::protocol;
  if (size < 2) return 0;
  const std::size_t limit = std::size_t{data[0]} * 16;  // small limits reach kTooLarge often
  std::size_t piece_seed = data[1];
  const std::span<const std::uint8_t> stream(data + 2, size - 2);

  // Reference: frames in order until an incomplete one or one above the limit.
  std::vector<std::vector<std::uint8_t>> expected;
  bool expect_too_large = false;
  for (std::size_t at = 0; stream.size() - at >= 4;) {
    const std::size_t n = std::size_t{stream[at]} | (std::size_t{stream[at + 1]} << 8) |
                          (std::size_t{stream[at + 2]} << 16) | (std::size_t{stream[at + 3]} << 24);
    if (n > limit) {
      expect_too_large = true;
      break;
    }
    if (stream.size() - at - 4 < n) break;
    expected.emplace_back(stream.begin() + static_cast<std::ptrdiff_t>(at + 4),
                          stream.begin() + static_cast<std::ptrdiff_t>(at + 4 + n));
    at += 4 + n;
  }

  sp::FrameDecoder decoder(limit);
  std::vector<std::vector<std::uint8_t>> got;
  bool too_large = false;
  std::vector<std::uint8_t> frame;
  for (std::size_t at = 0; at < stream.size() && !too_large;) {
    piece_seed = piece_seed * 1103515245u + 12345u;
    const std::size_t piece = std::min(stream.size() - at, 1 + (piece_seed >> 8) % 64);
    decoder.feed(stream.subspan(at, piece));
    at += piece;
    if (decoder.buffered() > limit + 4 + piece && !decoder.failed()) std::abort();  // memory bound
    for (;;) {
      const auto status = decoder.next(frame);
      if (status == sp::FrameDecoder::Status::kNeedMore) break;
      if (status == sp::FrameDecoder::Status::kTooLarge) {
        too_large = true;
        if (decoder.buffered() != 0 || decoder.next(frame) != sp::FrameDecoder::Status::kTooLarge) std::abort();
        break;
      }
      got.push_back(frame);
    }
  }
  if (got != expected || too_large != expect_too_large) std::abort();
  return 0;
}
