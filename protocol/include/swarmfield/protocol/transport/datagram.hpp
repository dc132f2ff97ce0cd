#pragma once
// Bodies of client -> server UDP data packets (packet.hpp seals them): an Input or a
// SnapshotAck, as a FlatBuffers Datagram (identifier "SWFD"). Server -> client data packets
// carry raw snapshot fragments instead (snapshot_fragments.hpp). Every body is
// <= kMaxPacketBodyBytes, so every sealed datagram is <= kMaxDatagramBytes. No sockets.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/protocol/transport/packet.hpp"
#include "swarmfield/protocol/transport/snapshot_ack.hpp"

namespace swarmfield::protocol {

/// Client -> server: the body of an input packet (the input carries the snapshot ack too).
[[nodiscard]] std::vector<std::uint8_t> encode_input_datagram(const Input& input);
/// Client -> server: the body of an ack-only packet (a snapshot decoded, no new input).
[[nodiscard]] std::vector<std::uint8_t> encode_ack_datagram(const SnapshotAck& ack);

/// One verified client datagram body: exactly one of the two is set.
struct DecodedDatagram {
  std::optional<Input> input;
  std::optional<SnapshotAck> ack;
};

/// Verifies the opened body of a client data packet: size 1..kMaxPacketBodyBytes, FlatBuffers
/// verifier (identifier "SWFD"), a known payload type; an Input passes the same checks as in
/// decode_tcp_message, an ack the same ack checks. nullopt + `error` (a short sentence) on
/// anything malformed. Authentication is the packet layer's job (PacketChannel::open), before
/// this runs.
[[nodiscard]] std::optional<DecodedDatagram> decode_datagram(std::span<const std::uint8_t> bytes,
                                                             std::string* error = nullptr);

}  // namespace swarmfield::protocol
