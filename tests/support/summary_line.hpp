#pragma once
// Values of "key=value" fields in the programs' summary and log lines
// ("ticks=600 agents=5000 rebuilds=13 ..."). A key matches where it starts the text or follows
// a space, so "tick" never matches inside "skipped_ticks="; the first such match decides.

#include <optional>
#include <string_view>

namespace swarmfield::test {

/// The number after "key=" (an integer or a decimal, as strtod reads it); nullopt if the key is
/// absent or no number follows.
[[nodiscard]] std::optional<double> summary_number(std::string_view text, std::string_view key);

/// The integer after "key=" (decimal digits only); -1 if the key is absent or no digit follows.
[[nodiscard]] long long summary_value(std::string_view text, std::string_view key);

}  // namespace swarmfield::test
