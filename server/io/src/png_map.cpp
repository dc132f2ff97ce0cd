// parse_png_map / png_map_pixels: PNG images as maps by the colour table of png_map.hpp.
// libpng reports errors by longjmp, so the libpng calls live in decode(), which holds no C++
// object with a destructor; the buffers it fills belong to its caller.
#include "swarmfield/io/png_map.hpp"

#include <png.h>

#include <array>
#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace swarmfield::io {

namespace {

/// Most bytes libpng may allocate for one ancillary chunk (text, ICC profile): a map needs none.
constexpr png_alloc_size_t kMaxChunkBytes = 1u << 20;

struct Decoder {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t pos = 0;
  std::int32_t max_side = 0;
  char message[256] = "unknown libpng error";
  // Set by decode(): the image size and, when a pixel is outside the table, its place and colour.
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  bool bad_pixel = false;
  std::uint32_t bad_x = 0;
  std::uint32_t bad_y = 0;
  std::uint8_t bad_rgba[4] = {};
  int bad_index = -1;  ///< a palette image's pixel whose index is beyond its palette
  int palette_size = 0;
};

void on_error(png_structp png, png_const_charp msg) {
  auto* d = static_cast<Decoder*>(png_get_error_ptr(png));
  if (d != nullptr) std::snprintf(d->message, sizeof d->message, "%s", msg);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}  // a map has no use for libpng's warnings

void on_read(png_structp png, png_bytep out, png_size_t n) {
  auto* d = static_cast<Decoder*>(png_get_io_ptr(png));
  if (n > d->size - d->pos) png_error(png, "the file ends early (truncated PNG)");
  std::memcpy(out, d->data + d->pos, n);
  d->pos += n;
}

/// Cost of one RGBA pixel by the table; false when the table has no entry for it.
bool pixel_cost(const std::uint8_t* p, std::uint8_t& cost, bool& spawn) {
  spawn = false;
  if (p[3] == 0) {
    cost = sim::kBlockedCost;
    return true;
  }
  if (p[3] != 255) return false;
  if (p[0] == p[1] && p[1] == p[2]) {
    cost = p[0] == 0 ? sim::kBlockedCost : static_cast<std::uint8_t>(256 - p[0]);
    return true;
  }
  const std::uint32_t rgb = (std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2];
  if (rgb != kPngSpawnColour) return false;
  cost = sim::kDefaultCost;
  spawn = true;
  return true;
}

/// Reads the image into `costs` (width * height, resized here) and marks red cells in `spawn`
/// (sized like costs on the first red cell; left empty when there is none). True on success; false with d->message set, or with
/// d->bad_pixel set. Buffers are the caller's: a longjmp out of libpng leaks nothing.
bool decode(Decoder* d, std::vector<std::uint8_t>* costs, std::vector<std::uint8_t>* spawn,
            std::vector<std::uint8_t>* row) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, on_error, on_warning);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return false;
  }
  const auto side = static_cast<png_uint_32>(d->max_side);
  png_set_user_limits(png, side, side);
  png_set_chunk_malloc_max(png, kMaxChunkBytes);
  png_set_read_fn(png, d, on_read);
  png_read_info(png, info);
  png_uint_32 w = 0;
  png_uint_32 h = 0;
  int depth = 0;
  int colour = 0;
  int interlace = 0;
  png_get_IHDR(png, info, &w, &h, &depth, &colour, &interlace, nullptr, nullptr);
  if (w == 0 || h == 0 || w > side || h > side) png_error(png, "image size out of range");
  if (interlace != PNG_INTERLACE_NONE) png_error(png, "interlaced (Adam7) PNGs are not supported; save it without interlacing");
  // Palette images are read as indices and looked up here: libpng's own expansion turns an
  // index beyond the palette into black, which would silently be a wall.
  const bool paletted = colour == PNG_COLOR_TYPE_PALETTE;
  std::array<std::array<std::uint8_t, 4>, 256> lookup{};
  if (paletted) {
    png_colorp palette = nullptr;
    int entries = 0;
    if (png_get_PLTE(png, info, &palette, &entries) == 0) entries = 0;
    png_bytep alpha = nullptr;
    int alphas = 0;
    if (png_get_tRNS(png, info, &alpha, &alphas, nullptr) == 0) alphas = 0;
    d->palette_size = entries;
    for (int i = 0; i < entries && i < 256; ++i) {
      lookup[static_cast<std::size_t>(i)] = {palette[i].red, palette[i].green, palette[i].blue,
                                             i < alphas ? alpha[i] : std::uint8_t{255}};
    }
    if (depth < 8) png_set_packing(png);  // one byte per index
  } else {
    // Whatever the colour type and depth: 8-bit RGBA rows, alpha 255 where the file has none.
    if (colour == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    const bool trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (trns) png_set_tRNS_to_alpha(png);
    if (depth == 16) png_set_scale_16(png);
    if (colour == PNG_COLOR_TYPE_GRAY || colour == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    if ((colour & PNG_COLOR_MASK_ALPHA) == 0 && !trns) png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
  }
  png_read_update_info(png, info);
  const std::size_t pixel_bytes = paletted ? 1 : 4;
  if (png_get_rowbytes(png, info) != static_cast<std::size_t>(w) * pixel_bytes) png_error(png, "unexpected row layout");
  d->width = w;
  d->height = h;
  row->resize(static_cast<std::size_t>(w) * pixel_bytes);
  costs->resize(static_cast<std::size_t>(w) * h);
  spawn->clear();
  for (png_uint_32 y = 0; y < h && !d->bad_pixel; ++y) {
    png_read_row(png, row->data(), nullptr);
    std::uint8_t* out = costs->data() + static_cast<std::size_t>(y) * w;
    for (png_uint_32 x = 0; x < w; ++x) {
      const std::uint8_t* p = row->data() + static_cast<std::size_t>(x) * pixel_bytes;
      if (paletted) {
        const int index = *p;
        if (index >= d->palette_size) {
          d->bad_pixel = true;
          d->bad_index = index;
          d->bad_x = x;
          d->bad_y = y;
          break;
        }
        p = lookup[static_cast<std::size_t>(index)].data();
      }
      bool is_spawn = false;
      if (!pixel_cost(p, out[x], is_spawn)) {
        d->bad_pixel = true;
        d->bad_x = x;
        d->bad_y = y;
        std::memcpy(d->bad_rgba, p, 4);
        break;
      }
      if (is_spawn) {
        if (spawn->empty()) spawn->assign(static_cast<std::size_t>(w) * h, 0);
        (*spawn)[static_cast<std::size_t>(y) * w + x] = 1;
      }
    }
  }
  if (!d->bad_pixel) png_read_end(png, nullptr);  // checks the rest of the stream too
  png_destroy_read_struct(&png, &info, nullptr);
  return !d->bad_pixel;
}

/// Big-endian u32 of the PNG header at `at`.
std::uint32_t be32(std::string_view b, std::size_t at) {
  return (std::uint32_t{static_cast<std::uint8_t>(b[at])} << 24) |
         (std::uint32_t{static_cast<std::uint8_t>(b[at + 1])} << 16) |
         (std::uint32_t{static_cast<std::uint8_t>(b[at + 2])} << 8) | static_cast<std::uint8_t>(b[at + 3]);
}

}  // namespace

bool parse_png_map(std::string_view bytes, std::string_view source, sim::GridMap& out, sim::MapError& error,
                   std::vector<sim::CellCoord>* spawns, std::int32_t max_side) {
  const auto fail = [&](std::string message) {
    error = {std::string(source), 0, std::move(message)};
    return false;
  };
  static constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kSignature, 8) != 0) return fail("not a PNG file (no PNG signature)");
  // The size, from the header, before libpng allocates anything: the signature, then the IHDR
  // chunk (length, "IHDR", width, height).
  if (bytes.size() >= 24 && std::memcmp(bytes.data() + 12, "IHDR", 4) == 0) {
    const std::uint32_t w = be32(bytes, 16);
    const std::uint32_t h = be32(bytes, 20);
    if (w == 0 || h == 0 || w > static_cast<std::uint32_t>(max_side) || h > static_cast<std::uint32_t>(max_side))
      return fail("image is " + std::to_string(w) + " x " + std::to_string(h) + " pixels; each side must be 1.." +
                  std::to_string(max_side) + " (one pixel per cell)");
  }
  Decoder d;
  d.data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  d.size = bytes.size();
  d.max_side = max_side;
  std::vector<std::uint8_t> costs;
  std::vector<std::uint8_t> spawn;
  std::vector<std::uint8_t> row;
  if (!decode(&d, &costs, &spawn, &row)) {
    if (!d.bad_pixel) return fail(std::string("bad PNG: ") + d.message);
    if (d.bad_index >= 0)
      return fail("pixel (" + std::to_string(d.bad_x) + ", " + std::to_string(d.bad_y) + ") has palette index " +
                  std::to_string(d.bad_index) + ", beyond the image's palette of " + std::to_string(d.palette_size) +
                  " colours");
    char colour[64];
    std::snprintf(colour, sizeof colour, "#%02x%02x%02x alpha %u", d.bad_rgba[0], d.bad_rgba[1], d.bad_rgba[2],
                  static_cast<unsigned>(d.bad_rgba[3]));
    return fail("pixel (" + std::to_string(d.bad_x) + ", " + std::to_string(d.bad_y) + ") has colour " + colour +
                ", which the map colour table does not name (black = wall, grey = cost, #ff0000 = spawn, alpha 0 "
                "= wall; partly transparent pixels are refused)");
  }
  const auto w = static_cast<std::int32_t>(d.width);
  std::vector<sim::CellCoord> found;
  for (std::size_t i = 0; i < spawn.size(); ++i)
    if (spawn[i] != 0)
      found.push_back({static_cast<std::int32_t>(i % d.width), static_cast<std::int32_t>(i / d.width)});
  out = sim::GridMap::from_costs(w, static_cast<std::int32_t>(d.height), std::move(costs));
  if (spawns != nullptr) *spawns = std::move(found);
  return true;
}

bool png_map_pixels(const sim::GridMap& map, const std::vector<sim::CellCoord>& spawns, std::vector<std::uint8_t>& rgb,
                    std::string& error) {
  std::vector<std::uint8_t> px(map.cell_count() * 3);
  const std::vector<std::uint8_t>& costs = map.costs();
  for (std::size_t i = 0; i < costs.size(); ++i) px[3 * i] = px[3 * i + 1] = px[3 * i + 2] = png_grey_of_cost(costs[i]);
  for (const sim::CellCoord c : spawns) {
    if (!map.walkable(c)) continue;
    if (map.cost(c.x, c.y) != sim::kDefaultCost) {
      error = "spawn cell (" + std::to_string(c.x) + ", " + std::to_string(c.y) + ") has cost " +
              std::to_string(map.cost(c.x, c.y)) + "; the PNG colour table has spawn cells of cost 1 only";
      return false;
    }
    const std::size_t i = map.index(c.x, c.y);
    px[3 * i] = static_cast<std::uint8_t>(kPngSpawnColour >> 16);
    px[3 * i + 1] = static_cast<std::uint8_t>((kPngSpawnColour >> 8) & 0xFF);
    px[3 * i + 2] = static_cast<std::uint8_t>(kPngSpawnColour & 0xFF);
  }
  rgb = std::move(px);
  return true;
}

}  // namespace swarmfield::io
