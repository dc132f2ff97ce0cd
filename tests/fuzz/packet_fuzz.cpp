// libFuzzer target: the UDP packet layer as the server runs it (read_packet_header,
// PacketChannel::open with its replay window, then decode_datagram on what authenticated).
// First byte picks the mode:
//   even (raw): datagrams [u16 length][bytes] opened by the server end of the fuzzer's fixed
//     session (fuzz_session.hpp). Random bytes never authenticate; mutations of the sealed
//     seeds reach the header checks, the window and the tag check.
//   odd (sealed): records [type][u32 sequence step][u16 body length][body]; each is sealed with
//     the session's client key at sequence (previous + step - 128 ... as chosen), then opened.
//     This drives the replay window with authentic packets: its verdicts are compared with a
//     set-based model, and the opened bodies go through decode_datagram.
// Checked: no crash; every refusal named; an accepted packet has a valid type, the session's
// token, a body within limits; the window accepts exactly what the model does.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "fuzz_session.hpp"
#include "swarmfield/protocol/transport/datagram.hpp"
#include "swarmfield/protocol/transport/packet.hpp"

namespace {

namespace sp = swarmfield::protocol;
using Result = sp::PacketChannel::OpenResult;

void check_body(const std::vector<std::uint8_t>& body) {
  if (body.size() > sp::kMaxPacketBodyBytes) std::abort();
  if (body.empty()) return;
  std::string error;
  const auto d = sp::decode_datagram(body, &error);
  if (!d && error.empty()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const sp::SessionCredentials session = sp::fuzz_session();
  sp::PacketChannel server(sp::PacketChannel::Side::kServer, session);
  sp::PacketHeader header;
  std::vector<std::uint8_t> body;
  std::size_t at = 1;
  if (data[0] % 2 == 0) {
    while (size - at >= 2) {
      const std::size_t n = std::min<std::size_t>(std::size_t{data[at]} | (std::size_t{data[at + 1]} << 8), size - at - 2);
      at += 2;
      const std::span<const std::uint8_t> datagram(data + at, n);
      at += n;
      const auto parsed = sp::read_packet_header(datagram);
      const Result r = server.open(datagram, header, body);
      if (!parsed && r != Result::kMalformed) std::abort();
      if (r != Result::kOk) continue;
      if (header.token != session.token || header.type == sp::PacketType::kChallenge) std::abort();
      if (header.type == sp::PacketType::kChallengeResponse && body.size() != sp::kChallengeBytes) std::abort();
      check_body(body);
    }
    return 0;
  }
  // Sealed mode with a model of the window.
  std::set<std::uint64_t> accepted;
  std::uint64_t newest = 0;
  std::uint64_t sequence = 1;
  while (size - at >= 7) {
    const auto type = static_cast<sp::PacketType>(1 + data[at] % 4);
    const std::uint32_t step = std::uint32_t{data[at + 1]} | (std::uint32_t{data[at + 2]} << 8) |
                               (std::uint32_t{data[at + 3]} << 16) | (std::uint32_t{data[at + 4]} << 24);
    const std::size_t n = std::min<std::size_t>(std::size_t{data[at + 5]} | (std::size_t{data[at + 6]} << 8), size - at - 7);
    at += 7;
    const std::vector<std::uint8_t> plain(data + at, data + at + n);
    at += n;
    // Steps around 0 move backwards (late packets), large ones jump.
    const std::int64_t delta = static_cast<std::int64_t>(step % (1u << 24)) - 128;
    if (delta < 0 && static_cast<std::uint64_t>(-delta) >= sequence) continue;
    sequence = static_cast<std::uint64_t>(static_cast<std::int64_t>(sequence) + delta);
    sp::PacketHeader h;
    h.type = type;
    h.token = session.token;
    std::vector<std::uint8_t> padded = plain;
    if (type == sp::PacketType::kConnectRequest) padded.assign(sp::kConnectRequestBytes - sp::kPacketOverheadBytes, 0);
    if (type == sp::PacketType::kChallenge || type == sp::PacketType::kChallengeResponse) padded.resize(sp::kChallengeBytes);
    const auto datagram = sp::seal_packet(h, sequence, padded, session.client_to_server, sp::Direction::kClientToServer);
    if (datagram.empty()) continue;  // body too large
    const Result r = server.open(datagram, header, body);
    // The model: what the window must say about this (authentic) packet.
    Result expected = Result::kOk;
    if (type == sp::PacketType::kChallenge) {
      expected = Result::kMalformed;  // a server never takes challenges
    } else if (sequence > newest) {
      if (sequence - newest > sp::ReplayWindow::kDefaultMaxJump) expected = Result::kTooFarAhead;
    } else if (newest - sequence >= sp::ReplayWindow::kWindow) {
      expected = Result::kTooOld;
    } else if (accepted.count(sequence) != 0) {
      expected = Result::kDuplicate;
    }
    // The 32-bit wire sequence is rebuilt relative to the newest; values 2^31 or more away can
    // not be told apart and fail authentication instead (a far jump either way).
    const bool ambiguous = (sequence > newest ? sequence - newest : newest - sequence) >= (std::uint64_t{1} << 31);
    if (ambiguous) {
      if (r == Result::kOk) std::abort();
      continue;
    }
    if (r != expected) std::abort();
    if (r != Result::kOk) continue;
    accepted.insert(sequence);
    if (sequence > newest) newest = sequence;
    if (body != padded) std::abort();
    check_body(body);
  }
  return 0;
}
