#pragma once
// Static-model range asymmetric numeral system (rANS) entropy coder for the snapshot codec's
// residual symbols: a byte-wise rANS with a 32-bit state, after J. Duda, "Asymmetric numeral
// systems: entropy coding combining speed of Huffman coding with compression rate of arithmetic
// coding" (arXiv:1311.2540, 2013), in the form of F. Giesen's public-domain rans_byte.h (state
// interval [2^23, 2^31), division-free encoding by fixed-point reciprocals, after R. Alverson,
// "Integer division using reciprocals", 1991). Our own code, no dependency.
//
// A RansTable is a frequency table over a small alphabet (<= kRansMaxSymbols) whose frequencies
// sum to 2^scale_bits. The encoder builds one per alphabet and context from the symbol counts of
// the snapshot being encoded (two passes: count, then code) and writes it into the bit stream;
// symbols cost close to -log2(p) bits each, below one bit for a likely symbol (what Huffman
// coding cannot do). Several tables may be used in one stream, symbol by symbol.
//
// Decoding is hostile-input safe: a table is accepted only if its frequencies sum exactly to
// 2^scale_bits; every decoded symbol indexes a validated table; the state is range-checked when
// read; running out of bytes fails instead of reading past the buffer; the final state must equal
// the encoder's initial one (a cheap integrity check of the whole stream).
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "swarmfield/protocol/snapshot/bit_stream.hpp"

namespace swarmfield::protocol {

inline constexpr std::size_t kRansMaxSymbols = 64;   ///< largest alphabet
inline constexpr unsigned kRansMinScaleBits = 6;      ///< table precision bounds (sum = 2^bits)
inline constexpr unsigned kRansMaxScaleBits = 12;

/// A normalized frequency table, with the encoder's reciprocals and the decoder's slot look-up.
class RansTable {
 public:
  /// Builds the table from `counts` (one per symbol, alphabet size = counts.size() <=
  /// kRansMaxSymbols, at least one non-zero): every symbol with a non-zero count gets a
  /// frequency >= 1, the frequencies sum to 2^scale_bits, scale_bits = the smallest value in
  /// [kRansMinScaleBits, kRansMaxScaleBits] with 2^scale_bits >= 2 * (symbols present) and
  /// 2^scale_bits >= (sum of counts) / 4, capped (a coarse table is cheaper to write). Returns
  /// false (table unusable) when every count is zero or the alphabet is too big.
  bool build(std::span<const std::uint32_t> counts);
  /// Writes the table: 3 bits scale_bits - kRansMinScaleBits, 3 bits Exp-Golomb order k, then
  /// each symbol's frequency as Exp-Golomb of order k (absent symbols: frequency 0).
  void write(BitWriter& out) const;
  /// Reads and validates a table of `alphabet_size` symbols; false on any inconsistency
  /// (frequencies not summing to 2^scale_bits, a reader failure).
  bool read(BitReader& in, std::size_t alphabet_size);

  [[nodiscard]] std::size_t alphabet_size() const noexcept { return size_; }
  [[nodiscard]] unsigned scale_bits() const noexcept { return scale_bits_; }
  [[nodiscard]] std::uint32_t frequency(std::size_t symbol) const noexcept {
    return symbol < size_ ? freq_[symbol] : 0;
  }
  /// Cost of coding `symbol` with this table, in 1/256 bits (for estimates; 0 if absent).
  [[nodiscard]] std::uint32_t cost_bits_x256(std::size_t symbol) const noexcept;

 private:
  friend class RansEncoder;
  friend class RansDecoder;
  void prepare();  // reciprocals and look-up from freq_

  std::size_t size_ = 0;
  unsigned scale_bits_ = kRansMinScaleBits;
  std::array<std::uint32_t, kRansMaxSymbols> freq_{};
  std::array<std::uint32_t, kRansMaxSymbols> start_{};
  // Encoder: x_max, reciprocal, shift, bias, complement (see RansEncoder::put).
  std::array<std::uint32_t, kRansMaxSymbols> x_max_{};
  std::array<std::uint32_t, kRansMaxSymbols> rcp_freq_{};
  std::array<std::uint32_t, kRansMaxSymbols> rcp_shift_{};
  std::array<std::uint32_t, kRansMaxSymbols> bias_{};
  std::array<std::uint32_t, kRansMaxSymbols> cmpl_freq_{};
  // Decoder: symbol of every slot 0 .. 2^scale_bits - 1.
  std::array<std::uint8_t, (1u << kRansMaxScaleBits)> slot_symbol_{};
};

/// Encodes symbols in REVERSE order (the decoder returns them in forward order): call put() for
/// the last symbol first. The output is reused across snapshots.
class RansEncoder {
 public:
  /// Starts a stream of at most `max_symbols` symbols (sizes the output once: a symbol emits at
  /// most two bytes at kRansMaxScaleBits).
  void reset(std::size_t max_symbols);
  /// Codes `symbol`, which must have a non-zero frequency in `table` (the caller's contract: it
  /// built the table from counts that include this symbol); at most `max_symbols` calls.
  void put(const RansTable& table, std::size_t symbol) noexcept {
    // Renormalize: emit 0, 1 or 2 low bytes until x < x_max, without a data-dependent branch
    // (it would mispredict every few symbols): both bytes are written, only n are kept.
    std::uint32_t x = state_;
    const std::uint64_t x_max = table.x_max_[symbol];
    const unsigned n = (x >= x_max ? 1u : 0u) + (std::uint64_t{x} >= (x_max << 8) ? 1u : 0u);
    reversed_[used_] = static_cast<std::uint8_t>(x);
    reversed_[used_ + 1] = static_cast<std::uint8_t>(x >> 8);
    used_ += n;
    x = static_cast<std::uint32_t>(std::uint64_t{x} >> (8 * n));
    const std::uint32_t q =
        static_cast<std::uint32_t>((std::uint64_t{x} * table.rcp_freq_[symbol]) >> 32) >> table.rcp_shift_[symbol];
    state_ = x + table.bias_[symbol] + q * table.cmpl_freq_[symbol];
  }
  /// Flushes the state and returns the stream in decoding order.
  [[nodiscard]] std::span<const std::uint8_t> finish();

 private:
  std::uint32_t state_ = 0;
  std::size_t used_ = 0;
  std::vector<std::uint8_t> reversed_;  // bytes in the order the encoder emits them
  std::vector<std::uint8_t> out_;
};

/// Decodes a stream made by RansEncoder.
class RansDecoder {
 public:
  /// Reads the initial state; false if the stream is shorter than 4 bytes or the state is out of
  /// its interval.
  bool init(std::span<const std::uint8_t> bytes) noexcept;
  /// Decodes one symbol with `table` (always < table.alphabet_size()). On exhausted input sets
  /// failed() and returns symbols of no meaning (still in range).
  [[nodiscard]] std::size_t get(const RansTable& table) noexcept;
  [[nodiscard]] bool failed() const noexcept { return failed_; }
  /// True when every byte was consumed and the state is back to the encoder's initial value.
  [[nodiscard]] bool finished_cleanly() const noexcept;

 private:
  std::span<const std::uint8_t> bytes_;
  std::size_t pos_ = 0;
  std::uint32_t state_ = 0;
  bool failed_ = false;
};

}  // namespace swarmfield::protocol
