// libFuzzer target: decode_datagram, the opened body of a client data packet (Input or
// SnapshotAck). Input: a sequence of datagrams, each [u16 little-endian length][bytes].
// Checked: no crash, a refusal always says why, exactly one of input / ack is set, and what
// decodes re-encodes to the same value.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "swarmfield/protocol/transport/datagram.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace sp = swarmfield::protocol;
  std::size_t at = 0;
  while (size - at >= 2) {
    const std::size_t n = std::min<std::size_t>(std::size_t{data[at]} | (std::size_t{data[at + 1]} << 8), size - at - 2);
    at += 2;
    std::string error;
    const auto d = sp::decode_datagram({data + at, n}, &error);
    at += n;
    if (!d) {
      if (error.empty()) std::abort();
      continue;
    }
    if (d->input.has_value() == d->ack.has_value()) std::abort();
    if (d->input) {
      const auto again = sp::decode_datagram(sp::encode_input_datagram(*d->input));
      if (!again || !again->input || !(*again->input == *d->input)) std::abort();
    } else {
      const auto again = sp::decode_datagram(sp::encode_ack_datagram(*d->ack));
      if (!again || !again->ack || !(*again->ack == *d->ack)) std::abort();
    }
  }
  return 0;
}
