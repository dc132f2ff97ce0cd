// libFuzzer target: decode_datagram (the opened body of a data packet) + SnapshotReassembler.
// Input: first byte picks the mode.
//   even: a sequence of datagrams, each [u16 little-endian length][bytes], decoded and fed to
//         one reassembler (as a client would);
//   odd:  a sequence of hand-made fragments [tick][index][count][len][bytes...] fed directly, to
//         drive the reassembly rules (eviction, duplicates, stale ticks) much harder than
//         random datagrams could.
// Checked: no crash, decoded fields within documented ranges, reassembler bounds hold, and
// every delivered snapshot re-encodes to itself.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "swarmfield/protocol/datagram.hpp"

namespace {

namespace sp = swarmfield::protocol;

void check_bounds(const sp::SnapshotReassembler& r) {
  if (r.pending() > sp::kMaxPendingSnapshots || r.pending_bytes() > sp::kMaxPendingSnapshotBytes) std::abort();
}

void check_delivered(const std::optional<sp::Snapshot>& s) {
  if (!s) return;
  const auto again = sp::decompress_snapshot(sp::compress_snapshot(*s));
  if (!again || !(*again == *s)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  sp::SnapshotReassembler reassembler;
  std::size_t at = 1;
  if (data[0] % 2 == 0) {
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
      if (d->input) {
        const auto again = sp::decode_datagram(sp::encode_input_datagram(*d->input));
        if (!again || !again->input || !(*again->input == *d->input)) std::abort();
      } else if (d->fragment_count == 0 || d->fragment_count > sp::kMaxSnapshotFragments ||
                 d->fragment_index >= d->fragment_count || d->fragment.empty() ||
                 d->fragment.size() > sp::kMaxPacketBodyBytes) {
        std::abort();
      }
      check_delivered(reassembler.add(*d));
      check_bounds(reassembler);
    }
  } else {
    while (size - at >= 4) {
      sp::DecodedDatagram d;
      d.snapshot_tick = data[at];
      d.fragment_index = data[at + 1];
      d.fragment_count = static_cast<std::uint16_t>(data[at + 2] % 8 == 7 ? 4096 : data[at + 2] % 8);
      const std::size_t n = std::min<std::size_t>(data[at + 3], size - at - 4);
      at += 4;
      d.fragment.assign(data + at, data + at + n);
      at += n;
      check_delivered(reassembler.add(d));
      check_bounds(reassembler);
    }
  }
  return 0;
}
