#pragma once
// Internal to swarmfield_protocol: the generated FlatBuffers code and the pieces that more than
// one message kind shares (Input travels in TCP envelopes and UDP datagrams). Not installed, not included by other components.
#include <flatbuffers/flatbuffers.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fail.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/wire/swarmfield_generated.h"

namespace swarmfield::protocol::detail {

// Buffer identifiers (4 bytes after the root offset), one per root type. The envelope's is the
// schema's file_identifier.
inline constexpr const char* kEnvelopeId = "SWFT";
inline constexpr const char* kDatagramId = "SWFD";

// Verifier limits: our deepest buffer is Envelope -> Welcome -> MapInfo -> string (depth 4) and
// no buffer holds more than 3 tables, so anything beyond these is hostile.
inline constexpr flatbuffers::uoffset_t kMaxVerifierDepth = 8;
inline constexpr flatbuffers::uoffset_t kMaxVerifierTables = 64;

[[nodiscard]] inline flatbuffers::Verifier::Options verifier_options() noexcept {
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxVerifierDepth;
  options.max_tables = kMaxVerifierTables;
  options.check_alignment = true;
  options.check_nested_flatbuffers = false;
  return options;
}

/// The FlatBuffers accessors read scalars through typed pointers, which needs the buffer start
/// aligned as the builder made it (8 bytes). Bytes handed to us (a slice of a socket buffer, a
/// fuzzer input) may start anywhere, so copy them when they are misaligned.
class AlignedView {
 public:
  explicit AlignedView(std::span<const std::uint8_t> bytes) {
    if (reinterpret_cast<std::uintptr_t>(bytes.data()) % alignof(std::uint64_t) == 0) {
      view_ = bytes;
    } else {
      copy_.resize((bytes.size() + 7) / 8);
      if (!bytes.empty()) std::memcpy(copy_.data(), bytes.data(), bytes.size());
      view_ = {reinterpret_cast<const std::uint8_t*>(copy_.data()), bytes.size()};
    }
  }
  [[nodiscard]] const std::uint8_t* data() const noexcept { return view_.data(); }
  [[nodiscard]] std::size_t size() const noexcept { return view_.size(); }

 private:
  std::span<const std::uint8_t> view_;
  std::vector<std::uint64_t> copy_;
};

[[nodiscard]] flatbuffers::Offset<wire::Input> build_input(flatbuffers::FlatBufferBuilder& builder, const Input& input);

/// Range-check a verified table and convert it. false + *error on the first bad field.
[[nodiscard]] bool read_input(const wire::Input& in, Input& out, std::string* error);
/// Snapshot ack fields (Input, SnapshotAck): refused when a bit names a sequence before 1.
[[nodiscard]] bool read_snapshot_ack(std::uint32_t latest, std::uint32_t received, SnapshotAck& out,
                                     std::string* error);

}  // namespace swarmfield::protocol::detail
