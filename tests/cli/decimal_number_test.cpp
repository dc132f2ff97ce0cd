// is_decimal_number (cli/decimal_number.hpp): what a number given as text may look like.
#include <doctest/doctest.h>

#include <string_view>

#include "swarmfield/cli/decimal_number.hpp"

using swarmfield::cli::is_decimal_number;

TEST_CASE("decimal_number: a sign, digits, a fraction and an exponent are decimal") {
  for (const std::string_view text : {"0", "5", "-5", "+5", "010", "5.", ".5", "-0.25", "1e3", "2.5E-2", "1e+9", "3.e1"}) {
    INFO(text);
    CHECK(is_decimal_number(text));
  }
}

TEST_CASE("decimal_number: hexadecimal, inf/nan, white space and broken forms are not") {
  // strtod reads the first six (0x10 and 0x1p4 are 16, 0X5 is 5, inf, nan, " 5" is 5).
  for (const std::string_view text : {"0x10", "0x1p4", "0X5", "inf", "nan", " 5", "5 ", "", "-", "+", ".", "e3", "1e",
                                      "1e+", "1..2", "1.2.3", "--5", "1_000", "1,5", "0b101", "5f"}) {
    INFO("'" << text << "'");
    CHECK_FALSE(is_decimal_number(text));
  }
  static_assert(is_decimal_number("1.5") && !is_decimal_number("0x10"));  // usable at compile time
}
