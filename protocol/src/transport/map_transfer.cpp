// Map transfer: split the compressed cost bytes into MapChunks and put them back together.
#include "swarmfield/protocol/transport/map_transfer.hpp"

#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "fail.hpp"
#include "swarmfield/protocol/transport/compression.hpp"

namespace swarmfield::protocol {
namespace {

using detail::fail;

std::size_t chunk_size(const MapInfo& info, std::uint32_t index) {
  const std::size_t begin = std::size_t{index} * kMapChunkBytes;
  return std::min(kMapChunkBytes, std::size_t{info.compressed_bytes} - begin);
}

}  // namespace

std::vector<MapChunk> make_map_chunks(std::span<const std::uint8_t> cost_bytes, MapInfo& info, int zstd_level) {
  const std::vector<std::uint8_t> compressed = zstd_compress(cost_bytes, zstd_level);
  info.raw_bytes = static_cast<std::uint32_t>(cost_bytes.size());
  info.compressed_bytes = static_cast<std::uint32_t>(compressed.size());
  info.chunk_count = map_chunk_count(info.compressed_bytes);
  std::vector<MapChunk> chunks(info.chunk_count);
  for (std::uint32_t i = 0; i < info.chunk_count; ++i) {
    const std::size_t begin = std::size_t{i} * kMapChunkBytes;
    const std::size_t size = chunk_size(info, i);
    chunks[i].index = i;
    chunks[i].count = info.chunk_count;
    chunks[i].bytes.assign(compressed.begin() + static_cast<std::ptrdiff_t>(begin),
                           compressed.begin() + static_cast<std::ptrdiff_t>(begin + size));
  }
  return chunks;
}

MapAssembler::MapAssembler(const MapInfo& info) : info_(info) {
  const std::uint64_t cells = std::uint64_t{static_cast<std::uint32_t>(std::max(info.width, 0))} *
                              std::uint64_t{static_cast<std::uint32_t>(std::max(info.height, 0))};
  valid_ = info.width >= 1 && info.width <= kMaxMapSide && info.height >= 1 && info.height <= kMaxMapSide &&
           info.raw_bytes == cells && info.compressed_bytes >= 1 &&
           info.compressed_bytes <= ZSTD_COMPRESSBOUND(cells) &&
           info.chunk_count == map_chunk_count(info.compressed_bytes);
  if (!valid_) return;
  compressed_.resize(info.compressed_bytes);
  have_.assign(info.chunk_count, false);
}

bool MapAssembler::add(const MapChunk& chunk, std::string* error) {
  if (!valid_) return fail(error, "map info is inconsistent; no chunk can be accepted");
  if (chunk.index >= info_.chunk_count) {
    return fail(error, "map chunk " + std::to_string(chunk.index) + " but the map has " +
                           std::to_string(info_.chunk_count));
  }
  if (chunk.count != 0 && chunk.count != info_.chunk_count) {
    return fail(error, "map chunk says " + std::to_string(chunk.count) + " chunks, Welcome said " +
                           std::to_string(info_.chunk_count));
  }
  const std::size_t expected = chunk_size(info_, chunk.index);
  if (chunk.bytes.size() != expected) {
    return fail(error, "map chunk " + std::to_string(chunk.index) + " holds " + std::to_string(chunk.bytes.size()) +
                           " bytes, expected " + std::to_string(expected));
  }
  if (have_[chunk.index]) return true;  // duplicate: harmless
  std::memcpy(compressed_.data() + std::size_t{chunk.index} * kMapChunkBytes, chunk.bytes.data(), expected);
  have_[chunk.index] = true;
  ++received_;
  return true;
}

std::optional<std::vector<std::uint8_t>> MapAssembler::finish(std::string* error) const {
  if (!complete()) {
    fail(error, "map incomplete: " + std::to_string(received_) + " of " + std::to_string(info_.chunk_count) +
                    " chunks");
    return std::nullopt;
  }
  auto raw = zstd_decompress(compressed_, info_.raw_bytes);
  if (!raw || raw->size() != info_.raw_bytes) {
    fail(error, "map bytes do not decompress to width*height = " + std::to_string(info_.raw_bytes) + " bytes");
    return std::nullopt;
  }
  return raw;
}

}  // namespace swarmfield::protocol
