// rANS entropy coder (see rans_coder.hpp for the sources and the safety rules).
#include "swarmfield/protocol/snapshot/rans_coder.hpp"

#include <algorithm>
#include <bit>

#include "byte_order.hpp"

namespace swarmfield::protocol {
namespace {

// State interval [kRansLow, kRansLow << 8): renormalization moves whole bytes.
constexpr std::uint32_t kRansLow = 1u << 23;

// log2 table in 1/256 bits for cost estimates: entry i = round(256 * log2(i / 64 + 1))... kept
// simple: cost = 256 * (scale_bits - log2(freq)), log2 by bit width plus a linear fraction.
std::uint32_t log2_x256(std::uint32_t v) noexcept {
  if (v == 0) return 0;
  const auto w = static_cast<std::uint32_t>(std::bit_width(v)) - 1;  // floor(log2 v)
  const std::uint32_t frac = w >= 8 ? (v >> (w - 8)) & 0xFF : (v << (8 - w)) & 0xFF;
  return w * 256 + frac;  // linear interpolation between powers of two (<= 0.09 bit error)
}

}  // namespace

bool RansTable::build(std::span<const std::uint32_t> counts) {
  if (counts.empty() || counts.size() > kRansMaxSymbols) return false;
  std::uint64_t total = 0;
  std::size_t present = 0;
  for (std::uint32_t c : counts) {
    total += c;
    present += c != 0 ? 1 : 0;
  }
  if (total == 0) return false;
  size_ = counts.size();
  // The scale: the smallest with 2^bits >= total / 4 (about four symbols a slot) and two slots
  // per present symbol, at most kRansMaxScaleBits. A table costs up to ~300 bits, so with a few
  // hundred symbols a coarse one is cheaper than the finest (2^bits >= 2 * total, before format
  // 0xD5). Measured on the residual symbols of three scenes (bytes of tables + symbols a
  // snapshot): the crowded whole-map view 4,837 finest, 4,772 by this rule, 4,763 by trying every
  // scale for the fewest bits (~5 us a table, ~30 us a snapshot against ~200 us for the encode
  // of 10k agents: not kept); the bench scene 6,165 / 6,134 / 6,122; a follow camera 522 / 484 / 483.
  // An alphabet's symbols must each get >= 1 slot: kRansMinScaleBits covers kRansMaxSymbols.
  static_assert((1u << kRansMinScaleBits) >= kRansMaxSymbols);
  unsigned bits = kRansMinScaleBits;
  while (bits < kRansMaxScaleBits && (std::size_t{1} << bits) < 2 * present) ++bits;
  while (bits < kRansMaxScaleBits && (std::uint64_t{4} << bits) < total) ++bits;
  scale_bits_ = bits;
  const std::uint32_t target = 1u << bits;

  std::uint32_t sum = 0;
  std::size_t largest = 0;
  for (std::size_t i = 0; i < size_; ++i) {
    std::uint32_t f = 0;
    if (counts[i] != 0) f = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(counts[i] * std::uint64_t{target} / total));
    freq_[i] = f;
    sum += f;
    if (counts[i] > counts[largest]) largest = i;
  }
  for (std::size_t i = size_; i < kRansMaxSymbols; ++i) freq_[i] = 0;
  // Rounding down leaves slots over: give them to the most frequent symbol. Rounding small
  // counts up to 1 may overshoot: take back from the largest frequencies (each stays >= 1;
  // target >= 2 * present makes this always possible).
  if (sum < target) {
    freq_[largest] += target - sum;
  } else {
    while (sum > target) {
      std::size_t big = 0;
      for (std::size_t i = 1; i < size_; ++i) {
        if (freq_[i] > freq_[big]) big = i;
      }
      const std::uint32_t take = std::min(sum - target, freq_[big] - 1);
      freq_[big] -= take;
      sum -= take;
    }
  }
  prepare();
  return true;
}

void RansTable::write(BitWriter& out) const {
  // Order k: the one that makes the frequencies cheapest (sizes are tiny; try them all).
  unsigned best_k = 0;
  std::size_t best_bits = ~std::size_t{0};
  for (unsigned k = 0; k < 8; ++k) {
    std::size_t bits = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const std::uint64_t w = std::uint64_t{freq_[i]} + (std::uint64_t{1} << k);
      bits += 2 * static_cast<std::size_t>(std::bit_width(w)) - 1 - k;
    }
    if (bits < best_bits) {
      best_bits = bits;
      best_k = k;
    }
  }
  out.write_bits(scale_bits_ - kRansMinScaleBits, 3);
  out.write_bits(best_k, 3);
  for (std::size_t i = 0; i < size_; ++i) out.write_exp_golomb(freq_[i], best_k);
}

bool RansTable::read(BitReader& in, std::size_t alphabet_size) {
  if (alphabet_size == 0 || alphabet_size > kRansMaxSymbols) return false;
  const unsigned bits = in.read_bits(3) + kRansMinScaleBits;
  const unsigned k = in.read_bits(3);
  if (in.failed() || bits > kRansMaxScaleBits) return false;
  const std::uint32_t target = 1u << bits;
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < alphabet_size; ++i) {
    const std::uint32_t f = in.read_exp_golomb(k);
    if (in.failed() || f > target) return false;
    freq_[i] = f;
    sum += f;
  }
  if (sum != target) return false;
  for (std::size_t i = alphabet_size; i < kRansMaxSymbols; ++i) freq_[i] = 0;
  size_ = alphabet_size;
  scale_bits_ = bits;
  prepare();
  return true;
}

void RansTable::prepare() {
  std::uint32_t start = 0;
  const std::uint32_t m = 1u << scale_bits_;
  for (std::size_t i = 0; i < size_; ++i) {
    const std::uint32_t f = freq_[i];
    start_[i] = start;
    for (std::uint32_t s = start; s < start + f; ++s) slot_symbol_[s] = static_cast<std::uint8_t>(i);
    // Encoder constants (rans_byte.h's RansEncSymbolInit): x_new = x + bias + q * (M - freq),
    // q = floor(x / freq) computed as a multiply-high by a fixed-point reciprocal.
    x_max_[i] = ((kRansLow >> scale_bits_) << 8) * f;
    cmpl_freq_[i] = m - f;
    if (f < 2) {
      // The reciprocal of 1 does not fit: q = mul_hi(x, 2^32 - 1) = x - 1, and the bias
      // absorbs the difference.
      rcp_freq_[i] = ~0u;
      rcp_shift_[i] = 0;
      bias_[i] = start + m - 1;
    } else {
      std::uint32_t shift = 0;
      while (f > (1u << shift)) ++shift;
      rcp_freq_[i] = static_cast<std::uint32_t>(((std::uint64_t{1} << (shift + 31)) + f - 1) / f);
      rcp_shift_[i] = shift - 1;
      bias_[i] = start;
    }
    start += f;
  }
}

std::uint32_t RansTable::cost_bits_x256(std::size_t symbol) const noexcept {
  if (symbol >= size_ || freq_[symbol] == 0) return 0;
  return scale_bits_ * 256 - log2_x256(freq_[symbol]);
}

void RansEncoder::reset(std::size_t max_symbols) {
  state_ = kRansLow;
  used_ = 0;
  // Two bytes per symbol at most (x < 2^31 and x_max >= 2^19 * freq), plus the final state, plus
  // the two bytes put() writes ahead.
  if (reversed_.size() < 2 * max_symbols + 6) reversed_.resize(2 * max_symbols + 6);
}

std::span<const std::uint8_t> RansEncoder::finish() {
  // The state goes first in decoding order, least significant byte first.
  reversed_[used_++] = static_cast<std::uint8_t>(state_ >> 24);
  reversed_[used_++] = static_cast<std::uint8_t>(state_ >> 16);
  reversed_[used_++] = static_cast<std::uint8_t>(state_ >> 8);
  reversed_[used_++] = static_cast<std::uint8_t>(state_);
  out_.assign(reversed_.rend() - static_cast<std::ptrdiff_t>(used_), reversed_.rend());
  return out_;
}

bool RansDecoder::init(std::span<const std::uint8_t> bytes) noexcept {
  bytes_ = bytes;
  failed_ = false;
  if (bytes.size() < 4) {
    failed_ = true;
    return false;
  }
  state_ = detail::load_u32_le(bytes.data());
  pos_ = 4;
  if (state_ < kRansLow || state_ >= (kRansLow << 8)) {
    failed_ = true;
    return false;
  }
  return true;
}

std::size_t RansDecoder::get(const RansTable& t) noexcept {
  const std::uint32_t mask = (1u << t.scale_bits_) - 1;
  std::uint32_t x = state_;
  const std::size_t s = t.slot_symbol_[x & mask];
  // x >= kRansLow here, so x >> scale_bits >= 2^11 and x stays > 0: the loop below ends.
  x = t.freq_[s] * (x >> t.scale_bits_) + (x & mask) - t.start_[s];
  while (x < kRansLow) {
    if (pos_ >= bytes_.size()) {
      failed_ = true;
      x = kRansLow;
      break;
    }
    x = (x << 8) | bytes_[pos_++];
  }
  state_ = x;
  return s < t.size_ ? s : 0;
}

bool RansDecoder::finished_cleanly() const noexcept {
  return !failed_ && pos_ == bytes_.size() && state_ == kRansLow;
}

}  // namespace swarmfield::protocol
