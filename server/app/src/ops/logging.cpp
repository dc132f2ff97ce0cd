#include "swarmfield/server/ops/logging.hpp"

#include <algorithm>
#include <vector>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include "swarmfield/cli/control_chars.hpp"

namespace swarmfield::server {
namespace {

using cli::append_unicode_escape;
using cli::is_control_char;

// %j: the log message, JSON-escaped (spdlog's %v would copy quotes and newlines raw).
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string escaped = json_escape(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(escaped.data(), escaped.data() + escaped.size());
  }
  [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
    return spdlog::details::make_unique<JsonMessageFlag>();
  }
};

// %k: the message's fields (log_fields), after the message.
class JsonFieldsFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string fields = log_fields(std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(fields.data(), fields.data() + fields.size());
  }
  [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
    return spdlog::details::make_unique<JsonFieldsFlag>();
  }
};

bool key_char(char c, bool first) {
  return c == '_' || (c >= 'a' && c <= 'z') || (!first && c >= '0' && c <= '9');
}

bool json_number(std::string_view v) {
  std::size_t i = v.size() > 1 && v[0] == '-' ? 1 : 0;
  if (i >= v.size() || v[i] < '0' || v[i] > '9') return false;
  if (v[i] == '0' && i + 1 < v.size() && v[i + 1] != '.') return false;  // no leading zeros
  bool dot = false;
  for (; i < v.size(); ++i) {
    if (v[i] == '.' && !dot && i + 1 < v.size()) {
      dot = true;
    } else if (v[i] < '0' || v[i] > '9') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string log_fields(std::string_view m) {
  std::string out;
  std::vector<std::string_view> seen;
  const auto add = [&](std::string_view key, std::string_view value) {
    if (key == "time" || key == "level" || key == "msg" || value.empty()) return;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) return;
    seen.push_back(key);
    out += ",\"";
    out += key;
    out += "\":";
    if (json_number(value)) {
      out += value;
    } else {
      out += '"';
      out += json_escape(value);
      out += '"';
    }
  };
  for (std::size_t i = 0; i < m.size();) {
    // A quoted text that is no key's value (a client's name: 'x tick=1'): skipped whole, so a
    // peer's string can not add fields to the line.
    if (m[i] == '\'') {
      const std::size_t close = m.find('\'', i + 1);
      if (close == std::string_view::npos) break;
      i = close + 1;
      continue;
    }
    // A word starts here: at the start or after a space or an opening parenthesis.
    if (i > 0 && m[i - 1] != ' ' && m[i - 1] != '(') {
      ++i;
      continue;
    }
    std::size_t k = i;
    while (k < m.size() && key_char(m[k], k == i)) ++k;
    if (k == i) {
      ++i;
      continue;
    }
    const std::string_view key = m.substr(i, k - i);
    if (k < m.size() && m[k] == '=') {  // key=value or key='quoted value'
      std::size_t v = k + 1, end = v;
      if (v < m.size() && m[v] == '\'') {
        end = m.find('\'', v + 1);
        if (end != std::string_view::npos) {
          add(key, m.substr(v + 1, end - v - 1));
          i = end + 1;
          continue;
        }
      }
      end = v;
      while (end < m.size() && m[end] != ' ') ++end;
      std::size_t trimmed = end;
      while (trimmed > v && (m[trimmed - 1] == ',' || m[trimmed - 1] == ';' || m[trimmed - 1] == ')')) --trimmed;
      add(key, m.substr(v, trimmed - v));
      i = end;
      continue;
    }
    if ((key == "client" || key == "player" || key == "tick" || key == "connection") && k + 1 < m.size() && m[k] == ' ') {
      std::size_t v = k + 1, end = v;
      while (end < m.size() && m[end] >= '0' && m[end] <= '9') ++end;
      if (end > v && (end == m.size() || m[end] == ' ' || m[end] == ',' || m[end] == ':' || m[end] == ')' || m[end] == ';')) {
        add(key, m.substr(v, end - v));
        i = end;
        continue;
      }
    }
    i = k;
  }
  return out;
}

std::string json_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (is_control_char(c)) {
          append_unicode_escape(out, c);
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::shared_ptr<spdlog::logger> setup_logging(LogFormat format, const std::string& level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("swarmfield", sink);
  if (format == LogFormat::kJson) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JsonMessageFlag>('j');
    formatter->add_flag<JsonFieldsFlag>('k').set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","msg":"%j"%k})");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
  }
  auto lvl = spdlog::level::from_str(level);
  if (level != "off" && lvl == spdlog::level::off) lvl = spdlog::level::info;
  logger->set_level(lvl);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
  return logger;
}

}  // namespace swarmfield::server
