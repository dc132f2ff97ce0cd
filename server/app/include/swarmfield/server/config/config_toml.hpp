#pragma once
// Reading TOML config text: the safe parse, type names for messages, and the [[kinds]] tables.
// Shared by the server's config (server_config.hpp) and `swarmfield-tool sim --kinds-from`.
#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "swarmfield/server/config/server_config.hpp"
#include "swarmfield/sim/crowd/agent_kind.hpp"

namespace swarmfield::server {

/// Largest config file read (--config, SWARMFIELD_CONFIG, --kinds-from), bytes: a settings file
/// is a few KiB, and a path naming a huge file or an endless device (/dev/zero) must not take
/// the process's memory.
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{1} << 20;  // 1 MiB

/// Reads the whole file at `path` into `out`; stops once past kMaxConfigFileBytes (reads in
/// 16 KiB chunks, so at most one chunk beyond the limit).
/// Only a regular file (a FIFO would block the open). `what` names the file in messages (the
/// token key file and the rules script are read the same way).
/// "" on success, else an error sentence naming the file (`out` untouched): "can not read
/// config file 'PATH'", "config file 'PATH' is a FIFO, not a regular file", or "config file
/// 'PATH' is larger than 1 MiB (1048576 bytes), the limit of a config file".
[[nodiscard]] std::string read_config_text(const std::string& path, std::string& out,
                                           std::string_view what = "config file");

/// The 1-based line of the first byte >= 0x80 outside a string or comment, 0 if none.
[[nodiscard]] int non_ascii_outside_strings(std::string_view text);

/// Dotted parts a key or table name may have (parse_toml_text refuses more).
inline constexpr std::size_t kMaxKeyPathParts = 64;
/// The 1-based line of the first table header ([a.b...] or [[a.b...]]) or key at the start of a
/// line (a.b... = ) with `max_parts` or more dots outside quotes, 0 if none. Strings and
/// comments are skipped as non_ascii_outside_strings() skips them.
[[nodiscard]] int deep_key_path(std::string_view text, std::size_t max_parts);

/// Parses TOML `text` (named `name` in messages, e.g. the file's path) into `out`. "" on
/// success, else "config NAME:LINE: what is wrong". Text with a non-ASCII byte outside strings
/// and comments is refused before toml++ sees it (see the .cpp for why).
[[nodiscard]] std::string parse_toml_text(const std::string& text, const std::string& name, toml::table& out);

/// "string", "integer", "float", "boolean", "table", "array" or "date/time", for messages.
[[nodiscard]] std::string toml_type_name(const toml::node& node);

/// The value of a `kinds` key: an array of tables (TOML [[kinds]] sections), each with keys
/// name (required), radius, speed, separation-weight, turn-rate (world units and seconds),
/// colour ("#RRGGBB") and weight (spawn weight > 0); a missing key keeps the walker's value;
/// '_' and '-' spell the same key. Checked as a whole with sim::check_agent_kinds. "" and
/// `out` replaced, or an error naming the section and key (`out` untouched).
[[nodiscard]] std::string apply_kinds(const toml::node& node, std::vector<sim::AgentKind>& out);

/// The value of a `waves` key: an array of tables ([[waves]] sections) with the keys name,
/// trigger ("time" or "cleared"), start, kinds (an inline table of kind name = count, required),
/// zone ([x0, y0, x1, y1] cells, or a name of the [zones] table), duration, repeat, every and
/// growth ('_' and '-' the same). Types and shapes are checked here; kind and zone names and
/// ranges by resolve_waves() once the kinds are known. "" and `out` replaced, or an error naming
/// the wave (waves[i]) and key.
[[nodiscard]] std::string apply_waves(const toml::node& node, std::vector<WaveConfig>& out);

/// The value of a `zones` key: a table of name = [x0, y0, x1, y1] (whole numbers of cells).
[[nodiscard]] std::string apply_zones(const toml::node& node, std::map<std::string, std::array<std::int64_t, 4>>& out);

/// The [[kinds]] sections of the TOML file at `path` (a server config file; its other keys are
/// not read). "" and `out` replaced, or an error sentence naming the file (unreadable, a
/// directory, over kMaxConfigFileBytes, not TOML, no [[kinds]] section, or a bad section:
/// apply_kinds's messages).
[[nodiscard]] std::string read_kinds_file(const std::string& path, std::vector<sim::AgentKind>& out);

}  // namespace swarmfield::server
