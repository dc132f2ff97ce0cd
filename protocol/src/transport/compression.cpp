// zstd compression of the map transfer, with bounded decompression (compression.hpp).
#include <zstd.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "swarmfield/protocol/transport/compression.hpp"

namespace swarmfield::protocol {
namespace {

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

// One context per thread, reused: creating a level-3 compression context costs more than
// compressing a small buffer. A context that grew past kKeepCCtxBytes (a high level on a big
// input: the map transfer's level 19 over a 1024x1024 map holds ~13 MB of tables) is freed after
// its call instead, so a once-at-startup compression does not stay resident for the process's
// life; the next call creates a fresh one (same output: zstd's output depends only on the input
// and the parameters, which every call resets).
using CCtxPtr = std::unique_ptr<ZSTD_CCtx, CCtxDeleter>;
inline constexpr std::size_t kKeepCCtxBytes = std::size_t{1} << 20;
CCtxPtr& thread_cctx() {
  thread_local CCtxPtr cctx;
  if (!cctx) cctx.reset(ZSTD_createCCtx());
  return cctx;
}
ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  return dctx.get();
}

std::vector<std::uint8_t> compress_with(std::span<const std::uint8_t> bytes, int level) {
  CCtxPtr& held = thread_cctx();
  ZSTD_CCtx* cctx = held.get();
  if (!cctx) return {};
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  // The content size goes into the frame header (the bounded decoders refuse oversized frames
  // before allocating) and a 4-byte checksum at the end (a corrupted payload is refused rather
  // than decoded into different, still well-formed, values).
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  std::vector<std::uint8_t> out(ZSTD_compressBound(bytes.size()));
  const std::size_t n = ZSTD_compress2(cctx, out.data(), out.size(), bytes.data(), bytes.size());
  if (ZSTD_sizeof_CCtx(cctx) > kKeepCCtxBytes) held.reset();
  if (ZSTD_isError(n)) return {};
  out.resize(n);
  return out;
}

}  // namespace

std::vector<std::uint8_t> zstd_compress(std::span<const std::uint8_t> bytes, int level) {
  return compress_with(bytes, level);
}

std::optional<std::vector<std::uint8_t>> zstd_decompress(std::span<const std::uint8_t> bytes, std::size_t max_bytes) {
  if (bytes.empty()) return std::nullopt;
  max_bytes = std::min(max_bytes, std::numeric_limits<std::size_t>::max() - 1);
  ZSTD_DCtx* dctx = thread_dctx();
  if (!dctx) return std::nullopt;
  ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
  // The window (memory zstd takes before producing a byte) never needs to be larger than the
  // output may be: a frame announcing a bigger one is refused before it is allocated.
  int window_log = 10;  // ZSTD_WINDOWLOG_MIN
  while (window_log < 27 && (std::size_t{1} << window_log) < max_bytes) ++window_log;
  ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, window_log);

  // The stated size (if any) is only a hint for the first allocation; the cap is enforced on
  // what is actually produced. One byte of headroom tells "exactly max" from "more than max".
  const std::size_t cap = max_bytes + 1;
  const unsigned long long stated = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
  if (stated != ZSTD_CONTENTSIZE_UNKNOWN && stated != ZSTD_CONTENTSIZE_ERROR && stated > max_bytes) {
    return std::nullopt;
  }
  std::size_t initial = std::min<std::size_t>(cap, 4 * bytes.size() + 4096);
  if (stated != ZSTD_CONTENTSIZE_UNKNOWN && stated != ZSTD_CONTENTSIZE_ERROR) {
    initial = static_cast<std::size_t>(stated) + 1;
  }
  std::vector<std::uint8_t> out(initial);
  ZSTD_inBuffer in{bytes.data(), bytes.size(), 0};
  std::size_t produced = 0;
  for (;;) {
    ZSTD_outBuffer ob{out.data(), out.size(), produced};
    const std::size_t in_before = in.pos;
    const std::size_t ret = ZSTD_decompressStream(dctx, &ob, &in);
    if (ZSTD_isError(ret)) return std::nullopt;
    const bool progressed = ob.pos != produced || in.pos != in_before;
    produced = ob.pos;
    if (produced > max_bytes) return std::nullopt;
    if (ret == 0 && in.pos == in.size) break;  // last frame complete, nothing left over
    if (produced == out.size()) {
      if (out.size() >= cap) return std::nullopt;
      out.resize(std::min(cap, out.size() * 2));
      continue;
    }
    if (in.pos == in.size) return std::nullopt;  // frame truncated
    if (!progressed) return std::nullopt;        // defensive: never spin
  }
  out.resize(produced);
  return out;
}

}  // namespace swarmfield::protocol
