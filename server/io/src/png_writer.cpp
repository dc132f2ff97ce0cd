// write_png_rgb with libpng. libpng reports errors by longjmp, so the libpng calls live in a
// function without C++ objects that need destructors between setjmp and the calls.
#include "swarmfield/io/png_writer.hpp"

#include <png.h>

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>

namespace swarmfield::io {

namespace {

struct PngErrorSink {
  char message[256] = "unknown libpng error";
};

void on_png_error(png_structp png, png_const_charp msg) {
  auto* sink = static_cast<PngErrorSink*>(png_get_error_ptr(png));
  if (sink != nullptr) std::snprintf(sink->message, sizeof sink->message, "%s", msg);
  png_longjmp(png, 1);
}

void on_png_warning(png_structp, png_const_charp) {}

/// Returns true on success; on failure `sink` holds libpng's message.
bool encode(std::FILE* file, png_uint_32 width, png_uint_32 height, const std::uint8_t* rgb, PngErrorSink* sink) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, sink, on_png_error, on_png_warning);
  if (png == nullptr) return false;
  png_infop info = png_create_info_struct(png);
  if (info == nullptr) {
    png_destroy_write_struct(&png, nullptr);
    return false;
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return false;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  const std::size_t stride = static_cast<std::size_t>(width) * 3;
  for (png_uint_32 y = 0; y < height; ++y) {
    // libpng takes a non-const row pointer but does not write through it.
    png_write_row(png, const_cast<png_bytep>(rgb + static_cast<std::size_t>(y) * stride));
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return true;
}

}  // namespace

bool write_png_rgb(const std::string& path, std::int32_t width, std::int32_t height,
                   const std::vector<std::uint8_t>& rgb, std::string& error) {
  if (width <= 0 || height <= 0 || width > 65535 || height > 65535) {
    error = path + ": image size " + std::to_string(width) + "x" + std::to_string(height) +
            " is out of range (1..65535 per side)";
    return false;
  }
  const std::size_t need = static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 3;
  if (rgb.size() != need) {
    error = path + ": pixel buffer has " + std::to_string(rgb.size()) + " bytes, expected " + std::to_string(need);
    return false;
  }
  errno = 0;
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    error = path + ": cannot create file: " + std::strerror(errno);
    return false;
  }
  PngErrorSink sink;
  const bool ok = encode(file, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), rgb.data(), &sink);
  errno = 0;
  const bool closed = std::fclose(file) == 0;
  if (!ok || !closed) {
    error = path + ": " + (ok ? std::string("write failed: ") + std::strerror(errno) : std::string(sink.message));
    std::remove(path.c_str());
    return false;
  }
  return true;
}

}  // namespace swarmfield::io
