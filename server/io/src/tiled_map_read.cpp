// parse_tiled_map: a Tiled JSON map (.tmj) into a GridMap. Everything in the file is hostile:
// every value is type- and range-checked before use, sizes before allocating.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>

#include "layer_codecs.hpp"
#include "swarmfield/io/tiled_map.hpp"

namespace swarmfield::io {

namespace {

using nlohmann::json;

/// Tiled keeps flip (horizontal, vertical, diagonal) and hexagonal-rotation flags in a GID's top
/// four bits; the tile is the rest.
constexpr std::uint32_t kGidMask = 0x0FFFFFFFu;
/// Most tiles one tileset may declare (tilecount): bounds the per-tileset lookup table.
constexpr std::uint32_t kMaxTilesPerSet = 1u << 16;
// Tiles of all tilesets together: each declared tile is a slot of the lookup table, so a
// 660 KB file of 20,000 tilesets declaring 65,536 tiles each asked for 5 GB. 16 full tilesets.
constexpr std::size_t kMaxTilesInAll = std::size_t{1} << 20;
constexpr int kMaxCost = sim::kBlockedCost - 1;

/// What one tile means, resolved from its properties.
struct TileMeaning {
  bool defined = false;  // has a wall or cost property
  std::uint8_t cost = sim::kDefaultCost;
  bool spawn = false;
};

struct Tileset {
  std::uint32_t firstgid = 0;
  std::string name;
  std::vector<TileMeaning> tiles;  // by local tile id; size = tilecount (or highest id + 1)
};

/// Thrown inside the parser and turned into the MapError at its one catch (never escapes).
struct Refusal {
  std::string message;
};

[[noreturn]] void refuse(std::string message) { throw Refusal{std::move(message)}; }

std::string shown(const std::string& s) {
  constexpr std::size_t kMax = 40;
  std::string out = "'";
  for (const char c : s.substr(0, kMax)) out += static_cast<unsigned char>(c) < 0x20 ? '?' : c;
  return out + (s.size() > kMax ? "...'" : "'");
}

/// A whole number in [lo, hi] from `j`, or refuse naming `what`.
std::int64_t whole_number(const json& j, const std::string& what, std::int64_t lo, std::int64_t hi) {
  std::optional<std::int64_t> v;
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) v = static_cast<std::int64_t>(u);
  } else if (j.is_number_integer()) {
    v = j.get<std::int64_t>();
  } else if (j.is_number_float()) {
    // Tiled writes float properties as 3.0; accept them when whole.
    const double d = j.get<double>();
    if (d >= -1e15 && d <= 1e15 && d == static_cast<double>(static_cast<std::int64_t>(d)))
      v = static_cast<std::int64_t>(d);
  } else {
    refuse(what + " must be a number, found " + std::string(j.type_name()));
  }
  if (!v || *v < lo || *v > hi)
    refuse(what + " " + (v ? std::to_string(*v) : j.dump().substr(0, 40)) + " is out of range (" + std::to_string(lo) +
           ".." + std::to_string(hi) + ")");
  return *v;
}

const json* member(const json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::string string_member(const json& obj, const char* key, const std::string& fallback) {
  const json* j = member(obj, key);
  if (j == nullptr) return fallback;
  if (!j->is_string()) refuse(std::string("'") + key + "' must be a string, found " + j->type_name());
  return j->get<std::string>();
}

/// The wall / cost / spawn properties of one tile (other properties are ignored).
TileMeaning tile_meaning(const json& tile, const std::string& where) {
  TileMeaning m;
  const json* props = member(tile, "properties");
  if (props == nullptr) return m;
  if (!props->is_array()) refuse(where + ": 'properties' must be an array (Tiled 1.2 or later)");
  bool wall = false;
  bool has_wall = false;
  std::optional<std::int64_t> cost;
  for (const json& p : *props) {
    if (!p.is_object()) refuse(where + ": a property must be an object");
    const std::string name = string_member(p, "name", "");
    const json* value = member(p, "value");
    if (name != "wall" && name != "cost" && name != "spawn") continue;
    if (value == nullptr) refuse(where + ": property '" + name + "' has no value");
    if (name == "cost") {
      cost = whole_number(*value, where + ": property 'cost'", 1, kMaxCost);
      continue;
    }
    if (!value->is_boolean()) refuse(where + ": property '" + name + "' must be a bool, found " + value->type_name());
    if (name == "wall") {
      wall = value->get<bool>();
      has_wall = true;
    } else {
      m.spawn = value->get<bool>();
    }
  }
  m.defined = has_wall || cost.has_value();
  m.cost = wall ? sim::kBlockedCost : static_cast<std::uint8_t>(cost.value_or(sim::kDefaultCost));
  if (wall && m.spawn) refuse(where + ": a tile can not be both 'wall' and 'spawn'");
  return m;
}

Tileset read_tileset(const json& ts, std::size_t index) {
  if (!ts.is_object()) refuse("tileset " + std::to_string(index) + " is not an object");
  Tileset out;
  const json* first = member(ts, "firstgid");
  if (first == nullptr) refuse("tileset " + std::to_string(index) + " has no 'firstgid'");
  out.firstgid = static_cast<std::uint32_t>(whole_number(*first, "tileset " + std::to_string(index) + ": 'firstgid'", 1,
                                                         kGidMask));
  if (const json* src = member(ts, "source"))
    refuse("tileset " + (src->is_string() ? shown(src->get<std::string>()) : std::to_string(index)) +
           " is external (a .tsx/.tsj file); only embedded tilesets are supported: in Tiled, Map > Embed Tilesets");
  out.name = string_member(ts, "name", "#" + std::to_string(index));
  const std::string label = "tileset " + shown(out.name);
  const json* tiles = member(ts, "tiles");
  if (tiles != nullptr && !tiles->is_array()) refuse(label + ": 'tiles' must be an array");
  std::int64_t count = 0;
  if (const json* tc = member(ts, "tilecount")) {
    count = whole_number(*tc, label + ": 'tilecount'", 0, kMaxTilesPerSet);
  } else if (tiles != nullptr) {
    for (const json& t : *tiles)
      if (const json* id = t.is_object() ? member(t, "id") : nullptr)
        count = std::max(count, whole_number(*id, label + ": tile 'id'", 0, kMaxTilesPerSet - 1) + 1);
  }
  out.tiles.resize(static_cast<std::size_t>(count));
  if (tiles == nullptr) return out;
  for (const json& t : *tiles) {
    const json* id_value = t.is_object() ? member(t, "id") : nullptr;
    if (id_value == nullptr) refuse(label + ": every entry of 'tiles' needs an 'id'");
    const auto id = whole_number(*id_value, label + ": tile 'id'", 0, count - 1);
    out.tiles[static_cast<std::size_t>(id)] = tile_meaning(t, label + " tile " + std::to_string(id));
  }
  return out;
}

/// A csv string of GIDs ("1,2,\n3,...") into `gids` (exactly `cells` numbers).
void parse_csv_gids(std::string_view text, std::size_t cells, std::vector<std::uint32_t>& gids,
                    const std::string& label) {
  gids.clear();
  gids.reserve(cells);
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
    if (i == text.size()) break;
    std::uint32_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (ec != std::errc())
      refuse(label + ": csv data holds something other than a GID (0..4294967295) at byte " + std::to_string(i));
    if (gids.size() == cells) refuse(label + ": csv data holds more than width * height = " + std::to_string(cells) + " GIDs");
    gids.push_back(v);
    i = static_cast<std::size_t>(ptr - text.data());
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t')) ++i;
    if (i < text.size() && text[i] != ',') refuse(label + ": csv data expects ',' at byte " + std::to_string(i));
    ++i;
  }
  if (gids.size() != cells)
    refuse(label + ": csv data holds " + std::to_string(gids.size()) + " GIDs, expected width * height = " +
           std::to_string(cells));
}

/// One tile layer's GIDs (flags not yet masked), `cells` of them, whatever the encoding.
std::vector<std::uint32_t> layer_gids(const json& layer, std::size_t cells, const std::string& label) {
  const json* data = member(layer, "data");
  if (data == nullptr) refuse(label + ": no 'data'");
  const std::string encoding = string_member(layer, "encoding", "csv");
  const std::string compression = string_member(layer, "compression", "");
  std::vector<std::uint32_t> gids;
  if (data->is_array()) {
    if (encoding != "csv") refuse(label + ": 'data' is an array but the encoding is " + shown(encoding));
    if (data->size() != cells)
      refuse(label + ": data holds " + std::to_string(data->size()) + " GIDs, expected width * height = " +
             std::to_string(cells));
    gids.reserve(cells);
    for (const json& g : *data) {
      // The common case without building a message; anything else is checked (and refused) below.
      if (g.is_number_unsigned() && g.get<std::uint64_t>() <= 0xFFFFFFFFu) {
        gids.push_back(static_cast<std::uint32_t>(g.get<std::uint64_t>()));
        continue;
      }
      gids.push_back(static_cast<std::uint32_t>(whole_number(g, label + ": GID", 0, 0xFFFFFFFFll)));
    }
    return gids;
  }
  if (!data->is_string()) refuse(label + ": 'data' must be an array or a string, found " + data->type_name());
  const std::string& text = data->get_ref<const std::string&>();
  if (encoding == "csv") {
    if (!compression.empty()) refuse(label + ": csv data can not be compressed");
    parse_csv_gids(text, cells, gids, label);
    return gids;
  }
  if (encoding != "base64") refuse(label + ": encoding " + shown(encoding) + " is not supported (csv or base64)");
  const std::size_t bytes = cells * 4;
  std::string why;
  gids.resize(cells);
  // Decompressed straight into the GID array (no second copy of the layer), then read as
  // little-endian in place.
  auto* gid_bytes = reinterpret_cast<std::uint8_t*>(gids.data());
  if (compression.empty()) {
    std::vector<std::uint8_t> raw;
    if (!detail::base64_decode(text, bytes, raw, why)) refuse(label + ": " + why);
    if (raw.size() != bytes)
      refuse(label + ": base64 data holds " + std::to_string(raw.size()) + " bytes, expected width * height * 4 = " +
             std::to_string(bytes));
    std::copy(raw.begin(), raw.end(), gid_bytes);
  } else {
    if (compression != "zlib" && compression != "gzip" && compression != "zstd")
      refuse(label + ": compression " + shown(compression) + " is not supported (none, zlib, gzip or zstd)");
    // Compressed data is shorter than its base64 text.
    std::vector<std::uint8_t> packed;
    if (!detail::base64_decode(text, text.size(), packed, why)) refuse(label + ": " + why);
    const bool ok = compression == "zstd" ? detail::zstd_exact(packed, gid_bytes, bytes, why)
                                          : detail::inflate_exact(packed, gid_bytes, bytes, why);
    if (!ok) refuse(label + ": " + (compression == "zstd" ? "" : compression + ": ") + why);
  }
  for (std::size_t i = 0; i < cells; ++i) {
    const std::uint8_t* p = gid_bytes + 4 * i;
    gids[i] = std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
  }
  return gids;
}

struct ParsedMap {
  std::int32_t width = 0;
  std::int32_t height = 0;
  std::vector<std::uint8_t> costs;
  std::vector<sim::CellCoord> spawns;
};

ParsedMap parse_document(const json& doc, std::int32_t max_side) {
  if (!doc.is_object()) refuse("not a Tiled JSON map: the document is not an object");
  const std::string type = string_member(doc, "type", "map");
  if (type != "map") refuse("is a Tiled " + shown(type) + " file, not a map");
  const std::string orientation = string_member(doc, "orientation", "orthogonal");
  if (orientation != "orthogonal")
    refuse("orientation " + shown(orientation) + " is not supported; only orthogonal maps are");
  if (const json* inf = member(doc, "infinite"); inf != nullptr && (!inf->is_boolean() || inf->get<bool>()))
    refuse("the map is infinite (chunked layers); only fixed-size maps are supported: in Tiled, Map > Map Properties, "
           "untick Infinite");
  ParsedMap m;
  const json* w = member(doc, "width");
  const json* h = member(doc, "height");
  if (w == nullptr || h == nullptr) refuse("no 'width' or 'height': not a Tiled JSON map");
  m.width = static_cast<std::int32_t>(whole_number(*w, "width", 1, max_side));
  m.height = static_cast<std::int32_t>(whole_number(*h, "height", 1, max_side));
  const std::size_t cells = static_cast<std::size_t>(m.width) * static_cast<std::size_t>(m.height);

  std::vector<Tileset> tilesets;
  if (const json* ts = member(doc, "tilesets")) {
    if (!ts->is_array()) refuse("'tilesets' must be an array");
    std::size_t tiles_in_all = 0;
    for (std::size_t i = 0; i < ts->size(); ++i) {
      tilesets.push_back(read_tileset((*ts)[i], i));
      tiles_in_all += tilesets.back().tiles.size();
      if (tiles_in_all > kMaxTilesInAll)
        refuse("the tilesets declare more than " + std::to_string(kMaxTilesInAll) + " tiles in all (at tileset " +
               shown(tilesets.back().name) + ", " + std::to_string(i + 1) + " of " + std::to_string(ts->size()) + ")");
    }
  }
  std::sort(tilesets.begin(), tilesets.end(), [](const Tileset& a, const Tileset& b) { return a.firstgid < b.firstgid; });

  const json* layers = member(doc, "layers");
  if (layers == nullptr || !layers->is_array()) refuse("no 'layers' array");
  m.costs.assign(cells, sim::kDefaultCost);
  std::vector<std::uint8_t> spawn;  // per cell, allocated when a spawn tile is used
  int tile_layers = 0;
  for (std::size_t li = 0; li < layers->size(); ++li) {
    const json& layer = (*layers)[li];
    if (!layer.is_object()) refuse("layer " + std::to_string(li) + " is not an object");
    const std::string name = string_member(layer, "name", "#" + std::to_string(li));
    const std::string label = "layer " + shown(name);
    const std::string ltype = string_member(layer, "type", "");
    if (ltype == "objectgroup" || ltype == "imagelayer") continue;  // no cells: ignored
    if (ltype == "group") refuse(label + " is a group layer; group layers are not supported (move its layers out)");
    if (ltype != "tilelayer") refuse(label + " has type " + shown(ltype) + "; expected tilelayer, objectgroup or imagelayer");
    if (member(layer, "chunks") != nullptr)
      refuse(label + " is infinite (chunked); only fixed-size maps are supported");
    const json* lw = member(layer, "width");
    const json* lh = member(layer, "height");
    if (lw == nullptr || lh == nullptr || whole_number(*lw, label + ": width", 1, max_side) != m.width ||
        whole_number(*lh, label + ": height", 1, max_side) != m.height)
      refuse(label + " is not " + std::to_string(m.width) + " x " + std::to_string(m.height) + " (the map's size)");
    const std::vector<std::uint32_t> gids = layer_gids(layer, cells, label);
    ++tile_layers;
    // Resolve each cell's tile; `last` caches the tileset of the previous GID (runs are common).
    std::size_t last = 0;
    for (std::size_t i = 0; i < cells; ++i) {
      const std::uint32_t gid = gids[i] & kGidMask;
      if (gid == 0) continue;  // no tile: leaves the cell as it is (cost 1 if no layer sets it)
      if (last >= tilesets.size() || gid < tilesets[last].firstgid ||
          (last + 1 < tilesets.size() && gid >= tilesets[last + 1].firstgid)) {
        const auto it = std::upper_bound(tilesets.begin(), tilesets.end(), gid,
                                         [](std::uint32_t g, const Tileset& t) { return g < t.firstgid; });
        last = static_cast<std::size_t>(it - tilesets.begin());
        if (last == 0) last = tilesets.size();  // below every firstgid
        else --last;
      }
      // The cell, for a message (built only when refusing).
      const auto at = [&] {
        return " at cell (" + std::to_string(i % static_cast<std::size_t>(m.width)) + ", " +
               std::to_string(i / static_cast<std::size_t>(m.width)) + ")";
      };
      if (last >= tilesets.size())
        refuse(label + ": GID " + std::to_string(gid) + at() + " belongs to no tileset");
      const Tileset& ts = tilesets[last];
      const std::uint32_t local = gid - ts.firstgid;
      if (local >= ts.tiles.size())
        refuse(label + ": GID " + std::to_string(gid) + at() + " is past the " + std::to_string(ts.tiles.size()) +
               " tiles of tileset " + shown(ts.name));
      const TileMeaning& t = ts.tiles[local];
      if (!t.defined)
        refuse("tile " + std::to_string(local) + " of tileset " + shown(ts.name) + " (GID " + std::to_string(gid) +
               ", used" + at() + ") has no 'wall' or 'cost' property; give every tile used wall (bool) or cost (int 1.." +
               std::to_string(kMaxCost) + ")");
      m.costs[i] = std::max(m.costs[i], t.cost);
      if (t.spawn) {
        if (spawn.empty()) spawn.assign(cells, 0);
        spawn[i] = 1;
      }
    }
  }
  if (tile_layers == 0) refuse("no tile layer");
  for (std::size_t i = 0; i < spawn.size(); ++i) {
    // A spawn tile under a wall of another layer is a wall.
    if (spawn[i] != 0 && m.costs[i] != sim::kBlockedCost)
      m.spawns.push_back({static_cast<std::int32_t>(i % static_cast<std::size_t>(m.width)),
                          static_cast<std::int32_t>(i / static_cast<std::size_t>(m.width))});
  }
  return m;
}

/// Arrays and objects nested deeper than this are refused before the document is parsed: each
/// level is a json value with its own heap block (~80 bytes), so a 32 MiB file of '[' asked for
/// 2.5 GB. A Tiled map nests about six deep (map, layers, a layer, its properties, a property),
/// group layers a few more each.
constexpr int kMaxDepth = 64;

/// True when `text` opens more than kMaxDepth arrays or objects inside one another (brackets in
/// strings do not count).
bool nested_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

}  // namespace

bool parse_tiled_map(std::string_view text, std::string_view source, sim::GridMap& out, sim::MapError& error,
                     std::vector<sim::CellCoord>* spawns, std::int32_t max_side) {
  const auto fail = [&](std::string message) {
    error = {std::string(source), 0, std::move(message)};
    return false;
  };
  if (nested_too_deep(text)) {
    return fail("malformed JSON: arrays and objects nested more than " + std::to_string(kMaxDepth) + " deep");
  }
  ParsedMap m;
  try {
    const json doc = json::parse(text.begin(), text.end());
    m = parse_document(doc, max_side);
  } catch (const Refusal& r) {
    return fail(r.message);
  } catch (const json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: ...": drop the tag.
    std::string what = e.what();
    const auto tag_end = what.find("] ");
    if (tag_end != std::string::npos) what = what.substr(tag_end + 2);
    return fail("malformed JSON: " + what);
  } catch (const json::exception& e) {
    return fail(std::string("malformed Tiled map: ") + e.what());
  }
  out = sim::GridMap::from_costs(m.width, m.height, std::move(m.costs));
  if (spawns != nullptr) *spawns = std::move(m.spawns);
  return true;
}

}  // namespace swarmfield::io
