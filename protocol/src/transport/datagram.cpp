// Bodies of client UDP data packets: encode (input, ack) and verify-decode.
#include "swarmfield/protocol/transport/datagram.hpp"

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

std::vector<std::uint8_t> encode_ack_datagram(const SnapshotAck& ack) {
  flatbuffers::FlatBufferBuilder b(64);
  const auto body = wire::CreateSnapshotAck(b, ack.latest, ack.received);
  return finish_datagram(b, wire::DatagramPayload::SnapshotAck, body.Union());
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
    case wire::DatagramPayload::SnapshotAck: {
      const auto* a = root->payload_as_SnapshotAck();
      SnapshotAck ack;
      if (!a) {
        fail(error, "datagram payload missing");
        return std::nullopt;
      }
      if (!detail::read_snapshot_ack(a->latest(), a->received(), ack, error)) return std::nullopt;
      out.ack = ack;
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
