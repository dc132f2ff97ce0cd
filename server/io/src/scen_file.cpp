// MovingAI .scen parsing.
#include "swarmfield/io/scen_file.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include "swarmfield/io/map_file.hpp"

namespace swarmfield::io {

namespace {

std::vector<std::string_view> split_columns(std::string_view line) {
  std::vector<std::string_view> cols;
  const bool tabs = line.find('\t') != std::string_view::npos;
  std::size_t pos = 0;
  if (tabs) {
    // Tab-separated: map names may in principle contain spaces.
    for (;;) {
      const std::size_t t = line.find('\t', pos);
      cols.push_back(line.substr(pos, t == std::string_view::npos ? std::string_view::npos : t - pos));
      if (t == std::string_view::npos) break;
      pos = t + 1;
    }
    for (auto& c : cols) {
      while (!c.empty() && c.front() == ' ') c.remove_prefix(1);
      while (!c.empty() && c.back() == ' ') c.remove_suffix(1);
    }
    return cols;
  }
  while (pos < line.size()) {
    while (pos < line.size() && line[pos] == ' ') ++pos;
    if (pos >= line.size()) break;
    const std::size_t end = std::min(line.find(' ', pos), line.size());
    cols.push_back(line.substr(pos, end - pos));
    pos = end;
  }
  return cols;
}

bool parse_int(std::string_view s, std::int32_t& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

bool parse_double(std::string_view s, double& v) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

bool parse_scen(const std::string& text, const std::string& source, std::vector<ScenLine>& out,
                std::string& error) {
  std::vector<ScenLine> lines;
  std::string_view rest(text);
  int number = 0;
  const auto fail = [&](const std::string& message) {
    error = source + ":" + std::to_string(number) + ": " + message;
    return false;
  };
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (number == 1 && line.substr(0, 7) == "version") continue;
    const std::vector<std::string_view> cols = split_columns(line);
    if (cols.size() != 9)
      return fail("expected 9 tab-separated columns (bucket map width height start_x start_y goal_x goal_y "
                  "length), found " + std::to_string(cols.size()));
    ScenLine s;
    s.line = number;
    s.map_name = std::string(cols[1]);
    static constexpr const char* kNames[] = {"bucket", "map", "map_width", "map_height", "start_x",
                                             "start_y", "goal_x", "goal_y", "optimal_length"};
    std::int32_t* ints[] = {&s.bucket, nullptr, &s.map_width, &s.map_height, &s.start_x,
                            &s.start_y, &s.goal_x, &s.goal_y};
    for (std::size_t c = 0; c < 8; ++c) {
      if (ints[c] == nullptr) continue;
      if (!parse_int(cols[c], *ints[c]))
        return fail(std::string("column ") + kNames[c] + " is not a whole number: '" + std::string(cols[c]) + "'");
      if (*ints[c] < 0) return fail(std::string("column ") + kNames[c] + " is negative");
    }
    if (!parse_double(cols[8], s.optimal_length) || !std::isfinite(s.optimal_length) || s.optimal_length < 0.0)
      return fail("column optimal_length is not a finite non-negative number: '" + std::string(cols[8]) + "'");
    lines.push_back(std::move(s));
  }
  out = std::move(lines);
  return true;
}

bool read_scen_file(const std::string& path, std::vector<ScenLine>& out, std::string& error) {
  std::string text;
  std::string reason;
  if (!read_text_file(path, text, reason)) {
    error = path + ": " + reason;
    return false;
  }
  return parse_scen(text, path, out, error);
}

}  // namespace swarmfield::io
