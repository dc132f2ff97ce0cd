// libFuzzer target: snapshot fragment reassembly on arbitrary datagrams. The input is a series of
// [u16 little-endian length][fragment bytes]; every completed payload goes on to a
// SnapshotReceiver. A completed payload is never larger than kMaxFragmentedSnapshotBytes and at
// most kMaxAssembling snapshots are ever in progress.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "swarmfield/protocol/snapshot/snapshot_fragments.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"

namespace sp = swarmfield::protocol;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static sp::FragmentAssembler assembler;
  static sp::SnapshotReceiver receiver(4096);
  assembler.reset();
  receiver.reset();
  std::size_t at = 0;
  while (at + 2 <= size) {
    const std::size_t n = std::size_t{data[at]} | (std::size_t{data[at + 1]} << 8);
    at += 2;
    const std::size_t take = n < size - at ? n : size - at;
    const auto whole = assembler.add({data + at, take});
    at += take;
    if (assembler.assembling() > sp::kMaxAssembling) std::abort();
    if (whole) {
      if (whole->size() > sp::kMaxFragmentedSnapshotBytes) std::abort();
      std::string error;
      (void)receiver.receive(*whole, &error);
    }
  }
  return 0;
}
