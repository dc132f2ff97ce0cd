// Encode / verify-decode of the TCP envelope and of the tables shared with UDP (Input).
// Decoding is hostile-input code: the FlatBuffers verifier proves every offset and length lies
// inside the buffer, then every field is range-checked here before it reaches a caller.
#include <zstd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <string>
#include <type_traits>

#include "swarmfield/protocol/transport/framing.hpp"
#include "swarmfield/protocol/transport/messages.hpp"
#include "wire_codec.hpp"

namespace swarmfield::protocol {
namespace {

using detail::fail;

// Largest compressed map: the compress bound of the largest accepted map.
constexpr std::uint64_t kMaxMapCells = std::uint64_t{kMaxMapSide} * std::uint64_t{kMaxMapSide};
constexpr std::uint64_t kMaxCompressedMapBytes = ZSTD_COMPRESSBOUND(kMaxMapCells);
constexpr std::uint32_t kMaxMapChunks =
    static_cast<std::uint32_t>((kMaxCompressedMapBytes + kMapChunkBytes - 1) / kMapChunkBytes);

// ---- strings ----------------------------------------------------------------------------------

/// Cuts `text` to at most `limit` bytes without splitting a UTF-8 sequence.
std::string_view truncate_utf8(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return text;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0u) == 0x80u) --cut;
  return text.substr(0, cut);
}

/// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t extra = 0;
    std::uint32_t code = 0;
    std::uint32_t min = 0;
    if ((c & 0xE0u) == 0xC0u) {
      extra = 1, code = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0u) == 0xE0u) {
      extra = 2, code = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8u) == 0xF0u) {
      extra = 3, code = c & 0x07u, min = 0x10000;
    } else {
      return false;
    }
    if (n - i <= extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xC0u) != 0x80u) return false;
      code = (code << 6) | (cc & 0x3Fu);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

/// Code points beyond ASCII that a name must not hold: the C1 controls, and the invisible
/// formatting characters that make a name show as another (bidirectional overrides, embeddings,
/// isolates and marks, zero-width space, word joiner and invisible operators, line and paragraph
/// separators, the byte order mark, interlinear annotations). ZWNJ and ZWJ (U+200C, U+200D)
/// stay: scripts and emoji sequences need them.
bool is_hidden_format(std::uint32_t code) {
  return (code >= 0x80 && code <= 0x9F) || code == 0x061C || code == 0x200B || code == 0x200E || code == 0x200F ||
         (code >= 0x2028 && code <= 0x202E) || (code >= 0x2060 && code <= 0x2064) ||
         (code >= 0x2066 && code <= 0x2069) || code == 0xFEFF || (code >= 0xFFF9 && code <= 0xFFFB);
}

/// C0 controls and DEL, or (in valid UTF-8) a code point is_hidden_format() names.
bool has_control_characters(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) return true;
      ++i;
      continue;
    }
    const std::size_t extra = (c & 0xE0u) == 0xC0u ? 1 : (c & 0xF0u) == 0xE0u ? 2 : 3;
    std::uint32_t code = c & (extra == 1 ? 0x1Fu : extra == 2 ? 0x0Fu : 0x07u);
    for (std::size_t k = 1; k <= extra && i + k < text.size(); ++k) {
      code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
    }
    if (is_hidden_format(code)) return true;
    i += extra + 1;
  }
  return false;
}

/// Reads an optional string field: absent = empty. Checks length and encoding.
bool read_string(const flatbuffers::String* in, std::size_t limit, bool printable, const char* what,
                 std::string& out, std::string* error) {
  out.clear();
  if (!in) return true;
  const std::string_view text(in->c_str(), in->size());
  if (text.size() > limit) {
    return fail(error, std::string(what) + " is " + std::to_string(text.size()) + " bytes, limit " +
                           std::to_string(limit));
  }
  if (!valid_utf8(text)) return fail(error, std::string(what) + " is not valid UTF-8");
  if (printable && has_control_characters(text)) {
    return fail(error, std::string(what) + " contains control characters");
  }
  out.assign(text);
  return true;
}

bool finite_within(float value, float limit) { return std::isfinite(value) && std::fabs(value) <= limit; }

// ---- vectors ------------------------------------------------------------------------------------

template <typename T>
std::size_t size_of(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

/// Copies a verified scalar vector (little-endian on the wire) into `out`.
template <typename T>
void copy_scalars(const flatbuffers::Vector<T>* in, std::vector<T>& out) {
  const std::size_t n = size_of(in);
  out.resize(n);
  if (n == 0) return;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out.data(), in->Data(), n * sizeof(T));
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = in->Get(static_cast<flatbuffers::uoffset_t>(i));
  }
}

// ---- per-message encode ---------------------------------------------------------------------

flatbuffers::Offset<flatbuffers::String> make_string(flatbuffers::FlatBufferBuilder& b, std::string_view text,
                                                     std::size_t limit) {
  const std::string_view cut = truncate_utf8(text, limit);
  return b.CreateString(cut.data(), cut.size());
}

flatbuffers::Offset<wire::MapInfo> build_map_info(flatbuffers::FlatBufferBuilder& b, const MapInfo& m) {
  const auto name = make_string(b, m.name, kMaxNameBytes);
  return wire::CreateMapInfo(b, m.width, m.height, m.cell_size, m.raw_bytes, m.compressed_bytes, m.chunk_count,
                             name);
}

struct EnvelopeEncoder {
  flatbuffers::FlatBufferBuilder& b;

  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const Hello& m) const {
    const auto name = make_string(b, m.name, kMaxNameBytes);
    const auto token = m.connect_token.empty() ? 0 : b.CreateVector(m.connect_token.data(), m.connect_token.size());
    const auto resume = m.resume.empty() ? 0 : b.CreateVector(m.resume.data(), m.resume.size());
    return {wire::Message::Hello,
            wire::CreateHello(b, m.protocol_version, static_cast<wire::Role>(m.role), name, token, resume).Union()};
  }
  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const Welcome& m) const {
    const auto map = build_map_info(b, m.map);
    const auto token = b.CreateVector(m.udp.token.data(), m.udp.token.size());
    const auto client_key = b.CreateVector(m.udp.client_to_server.data(), m.udp.client_to_server.size());
    const auto server_key = b.CreateVector(m.udp.server_to_client.data(), m.udp.server_to_client.size());
    const auto udp = wire::CreateUdpSession(b, token, client_key, server_key);
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<wire::KindInfo>>> kinds_v = 0;
    if (!m.kinds.empty()) {
      std::vector<flatbuffers::Offset<wire::KindInfo>> kinds;
      for (const KindInfo& k : m.kinds) {
        const auto name = make_string(b, k.name, kMaxNameBytes);
        kinds.push_back(wire::CreateKindInfo(b, name, k.radius, k.colour));
      }
      kinds_v = b.CreateVector(kinds);
    }
    const auto resume = m.resume.empty() ? 0 : b.CreateVector(m.resume.data(), m.resume.size());
    return {wire::Message::Welcome, wire::CreateWelcome(b, m.client_id, m.tick_hz, m.snapshot_hz, m.udp_port,
                                                        m.player_id, map, udp, kinds_v, resume)
                                        .Union()};
  }
  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const MapChunk& m) const {
    const auto bytes = b.CreateVector(m.bytes.data(), m.bytes.size());
    return {wire::Message::MapChunk, wire::CreateMapChunk(b, m.index, bytes, m.count).Union()};
  }
  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const Error& m) const {
    const auto reason = make_string(b, m.reason, kMaxReasonBytes);
    return {wire::Message::Error, wire::CreateError(b, static_cast<wire::ErrorCode>(m.code), reason).Union()};
  }
  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const Bye& m) const {
    const auto reason = make_string(b, m.reason, kMaxReasonBytes);
    return {wire::Message::Bye, wire::CreateBye(b, reason).Union()};
  }
  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const Input& m) const {
    return {wire::Message::Input, detail::build_input(b, m).Union()};
  }
  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const SnapshotData& m) const {
    const auto bytes = b.CreateVector(m.payload.data(), m.payload.size());
    return {wire::Message::SnapshotData, wire::CreateSnapshotData(b, bytes).Union()};
  }
  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const MapDelta& m) const {
    std::vector<wire::MapCellChange> cells;
    cells.reserve(m.cells.size());
    for (const MapCellChange& c : m.cells) cells.emplace_back(c.x, c.y, c.cost, c.barricade);
    const auto cells_v = b.CreateVectorOfStructs(cells);
    return {wire::Message::MapDelta, wire::CreateMapDelta(b, m.revision, cells_v).Union()};
  }
  std::pair<wire::Message, flatbuffers::Offset<void>> operator()(const SessionSalt& m) const {
    const auto salt = b.CreateVector(m.salt.data(), m.salt.size());
    return {wire::Message::SessionSalt, wire::CreateSessionSalt(b, salt).Union()};
  }
};

// ---- per-message decode ---------------------------------------------------------------------

// A resume secret: absent, or exactly kResumeSecretBytes.
bool read_resume(const flatbuffers::Vector<std::uint8_t>* in, const char* what, std::vector<std::uint8_t>& out,
                 std::string* error) {
  out.clear();
  if (in == nullptr || in->size() == 0) return true;
  if (in->size() != kResumeSecretBytes) {
    return fail(error, std::string(what) + " is " + std::to_string(in->size()) + " bytes, not " +
                           std::to_string(kResumeSecretBytes));
  }
  out.assign(in->begin(), in->end());
  return true;
}

bool read_hello(const wire::Hello& in, Hello& out, std::string* error) {
  out.protocol_version = in.protocol_version();
  const auto role = static_cast<std::uint8_t>(in.role());
  if (role > static_cast<std::uint8_t>(Role::kPlayer)) {
    return fail(error, "Hello.role " + std::to_string(role) + " is neither viewer (0) nor player (1)");
  }
  out.role = static_cast<Role>(role);
  out.connect_token.clear();
  if (const auto* token = in.connect_token(); token != nullptr && token->size() != 0) {
    if (token->size() != kHelloTokenBytes) {
      return fail(error, "Hello.connect_token is " + std::to_string(token->size()) + " bytes, not " +
                             std::to_string(kHelloTokenBytes));
    }
    out.connect_token.assign(token->begin(), token->end());
  }
  if (!read_resume(in.resume(), "Hello.resume", out.resume, error)) return false;
  return read_string(in.name(), kMaxNameBytes, true, "Hello.name", out.name, error);
}

bool read_map_info(const wire::MapInfo& in, MapInfo& out, std::string* error) {
  out.width = in.width();
  out.height = in.height();
  if (out.width < 1 || out.width > kMaxMapSide || out.height < 1 || out.height > kMaxMapSide) {
    return fail(error, "MapInfo size " + std::to_string(out.width) + "x" + std::to_string(out.height) +
                           " outside 1.." + std::to_string(kMaxMapSide) + " cells per side");
  }
  out.cell_size = in.cell_size();
  if (!std::isfinite(out.cell_size) || out.cell_size <= 0.0f || out.cell_size > 1024.0f) {
    return fail(error, "MapInfo.cell_size must be finite and in (0, 1024]");
  }
  out.raw_bytes = in.raw_bytes();
  if (std::uint64_t{out.raw_bytes} !=
      static_cast<std::uint64_t>(out.width) * static_cast<std::uint64_t>(out.height)) {
    return fail(error, "MapInfo.raw_bytes " + std::to_string(out.raw_bytes) + " is not width*height");
  }
  out.compressed_bytes = in.compressed_bytes();
  if (out.compressed_bytes == 0 || out.compressed_bytes > ZSTD_COMPRESSBOUND(std::uint64_t{out.raw_bytes})) {
    return fail(error, "MapInfo.compressed_bytes " + std::to_string(out.compressed_bytes) +
                           " impossible for " + std::to_string(out.raw_bytes) + " raw bytes");
  }
  out.chunk_count = in.chunk_count();
  if (out.chunk_count != map_chunk_count(out.compressed_bytes)) {
    return fail(error, "MapInfo.chunk_count " + std::to_string(out.chunk_count) + " should be " +
                           std::to_string(map_chunk_count(out.compressed_bytes)));
  }
  return read_string(in.name(), kMaxNameBytes, true, "MapInfo.name", out.name, error);
}

/// Copies a byte vector of exactly out.size() bytes.
template <std::size_t N>
bool read_fixed_bytes(const flatbuffers::Vector<std::uint8_t>* in, std::array<std::uint8_t, N>& out) {
  if (size_of(in) != N) return false;
  std::memcpy(out.data(), in->Data(), N);
  return true;
}

bool read_udp_session(const wire::UdpSession* in, SessionCredentials& out, std::string* error) {
  if (!in) return fail(error, "Welcome.udp missing");
  if (!read_fixed_bytes(in->token(), out.token) || !read_fixed_bytes(in->client_key(), out.client_to_server) ||
      !read_fixed_bytes(in->server_key(), out.server_to_client)) {
    return fail(error, "Welcome.udp needs a " + std::to_string(kSessionTokenBytes) + "-byte token and two " +
                           std::to_string(kSessionKeyBytes) + "-byte keys");
  }
  if (std::all_of(out.token.begin(), out.token.end(), [](std::uint8_t v) { return v == 0; })) {
    return fail(error, "Welcome.udp.token is all zero");
  }
  return true;
}

bool read_welcome(const wire::Welcome& in, Welcome& out, std::string* error) {
  out.client_id = in.client_id();
  if (!read_udp_session(in.udp(), out.udp, error)) return false;
  out.tick_hz = in.tick_hz();
  out.snapshot_hz = in.snapshot_hz();
  if (out.tick_hz < 1 || out.tick_hz > 1000 || out.snapshot_hz < 1 || out.snapshot_hz > 1000) {
    return fail(error, "Welcome tick_hz/snapshot_hz must be 1..1000");
  }
  out.udp_port = in.udp_port();
  out.player_id = in.player_id();
  if (!in.map()) return fail(error, "Welcome.map missing");
  if (!read_map_info(*in.map(), out.map, error)) return false;
  const auto* kinds = in.kinds();
  const std::size_t n_kinds = size_of(kinds);
  if (n_kinds > kMaxKinds) {
    return fail(error, "Welcome has " + std::to_string(n_kinds) + " kinds, limit " + std::to_string(kMaxKinds));
  }
  out.kinds.resize(n_kinds);
  for (std::size_t i = 0; i < n_kinds; ++i) {
    const wire::KindInfo* k = kinds->Get(static_cast<flatbuffers::uoffset_t>(i));
    KindInfo& kind = out.kinds[i];
    if (!read_string(k->name(), kMaxNameBytes, true, "KindInfo.name", kind.name, error)) return false;
    kind.radius = k->radius();
    if (!(std::isfinite(kind.radius) && kind.radius > 0.0f && kind.radius <= 1024.0f)) {
      return fail(error, "KindInfo " + std::to_string(i) + " radius must be finite and in (0, 1024]");
    }
    kind.colour = k->colour();
    if (kind.colour > 0xFFFFFFu) return fail(error, "KindInfo " + std::to_string(i) + " colour must be 0xRRGGBB");
  }
  if (!read_resume(in.resume(), "Welcome.resume", out.resume, error)) return false;
  return true;
}

bool read_map_chunk(const wire::MapChunk& in, MapChunk& out, std::string* error) {
  out.index = in.index();
  out.count = in.count();
  if (out.count > kMaxMapChunks) return fail(error, "MapChunk.count " + std::to_string(out.count) + " too large");
  if (out.count != 0 ? out.index >= out.count : out.index >= kMaxMapChunks) {
    return fail(error, "MapChunk.index " + std::to_string(out.index) + " out of range");
  }
  const std::size_t n = size_of(in.bytes());
  if (n == 0 || n > kMapChunkBytes) {
    return fail(error, "MapChunk holds " + std::to_string(n) + " bytes, expected 1.." + std::to_string(kMapChunkBytes));
  }
  copy_scalars(in.bytes(), out.bytes);
  return true;
}

bool read_error(const wire::Error& in, Error& out, std::string* error) {
  const auto code = static_cast<std::uint16_t>(in.code());
  if (code < static_cast<std::uint16_t>(ErrorCode::kBadMessage) ||
      code > static_cast<std::uint16_t>(ErrorCode::kShuttingDown)) {
    return fail(error, "Error.code " + std::to_string(code) + " unknown");
  }
  out.code = static_cast<ErrorCode>(code);
  return read_string(in.reason(), kMaxReasonBytes, false, "Error.reason", out.reason, error);
}

bool read_bye(const wire::Bye& in, Bye& out, std::string* error) {
  return read_string(in.reason(), kMaxReasonBytes, false, "Bye.reason", out.reason, error);
}

bool read_map_delta(const wire::MapDelta& in, MapDelta& out, std::string* error) {
  out.revision = in.revision();
  const auto* cells = in.cells();  // required: the verifier refused a MapDelta without it
  const std::size_t n = size_of(cells);
  if (n == 0 || n > kMaxMapDeltaCells) {
    return fail(error, "MapDelta holds " + std::to_string(n) + " cells, expected 1.." +
                           std::to_string(kMaxMapDeltaCells));
  }
  out.cells.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const wire::MapCellChange* c = cells->Get(static_cast<flatbuffers::uoffset_t>(i));
    MapCellChange& cell = out.cells[i];
    cell = MapCellChange{c->x(), c->y(), c->cost(), c->barricade()};
    const std::string where = "MapDelta cell (" + std::to_string(cell.x) + ", " + std::to_string(cell.y) + ")";
    if (cell.x >= kMaxMapSide || cell.y >= kMaxMapSide) {
      return fail(error, where + " outside 0.." + std::to_string(kMaxMapSide - 1));
    }
    if (cell.cost == 0) return fail(error, where + " has cost 0 (costs are 1..255)");
    if (cell.barricade != 0 && cell.cost != 255) {
      return fail(error, where + " holds a barricade but has cost " + std::to_string(cell.cost) + ", not 255");
    }
  }
  return true;
}

template <typename Out, typename In, typename Reader>
std::optional<TcpMessage> read_as(const In* in, Reader reader, std::string* error) {
  if (!in) {
    fail(error, "message body missing");
    return std::nullopt;
  }
  Out out;
  if (!reader(*in, out, error)) return std::nullopt;
  return TcpMessage{std::move(out)};
}

}  // namespace

std::string clean_name(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    // One character (or one bad byte) at a time: kept if valid UTF-8 and allowed in a name.
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t len = c < 0x80 ? 1 : (c & 0xE0u) == 0xC0u ? 2 : (c & 0xF0u) == 0xE0u ? 3 : (c & 0xF8u) == 0xF0u ? 4 : 0;
    std::string_view one = len > 0 && i + len <= text.size() ? text.substr(i, len) : std::string_view{};
    if (one.empty() || !valid_utf8(one)) {
      one = "?";  // a bad byte: the next one starts afresh
      len = 1;
    } else if (has_control_characters(one)) {
      one = "?";  // a whole character that a name may not hold
    }
    if (out.size() + one.size() > kMaxNameBytes) break;
    out.append(one);
    i += len;
  }
  return out;
}

// ---- shared with datagrams -------------------------------------------

namespace detail {

flatbuffers::Offset<wire::Input> build_input(flatbuffers::FlatBufferBuilder& b, const Input& m) {
  return wire::CreateInput(b, m.sequence, m.move_x, m.move_y, m.view_x0, m.view_y0, m.view_x1, m.view_y1,
                           m.snapshot_ack.latest, m.client_time_us, m.snapshot_ack.received, m.fire, m.aim_x,
                           m.aim_y, m.build_id, m.build_x, m.build_y);
}

bool read_input(const wire::Input& in, Input& out, std::string* error) {
  out.sequence = in.sequence();
  out.move_x = in.move_x();
  out.move_y = in.move_y();
  out.view_x0 = in.view_x0();
  out.view_y0 = in.view_y0();
  out.view_x1 = in.view_x1();
  out.view_y1 = in.view_y1();
  out.client_time_us = in.client_time_us();
  out.fire = in.fire();  // absent (an encoder before the field) = false; any non-zero byte = true
  out.aim_x = in.aim_x();
  out.aim_y = in.aim_y();
  if (!read_snapshot_ack(in.snapshot_ack(), in.snapshot_ack_bits(), out.snapshot_ack, error)) return false;
  for (const float v : {out.move_x, out.move_y, out.view_x0, out.view_y0, out.view_x1, out.view_y1}) {
    if (!finite_within(v, kMaxWireCoordinate)) {
      return fail(error, "Input move/view values must be finite and within +-1e6");
    }
  }
  // Checked with or without fire: a value the server never uses is still a hostile one.
  if (!finite_within(out.aim_x, kMaxWireCoordinate) || !finite_within(out.aim_y, kMaxWireCoordinate)) {
    return fail(error, "Input aim values must be finite and within +-1e6");
  }
  // Absent (an encoder before the fields) = 0: no build request, cell (0, 0). Like the aim, the
  // cell is checked with or without a request; whether it lies inside the map is the server's.
  out.build_id = in.build_id();
  out.build_x = in.build_x();
  out.build_y = in.build_y();
  if (out.build_x < 0 || out.build_x >= kMaxMapSide || out.build_y < 0 || out.build_y >= kMaxMapSide) {
    return fail(error, "Input build cell (" + std::to_string(out.build_x) + ", " + std::to_string(out.build_y) +
                           ") outside 0.." + std::to_string(kMaxMapSide - 1));
  }
  return true;
}

bool read_snapshot_ack(std::uint32_t latest, std::uint32_t received, SnapshotAck& out, std::string* error) {
  // Bit i names sequence latest - 1 - i: none may name a sequence before 1.
  const std::uint32_t allowed = latest > 32 ? 0xFFFFFFFFu : latest <= 1 ? 0u : (std::uint32_t{1} << (latest - 1)) - 1;
  if ((received & ~allowed) != 0) return fail(error, "snapshot ack bits name sequences before 1");
  out.latest = latest;
  out.received = received;
  return true;
}

}  // namespace detail

// ---- public API -------------------------------------------------------------------------------

std::vector<std::uint8_t> encode_tcp_message(const TcpMessage& message) {
  flatbuffers::FlatBufferBuilder b(256);
  const auto [type, body] = std::visit(EnvelopeEncoder{b}, message);
  b.Finish(wire::CreateEnvelope(b, type, body), detail::kEnvelopeId);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

std::optional<TcpMessage> decode_tcp_message(std::span<const std::uint8_t> bytes, std::string* error,
                                             MessageSet allowed) {
  if (bytes.empty()) {
    fail(error, "empty message");
    return std::nullopt;
  }
  if (bytes.size() > kMaxFrameBytes) {
    fail(error, "message of " + std::to_string(bytes.size()) + " bytes exceeds the frame limit");
    return std::nullopt;
  }
  const detail::AlignedView view(bytes);
  flatbuffers::Verifier verifier(view.data(), view.size(), detail::verifier_options());
  if (!wire::VerifyEnvelopeBuffer(verifier)) {
    fail(error, "not a valid swarmfield TCP message (FlatBuffers verification failed)");
    return std::nullopt;
  }
  const wire::Envelope* envelope = wire::GetEnvelope(view.data());
  // Refused by type alone, before any body is read: e.g. a compressed snapshot from a client is
  // never decompressed (a 4 KiB frame could otherwise make the server inflate 8 MiB).
  const auto type_index = static_cast<unsigned>(envelope->message_type());
  // A type this protocol does not define is named by number (the switch below says so too).
  const bool known = wire::EnumNameMessage(envelope->message_type())[0] != '\0';
  if (known && type_index >= 1 && type_index <= 32 &&
      (static_cast<std::uint32_t>(allowed) & (std::uint32_t{1} << (type_index - 1))) == 0) {
    fail(error, std::string("message type ") + wire::EnumNameMessage(envelope->message_type()) +
                    " is not accepted here");
    return std::nullopt;
  }
  switch (envelope->message_type()) {
    case wire::Message::Hello:
      return read_as<Hello>(envelope->message_as_Hello(), read_hello, error);
    case wire::Message::Welcome:
      return read_as<Welcome>(envelope->message_as_Welcome(), read_welcome, error);
    case wire::Message::MapChunk:
      return read_as<MapChunk>(envelope->message_as_MapChunk(), read_map_chunk, error);
    case wire::Message::Error:
      return read_as<Error>(envelope->message_as_Error(), read_error, error);
    case wire::Message::Bye:
      return read_as<Bye>(envelope->message_as_Bye(), read_bye, error);
    case wire::Message::Input:
      return read_as<Input>(envelope->message_as_Input(), detail::read_input, error);
    case wire::Message::SnapshotData: {
      const auto* data = envelope->message_as_SnapshotData();
      if (!data || !data->payload()) {
        fail(error, "message body missing");
        return std::nullopt;
      }
      const std::size_t n = data->payload()->size();
      if (n == 0 || n > kMaxSnapshotPayloadBytes) {
        fail(error, "SnapshotData payload of " + std::to_string(n) + " bytes is outside 1.." +
                        std::to_string(kMaxSnapshotPayloadBytes));
        return std::nullopt;
      }
      return TcpMessage{SnapshotData{{data->payload()->Data(), data->payload()->Data() + n}}};
    }
    case wire::Message::MapDelta:
      return read_as<MapDelta>(envelope->message_as_MapDelta(), read_map_delta, error);
    case wire::Message::SessionSalt: {
      const auto* salt = envelope->message_as_SessionSalt();
      if (!salt || !salt->salt() || salt->salt()->size() != kSessionSaltBytes) {
        fail(error, "SessionSalt.salt must be " + std::to_string(kSessionSaltBytes) + " bytes");
        return std::nullopt;
      }
      SessionSalt out;
      std::copy(salt->salt()->begin(), salt->salt()->end(), out.salt.begin());
      return TcpMessage{out};
    }
    case wire::Message::NONE:
      fail(error, "envelope holds no message");
      return std::nullopt;
  }
  fail(error, "unknown message type " + std::to_string(static_cast<unsigned>(envelope->message_type())));
  return std::nullopt;
}

}  // namespace swarmfield::protocol
