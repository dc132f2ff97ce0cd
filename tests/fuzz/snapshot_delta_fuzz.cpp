// libFuzzer target: the delta snapshot decoder on arbitrary bytes, against a fixed baseline frame
// renamed to whatever sequence the payload names. A decoded frame must hold at most
// kMaxFrameAgents agents with strictly increasing ids and positions within [0, kPositionMax];
// a failure must say why. The receiver (history, acks) runs on the same bytes too.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "snapshot_fuzz_baseline.hpp"
#include "swarmfield/protocol/snapshot/snapshot_receiver.hpp"

namespace sp = swarmfield::protocol;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static sp::AgentFrame baseline = sp::test::fuzz_baseline_frame();
  static sp::SnapshotDecoder decoder;
  static sp::SnapshotReceiver receiver(4096);
  const std::span<const std::uint8_t> bytes(data, size);
  sp::SnapshotPrelude prelude;
  if (sp::read_snapshot_prelude(bytes, prelude) && prelude.baseline_distance != 0) {
    baseline.sequence = prelude.sequence - prelude.baseline_distance;
  }
  sp::SnapshotHeader header;
  sp::AgentFrame frame;
  std::string error;
  if (decoder.decode(bytes, sp::AgentFrameView::of(baseline), header, frame, &error)) {
    if (frame.size() > sp::kMaxFrameAgents) std::abort();
    for (std::size_t k = 0; k < frame.size(); ++k) {
      const sp::AgentState& a = frame.agents[k];
      if (a.x > sp::kPositionMax || a.y > sp::kPositionMax) std::abort();
      if (k > 0 && a.id <= frame.agents[k - 1].id) std::abort();
    }
    if (frame.grid.levels.size() != static_cast<std::size_t>(frame.grid.width) * frame.grid.height) std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  (void)receiver.receive(bytes, &error);
  return 0;
}
