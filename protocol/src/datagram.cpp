// Bodies of UDP data packets: encode (input, fragmented snapshot) and verify-decode.
#include "swarmfield/protocol/datagram.hpp"

#include <algorithm>
#include <cstring>

#include "wire_codec.hpp"

namespace swarmfield::protocol {
namespace {

using detail::fail;

std::vector<std::uint8_t> finish_datagram(flatbuffers::FlatBufferBuilder& b, wire::DatagramPayload type,
                                          flatbuffers::Offset<void> payload) {
  b.Finish(wire::CreateDatagram(b, type, payload), detail::kDatagramId);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

}  // namespace

std::vector<std::uint8_t> encode_input_datagram(const Input& input) {
  flatbuffers::FlatBufferBuilder b(256);
  const auto body = detail::build_input(b, input);
  return finish_datagram(b, wire::DatagramPayload::Input, body.Union());
}

std::vector<std::vector<std::uint8_t>> encode_snapshot_datagrams(const Snapshot& snapshot, int zstd_level) {
  const std::vector<std::uint8_t> compressed = compress_snapshot(snapshot, zstd_level);
  if (compressed.empty()) return {};
  const std::size_t count = (compressed.size() + kSnapshotFragmentBytes - 1) / kSnapshotFragmentBytes;
  if (count > kMaxSnapshotFragments) return {};

  std::vector<std::vector<std::uint8_t>> datagrams;
  datagrams.reserve(count);
  flatbuffers::FlatBufferBuilder b(kMaxPacketBodyBytes + 64);
  for (std::size_t i = 0; i < count; ++i) {
    b.Clear();
    const std::size_t begin = i * kSnapshotFragmentBytes;
    const std::size_t size = std::min(kSnapshotFragmentBytes, compressed.size() - begin);
    const auto bytes = b.CreateVector(compressed.data() + begin, size);
    const auto fragment = wire::CreateSnapshotFragment(b, snapshot.tick, static_cast<std::uint16_t>(i),
                                                       static_cast<std::uint16_t>(count), bytes);
    datagrams.push_back(finish_datagram(b, wire::DatagramPayload::SnapshotFragment, fragment.Union()));
  }
  return datagrams;
}

std::optional<DecodedDatagram> decode_datagram(std::span<const std::uint8_t> bytes, std::string* error) {
  if (bytes.empty()) {
    fail(error, "empty datagram");
    return std::nullopt;
  }
  if (bytes.size() > kMaxPacketBodyBytes) {
    fail(error, "datagram body of " + std::to_string(bytes.size()) + " bytes exceeds " +
                    std::to_string(kMaxPacketBodyBytes));
    return std::nullopt;
  }
  // Aligned copy on the stack: bodies are small, and the accessors need 8-byte alignment.
  alignas(8) std::uint8_t buffer[kMaxPacketBodyBytes];
  std::memcpy(buffer, bytes.data(), bytes.size());
  flatbuffers::Verifier verifier(buffer, bytes.size(), detail::verifier_options());
  if (!verifier.VerifyBuffer<wire::Datagram>(detail::kDatagramId)) {
    fail(error, "not a valid swarmfield datagram (FlatBuffers verification failed)");
    return std::nullopt;
  }
  const auto* root = flatbuffers::GetRoot<wire::Datagram>(buffer);
  DecodedDatagram out;
  switch (root->payload_type()) {
    case wire::DatagramPayload::Input: {
      const auto* in = root->payload_as_Input();
      Input input;
      if (!in) {
        fail(error, "datagram payload missing");
        return std::nullopt;
      }
      if (!detail::read_input(*in, input, error)) return std::nullopt;
      out.input = input;
      return out;
    }
    case wire::DatagramPayload::SnapshotFragment: {
      const auto* f = root->payload_as_SnapshotFragment();
      if (!f || !f->bytes()) {
        fail(error, "datagram payload missing");
        return std::nullopt;
      }
      if (f->count() == 0 || f->count() > kMaxSnapshotFragments || f->index() >= f->count()) {
        fail(error, "snapshot fragment " + std::to_string(f->index()) + " of " + std::to_string(f->count()) +
                        " out of range");
        return std::nullopt;
      }
      if (f->bytes()->size() == 0) {
        fail(error, "empty snapshot fragment");
        return std::nullopt;
      }
      out.snapshot_tick = f->snapshot_tick();
      out.fragment_index = f->index();
      out.fragment_count = f->count();
      out.fragment.assign(f->bytes()->Data(), f->bytes()->Data() + f->bytes()->size());
      return out;
    }
    case wire::DatagramPayload::NONE:
      fail(error, "datagram holds no payload");
      return std::nullopt;
  }
  fail(error, "unknown datagram payload type " + std::to_string(static_cast<unsigned>(root->payload_type())));
  return std::nullopt;
}

}  // namespace swarmfield::protocol
