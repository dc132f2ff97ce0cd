// base64 and bounded zlib / gzip / zstd decompression for Tiled layer data.
#include "layer_codecs.hpp"

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <array>
#include <limits>

namespace swarmfield::io::detail {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// 0..63 for an alphabet character, -1 otherwise.
constexpr std::array<std::int8_t, 256> make_table() {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::int8_t>(i);
  return t;
}
constexpr std::array<std::int8_t, 256> kTable = make_table();

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

}  // namespace

bool base64_decode(std::string_view text, std::size_t max_bytes, std::vector<std::uint8_t>& out, std::string& error) {
  std::vector<std::uint8_t> bytes;
  bytes.reserve(std::min(max_bytes, text.size() / 4 * 3 + 3));
  std::uint32_t acc = 0;
  int bits = 0;
  std::size_t symbols = 0;  // alphabet characters seen
  std::size_t pad = 0;      // '=' seen (only at the end)
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_space(c)) continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    const std::int8_t v = kTable[static_cast<unsigned char>(c)];
    if (v < 0 || pad > 0) {
      error = "bad base64 at byte " + std::to_string(i) +
              (pad > 0 ? ": data after '=' padding" : ": a character outside the base64 alphabet");
      return false;
    }
    ++symbols;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (bytes.size() >= max_bytes) {
        error = "base64 data holds more than the " + std::to_string(max_bytes) + " bytes expected";
        return false;
      }
      bytes.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xFF));
    }
  }
  // A group of 4 symbols holds 3 bytes; 1 leftover symbol is never valid, and padding (when
  // present) must complete the last group.
  if (symbols % 4 == 1 || pad > 2 || (pad > 0 && (symbols + pad) % 4 != 0)) {
    error = "bad base64: " + std::to_string(symbols) + " symbols and " + std::to_string(pad) +
            " '=' do not make whole groups of 4";
    return false;
  }
  out = std::move(bytes);
  return true;
}

std::string base64_encode(const std::vector<std::uint8_t>& bytes) {
  std::string s;
  s.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
    for (int k = 18; k >= 0; k -= 6) s += kAlphabet[(v >> k) & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = std::uint32_t{bytes[i]} << 16;
    if (rest == 2) v |= std::uint32_t{bytes[i + 1]} << 8;
    s += kAlphabet[(v >> 18) & 63];
    s += kAlphabet[(v >> 12) & 63];
    s += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    s += '=';
  }
  return s;
}

bool inflate_exact(const std::vector<std::uint8_t>& in, std::uint8_t* out, std::size_t size, std::string& error) {
  if (in.size() > std::numeric_limits<uInt>::max() || size > std::numeric_limits<uInt>::max()) {
    error = "compressed layer data is too large";
    return false;
  }
  z_stream s{};
  if (inflateInit2(&s, 15 + 32) != Z_OK) {  // 15 + 32: zlib or gzip header, detected
    error = "zlib: cannot initialise";
    return false;
  }
  s.next_in = const_cast<Bytef*>(in.data());  // zlib's API is not const-correct; it only reads
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = out;
  s.avail_out = static_cast<uInt>(size);
  int rc = inflate(&s, Z_FINISH);
  bool more = false;
  if (rc != Z_STREAM_END && s.avail_out == 0) {
    // The buffer is full but the stream goes on: one byte more tells "too long" from "cut".
    std::uint8_t extra = 0;
    s.next_out = &extra;
    s.avail_out = 1;
    rc = inflate(&s, Z_FINISH);
    more = s.avail_out == 0;
  }
  const std::size_t produced = s.total_out;
  const std::string zmsg = s.msg != nullptr ? s.msg : "";
  inflateEnd(&s);
  if (more) {
    error = "compressed layer data holds more than the " + std::to_string(size) + " bytes of width * height GIDs";
    return false;
  }
  if (rc != Z_STREAM_END) {
    error = rc == Z_BUF_ERROR || rc == Z_OK ? "compressed layer data is truncated"
                                            : "compressed layer data is corrupt" + (zmsg.empty() ? "" : ": " + zmsg);
    return false;
  }
  if (produced != size) {
    error = "compressed layer data holds " + std::to_string(produced) + " bytes, expected " + std::to_string(size) +
            " (width * height GIDs of 4 bytes)";
    return false;
  }
  return true;
}

bool zstd_exact(const std::vector<std::uint8_t>& in, std::uint8_t* out, std::size_t size, std::string& error) {
  const std::size_t got = ZSTD_decompress(out, size, in.data(), in.size());
  if (ZSTD_isError(got) != 0) {
    error = ZSTD_getErrorCode(got) == ZSTD_error_dstSize_tooSmall
                ? "zstd layer data holds more than the " + std::to_string(size) + " bytes of width * height GIDs"
                : std::string("zstd layer data: ") + ZSTD_getErrorName(got);
    return false;
  }
  if (got != size) {
    error = "zstd layer data holds " + std::to_string(got) + " bytes, expected " + std::to_string(size) +
            " (width * height GIDs of 4 bytes)";
    return false;
  }
  return true;
}

std::vector<std::uint8_t> zlib_compress(const std::vector<std::uint8_t>& in) {
  uLongf cap = compressBound(static_cast<uLong>(in.size()));
  std::vector<std::uint8_t> out(cap);
  if (compress(out.data(), &cap, in.data(), static_cast<uLong>(in.size())) != Z_OK) return {};
  out.resize(cap);
  return out;
}

std::vector<std::uint8_t> zlib_compress_gids(std::size_t count, const std::function<std::uint32_t(std::size_t)>& gid_at) {
  z_stream s{};
  if (deflateInit(&s, Z_DEFAULT_COMPRESSION) != Z_OK) return {};
  constexpr std::size_t kSlice = std::size_t{1} << 14;  // GIDs per deflate() call
  std::vector<std::uint8_t> in(kSlice * 4);
  std::vector<std::uint8_t> out;
  std::uint8_t buf[1 << 16];
  for (std::size_t first = 0;; first += kSlice) {
    const std::size_t n = first < count ? std::min(kSlice, count - first) : 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t g = gid_at(first + i);
      for (std::size_t b = 0; b < 4; ++b) in[4 * i + b] = static_cast<std::uint8_t>(g >> (8 * b));
    }
    const bool last = first + n >= count;
    s.next_in = in.data();
    s.avail_in = static_cast<uInt>(n * 4);
    int rc = Z_OK;
    do {
      s.next_out = buf;
      s.avail_out = sizeof buf;
      rc = deflate(&s, last ? Z_FINISH : Z_NO_FLUSH);
      out.insert(out.end(), buf, buf + (sizeof buf - s.avail_out));
    } while (s.avail_out == 0 || (last && rc != Z_STREAM_END && rc >= 0));
    if (last) break;
  }
  deflateEnd(&s);
  return out;
}

}  // namespace swarmfield::io::detail
