#pragma once
// What a number given as text (a flag's value, a SWARMFIELD_* variable, a match setting, a
// `sim --player X,Y`) may look like: decimal only, the same for every program. std::strtod and
// std::strtold (which CLI11 uses for floating-point options) also read hexadecimal ("0x10" is
// 16, "0x1p4" too), "inf", "nan" and leading white space, where an integer option refuses
// "0x10": `--record-max-mb 0x10` ran with 16 MiB. Standard library only.
#include <cstddef>
#include <string_view>

namespace swarmfield::cli {

/// True if `text` is a decimal number: an optional sign, then digits with at most one '.'
/// (at least one digit: "5", "5.", ".5", "-0.25"), then optionally an exponent ('e' or 'E', an
/// optional sign, digits: "1e3", "2.5E-2"). Nothing else: no white space, no hexadecimal
/// ("0x10", "0x1p4"), no "inf" or "nan", no digit separators.
[[nodiscard]] constexpr bool is_decimal_number(std::string_view text) noexcept {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - from;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t mantissa = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

}  // namespace swarmfield::cli
