#pragma once
// Replay files: everything World needs to re-simulate a match bit for bit: the settings (as
// TOML, config_to_toml), the map (its cost bytes, zstd-compressed, with their FNV-1a hash), dt,
// every input the server applied to the World with the tick it was applied before (players
// added and removed, move intents, trigger changes: fire with its aim, cease fire), and the
// World's state hash every `hash_interval` ticks and
// at the end.
//
// Layout (little-endian): "SWFRPLAY" u32 version(1), then records:
//   u8 type | u32 payload bytes | payload | u32 CRC-32 (zlib) of type, length and payload
// Types: 1 header (first, once), 2 inputs of one tick, 3 state hash, 4 end (last, once).
// Readers check all of it (magic, version, record order, lengths, CRCs, exact payload sizes,
// ticks that never go back, values in range) and report the first problem with its byte
// offset; a file cut short (a server killed mid-match) is "truncated", with the last tick that
// is intact.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "swarmfield/sim/map/grid_map.hpp"
#include "swarmfield/sim/vec2.hpp"

namespace swarmfield::server {

inline constexpr std::uint32_t kReplayVersion = 1;
/// The first 8 bytes of every replay file (no terminating zero).
inline constexpr char kReplayMagic[8] = {'S', 'W', 'F', 'R', 'P', 'L', 'A', 'Y'};

struct ReplayHeader {
  std::string config_toml;     ///< the recording server's settings (config_to_toml)
  std::string map_name;
  std::int32_t width = 0;      ///< cells
  std::int32_t height = 0;
  float cell_size = 1.0f;      ///< world units per cell
  std::vector<std::uint8_t> costs;  ///< width * height row-major cost bytes (uncompressed in memory)
  float dt_s = 0.0f;           ///< the fixed tick, seconds (bit pattern preserved)
  std::uint32_t hash_interval = 0;  ///< ticks between state hash records
};

/// One input applied to the World before a tick.
struct ReplayEvent {
  enum class Kind : std::uint8_t { kAddPlayer = 1, kRemovePlayer = 2, kIntent = 3, kFire = 4, kCeaseFire = 5, kBuild = 6 };
  Kind kind = Kind::kIntent;
  std::uint32_t player_id = 0;
  /// add: the position asked for; intent: the intent; fire: the aim (World::set_player_fire
  /// with fire set); build: the cell (x, y as floats, exact: cells < 2^24; World::build_barricade,
  /// recorded only when it built); remove, cease fire: unused (0)
  sim::Vec2 value;
};

/// Inputs applied while World::tick() was `tick` (i.e. before the World's step to tick + 1).
struct ReplayInputs {
  std::uint64_t tick = 0;
  std::vector<ReplayEvent> events;
};
/// World::state_hash() once World::tick() == tick.
struct ReplayHash {
  std::uint64_t tick = 0;
  std::uint64_t hash = 0;
};
/// The recording's last tick and state hash.
struct ReplayEnd {
  std::uint64_t tick = 0;
  std::uint64_t hash = 0;
};
using ReplayRecord = std::variant<ReplayInputs, ReplayHash, ReplayEnd>;

struct Replay {
  ReplayHeader header;
  std::vector<ReplayRecord> records;  ///< in file order; the last is a ReplayEnd
};

/// FNV-1a 64 of the cost bytes (the header's map check).
[[nodiscard]] std::uint64_t map_hash(const std::vector<std::uint8_t>& costs) noexcept;

/// How a recording cut short is read (a crash leaves one: the writer flushes at each state hash).
struct ReplayReadOptions {
  /// Accept a file whose tail is cut short or has no end record: its records up to the last
  /// intact state hash, that hash as the end (the ticks after it are not played: nothing checks
  /// them). Corruption (a checksum mismatch, a bad record) is refused all the same, and so is a
  /// file cut before its first state hash.
  bool allow_truncated = false;
};

/// Reads and checks a whole replay file. nullopt + `error` (one line naming the file, the byte
/// offset and the problem) when it can not be read, is not a replay, is corrupt or truncated.
/// With options.allow_truncated a truncated file is read up to its last state hash, and
/// `note` (if given) says so ("cut short at byte B: played up to tick T, ...").
[[nodiscard]] std::optional<Replay> read_replay(const std::string& path, std::string& error,
                                                const ReplayReadOptions& options = {}, std::string* note = nullptr);
/// The same from bytes in memory (`name` labels errors).
[[nodiscard]] std::optional<Replay> parse_replay(const std::vector<std::uint8_t>& bytes, const std::string& name,
                                                 std::string& error, const ReplayReadOptions& options = {},
                                                 std::string* note = nullptr);

/// The whole file's bytes for `replay` (tests and tools that edit recordings; the server
/// streams with ReplayWriter, which writes the same bytes).
[[nodiscard]] std::vector<std::uint8_t> encode_replay(const Replay& replay);

/// Writes a replay as the match runs (the server's tick thread). Inputs are buffered and
/// written once per tick; the file is flushed with every state hash record (so a crash loses
/// at most hash_interval ticks) and closed by finish(). No allocation per tick once warm.
class ReplayWriter {
 public:
  ReplayWriter() = default;
  ~ReplayWriter();
  ReplayWriter(const ReplayWriter&) = delete;
  ReplayWriter& operator=(const ReplayWriter&) = delete;

  /// Creates `path` (replacing it) and writes the header. False + `error` on failure.
  bool open(const std::string& path, const ReplayHeader& header, std::string& error);
  [[nodiscard]] bool is_open() const noexcept { return file_ != nullptr; }

  /// An input applied while World::tick() == `tick`.
  void record(std::uint64_t tick, const ReplayEvent& event);
  /// After the World stepped to `tick_now` with state `hash`: writes the inputs applied before
  /// that step and, every hash_interval ticks, the state hash.
  void end_tick(std::uint64_t tick_now, std::uint64_t hash);
  /// Writes the inputs still pending and the end record, flushes and closes. Idempotent.
  /// False + `error` if any write failed (disk full...).
  bool finish(std::uint64_t tick_now, std::uint64_t hash, std::string& error);
  /// Bytes written so far.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  void write_record(std::uint8_t type, const std::vector<std::uint8_t>& payload);
  void flush_inputs();

  std::FILE* file_ = nullptr;
  std::uint32_t hash_interval_ = 1;
  std::uint64_t pending_tick_ = 0;
  std::vector<ReplayEvent> pending_;
  std::vector<std::uint8_t> scratch_;
  std::vector<std::uint8_t> record_;
  std::uint64_t bytes_ = 0;
  bool failed_ = false;
};

}  // namespace swarmfield::server
