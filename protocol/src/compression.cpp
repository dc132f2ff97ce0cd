// zstd compression of snapshots and of the map transfer, with bounded decompression.
#include <zstd.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "swarmfield/protocol/datagram.hpp"
#include "wire_codec.hpp"

namespace swarmfield::protocol {
namespace {

using detail::fail;

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};

// One context per thread, reused: creating a level-3 compression context costs more than
// compressing a typical snapshot.
ZSTD_CCtx* thread_cctx() {
  thread_local std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
  return cctx.get();
}
ZSTD_DCtx* thread_dctx() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  return dctx.get();
}

std::vector<std::uint8_t> compress_with(std::span<const std::uint8_t> bytes, int level) {
  ZSTD_CCtx* cctx = thread_cctx();
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
  if (ZSTD_isError(n)) return {};
  out.resize(n);
  return out;
}

/// True for a zstd frame (not a skippable one) whose header announces a content checksum.
/// Frame layout from RFC 8878 section 3.1.1: 4-byte magic, then the frame header descriptor,
/// whose bit 2 is Content_Checksum_flag. (ZSTD_getFrameHeader is not in the stable API.)
bool has_checksum(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 5) return false;
  const std::uint32_t magic = std::uint32_t{bytes[0]} | (std::uint32_t{bytes[1]} << 8) |
                              (std::uint32_t{bytes[2]} << 16) | (std::uint32_t{bytes[3]} << 24);
  return magic == ZSTD_MAGICNUMBER && (bytes[4] & 0x04u) != 0;
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

std::vector<std::uint8_t> compress_snapshot(const Snapshot& snapshot, int zstd_level) {
  thread_local flatbuffers::FlatBufferBuilder builder(64 * 1024);
  detail::finish_snapshot_buffer(builder, snapshot);
  return compress_with({builder.GetBufferPointer(), builder.GetSize()}, zstd_level);
}

std::optional<Snapshot> decompress_snapshot(std::span<const std::uint8_t> bytes, std::string* error) {
  if (bytes.empty()) {
    fail(error, "empty snapshot payload");
    return std::nullopt;
  }
  const unsigned long long size = ZSTD_getFrameContentSize(bytes.data(), bytes.size());
  if (size == ZSTD_CONTENTSIZE_ERROR) {
    fail(error, "snapshot payload is not a zstd frame");
    return std::nullopt;
  }
  if (size == ZSTD_CONTENTSIZE_UNKNOWN) {
    fail(error, "snapshot zstd frame does not state its size");
    return std::nullopt;
  }
  if (size > kMaxSnapshotBytes) {
    fail(error, "snapshot states " + std::to_string(size) + " bytes, limit " + std::to_string(kMaxSnapshotBytes));
    return std::nullopt;
  }
  if (!has_checksum(bytes)) {
    fail(error, "snapshot zstd frame has no checksum");
    return std::nullopt;
  }
  // Exactly one frame: a second frame would be bytes we never verify.
  const std::size_t frame = ZSTD_findFrameCompressedSize(bytes.data(), bytes.size());
  if (ZSTD_isError(frame) || frame != bytes.size()) {
    fail(error, "snapshot payload is not exactly one complete zstd frame");
    return std::nullopt;
  }
  ZSTD_DCtx* dctx = thread_dctx();
  if (!dctx) {
    fail(error, "out of memory for a zstd context");
    return std::nullopt;
  }
  // Reused per thread; 8-byte aligned (uint64 elements) for the FlatBuffers accessors.
  thread_local std::vector<std::uint64_t> scratch;
  const auto n = static_cast<std::size_t>(size);
  if (scratch.size() * 8 < n) scratch.resize((n + 7) / 8);
  auto* dst = reinterpret_cast<std::uint8_t*>(scratch.data());
  const std::size_t got = ZSTD_decompressDCtx(dctx, dst, n, bytes.data(), bytes.size());
  if (ZSTD_isError(got) || got != n) {
    fail(error, "snapshot zstd frame is corrupt");
    return std::nullopt;
  }
  Snapshot snapshot;
  if (!detail::read_snapshot_buffer({dst, n}, snapshot, error)) return std::nullopt;
  return snapshot;
}

}  // namespace swarmfield::protocol
