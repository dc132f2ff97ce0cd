#pragma once
// Bit packing for the snapshot codec: a writer that appends bit fields least-significant bit
// first, a reader that never reads past its buffer, and the variable-length integer codes the
// codec uses (Exp-Golomb of order k, zigzag for signed values). No allocation in the reader.
//
// Layout: bit i of the stream is bit (i % 8) of byte (i / 8); a field of n bits is stored with
// its least significant bit first. Exp-Golomb order k of an unsigned v (ITU-T H.264 9.1, here
// written LSB-first): w = v + 2^k has b = bit_width(w) bits; the code is (b - 1 - k) zero bits,
// a one bit, then the low (b - 1) bits of w. Order 0 costs 1 bit for 0, 3 bits for 1..2,
// 5 bits for 3..6; order k spends k more bits on small values and fewer on large ones.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace swarmfield::protocol {

/// Zigzag mapping of a signed value to an unsigned one: 0, -1, 1, -2, 2 -> 0, 1, 2, 3, 4.
[[nodiscard]] constexpr std::uint32_t zigzag_encode(std::int32_t v) noexcept {
  return (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31);
}
[[nodiscard]] constexpr std::int32_t zigzag_decode(std::uint32_t u) noexcept {
  return static_cast<std::int32_t>(u >> 1) ^ -static_cast<std::int32_t>(u & 1u);
}

/// Largest Exp-Golomb order accepted by BitReader::read_exp_golomb (and written by the codec).
inline constexpr unsigned kMaxExpGolombOrder = 24;

/// Appends bit fields to a byte vector. The vector is reused across snapshots (clear() keeps its
/// capacity), so a warm writer allocates nothing.
class BitWriter {
 public:
  /// Drops all bits written; keeps the buffer's capacity.
  void clear() noexcept {
    bytes_.clear();
    acc_ = 0;
    fill_ = 0;
  }
  /// Writes the low `bits` (0..32) bits of `value`; higher bits of `value` must be zero.
  void write_bits(std::uint32_t value, unsigned bits) {
    acc_ |= static_cast<std::uint64_t>(value) << fill_;
    fill_ += bits;
    if (fill_ >= 32) {
      const auto word = static_cast<std::uint32_t>(acc_);
      bytes_.push_back(static_cast<std::uint8_t>(word));
      bytes_.push_back(static_cast<std::uint8_t>(word >> 8));
      bytes_.push_back(static_cast<std::uint8_t>(word >> 16));
      bytes_.push_back(static_cast<std::uint8_t>(word >> 24));
      acc_ >>= 32;
      fill_ -= 32;
    }
  }
  void write_bool(bool b) { write_bits(b ? 1u : 0u, 1); }
  /// Exp-Golomb of order `k` (0..kMaxExpGolombOrder) of `value` (any uint32).
  void write_exp_golomb(std::uint32_t value, unsigned k) {
    const std::uint64_t w = std::uint64_t{value} + (std::uint64_t{1} << k);
    const auto b = static_cast<unsigned>(std::bit_width(w));
    const std::uint64_t low = w & ((std::uint64_t{1} << (b - 1)) - 1);
    const unsigned length = 2 * (b - 1) - k + 1;
    if (length <= 32) {  // the common case in one field: zeros, the one bit, then low
      write_bits(static_cast<std::uint32_t>((std::uint64_t{1} << (b - 1 - k)) | (low << (b - k))), length);
      return;
    }
    write_bits(0, b - 1 - k);  // <= 32 zero bits
    write_bits(1, 1);
    if (b - 1 > 32) {
      write_bits(static_cast<std::uint32_t>(low), 32);
      write_bits(static_cast<std::uint32_t>(low >> 32), b - 1 - 32);
    } else {
      write_bits(static_cast<std::uint32_t>(low), b - 1);
    }
  }
  void write_signed_exp_golomb(std::int32_t value, unsigned k) { write_exp_golomb(zigzag_encode(value), k); }

  /// Bits written so far.
  [[nodiscard]] std::size_t bit_count() const noexcept { return bytes_.size() * 8 + fill_; }
  /// Pads the last byte with zero bits and returns the bytes. Writing after finish() continues
  /// after the padding.
  [[nodiscard]] std::span<const std::uint8_t> finish() {
    while (fill_ > 0) {
      bytes_.push_back(static_cast<std::uint8_t>(acc_));
      acc_ >>= 8;
      fill_ = fill_ >= 8 ? fill_ - 8 : 0;
    }
    acc_ = 0;
    return bytes_;
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::uint64_t acc_ = 0;
  unsigned fill_ = 0;  // bits held in acc_ (< 32 between calls)
};

/// Reads bit fields from a byte span. Reading past the end (or a malformed code) returns 0 and
/// sets failed(); later reads keep returning 0. Callers check failed() once at the end of a
/// section instead of after every field, and range-check every value they use.
class BitReader {
 public:
  explicit BitReader(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}

  /// The next `bits` (0..32) bits as an unsigned value.
  [[nodiscard]] std::uint32_t read_bits(unsigned bits) noexcept {
    if (bits == 0) return 0;
    if (failed_ || bits > 32 || bits > bits_left()) {
      failed_ = true;
      return 0;
    }
    // Gather the (at most 5) bytes that hold the field.
    const std::size_t byte = pos_ >> 3;
    const unsigned shift = static_cast<unsigned>(pos_ & 7);
    const std::size_t need = (shift + bits + 7) / 8;
    std::uint64_t window = 0;
    for (std::size_t i = 0; i < need; ++i) window |= std::uint64_t{bytes_[byte + i]} << (8 * i);
    pos_ += bits;
    return static_cast<std::uint32_t>((window >> shift) & ((std::uint64_t{1} << bits) - 1));
  }
  [[nodiscard]] bool read_bool() noexcept { return read_bits(1) != 0; }
  /// Exp-Golomb of order `k`. A code whose value does not fit a uint32 (prefix too long), or an
  /// order above kMaxExpGolombOrder, fails.
  [[nodiscard]] std::uint32_t read_exp_golomb(unsigned k) noexcept {
    if (k > kMaxExpGolombOrder) {
      failed_ = true;
      return 0;
    }
    unsigned zeros = 0;
    while (!failed_ && read_bits(1) == 0) {
      if (++zeros > 32) {
        failed_ = true;
        return 0;
      }
    }
    if (failed_) return 0;
    const unsigned low_bits = zeros + k;  // b - 1
    std::uint64_t low = 0;
    if (low_bits > 32) {
      low = read_bits(32);
      low |= std::uint64_t{read_bits(low_bits - 32)} << 32;
    } else {
      low = read_bits(low_bits);
    }
    const std::uint64_t w = (std::uint64_t{1} << low_bits) | low;
    const std::uint64_t v = w - (std::uint64_t{1} << k);
    if (v > 0xFFFFFFFFull) {
      failed_ = true;
      return 0;
    }
    return static_cast<std::uint32_t>(v);
  }
  [[nodiscard]] std::int32_t read_signed_exp_golomb(unsigned k) noexcept { return zigzag_decode(read_exp_golomb(k)); }

  [[nodiscard]] bool failed() const noexcept { return failed_; }
  [[nodiscard]] std::size_t bits_left() const noexcept { return bytes_.size() * 8 - pos_; }
  [[nodiscard]] std::size_t bit_position() const noexcept { return pos_; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace swarmfield::protocol
