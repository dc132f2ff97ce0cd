#include <doctest/doctest.h>

#include <string>

#include "swarmfield/cli/control_chars.hpp"

using namespace swarmfield::cli;

TEST_CASE("control_chars: C0 and DEL are control characters, nothing else") {
  for (int c = 0; c < 256; ++c) {
    CHECK(is_control_char(static_cast<unsigned char>(c)) == (c < 0x20 || c == 0x7f));
  }
  std::string out = "x";
  append_unicode_escape(out, 0x00);
  append_unicode_escape(out, 0x1f);
  append_unicode_escape(out, 0x7f);
  CHECK(out == "x\\u0000\\u001f\\u007f");
}

TEST_CASE("control_chars: printable_ascii keeps printable ASCII and replaces the rest by '?'") {
  CHECK(printable_ascii("bot-1 ~ok") == "bot-1 ~ok");
  CHECK(printable_ascii(std::string("a\nb\0c\x7f", 6)) == "a?b?c?");
  CHECK(printable_ascii("caf\xc3\xa9") == "caf??");  // bytes beyond ASCII too
  CHECK(printable_ascii("") == "");
}
