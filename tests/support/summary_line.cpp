#include "summary_line.hpp"

#include <cstdlib>
#include <string>

namespace swarmfield::test {
namespace {

/// Where the value of the first "key=" that starts `text` or follows a space begins, or npos.
std::size_t value_at(std::string_view text, std::string_view key) {
  const std::string needle = std::string(key) + "=";
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
    if (at == 0 || text[at - 1] == ' ') return at + needle.size();
  }
  return std::string_view::npos;
}

}  // namespace

std::optional<double> summary_number(std::string_view text, std::string_view key) {
  const std::size_t at = value_at(text, key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::string rest(text.substr(at, text.find_first_of(" \n", at) - at));
  char* end = nullptr;
  const double v = std::strtod(rest.c_str(), &end);
  if (end == rest.c_str()) return std::nullopt;
  return v;
}

long long summary_value(std::string_view text, std::string_view key) {
  const std::size_t at = value_at(text, key);
  if (at == std::string_view::npos) return -1;
  std::size_t end = at;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
  if (end == at) return -1;
  return std::stoll(std::string(text.substr(at, end - at)));
}

}  // namespace swarmfield::test
