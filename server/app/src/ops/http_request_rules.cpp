// What a request head declares about its body (see http_request_rules.hpp).
#include "http_request_rules.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <string>
#include <system_error>

namespace swarmfield::server::http_rules {

bool method_reads_body(std::string_view method) noexcept {
  return method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
}

bool has_body_to_read(const httplib::Request& req) {
  if (!method_reads_body(req.method)) return false;
  return req.has_header("Transfer-Encoding") ||
         (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
}

std::optional<std::uint64_t> content_length_value(std::string_view value) noexcept {
  std::uint64_t length = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
  if (value.empty() || end != value.data() + value.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) return UINT64_MAX;
  if (ec != std::errc()) return std::nullopt;
  return length;
}

int body_refused_unread(const httplib::Request& req) {
  if (!has_body_to_read(req)) return 0;
  if (req.has_header("Transfer-Encoding")) return 400;
  const std::string first = req.get_header_value("Content-Length");
  for (std::size_t i = 1; i < req.get_header_value_count("Content-Length"); ++i) {
    if (req.get_header_value("Content-Length", i) != first) return 400;
  }
  const std::optional<std::uint64_t> length = content_length_value(first);
  if (!length) return 400;
  return *length > kMaxBodyBytes ? 413 : 0;
}

std::size_t declared_body_bytes(std::string_view head) {
  const std::size_t line_end = head.find('\n');
  if (!method_reads_body(head.substr(0, std::min(head.find(' '), line_end)))) return 0;
  std::optional<std::uint64_t> length;
  for (std::size_t at = line_end; at != std::string_view::npos && at + 1 < head.size();) {
    const std::size_t next = head.find('\n', at + 1);
    std::string_view line = head.substr(at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1);
    at = next;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(line.substr(0, colon));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (name == "transfer-encoding") return 0;
    if (name != "content-length" || length) continue;
    length = content_length_value(value).value_or(0);
  }
  return length && *length <= kMaxBodyBytes ? static_cast<std::size_t>(*length) : 0;
}

bool is_method_token(std::string_view text) noexcept {
  if (text.empty()) return false;
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return std::all_of(text.begin(), text.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || kSymbols.find(c) != std::string_view::npos;
  });
}

}  // namespace swarmfield::server::http_rules
