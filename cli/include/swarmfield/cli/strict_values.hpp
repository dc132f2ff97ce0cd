#pragma once
// Stricter value checks for the command lines of every swarmfield program (server, tool, bot,
// viewer): CLI11 2.1 lets an empty value, NaN/inf and negative unsigned numbers through.
// Header-only, so only the programs depend on CLI11.
#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <system_error>

#include "swarmfield/cli/decimal_number.hpp"

namespace swarmfield::cli {

/// Makes one option strict about its value, beyond what CLI11 checks by itself:
///  - an empty value ("--agents ''") is an error "value is empty" (CLI11 would assign 0, or an
///    empty path, silently);
///  - a floating-point value must be a finite decimal number: CLI11 parses "nan" and "inf" with
///    strtold, and CLI::Range lets NaN through (every comparison with NaN is false); strtold
///    also reads hexadecimal ("0x10" = 16, refused by the integer check below);
///  - an unsigned value must not be negative: CLI11's strtoull turns "-1" into 2^64 - 1;
///  - an integer is decimal digits (with a leading '-' if signed) and fits 64 bits: CLI11 parses
///    with base 0 (so "010" was 8 while SWARMFIELD_X=010 and TOML give 10) and saturates a 64-bit
///    overflow ("--seed 18446744073709551616" ran with seed 2^64-1) instead of refusing it.
/// The checks are inserted in front of the option's own validators (so the message is about
/// the real problem, not "could not be converted"), and carry no description (the --help text
/// is unchanged). Flags (no value) are left alone. Call it before ->type_name() replaces the
/// type CLI11 derived from the variable (FLOAT / UINT), or use strict_values(CLI::App&) on an
/// app whose options keep their derived type names.
inline CLI::Option* strict_values(CLI::Option* opt) {
  if (opt == nullptr || opt->get_expected_max() == 0) return opt;  // a flag
  // get_type_name() is the derived name followed by ":<validator description>" parts.
  const std::string type = opt->get_type_name();
  const auto is_type = [&type](const std::string& name) {
    return type.compare(0, name.size(), name) == 0 && (type.size() == name.size() || type[name.size()] == ':');
  };
  if (is_type("FLOAT")) {
    opt->transform(CLI::Validator(
        [](std::string& value) -> std::string {
          char* end = nullptr;
          const long double v = std::strtold(value.c_str(), &end);
          if (value.empty() || end != value.c_str() + value.size()) return {};  // conversion reports it
          if (!std::isfinite(v)) return "must be a finite number (got " + value + ")";
          // strtold (CLI11's conversion too) reads hexadecimal: "0x10" was 16 where an integer
          // option refuses it.
          if (!is_decimal_number(value)) return "must be a decimal number (got " + value + ")";
          return {};
        },
        ""));
  } else if (is_type("UINT") || is_type("INT")) {
    const bool is_unsigned = is_type("UINT");
    opt->transform(CLI::Validator(
        [is_unsigned](std::string& value) -> std::string {
          const std::size_t first = value.find_first_not_of(" \t");
          if (first != std::string::npos && value[first] == '-' && is_unsigned)
            return "must not be negative (got " + value + ")";
          if (value.empty()) return {};  // the empty check reports it
          const char* begin = value.data();
          const char* end = value.data() + value.size();
          const char* digits = (!is_unsigned && *begin == '-') ? begin + 1 : begin;
          if (digits == end || std::string(digits, end).find_first_not_of("0123456789") != std::string::npos)
            return "must be a decimal integer (got " + value + ")";
          std::uint64_t u = 0;
          std::int64_t i = 0;
          const std::errc ec = is_unsigned ? std::from_chars(begin, end, u).ec : std::from_chars(begin, end, i).ec;
          if (ec == std::errc::result_out_of_range) return "is out of range (got " + value + ")";
          value = is_unsigned ? std::to_string(u) : std::to_string(i);  // no leading zero: CLI11 reads 010 as octal
          return {};
        },
        ""));
  }
  // Inserted last, so it runs first.
  opt->transform(CLI::Validator(
      [](std::string& value) -> std::string { return value.empty() ? "value is empty" : std::string{}; }, ""));
  return opt;
}

/// strict_values() on every option of `app` and of its subcommands, recursively.
inline void strict_values(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) strict_values(opt);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) strict_values(*sub);
}

}  // namespace swarmfield::cli
