// libFuzzer target: decode_tcp_message on arbitrary bytes. Besides "no crash / no sanitizer
// report", a decode that succeeds must describe a message that re-encodes to itself: a decoder
// that accepts garbage as something it cannot reproduce is reading it wrong.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <variant>

#include "swarmfield/protocol/transport/messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sp = swarmfield::protocol;
  std::string error;
  const auto message = sp::decode_tcp_message({data, size}, &error);
  if (!message) {
    if (error.empty()) std::abort();  // every refusal must say why
    return 0;
  }
  const auto again = sp::decode_tcp_message(sp::encode_tcp_message(*message));
  if (!again || !(*again == *message)) std::abort();
  // What the server decodes (MessageSet::kFromClient) is a subset: Hello, Input, Bye only.
  const auto from_client = sp::decode_tcp_message({data, size}, &error, sp::MessageSet::kFromClient);
  const bool client_kind = std::holds_alternative<sp::Hello>(*message) || std::holds_alternative<sp::Input>(*message) ||
                           std::holds_alternative<sp::Bye>(*message);
  if (from_client.has_value() != client_kind) std::abort();
  return 0;
}
