// Map text parsers: MovingAI .map and small ASCII test maps.
#include "swarmfield/sim/map/map_parse.hpp"

#include <algorithm>

#include <charconv>
#include <cstdio>

namespace swarmfield::sim {

std::string MapError::to_string() const {
  std::string s = source.empty() ? std::string("<map>") : source;
  if (line > 0) {
    s += ':';
    s += std::to_string(line);
  }
  s += ": ";
  s += message;
  return s;
}

namespace {

/// Splits text into lines on '\n', dropping one trailing '\r' per line (CRLF files). A final
/// newline does not produce an extra empty line.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  /// Next line, or false at the end. `number` is 1-based.
  bool next(std::string_view& line, int& number) {
    if (pos_ >= text_.size()) return false;
    const std::size_t end = text_.find('\n', pos_);
    const std::size_t stop = end == std::string_view::npos ? text_.size() : end;
    line = text_.substr(pos_, stop - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    number = ++line_number_;
    return true;
  }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_number_ = 0;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_blank(std::string_view s) { return trim(s).empty(); }

/// Printable form of a character for error messages ('x' or a hex code).
std::string describe_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02X", u);
  return buf;
}

/// Quotes a (possibly long) line fragment for an error message. Bytes other than printable
/// ASCII are written as \xNN: a binary file named as a map must not put control characters
/// (terminal escapes, newlines) into the message a terminal or a log line shows.
std::string quote(std::string_view s) {
  constexpr std::size_t kMax = 40;
  std::string out = "\"";
  for (const char c : s.substr(0, kMax)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out += c;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", u);
      out += buf;
    }
  }
  if (s.size() > kMax) out += "...";
  out += '"';
  return out;
}

struct Fail {
  MapError& error;
  std::string_view source;
  bool operator()(int line, std::string message) const {
    error.source = std::string(source);
    error.line = line;
    error.message = std::move(message);
    return false;
  }
};

/// Parses "<key> <positive int>" for the height/width header lines.
bool parse_size_line(std::string_view line, std::string_view key, std::int32_t max_side, std::int32_t& value,
                     std::string& problem) {
  const std::string_view t = trim(line);
  if (t.substr(0, key.size()) != key || (t.size() > key.size() && t[key.size()] != ' ' && t[key.size()] != '\t')) {
    problem = "expected '" + std::string(key) + " <cells>', found " + quote(t);
    return false;
  }
  const std::string_view num = trim(t.substr(key.size()));
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (num.empty() || ec != std::errc() || ptr != num.data() + num.size()) {
    problem = std::string(key) + " is not a whole number: " + quote(num);
    return false;
  }
  if (v <= 0 || v > max_side) {
    problem = std::string(key) + " " + std::to_string(v) + " is out of range (1.." + std::to_string(max_side) + ")";
    return false;
  }
  value = static_cast<std::int32_t>(v);
  return true;
}

}  // namespace

bool parse_movingai_map(std::string_view text, std::string_view source, GridMap& out, MapError& error,
                        std::uint8_t swamp_cost, std::int32_t max_side) {
  const Fail fail{error, source};
  LineReader reader(text);
  std::string_view line;
  int n = 0;

  if (!reader.next(line, n)) return fail(0, "empty file: expected a MovingAI map starting with 'type octile'");
  {
    const std::string_view t = trim(line);
    if (t.substr(0, 4) != "type" || (t.size() > 4 && t[4] != ' ' && t[4] != '\t'))
      return fail(n, "expected header 'type octile', found " + quote(t));
    const std::string_view kind = trim(t.substr(4));
    if (kind != "octile")
      return fail(n, "map type " + quote(kind) + " is not supported: swarmfield reads 8-connected grids, 'type octile'");
  }

  // "height H" and "width W" (the format puts height first; either order is accepted).
  std::int32_t height = 0;
  std::int32_t width = 0;
  for (int i = 0; i < 2; ++i) {
    if (!reader.next(line, n)) return fail(n, "file ends inside the header: expected 'height' and 'width' lines");
    const std::string_view t = trim(line);
    const bool is_height = t.substr(0, 6) == "height";
    const bool is_width = t.substr(0, 5) == "width";
    std::string problem;
    if (is_height && height == 0) {
      if (!parse_size_line(t, "height", max_side, height, problem)) return fail(n, problem);
    } else if (is_width && width == 0) {
      if (!parse_size_line(t, "width", max_side, width, problem)) return fail(n, problem);
    } else {
      return fail(n, std::string("expected '") + (height == 0 ? "height" : "width") + " <cells>', found " + quote(t));
    }
  }
  if (!reader.next(line, n)) return fail(n, "file ends inside the header: expected 'map'");
  if (trim(line) != "map") return fail(n, "expected header line 'map', found " + quote(trim(line)));

  std::vector<std::uint8_t> costs(static_cast<std::size_t>(width) * static_cast<std::size_t>(height), kDefaultCost);
  const int first_row_line = n + 1;
  std::int32_t rows = 0;
  while (reader.next(line, n)) {
    if (rows == height) {
      // Trailing blank lines are tolerated; anything else is an extra row.
      if (is_blank(line)) continue;
      return fail(n, "too many rows: the header says height " + std::to_string(height) + " but row " +
                         std::to_string(rows + 1) + " follows");
    }
    if (static_cast<std::int32_t>(line.size()) != width) {
      // A multi-byte (non-ASCII) character makes the byte count lie about the row's length.
      const auto wide = std::find_if(line.begin(), line.end(), [](char ch) { return static_cast<unsigned char>(ch) >= 0x80; });
      if (wide != line.end())
        return fail(n, "row " + std::to_string(rows) + " holds a non-ASCII character at column " +
                           std::to_string(wide - line.begin()) + " (map rows use ASCII terrain letters . G @ O T S W)");
      return fail(n, "row " + std::to_string(rows) + " has " + std::to_string(line.size()) +
                         " characters, expected width " + std::to_string(width));
    }
    std::uint8_t* row = costs.data() + static_cast<std::size_t>(rows) * static_cast<std::size_t>(width);
    for (std::int32_t x = 0; x < width; ++x) {
      std::uint8_t c = 0;
      switch (line[static_cast<std::size_t>(x)]) {
        case '.':
        case 'G': c = kDefaultCost; break;
        case 'S': c = swamp_cost; break;
        case '@':
        case 'O':
        case 'T':
        case 'W': c = kBlockedCost; break;
        default:
          return fail(n, "unexpected " + describe_char(line[static_cast<std::size_t>(x)]) + " at column " +
                             std::to_string(x + 1) + " (allowed: . G S @ O T W)");
      }
      row[x] = c;
    }
    ++rows;
  }
  if (rows < height)
    return fail(rows == 0 ? first_row_line : n + 1,
                "too few rows: the header says height " + std::to_string(height) + " but the file has " +
                    std::to_string(rows));
  out = GridMap::from_costs(width, height, std::move(costs));
  return true;
}

bool parse_ascii_map(std::string_view text, std::string_view source, GridMap& out, MapError& error,
                     std::vector<MapMarker>* markers) {
  const Fail fail{error, source};
  constexpr std::int32_t kMaxSide = 8192;
  // First pass: find the rows (leading and trailing blank lines are skipped so raw string
  // literals in tests can start with a newline) and check them.
  LineReader reader(text);
  std::string_view line;
  int n = 0;
  std::vector<std::string_view> rows;
  int first_line = 0;
  int last_nonblank = 0;
  std::vector<int> row_lines;
  while (reader.next(line, n)) {
    if (rows.empty() && is_blank(line)) continue;
    if (rows.empty()) first_line = n;
    rows.push_back(line);
    row_lines.push_back(n);
    if (!is_blank(line)) last_nonblank = static_cast<int>(rows.size());
  }
  rows.resize(static_cast<std::size_t>(last_nonblank));
  if (rows.empty()) return fail(0, "empty map: expected rows of '#' (blocked) and walkable characters");
  // A MovingAI scenario given for its map (Boston_0_256.map.scen for Boston_0_256.map) would be
  // read as an ASCII map and fail on its second row's length: name what it is instead.
  if (rows.front().rfind("version ", 0) == 0 && rows.size() > 1 &&
      std::count(rows[1].begin(), rows[1].end(), '\t') >= 8) {
    return fail(first_line, "this is a MovingAI scenario file (.scen: 'version' and tab-separated rows), not a map; "
                            "give the .map it names");
  }
  const std::size_t width = rows.front().size();
  if (width > static_cast<std::size_t>(kMaxSide) || rows.size() > static_cast<std::size_t>(kMaxSide))
    return fail(first_line, "map is larger than " + std::to_string(kMaxSide) + " cells on a side");
  for (std::size_t y = 0; y < rows.size(); ++y) {
    const std::string_view r = rows[y];
    if (r.size() != width)
      return fail(row_lines[y], "row " + std::to_string(y) + " has " + std::to_string(r.size()) +
                                    " characters, expected " + std::to_string(width) + " (the first row's length)");
    for (std::size_t x = 0; x < r.size(); ++x) {
      const auto u = static_cast<unsigned char>(r[x]);
      if (u < 0x20 || u >= 0x7f)
        return fail(row_lines[y], "unexpected " + describe_char(r[x]) + " at column " + std::to_string(x + 1) +
                                      " (use '#' for blocked, printable characters for walkable)");
    }
  }

  std::vector<std::uint8_t> costs(width * rows.size(), kDefaultCost);
  std::vector<MapMarker> found;
  for (std::size_t y = 0; y < rows.size(); ++y) {
    for (std::size_t x = 0; x < width; ++x) {
      const char ch = rows[y][x];
      const auto cx = static_cast<std::int32_t>(x);
      const auto cy = static_cast<std::int32_t>(y);
      if (ch == '#') {
        costs[y * width + x] = kBlockedCost;
      } else if (ch != '.' && ch != ' ') {
        found.push_back({ch, {cx, cy}});
      }
    }
  }
  out = GridMap::from_costs(static_cast<std::int32_t>(width), static_cast<std::int32_t>(rows.size()),
                            std::move(costs));
  if (markers != nullptr) *markers = std::move(found);
  return true;
}

}  // namespace swarmfield::sim
