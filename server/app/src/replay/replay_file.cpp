#include "swarmfield/server/replay/replay_file.hpp"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ios>
#include <iterator>
#include <limits>
#include <new>

namespace swarmfield::server {
namespace {

constexpr std::uint8_t kHeader = 1, kInputs = 2, kHash = 3, kEnd = 4;
constexpr std::size_t kRecordOverhead = 1 + 4 + 4;  // type, length, CRC
constexpr std::size_t kEventBytes = 1 + 4 + 4 + 4;
constexpr std::uint32_t kMaxRecordBytes = 64u << 20;  // a 4096 x 4096 map compresses far below
constexpr std::int32_t kMaxSide = 8192;               // cells
constexpr int kMapZstdLevel = 3;

static_assert(std::endian::native == std::endian::little, "replay files are little-endian; add byte swaps");

void put_u8(std::vector<std::uint8_t>& b, std::uint8_t v) { b.push_back(v); }
void put_u32(std::vector<std::uint8_t>& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<std::uint8_t>& b, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_f32(std::vector<std::uint8_t>& b, float v) { put_u32(b, std::bit_cast<std::uint32_t>(v)); }
// resize + memcpy rather than insert(): GCC 12 at -O3 reports a false stringop-overflow /
// array-bounds for insert() of a small constant array into an empty vector (Release build).
void put_bytes(std::vector<std::uint8_t>& b, const void* data, std::size_t n) {
  if (n == 0) return;
  const std::size_t at = b.size();
  b.resize(at + n);
  std::memcpy(b.data() + at, data, n);
}
void put_string(std::vector<std::uint8_t>& b, const std::string& s) {
  put_u32(b, static_cast<std::uint32_t>(s.size()));
  put_bytes(b, s.data(), s.size());
}

// Bounds-checked little-endian reads over one payload; every read fails once one failed.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool u8(std::uint8_t& v) { return take(&v, 1); }
  bool u32(std::uint32_t& v) {
    std::uint8_t b[4];
    if (!take(b, 4)) return false;
    v = static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 | static_cast<std::uint32_t>(b[2]) << 16 |
        static_cast<std::uint32_t>(b[3]) << 24;
    return true;
  }
  bool u64(std::uint64_t& v) {
    std::uint32_t lo = 0, hi = 0;
    if (!u32(lo) || !u32(hi)) return false;
    v = static_cast<std::uint64_t>(hi) << 32 | lo;
    return true;
  }
  bool i32(std::int32_t& v) {
    std::uint32_t u = 0;
    if (!u32(u)) return false;
    v = std::bit_cast<std::int32_t>(u);
    return true;
  }
  bool f32(float& v) {
    std::uint32_t u = 0;
    if (!u32(u)) return false;
    v = std::bit_cast<float>(u);
    return true;
  }
  bool string(std::string& s, std::size_t max) {
    std::uint32_t n = 0;
    if (!u32(n) || n > max || n > remaining()) return ok_ = false;
    s.assign(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return true;
  }
  bool bytes(const std::uint8_t*& p, std::size_t n) {
    if (!ok_ || n > remaining()) return ok_ = false;
    p = data_ + pos_;
    pos_ += n;
    return true;
  }
  [[nodiscard]] std::size_t remaining() const { return size_ - pos_; }
  [[nodiscard]] bool done() const { return ok_ && pos_ == size_; }

 private:
  bool take(void* out, std::size_t n) {
    if (!ok_ || n > remaining()) return ok_ = false;
    std::memcpy(out, data_ + pos_, n);
    pos_ += n;
    return true;
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

std::uint32_t record_crc(std::uint8_t type, std::uint32_t length, const std::uint8_t* payload) {
  std::uint8_t head[5] = {type, static_cast<std::uint8_t>(length), static_cast<std::uint8_t>(length >> 8),
                          static_cast<std::uint8_t>(length >> 16), static_cast<std::uint8_t>(length >> 24)};
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, head, sizeof head);
  crc = crc32(crc, payload, length);
  return static_cast<std::uint32_t>(crc);
}

void append_record(std::vector<std::uint8_t>& out, std::uint8_t type, const std::vector<std::uint8_t>& payload) {
  put_u8(out, type);
  put_u32(out, static_cast<std::uint32_t>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  put_u32(out, record_crc(type, static_cast<std::uint32_t>(payload.size()), payload.data()));
}

void append_file_start(std::vector<std::uint8_t>& out) {
  put_bytes(out, kReplayMagic, sizeof kReplayMagic);
  put_u32(out, kReplayVersion);
}

// The header payload; false if the map does not compress.
bool encode_header(const ReplayHeader& header, std::uint32_t hash_interval, std::vector<std::uint8_t>& payload) {
  put_string(payload, header.config_toml);
  put_string(payload, header.map_name);
  put_u32(payload, std::bit_cast<std::uint32_t>(header.width));
  put_u32(payload, std::bit_cast<std::uint32_t>(header.height));
  put_f32(payload, header.cell_size);
  put_u64(payload, map_hash(header.costs));
  std::vector<std::uint8_t> packed(ZSTD_compressBound(header.costs.size()));
  const std::size_t n = ZSTD_compress(packed.data(), packed.size(), header.costs.data(), header.costs.size(), kMapZstdLevel);
  if (ZSTD_isError(n)) return false;
  put_u32(payload, static_cast<std::uint32_t>(n));
  put_bytes(payload, packed.data(), n);
  put_f32(payload, header.dt_s);
  put_u32(payload, hash_interval);
  return true;
}

void encode_inputs(std::uint64_t tick, const std::vector<ReplayEvent>& events, std::vector<std::uint8_t>& payload) {
  put_u64(payload, tick);
  put_u32(payload, static_cast<std::uint32_t>(events.size()));
  for (const ReplayEvent& e : events) {
    put_u8(payload, static_cast<std::uint8_t>(e.kind));
    put_u32(payload, e.player_id);
    put_f32(payload, e.value.x);
    put_f32(payload, e.value.y);
  }
}

void encode_hash(std::uint64_t tick, std::uint64_t hash, std::vector<std::uint8_t>& payload) {
  put_u64(payload, tick);
  put_u64(payload, hash);
}

std::string parse_header(Reader& r, ReplayHeader& h) {
  std::uint64_t hash = 0;
  std::uint32_t compressed = 0;
  std::uint32_t dt_bits = 0;
  if (!r.string(h.config_toml, 1u << 20) || !r.string(h.map_name, 4096) || !r.i32(h.width) || !r.i32(h.height) ||
      !r.f32(h.cell_size) || !r.u64(hash) || !r.u32(compressed))
    return "header is cut short";
  if (h.width < 1 || h.height < 1 || h.width > kMaxSide || h.height > kMaxSide)
    return "map size " + std::to_string(h.width) + " x " + std::to_string(h.height) + " out of range (1..8192)";
  if (!(std::isfinite(h.cell_size) && h.cell_size > 0.0f)) return "map cell size is not a positive number";
  const std::uint8_t* packed = nullptr;
  if (!r.bytes(packed, compressed)) return "header's map is cut short";
  const std::size_t cells = static_cast<std::size_t>(h.width) * static_cast<std::size_t>(h.height);
  const unsigned long long content = ZSTD_getFrameContentSize(packed, compressed);
  if (content != cells) return "header's map does not hold width x height cost bytes";
  h.costs.resize(cells);
  const std::size_t got = ZSTD_decompress(h.costs.data(), cells, packed, compressed);
  if (ZSTD_isError(got) || got != cells) return "header's map does not decompress";
  if (map_hash(h.costs) != hash) return "header's map does not match its hash";
  if (!r.u32(dt_bits) || !r.u32(h.hash_interval)) return "header is cut short";
  h.dt_s = std::bit_cast<float>(dt_bits);
  if (!(std::isfinite(h.dt_s) && h.dt_s > 0.0f && h.dt_s <= 1.0f)) return "tick length is not in (0, 1] s";
  if (h.hash_interval == 0) return "state hash interval is 0";
  if (!r.done()) return "header has trailing bytes";
  return {};
}

std::string parse_inputs(Reader& r, ReplayInputs& in) {
  std::uint32_t count = 0;
  if (!r.u64(in.tick) || !r.u32(count)) return "inputs record is cut short";
  if (static_cast<std::size_t>(count) * kEventBytes != r.remaining()) return "inputs record's event count does not match its size";
  in.events.resize(count);
  for (ReplayEvent& e : in.events) {
    std::uint8_t kind = 0;
    r.u8(kind);
    r.u32(e.player_id);
    r.f32(e.value.x);
    r.f32(e.value.y);
    if (kind < 1 || kind > 6) return "unknown input kind " + std::to_string(kind);
    e.kind = static_cast<ReplayEvent::Kind>(kind);
    if (e.kind == ReplayEvent::Kind::kBuild) {
      // A cell: whole numbers the playback may cast (a NaN or 1e30 cast to an int is undefined).
      const auto cell_ok = [](float v) { return v >= 0.0f && v < 16777216.0f && v == std::floor(v); };
      if (!cell_ok(e.value.x) || !cell_ok(e.value.y)) return "a build input's cell is not a cell";
    }
  }
  if (!r.done()) return "inputs record is cut short";
  return {};
}

}  // namespace

std::uint64_t map_hash(const std::vector<std::uint8_t>& costs) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (std::uint8_t c : costs) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::optional<Replay> parse_replay(const std::vector<std::uint8_t>& bytes, const std::string& name, std::string& error,
                                   const ReplayReadOptions& options, std::string* note) {
  const auto fail = [&](std::size_t offset, const std::string& what) -> std::optional<Replay> {
    error = "replay " + name + ": byte " + std::to_string(offset) + ": " + what;
    return std::nullopt;
  };
  if (bytes.size() < sizeof kReplayMagic + 4 || std::memcmp(bytes.data(), kReplayMagic, sizeof kReplayMagic) != 0)
    return fail(0, "not a swarmfield replay (no SWFRPLAY magic)");
  Reader head(bytes.data() + sizeof kReplayMagic, 4);
  std::uint32_t version = 0;
  head.u32(version);
  if (version != kReplayVersion)
    return fail(8, "replay format version " + std::to_string(version) + " not supported (this build reads " +
                       std::to_string(kReplayVersion) + ")");
  Replay replay;
  bool have_header = false;
  bool have_end = false;
  std::uint64_t last_tick = 0;  // newest tick named by any record so far
  std::size_t last_hash = 0;    // records before the newest state hash record (0 with none)
  bool any_hash = false;
  // Cut short (a crash): with allow_truncated, the records up to the newest state hash, which
  // becomes the end; else (or with no state hash to end at) the error.
  const auto cut_short = [&](std::size_t offset, const std::string& what) -> std::optional<Replay> {
    if (!options.allow_truncated || !have_header || !any_hash) {
      std::string why = what;
      if (options.allow_truncated && have_header) {
        why += " (nothing to play: no state hash before the cut)";
      } else if (have_header && any_hash) {
        why += "; --allow-truncated plays it up to its last state hash, tick " +
               std::to_string(std::get<ReplayHash>(replay.records[last_hash]).tick);
      }
      return fail(offset, why);
    }
    const ReplayHash end = std::get<ReplayHash>(replay.records[last_hash]);
    replay.records.resize(last_hash);
    replay.records.emplace_back(ReplayEnd{end.tick, end.hash});
    if (note != nullptr) {
      *note = "replay " + name + ": cut short at byte " + std::to_string(offset) + " (" + what + "); played up to tick " +
              std::to_string(end.tick) + ", its last state hash (" + std::to_string(last_tick - end.tick) +
              " later ticks left out)";
    }
    return std::move(replay);
  };
  std::size_t pos = sizeof kReplayMagic + 4;
  while (pos < bytes.size()) {
    const std::string last = " (intact up to tick " + std::to_string(last_tick) + ")";
    if (have_end) return fail(pos, "data after the end record");
    if (bytes.size() - pos < kRecordOverhead) return cut_short(pos, "truncated: a record is cut short" + last);
    Reader rec(bytes.data() + pos, 5);
    std::uint8_t type = 0;
    std::uint32_t length = 0;
    rec.u8(type);
    rec.u32(length);
    if (length > kMaxRecordBytes) return fail(pos, "record of " + std::to_string(length) + " bytes is too large");
    if (bytes.size() - pos - kRecordOverhead < length) return cut_short(pos, "truncated: a record is cut short" + last);
    const std::uint8_t* payload = bytes.data() + pos + 5;
    Reader crc_reader(payload + length, 4);
    std::uint32_t crc = 0;
    crc_reader.u32(crc);
    if (crc != record_crc(type, length, payload)) return fail(pos, "record checksum mismatch (corrupt file)" + last);
    Reader r(payload, length);
    if (!have_header && type != kHeader) return fail(pos, "the first record is not the header");
    switch (type) {
      case kHeader: {
        if (have_header) return fail(pos, "a second header");
        if (std::string e = parse_header(r, replay.header); !e.empty()) return fail(pos, e);
        have_header = true;
        break;
      }
      case kInputs: {
        ReplayInputs in;
        if (std::string e = parse_inputs(r, in); !e.empty()) return fail(pos, e);
        if (in.tick < last_tick) return fail(pos, "inputs for tick " + std::to_string(in.tick) + " after tick " + std::to_string(last_tick));
        last_tick = in.tick;
        replay.records.emplace_back(std::move(in));
        break;
      }
      case kHash:
      case kEnd: {
        std::uint64_t tick = 0, hash = 0;
        if (!r.u64(tick) || !r.u64(hash) || !r.done()) return fail(pos, "state hash record has the wrong size");
        if (tick < last_tick || (tick == 0 && type == kHash)) return fail(pos, "state hash for tick " + std::to_string(tick) + " after tick " + std::to_string(last_tick));
        last_tick = tick;
        if (type == kHash) {
          last_hash = replay.records.size();
          any_hash = true;
          replay.records.emplace_back(ReplayHash{tick, hash});
        } else {
          replay.records.emplace_back(ReplayEnd{tick, hash});
          have_end = true;
        }
        break;
      }
      default:
        return fail(pos, "unknown record type " + std::to_string(type));
    }
    pos += kRecordOverhead + length;
  }
  if (!have_header) return fail(pos, "truncated: no header");
  if (!have_end)
    return cut_short(pos, "truncated: no end record, intact up to tick " + std::to_string(last_tick) +
                              " (the recording server did not stop cleanly)");
  return replay;
}

std::optional<Replay> read_replay(const std::string& path, std::string& error, const ReplayReadOptions& options,
                                  std::string* note) {
  // A directory makes libstdc++'s filebuf throw from the read below; a device (/dev/zero) never
  // ends. A pipe is fine (swarmfield-tool replay <(zcat match.rpl.gz)).
  std::error_code fs_error;
  const auto status = std::filesystem::status(path, fs_error);
  if (!fs_error && std::filesystem::is_directory(status)) {
    error = "can not read replay file '" + path + "': it is a directory";
    return std::nullopt;
  }
  if (!fs_error && !std::filesystem::is_regular_file(status) && !std::filesystem::is_fifo(status)) {
    error = "can not read replay file '" + path + "': not a regular file";
    return std::nullopt;
  }
  // The open's errno is the reason (no such file, permission denied): without it the message
  // left the user guessing which of them it was.
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int reason = errno;
    error = "can not open replay file '" + path + "'" + (reason != 0 ? std::string(": ") + std::strerror(reason) : "");
    return std::nullopt;
  }
  std::vector<std::uint8_t> bytes;
  try {
    // The magic first: a file that is not a recording (a video named by mistake, a pipe from
    // /dev/zero) was read whole into memory before its first bytes were looked at, forever for an
    // endless pipe, and a std::bad_alloc aborted the program.
    char magic[sizeof kReplayMagic] = {};
    in.read(magic, sizeof magic);
    if (in.gcount() != static_cast<std::streamsize>(sizeof magic) ||
        std::memcmp(magic, kReplayMagic, sizeof magic) != 0) {
      error = "replay " + path + ": byte 0: not a swarmfield replay (no SWFRPLAY magic)";
      return std::nullopt;
    }
    bytes.assign(magic, magic + sizeof magic);
    std::copy(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>{}, std::back_inserter(bytes));
  } catch (const std::ios_base::failure& e) {
    error = "can not read replay file '" + path + "': " + e.what();
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    error = "can not read replay file '" + path + "': too large to hold in memory";
    return std::nullopt;
  }
  if (in.bad()) {
    error = "can not read replay file '" + path + "'";
    return std::nullopt;
  }
  return parse_replay(bytes, path, error, options, note);
}

std::vector<std::uint8_t> encode_replay(const Replay& replay) {
  std::vector<std::uint8_t> out, payload;
  append_file_start(out);
  (void)encode_header(replay.header, replay.header.hash_interval, payload);
  append_record(out, kHeader, payload);
  for (const ReplayRecord& record : replay.records) {
    payload.clear();
    if (const auto* in = std::get_if<ReplayInputs>(&record)) {
      encode_inputs(in->tick, in->events, payload);
      append_record(out, kInputs, payload);
    } else if (const auto* h = std::get_if<ReplayHash>(&record)) {
      encode_hash(h->tick, h->hash, payload);
      append_record(out, kHash, payload);
    } else if (const auto* e = std::get_if<ReplayEnd>(&record)) {
      encode_hash(e->tick, e->hash, payload);
      append_record(out, kEnd, payload);
    }
  }
  return out;
}

// ---- writer -----------------------------------------------------------------------------------

ReplayWriter::~ReplayWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

bool ReplayWriter::open(const std::string& path, const ReplayHeader& header, std::string& error) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    error = "can not create replay file '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::setvbuf(file_, nullptr, _IOFBF, 1 << 16);
  hash_interval_ = header.hash_interval == 0 ? 1 : header.hash_interval;
  scratch_.clear();
  append_file_start(scratch_);
  if (std::fwrite(scratch_.data(), 1, scratch_.size(), file_) != scratch_.size()) failed_ = true;
  bytes_ = scratch_.size();
  std::vector<std::uint8_t> payload;
  if (!encode_header(header, hash_interval_, payload)) {
    error = "can not compress the map for the replay";
    return false;
  }
  write_record(kHeader, payload);
  pending_.reserve(64);
  if (failed_ || std::fflush(file_) != 0) {
    error = "can not write replay file '" + path + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

void ReplayWriter::write_record(std::uint8_t type, const std::vector<std::uint8_t>& payload) {
  if (file_ == nullptr) return;
  record_.clear();
  append_record(record_, type, payload);
  if (std::fwrite(record_.data(), 1, record_.size(), file_) != record_.size()) failed_ = true;
  bytes_ += record_.size();
}

void ReplayWriter::record(std::uint64_t tick, const ReplayEvent& event) {
  if (file_ == nullptr) return;
  if (!pending_.empty() && tick != pending_tick_) flush_inputs();
  pending_tick_ = tick;
  pending_.push_back(event);
}

void ReplayWriter::flush_inputs() {
  if (pending_.empty()) return;
  scratch_.clear();
  encode_inputs(pending_tick_, pending_, scratch_);
  write_record(kInputs, scratch_);
  pending_.clear();
}

void ReplayWriter::end_tick(std::uint64_t tick_now, std::uint64_t hash) {
  if (file_ == nullptr) return;
  flush_inputs();
  if (tick_now % hash_interval_ == 0) {
    scratch_.clear();
    encode_hash(tick_now, hash, scratch_);
    write_record(kHash, scratch_);
    if (std::fflush(file_) != 0) failed_ = true;
  }
}

bool ReplayWriter::finish(std::uint64_t tick_now, std::uint64_t hash, std::string& error) {
  if (file_ == nullptr) return !failed_;
  flush_inputs();
  scratch_.clear();
  encode_hash(tick_now, hash, scratch_);
  write_record(kEnd, scratch_);
  if (std::fflush(file_) != 0) failed_ = true;
  if (std::fclose(file_) != 0) failed_ = true;
  file_ = nullptr;
  if (failed_) error = std::string("writing the replay failed: ") + std::strerror(errno);
  return !failed_;
}

}  // namespace swarmfield::server
