#pragma once
// TCP framing: u32 little-endian length prefix, then the payload. No sockets.
#include <cstdint>
#include <span>
#include <vector>

namespace swarmfield::protocol {

inline constexpr std::size_t kMaxFrameBytes = 1u << 20;  ///< 1 MiB payload limit (server -> client)
/// Payload limit of what a client sends (Hello, Input, Bye: a few hundred bytes at most). The
/// server reads client frames against this, so a peer can not make it buffer a megabyte per
/// connection by announcing a big frame and never finishing it.
inline constexpr std::size_t kMaxClientFrameBytes = 4096;

/// Appends `payload` to `out` with its 4-byte little-endian length. Payloads larger than
/// kMaxFrameBytes are a programming error (returns false, `out` unchanged).
[[nodiscard]] bool append_frame(std::span<const std::uint8_t> payload, std::vector<std::uint8_t>& out);

/// Incremental decoder for a byte stream. feed() bytes as they arrive, then call next() until it
/// returns kNeedMore. kTooLarge is final: the peer announced a frame above the limit and the
/// stream can not be resynchronized (answer Error and close).
/// Memory: consumed bytes are compacted away, so the buffer holds at most the unread frames plus
/// the latest feed(); once a too-large length is seen (in feed() or next()) everything buffered
/// is released and later feeds are ignored. Zero-length frames are legal (an empty payload).
class FrameDecoder {
 public:
  enum class Status { kFrame, kNeedMore, kTooLarge };
  explicit FrameDecoder(std::size_t max_frame_bytes = kMaxFrameBytes) : max_(max_frame_bytes) {}
  void feed(std::span<const std::uint8_t> bytes);
  /// On kFrame, `frame` holds one payload (its previous capacity is reused).
  Status next(std::vector<std::uint8_t>& frame);
  [[nodiscard]] std::size_t buffered() const noexcept { return buffer_.size() - read_; }
  /// Bytes of memory the decoder holds (its buffer's capacity), for metrics and tests.
  [[nodiscard]] std::size_t memory_bytes() const noexcept { return buffer_.capacity(); }
  /// True once kTooLarge has been detected (the stream is dead).
  [[nodiscard]] bool failed() const noexcept { return too_large_; }

 private:
  /// Checks the length prefix at read_ (if complete); true and releases the buffer if too large.
  bool check_too_large();
  std::size_t max_;
  std::vector<std::uint8_t> buffer_;
  std::size_t read_ = 0;
  bool too_large_ = false;
};

}  // namespace swarmfield::protocol
