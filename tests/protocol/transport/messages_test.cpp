// TCP messages: round trips, range checks on hand-crafted hostile buffers, seeded mutations.
#include <doctest/doctest.h>

#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <tuple>

#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "swarmfield/wire/swarmfield_generated.h"
#include "test_support.hpp"

namespace sp = swarmfield::protocol;
namespace wire = swarmfield::wire;

namespace {

using BodyFn = std::function<std::pair<wire::Message, flatbuffers::Offset<void>>(flatbuffers::FlatBufferBuilder&)>;

/// Builds an envelope around a body made with the generated builders: the encoder under test
/// would never produce these buffers.
std::vector<std::uint8_t> craft(const BodyFn& body, const char* identifier = "SWFT") {
  flatbuffers::FlatBufferBuilder b;
  const auto [type, offset] = body(b);
  b.Finish(wire::CreateEnvelope(b, type, offset), identifier);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

std::string decode_error(const std::vector<std::uint8_t>& bytes) {
  std::string error;
  const auto decoded = sp::decode_tcp_message(bytes, &error);
  if (decoded) return "<decoded>";
  return error;
}

BodyFn hello(std::string name, std::uint8_t role = 0) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    const auto n = b.CreateString(name);
    return std::pair{wire::Message::Hello, wire::CreateHello(b, 1, static_cast<wire::Role>(role), n).Union()};
  };
}

BodyFn input(float mx, float my, float vx0 = 0, float vy0 = 0, float vx1 = 1, float vy1 = 1) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::pair{wire::Message::Input, wire::CreateInput(b, 1, mx, my, vx0, vy0, vx1, vy1, 0, 0).Union()};
  };
}

// UdpSession vectors of the given sizes (token bytes = `token_fill`).
flatbuffers::Offset<wire::UdpSession> udp_session(flatbuffers::FlatBufferBuilder& b, std::size_t token = 16,
                                                  std::size_t client_key = 32, std::size_t server_key = 32,
                                                  std::uint8_t token_fill = 7) {
  const auto t = b.CreateVector(std::vector<std::uint8_t>(token, token_fill));
  const auto c = b.CreateVector(std::vector<std::uint8_t>(client_key, 1));
  const auto s = b.CreateVector(std::vector<std::uint8_t>(server_key, 2));
  return wire::CreateUdpSession(b, t, c, s);
}

BodyFn welcome(std::int32_t w, std::int32_t h, float cell, std::uint32_t raw, std::uint32_t compressed,
               std::uint32_t chunks, std::uint16_t tick_hz = 30) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    const auto map = wire::CreateMapInfo(b, w, h, cell, raw, compressed, chunks, b.CreateString("m"));
    const auto udp = udp_session(b);
    return std::pair{wire::Message::Welcome, wire::CreateWelcome(b, 1, tick_hz, 20, 3, 0, map, udp).Union()};
  };
}

BodyFn snapshot_data(std::size_t bytes) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    const auto payload = b.CreateVector(std::vector<std::uint8_t>(bytes, 0xD1));
    return std::pair{wire::Message::SnapshotData, wire::CreateSnapshotData(b, payload).Union()};
  };
}

}  // namespace

TEST_CASE("every TCP message round-trips unchanged") {
  for (const sp::TcpMessage& message : sp::test::sample_messages()) {
    CAPTURE(message.index());
    const std::vector<std::uint8_t> bytes = sp::encode_tcp_message(message);
    REQUIRE(bytes.size() >= 8);
    std::string error;
    const auto decoded = sp::decode_tcp_message(bytes, &error);
    REQUIRE_MESSAGE(decoded.has_value(), error);
    CHECK(*decoded == message);
  }
}

TEST_CASE("snapshot data: payload of 1..kMaxSnapshotPayloadBytes, required") {
  CHECK(decode_error(craft(snapshot_data(1))) == "<decoded>");
  CHECK(decode_error(craft(snapshot_data(sp::kMaxSnapshotPayloadBytes))) == "<decoded>");
  CHECK(decode_error(craft(snapshot_data(0))) == "SnapshotData payload of 0 bytes is outside 1..147456");
  CHECK(decode_error(craft(snapshot_data(sp::kMaxSnapshotPayloadBytes + 1))) ==
        "SnapshotData payload of 147457 bytes is outside 1..147456");
  const auto missing = [](flatbuffers::FlatBufferBuilder& b) {
    wire::SnapshotDataBuilder data(b);  // no payload: the required field is absent
    return std::pair{wire::Message::SnapshotData, data.Finish().Union()};
  };
  CHECK(decode_error(craft(missing)) == "not a valid swarmfield TCP message (FlatBuffers verification failed)");
}

TEST_CASE("input snapshot acks: bits may not name sequences before 1") {
  const auto with_ack = [](std::uint32_t latest, std::uint32_t bits) -> BodyFn {
    return [=](flatbuffers::FlatBufferBuilder& b) {
      return std::pair{wire::Message::Input, wire::CreateInput(b, 1, 0, 0, 0, 0, 1, 1, latest, 0, bits).Union()};
    };
  };
  CHECK(decode_error(craft(with_ack(3, 0x3u))) == "<decoded>");
  CHECK(decode_error(craft(with_ack(40, 0xFFFFFFFFu))) == "<decoded>");
  CHECK(decode_error(craft(with_ack(3, 0x4u))) == "snapshot ack bits name sequences before 1");
  CHECK(decode_error(craft(with_ack(0, 0x1u))) == "snapshot ack bits name sequences before 1");
}

TEST_CASE("input fire and aim: round trip; an older encoder's Input decodes with fire off") {
  sp::Input firing{5, 0.0f, 1.0f, 0, 0, 10, 10, sp::SnapshotAck{}, 77, true, -0.5f, 3.0f};
  auto decoded = sp::decode_tcp_message(sp::encode_tcp_message(firing));
  REQUIRE(decoded);
  CHECK(std::get<sp::Input>(*decoded) == firing);
  firing.aim_x = -sp::kMaxWireCoordinate;  // the bound itself is accepted
  firing.aim_y = sp::kMaxWireCoordinate;
  decoded = sp::decode_tcp_message(sp::encode_tcp_message(firing));
  REQUIRE(decoded);
  CHECK(std::get<sp::Input>(*decoded) == firing);

  // Version 3 before `fire`: the builder writes only the fields it knew, so the table's vtable
  // ends before the new slots (what an older client sends).
  const auto older = [](flatbuffers::FlatBufferBuilder& b) {
    wire::InputBuilder in(b);
    in.add_sequence(9);
    in.add_move_x(0.5f);
    in.add_move_y(-0.5f);
    in.add_view_x0(1);
    in.add_view_y0(2);
    in.add_view_x1(30);
    in.add_view_y1(40);
    in.add_snapshot_ack(3);
    in.add_client_time_us(1234);
    in.add_snapshot_ack_bits(0x3u);
    return std::pair{wire::Message::Input, in.Finish().Union()};
  };
  const auto bytes = craft(older);
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(wire::GetEnvelope(bytes.data())->message_as_Input());
  REQUIRE(table != nullptr);
  CHECK(flatbuffers::ReadScalar<flatbuffers::voffset_t>(table->GetVTable()) <= wire::Input::VT_FIRE);
  decoded = sp::decode_tcp_message(bytes);
  REQUIRE(decoded);
  const auto& input = std::get<sp::Input>(*decoded);
  CHECK(input == sp::Input{9, 0.5f, -0.5f, 1, 2, 30, 40, sp::SnapshotAck{3, 0x3u}, 1234, false, 0.0f, 0.0f});
  CHECK_FALSE(input.fire);

  // Any non-zero byte in the bool's slot is "held" (FlatBuffers reads bool as byte != 0); the
  // re-encoded Input is the canonical one.
  const auto odd_bool = [](flatbuffers::FlatBufferBuilder& b) {
    wire::InputBuilder in(b);
    in.add_view_x1(1);
    in.add_view_y1(1);
    b.AddElement<std::uint8_t>(wire::Input::VT_FIRE, 0xFE, 0);
    in.add_aim_x(1.0f);
    return std::pair{wire::Message::Input, in.Finish().Union()};
  };
  decoded = sp::decode_tcp_message(craft(odd_bool));
  REQUIRE(decoded);
  CHECK(std::get<sp::Input>(*decoded).fire);
  CHECK(std::get<sp::Input>(*decoded).aim_x == 1.0f);
}

TEST_CASE("input build requests: round trip; an older encoder's Input decodes with no request") {
  sp::Input building{6, 0.0f, 0.0f, 0, 0, 10, 10, sp::SnapshotAck{}, 9, false, 0.0f, 0.0f, 3, 17, 4};
  auto decoded = sp::decode_tcp_message(sp::encode_tcp_message(building));
  REQUIRE(decoded);
  CHECK(std::get<sp::Input>(*decoded) == building);
  building.build_id = 0xFFFFFFFFu;  // the edges of the ranges are accepted
  building.build_x = sp::kMaxMapSide - 1;
  building.build_y = 0;
  decoded = sp::decode_tcp_message(sp::encode_tcp_message(building));
  REQUIRE(decoded);
  CHECK(std::get<sp::Input>(*decoded) == building);

  // An encoder from before the build fields (fire and aim, nothing after): its vtable ends
  // before the new slots, and the Input decodes with no request.
  const auto older = [](flatbuffers::FlatBufferBuilder& b) {
    wire::InputBuilder in(b);
    in.add_sequence(4);
    in.add_view_x1(30);
    in.add_view_y1(40);
    in.add_fire(true);
    in.add_aim_x(1.5f);
    in.add_aim_y(-2.0f);
    return std::pair{wire::Message::Input, in.Finish().Union()};
  };
  const auto bytes = craft(older);
  const auto* table = reinterpret_cast<const flatbuffers::Table*>(wire::GetEnvelope(bytes.data())->message_as_Input());
  REQUIRE(table != nullptr);
  CHECK(flatbuffers::ReadScalar<flatbuffers::voffset_t>(table->GetVTable()) <= wire::Input::VT_BUILD_ID);
  decoded = sp::decode_tcp_message(bytes);
  REQUIRE(decoded);
  const auto& input = std::get<sp::Input>(*decoded);
  CHECK(input == sp::Input{4, 0, 0, 0, 0, 30, 40, sp::SnapshotAck{}, 0, true, 1.5f, -2.0f, 0, 0, 0});
  CHECK(input.build_id == 0);
}

TEST_CASE("input build cell: outside 0..kMaxMapSide-1 is refused, with or without a request") {
  const auto build = [](std::uint32_t id, std::int32_t x, std::int32_t y) -> BodyFn {
    return [=](flatbuffers::FlatBufferBuilder& b) {
      return std::pair{wire::Message::Input,
                       wire::CreateInput(b, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, false, 0, 0, id, x, y).Union()};
    };
  };
  CHECK(decode_error(craft(build(1, 0, 0))) == "<decoded>");
  CHECK(decode_error(craft(build(2, 8191, 8191))) == "<decoded>");
  CHECK(decode_error(craft(build(0, 0, 0))) == "<decoded>");
  CHECK(decode_error(craft(build(1, -1, 0))) == "Input build cell (-1, 0) outside 0..8191");
  CHECK(decode_error(craft(build(1, 0, -1))) == "Input build cell (0, -1) outside 0..8191");
  CHECK(decode_error(craft(build(7, 8192, 3))) == "Input build cell (8192, 3) outside 0..8191");
  CHECK(decode_error(craft(build(7, 3, 8192))) == "Input build cell (3, 8192) outside 0..8191");
  CHECK(decode_error(craft(build(1, std::numeric_limits<std::int32_t>::min(), 0))) ==
        "Input build cell (-2147483648, 0) outside 0..8191");
  CHECK(decode_error(craft(build(1, 0, std::numeric_limits<std::int32_t>::max()))) ==
        "Input build cell (0, 2147483647) outside 0..8191");
  // A value the server never reads (no request) is still a hostile one, as with the aim.
  CHECK(decode_error(craft(build(0, -5, 0))) == "Input build cell (-5, 0) outside 0..8191");
}

TEST_CASE("map delta: round trip; 1..kMaxMapDeltaCells cells of cost 1..255; a barricade blocks its cell") {
  sp::MapDelta big{77, {}};
  for (std::size_t i = 0; i < sp::kMaxMapDeltaCells; ++i) {
    const bool barricade = i % 3 == 0;
    big.cells.push_back({static_cast<std::uint16_t>(i % 8192), static_cast<std::uint16_t>(i / 7),
                         static_cast<std::uint8_t>(barricade ? 255 : 1 + i % 255),
                         static_cast<std::uint8_t>(barricade ? 1 + i % 255 : 0)});
  }
  const auto encoded = sp::encode_tcp_message(big);
  std::string error;
  auto decoded = sp::decode_tcp_message(encoded, &error, sp::MessageSet::kFromServer);
  REQUIRE_MESSAGE(decoded, error);
  CHECK(std::get<sp::MapDelta>(*decoded) == big);
  // Server -> client only: a server refuses it by type.
  CHECK_FALSE(sp::decode_tcp_message(encoded, &error, sp::MessageSet::kFromClient));
  CHECK(error == "message type MapDelta is not accepted here");

  using Cell = std::array<std::uint32_t, 4>;  // x, y, cost, barricade
  const auto delta = [](std::vector<Cell> cells, std::uint32_t revision = 1) -> BodyFn {
    return [=](flatbuffers::FlatBufferBuilder& b) {
      std::vector<wire::MapCellChange> v;
      for (const Cell& c : cells) {
        v.emplace_back(static_cast<std::uint16_t>(c[0]), static_cast<std::uint16_t>(c[1]),
                       static_cast<std::uint8_t>(c[2]), static_cast<std::uint8_t>(c[3]));
      }
      return std::pair{wire::Message::MapDelta, wire::CreateMapDelta(b, revision, b.CreateVectorOfStructs(v)).Union()};
    };
  };
  CHECK(decode_error(craft(delta({{3, 4, 255, 255}, {3, 5, 1, 0}, {8191, 8191, 254, 0}}))) == "<decoded>");
  CHECK(decode_error(craft(delta({{0, 0, 255, 0}}, 0))) == "<decoded>");  // a wall with no barricade
  CHECK(decode_error(craft(delta({}))) == "MapDelta holds 0 cells, expected 1..4096");
  CHECK(decode_error(craft(delta(std::vector<Cell>(sp::kMaxMapDeltaCells + 1, Cell{1, 1, 255, 255})))) ==
        "MapDelta holds 4097 cells, expected 1..4096");
  CHECK(decode_error(craft(delta({{3, 4, 255, 0}, {3, 5, 0, 0}}))) == "MapDelta cell (3, 5) has cost 0 (costs are 1..255)");
  CHECK(decode_error(craft(delta({{6, 2, 5, 200}}))) == "MapDelta cell (6, 2) holds a barricade but has cost 5, not 255");
  CHECK(decode_error(craft(delta({{8192, 0, 1, 0}}))) == "MapDelta cell (8192, 0) outside 0..8191");
  CHECK(decode_error(craft(delta({{0, 65535, 1, 0}}))) == "MapDelta cell (0, 65535) outside 0..8191");
  const auto missing = [](flatbuffers::FlatBufferBuilder& b) {
    wire::MapDeltaBuilder d(b);  // no cells: the required field is absent
    d.add_revision(3);
    return std::pair{wire::Message::MapDelta, d.Finish().Union()};
  };
  CHECK(decode_error(craft(missing)) == "not a valid swarmfield TCP message (FlatBuffers verification failed)");
}

TEST_CASE("input aim: non-finite or beyond +-1e6 is refused, with or without fire") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const auto aimed = [](bool fire, float ax, float ay) -> BodyFn {
    return [=](flatbuffers::FlatBufferBuilder& b) {
      return std::pair{wire::Message::Input, wire::CreateInput(b, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, fire, ax, ay).Union()};
    };
  };
  CHECK(decode_error(craft(aimed(true, 2.0f, -1.0f))) == "<decoded>");
  CHECK(decode_error(craft(aimed(true, 0.0f, 0.0f))) == "<decoded>");  // zero aim: the server's to ignore
  CHECK(decode_error(craft(aimed(false, -1e6f, 1e6f))) == "<decoded>");
  for (const bool fire : {true, false}) {
    for (const auto& [ax, ay] : {std::pair{nan, 0.0f}, std::pair{0.0f, nan}, std::pair{inf, 1.0f}, std::pair{1.0f, -inf},
                                 std::pair{2e6f, 0.0f}, std::pair{0.0f, -1.5e6f},
                                 std::pair{std::numeric_limits<float>::max(), 0.0f}}) {
      CAPTURE(fire);
      CAPTURE(ax);
      CAPTURE(ay);
      CHECK(decode_error(craft(aimed(fire, ax, ay))) == "Input aim values must be finite and within +-1e6");
    }
  }
}

TEST_CASE("the encoder cuts long strings at a UTF-8 boundary so the peer accepts them") {
  // 63 ASCII bytes then a 2-byte character: the limit (64) falls inside the character.
  const std::string name = std::string(63, 'a') + "\xC3\xA9" + "tail";
  auto decoded = sp::decode_tcp_message(sp::encode_tcp_message(sp::Hello{1, sp::Role::kViewer, name, {}, {}}));
  REQUIRE(decoded);
  CHECK(std::get<sp::Hello>(*decoded).name == std::string(63, 'a'));

  const std::string reason(1000, 'r');
  decoded = sp::decode_tcp_message(sp::encode_tcp_message(sp::Bye{reason}));
  REQUIRE(decoded);
  CHECK(std::get<sp::Bye>(*decoded).reason == std::string(sp::kMaxReasonBytes, 'r'));
}

TEST_CASE("strings: length, UTF-8 and control characters are checked") {
  CHECK(decode_error(craft(hello(std::string(sp::kMaxNameBytes, 'n')))) == "<decoded>");
  CHECK(decode_error(craft(hello(std::string(sp::kMaxNameBytes + 1, 'n')))) == "Hello.name is 65 bytes, limit 64");
  CHECK(decode_error(craft(hello("bad\xFF"))) == "Hello.name is not valid UTF-8");
  CHECK(decode_error(craft(hello("\xC0\xAF"))) == "Hello.name is not valid UTF-8");        // overlong '/'
  CHECK(decode_error(craft(hello("\xED\xA0\x80"))) == "Hello.name is not valid UTF-8");    // surrogate
  CHECK(decode_error(craft(hello("\xE2\x82"))) == "Hello.name is not valid UTF-8");        // truncated
  CHECK(decode_error(craft(hello("tab\tname"))) == "Hello.name contains control characters");
  CHECK(decode_error(craft(hello("esc\x1b[2J"))) == "Hello.name contains control characters");
  // Invisible formatting that makes a name show as another (found by a fresh-user trial):
  // a right-to-left override, a zero-width space, a C1 control, an isolate, a byte order mark.
  for (const char* spoof : {"admin\xE2\x80\xAEnimda", "ad\xE2\x80\x8Bmin", "x\xC2\x85y", "a\xE2\x81\xA6" "b", "\xEF\xBB\xBF" "admin"}) {
    CHECK(decode_error(craft(hello(spoof))) == "Hello.name contains control characters");
  }
  // Letters beyond ASCII, emoji and the joiners emoji sequences use are names.
  for (const char* fine : {"caf\xC3\xA9", "\xE5\x90\x8D\xE5\x89\x8D", "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9"}) {
    CHECK(decode_error(craft(hello(fine))) == "<decoded>");
  }

  const auto long_reason = [](flatbuffers::FlatBufferBuilder& b) {
    const auto r = b.CreateString(std::string(sp::kMaxReasonBytes + 1, 'x'));
    return std::pair{wire::Message::Bye, wire::CreateBye(b, r).Union()};
  };
  CHECK(decode_error(craft(long_reason)) == "Bye.reason is 257 bytes, limit 256");
}

TEST_CASE("clean_name makes any text a name the decoders accept") {
  CHECK(sp::clean_name("Boston_0_256.map") == "Boston_0_256.map");
  CHECK(sp::clean_name("caf\xC3\xA9.map") == "caf\xC3\xA9.map");
  CHECK(sp::clean_name("bad\xFF\xFE" "name") == "bad??name");              // not UTF-8
  CHECK(sp::clean_name("tab\tnew\nline") == "tab?new?line");                // controls
  CHECK(sp::clean_name("rtl\xE2\x80\xAE" "x") == "rtl?x");                 // a bidi override (3 bytes -> one '?')
  CHECK(sp::clean_name("\xE2\x82") == "??");                                // truncated sequence
  // At most kMaxNameBytes, never splitting a character: 40 two-byte characters -> 32 of them.
  std::string long_name;
  for (int i = 0; i < 40; ++i) long_name += "\xC3\xA9";
  const std::string cut = sp::clean_name(long_name);
  CHECK(cut.size() == 64);
  CHECK(cut == long_name.substr(0, 64));
  CHECK(sp::clean_name(std::string(100, 'a')) == std::string(64, 'a'));
  // Whatever came in, a name made of it decodes (names are checked alike in every message).
  for (const std::string& raw : {long_name + "x", std::string("\x01\xC0\xAF\xED\xA0\x80\xEF\xBB\xBF"), std::string(200, '\xFF')}) {
    sp::Hello hello;
    hello.name = sp::clean_name(raw);
    std::string error;
    const auto decoded = sp::decode_tcp_message(sp::encode_tcp_message(hello), &error);
    CHECK_MESSAGE(decoded.has_value(), error);
  }
}

TEST_CASE("enums out of range are refused") {
  CHECK(decode_error(craft(hello("x", 1))) == "<decoded>");
  CHECK(decode_error(craft(hello("x", 2))) == "Hello.role 2 is neither viewer (0) nor player (1)");
  for (std::uint16_t code : {0, 6, 0xFFFF}) {
    const auto body = [code](flatbuffers::FlatBufferBuilder& b) {
      return std::pair{wire::Message::Error,
                       wire::CreateError(b, static_cast<wire::ErrorCode>(code), b.CreateString("r")).Union()};
    };
    CAPTURE(code);
    CHECK(decode_error(craft(body)) == "Error.code " + std::to_string(code) + " unknown");
  }
}

TEST_CASE("floats must be finite and bounded") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(decode_error(craft(input(0.5f, -0.5f))) == "<decoded>");
  for (const auto& body : {input(nan, 0), input(0, inf), input(0, 0, -inf), input(0, 0, 0, 0, 2e6f), input(0, 0, 0, nan)}) {
    CHECK(decode_error(craft(body)) == "Input move/view values must be finite and within +-1e6");
  }
  CHECK(decode_error(craft(welcome(8, 8, nan, 64, 10, 1))) == "MapInfo.cell_size must be finite and in (0, 1024]");
  CHECK(decode_error(craft(welcome(8, 8, -1.0f, 64, 10, 1))) == "MapInfo.cell_size must be finite and in (0, 1024]");
}

TEST_CASE("map info sizes are sane and consistent") {
  CHECK(decode_error(craft(welcome(8, 8, 1.0f, 64, 10, 1))) == "<decoded>");
  CHECK(decode_error(craft(welcome(8192, 8192, 1.0f, 8192u * 8192u, 100000, sp::map_chunk_count(100000)))) ==
        "<decoded>");
  CHECK(decode_error(craft(welcome(0, 8, 1.0f, 0, 10, 1))) == "MapInfo size 0x8 outside 1..8192 cells per side");
  CHECK(decode_error(craft(welcome(8, 8193, 1.0f, 8 * 8193, 10, 1))) ==
        "MapInfo size 8x8193 outside 1..8192 cells per side");
  CHECK(decode_error(craft(welcome(-5, 8, 1.0f, 0, 10, 1))) == "MapInfo size -5x8 outside 1..8192 cells per side");
  CHECK(decode_error(craft(welcome(8, 8, 1.0f, 65, 10, 1))) == "MapInfo.raw_bytes 65 is not width*height");
  CHECK(decode_error(craft(welcome(8, 8, 1.0f, 64, 0, 0))) == "MapInfo.compressed_bytes 0 impossible for 64 raw bytes");
  CHECK(decode_error(craft(welcome(8, 8, 1.0f, 64, 10000, 1))) ==
        "MapInfo.compressed_bytes 10000 impossible for 64 raw bytes");
  CHECK(decode_error(craft(welcome(8, 8, 1.0f, 64, 10, 2))) == "MapInfo.chunk_count 2 should be 1");
  CHECK(decode_error(craft(welcome(8, 8, 1.0f, 64, 10, 1, 0))) == "Welcome tick_hz/snapshot_hz must be 1..1000");
  // A Welcome without its required map fails the verifier itself.
  const auto no_map = [](flatbuffers::FlatBufferBuilder& b) {
    return std::pair{wire::Message::Welcome, wire::CreateWelcome(b, 1, 30, 20, 3, 0, 0).Union()};
  };
  CHECK(decode_error(craft(no_map)).find("verification failed") != std::string::npos);
}

TEST_CASE("Welcome carries a 16-byte non-zero UDP token and two 32-byte keys") {
  const auto with_udp = [](bool present, std::size_t token, std::size_t ck, std::size_t sk, std::uint8_t fill) {
    return [=](flatbuffers::FlatBufferBuilder& b) {
      const auto map = wire::CreateMapInfo(b, 8, 8, 1.0f, 64, 10, 1, b.CreateString("m"));
      const auto udp = present ? udp_session(b, token, ck, sk, fill) : flatbuffers::Offset<wire::UdpSession>();
      return std::pair{wire::Message::Welcome, wire::CreateWelcome(b, 1, 30, 20, 3, 0, map, udp).Union()};
    };
  };
  CHECK(decode_error(craft(with_udp(true, 16, 32, 32, 7))) == "<decoded>");
  CHECK(decode_error(craft(with_udp(false, 16, 32, 32, 7))) == "Welcome.udp missing");
  for (const auto& [t, c, k] : {std::tuple{15, 32, 32}, {17, 32, 32}, {16, 31, 32}, {16, 32, 0}}) {
    CHECK(decode_error(craft(with_udp(true, static_cast<std::size_t>(t), static_cast<std::size_t>(c),
                                      static_cast<std::size_t>(k), 7))) ==
          "Welcome.udp needs a 16-byte token and two 32-byte keys");
  }
  CHECK(decode_error(craft(with_udp(true, 16, 32, 32, 0))) == "Welcome.udp.token is all zero");
}

TEST_CASE("a message type outside the allowed set is refused before its body is read") {
  // SnapshotData too large: refused by type from a client, so its payload is never looked at
  // (allowed, its size check refuses it).
  const auto bytes = craft(snapshot_data(sp::kMaxSnapshotPayloadBytes + 1));
  std::string error;
  CHECK_FALSE(sp::decode_tcp_message(bytes, &error, sp::MessageSet::kFromClient));
  CHECK(error == "message type SnapshotData is not accepted here");
  CHECK_FALSE(sp::decode_tcp_message(bytes, &error));
  CHECK(error != "message type SnapshotData is not accepted here");
  // Each side's set: what the other side sends, nothing else.
  for (const auto& m : sp::test::sample_messages()) {
    const auto encoded = sp::encode_tcp_message(m);
    const bool from_client = std::holds_alternative<sp::Hello>(m) || std::holds_alternative<sp::Input>(m) ||
                             std::holds_alternative<sp::Bye>(m);
    const bool from_server = !std::holds_alternative<sp::Hello>(m) && !std::holds_alternative<sp::Input>(m);
    CHECK(sp::decode_tcp_message(encoded, nullptr, sp::MessageSet::kFromClient).has_value() == from_client);
    CHECK(sp::decode_tcp_message(encoded, nullptr, sp::MessageSet::kFromServer).has_value() == from_server);
  }
}

TEST_CASE("map chunks: index within count, size within limits") {
  const auto chunk = [](std::uint32_t index, std::uint32_t count, std::size_t size) {
    return [=](flatbuffers::FlatBufferBuilder& b) {
      const auto bytes = b.CreateVector(std::vector<std::uint8_t>(size, 1));
      return std::pair{wire::Message::MapChunk, wire::CreateMapChunk(b, index, bytes, count).Union()};
    };
  };
  CHECK(decode_error(craft(chunk(2, 3, 10))) == "<decoded>");
  CHECK(decode_error(craft(chunk(5, 0, sp::kMapChunkBytes))) == "<decoded>");  // count not stated
  CHECK(decode_error(craft(chunk(3, 3, 10))) == "MapChunk.index 3 out of range");
  CHECK(decode_error(craft(chunk(4000000000u, 0, 10))) == "MapChunk.index 4000000000 out of range");
  CHECK(decode_error(craft(chunk(0, 4000000000u, 10))) == "MapChunk.count 4000000000 too large");
  CHECK(decode_error(craft(chunk(0, 1, 0))) == "MapChunk holds 0 bytes, expected 1..49152");
  CHECK(decode_error(craft(chunk(0, 1, sp::kMapChunkBytes + 1))) == "MapChunk holds 49153 bytes, expected 1..49152");
}

TEST_CASE("envelope-level garbage: empty, wrong identifier, no body, unknown type, oversized") {
  CHECK(decode_error({}) == "empty message");
  CHECK(decode_error(craft(hello("x"), "SWFD")).find("verification failed") != std::string::npos);
  const auto none = [](flatbuffers::FlatBufferBuilder&) {
    return std::pair{wire::Message::NONE, flatbuffers::Offset<void>()};
  };
  CHECK(decode_error(craft(none)) == "envelope holds no message");
  // Type byte of a future message kind (the verifier lets unknown union members through).
  const auto future = [](flatbuffers::FlatBufferBuilder& b) {
    return std::pair{static_cast<wire::Message>(42), wire::CreateBye(b, b.CreateString("x")).Union()};
  };
  CHECK(decode_error(craft(future)) == "unknown message type 42");
  // Within the 32 types a set can name but not defined: named by number too (it said "message
  // type  is not accepted here", the name empty).
  const auto future_low = [](flatbuffers::FlatBufferBuilder& b) {
    return std::pair{static_cast<wire::Message>(20), wire::CreateBye(b, b.CreateString("x")).Union()};
  };
  std::string error;
  CHECK_FALSE(sp::decode_tcp_message(craft(future_low), &error, sp::MessageSet::kFromClient));
  CHECK(error == "unknown message type 20");
  // Type set, body missing.
  const auto missing = [](flatbuffers::FlatBufferBuilder&) {
    return std::pair{wire::Message::Hello, flatbuffers::Offset<void>()};
  };
  CHECK(decode_error(craft(missing)) == "message body missing");
  std::vector<std::uint8_t> huge(sp::kMaxFrameBytes + 1, 0);
  CHECK(decode_error(huge) == "message of 1048577 bytes exceeds the frame limit");
}

TEST_CASE("misaligned input buffers decode the same") {
  for (const sp::TcpMessage& message : sp::test::sample_messages()) {
    const auto bytes = sp::encode_tcp_message(message);
    std::vector<std::uint8_t> shifted(bytes.size() + 3);
    std::memcpy(shifted.data() + 3, bytes.data(), bytes.size());
    const auto decoded = sp::decode_tcp_message(std::span(shifted).subspan(3));
    REQUIRE(decoded);
    CHECK(*decoded == message);
  }
}

TEST_CASE("seeded mutations: truncated, bit-flipped and random buffers never crash or decode wrongly") {
  const std::uint64_t seed = sp::test::test_seed();
  MESSAGE("mutation seed " << seed << " (replay: SWARMFIELD_TEST_SEED=" << seed << ")");
  std::mt19937_64 rng(seed);
  std::size_t cases = 0;
  std::size_t accepted_mutants = 0;

  // Any accepted mutant must be a valid message that re-encodes to itself.
  const auto check_accepted = [&](const sp::TcpMessage& decoded) {
    ++accepted_mutants;
    REQUIRE(sp::test::satisfies_limits(decoded));
    const auto again = sp::decode_tcp_message(sp::encode_tcp_message(decoded));
    REQUIRE(again);
    REQUIRE(*again == decoded);
  };

  for (const sp::TcpMessage& message : sp::test::sample_messages()) {
    const std::vector<std::uint8_t> original = sp::encode_tcp_message(message);
    CAPTURE(message.index());
    // Every truncation: may only "succeed" by cutting padding, and then must equal the original.
    for (std::size_t len = 0; len < original.size(); len += std::max<std::size_t>(1, original.size() / 300)) {
      ++cases;
      const auto decoded = sp::decode_tcp_message(std::span(original).first(len));
      if (decoded) CHECK(*decoded == message);
    }
    // Bit flips (1..4 bits) and byte overwrites.
    std::uniform_int_distribution<std::size_t> pos(0, original.size() - 1);
    for (int round = 0; round < 1500; ++round) {
      ++cases;
      std::vector<std::uint8_t> mutant = original;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        if (rng() % 2) {
          mutant[pos(rng)] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        } else {
          mutant[pos(rng)] = static_cast<std::uint8_t>(rng());
        }
      }
      if (const auto decoded = sp::decode_tcp_message(mutant)) check_accepted(*decoded);
    }
  }

  // Pure garbage: with 32 random identifier bits it must never be accepted.
  std::size_t garbage_accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    ++cases;
    std::vector<std::uint8_t> garbage(rng() % 512);
    for (auto& byte : garbage) byte = static_cast<std::uint8_t>(rng());
    if (sp::decode_tcp_message(garbage)) ++garbage_accepted;
  }
  CHECK(garbage_accepted == 0);

  // Garbage behind a correct identifier gets further into the verifier; any success must be valid.
  for (int round = 0; round < 3000; ++round) {
    ++cases;
    std::vector<std::uint8_t> garbage(8 + rng() % 256);
    for (auto& byte : garbage) byte = static_cast<std::uint8_t>(rng() % 4 == 0 ? rng() : rng() % 16);
    std::memcpy(garbage.data() + 4, "SWFT", 4);
    if (const auto decoded = sp::decode_tcp_message(garbage)) check_accepted(*decoded);
  }
  MESSAGE(cases << " mutated buffers, " << accepted_mutants << " decoded as other valid messages");
  CHECK(cases > 10000);
}

TEST_CASE("kinds: Welcome's kind table is range-checked") {
  auto welcome_kinds = [](std::vector<std::tuple<std::string, float, std::uint32_t>> kinds) -> BodyFn {
    return [=](flatbuffers::FlatBufferBuilder& b) {
      std::vector<flatbuffers::Offset<wire::KindInfo>> v;
      for (const auto& [name, radius, colour] : kinds) v.push_back(wire::CreateKindInfo(b, b.CreateString(name), radius, colour));
      const auto kinds_v = b.CreateVector(v);
      const auto map = wire::CreateMapInfo(b, 4, 4, 1.0f, 16, 10, 1, b.CreateString("m"));
      const auto udp = udp_session(b);
      return std::pair{wire::Message::Welcome, wire::CreateWelcome(b, 1, 30, 20, 3, 0, map, udp, kinds_v).Union()};
    };
  };
  CHECK(decode_error(craft(welcome_kinds({{"runner", 0.25f, 0xF2A33Au}}))) == "<decoded>");
  CHECK(decode_error(craft(welcome_kinds({{"x", 0.0f, 0u}}))) == "KindInfo 0 radius must be finite and in (0, 1024]");
  CHECK(decode_error(craft(welcome_kinds({{"x", 0.3f, 0u}, {"y", std::nanf(""), 0u}}))) ==
        "KindInfo 1 radius must be finite and in (0, 1024]");
  CHECK(decode_error(craft(welcome_kinds({{"x", 0.3f, 0x1000000u}}))) == "KindInfo 0 colour must be 0xRRGGBB");
  CHECK(decode_error(craft(welcome_kinds({{"bad\nname", 0.3f, 0u}}))).find("KindInfo.name") != std::string::npos);
  std::vector<std::tuple<std::string, float, std::uint32_t>> many(sp::kMaxKinds + 1, {"k", 0.3f, 0u});
  CHECK(decode_error(craft(welcome_kinds(many))) == "Welcome has 17 kinds, limit 16");
}
