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

TEST_CASE("logging: a JSON line's fields come from the message (key=value, client/player/tick N)") {
  using swarmfield::server::log_fields;
  CHECK(log_fields("plain words") == "");
  CHECK(log_fields("status tick=90 agents=3000 players=1 tick_ms p50=1.250") ==
        R"(,"tick":90,"agents":3000,"players":1,"p50":1.250)");
  CHECK(log_fields("client 7 'bob' joined as player from 127.0.0.1:5000 (player 3 at 1.5,2.5); 2 clients") ==
        R"(,"client":7,"player":3)");
  CHECK(log_fields("client 4 says bye: reason='too \"slow\"' map='a b'") == R"(,"client":4,"reason":"too \"slow\"","map":"a b")");
  CHECK(log_fields("spawn at tick 361 stopped") == R"(,"tick":361)");
  CHECK(log_fields("connection 12 (1.2.3.4:5) closed: reason='frame too big'") ==
        R"(,"connection":12,"reason":"frame too big")");
  // The first of a key wins; reserved names and ids that are not whole numbers are no fields.
  CHECK(log_fields("tick=1 tick=2 msg=x level=y time=z client 3x") == R"(,"tick":1)");
  // Values: numbers stay numbers only when JSON says so; the rest are escaped strings.
  CHECK(log_fields("a=007 b=-1 c=1e5 d=0.5 e=1. f=x\"y") == R"(,"a":"007","b":-1,"c":"1e5","d":0.5,"e":"1.","f":"x\"y")");
  CHECK(log_fields("bind=0.0.0.0 udp=35313,") == R"(,"bind":"0.0.0.0","udp":35313)");
  // A quoted name is not searched for fields: a client named 'x tick=1 level=9' adds none.
  CHECK(log_fields("client 7 'x tick=1 agents=9' joined as player (player 3 at 1.5,2.5)") ==
        R"(,"client":7,"player":3)");
  CHECK(log_fields("client 7 'never closed tick=1") == R"(,"client":7)");
}
