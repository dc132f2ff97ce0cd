#include <doctest/doctest.h>

#include "swarmfield/server/ops/logging.hpp"

using swarmfield::server::json_escape;

TEST_CASE("logging: json_escape") {
  CHECK(json_escape("plain text") == "plain text");
  CHECK(json_escape("say \"hi\"") == "say \\\"hi\\\"");
  CHECK(json_escape("a\\b") == "a\\\\b");
  CHECK(json_escape("line1\nline2\ttab\r") == "line1\\nline2\\ttab\\r");
  CHECK(json_escape(std::string_view("\x01\x1f", 2)) == "\\u0001\\u001f");
  CHECK(json_escape(std::string_view("nul\0end", 7)) == "nul\\u0000end");
  CHECK(json_escape("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 passes through
}
