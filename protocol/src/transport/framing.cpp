// Length-prefixed TCP framing (u32 little-endian length, then the payload).
#include "swarmfield/protocol/transport/framing.hpp"

#include "byte_order.hpp"

namespace swarmfield::protocol {
namespace {

constexpr std::size_t kHeaderBytes = 4;

// The consumed prefix is dropped once it is at least this large and at least half the buffer,
// so compaction costs O(1) amortized per byte.
constexpr std::size_t kCompactMinBytes = 4096;

std::size_t read_length(const std::uint8_t* p) noexcept { return detail::load_u32_le(p); }

}  // namespace

bool append_frame(std::span<const std::uint8_t> payload, std::vector<std::uint8_t>& out) {
  if (payload.size() > kMaxFrameBytes) return false;
  const auto n = static_cast<std::uint32_t>(payload.size());
  std::uint8_t header[kHeaderBytes];
  detail::store_u32_le(header, n);
  out.insert(out.end(), header, header + kHeaderBytes);
  out.insert(out.end(), payload.begin(), payload.end());
  return true;
}

bool FrameDecoder::check_too_large() {
  if (too_large_) return true;
  if (buffer_.size() - read_ < kHeaderBytes) return false;
  if (read_length(buffer_.data() + read_) <= max_) return false;
  too_large_ = true;
  std::vector<std::uint8_t>().swap(buffer_);  // release the memory, not only the size
  read_ = 0;
  return true;
}

void FrameDecoder::feed(std::span<const std::uint8_t> bytes) {
  if (too_large_) return;
  if (read_ == buffer_.size()) {
    buffer_.clear();
    read_ = 0;
  } else if (read_ >= kCompactMinBytes && read_ * 2 >= buffer_.size()) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(read_));
    read_ = 0;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
  // Refuse early: a peer announcing a huge frame must not get to fill memory up to it.
  static_cast<void>(check_too_large());
}

FrameDecoder::Status FrameDecoder::next(std::vector<std::uint8_t>& frame) {
  if (check_too_large()) return Status::kTooLarge;
  const std::size_t available = buffer_.size() - read_;
  if (available < kHeaderBytes) return Status::kNeedMore;
  const std::uint8_t* p = buffer_.data() + read_;
  const std::size_t length = read_length(p);
  if (available - kHeaderBytes < length) return Status::kNeedMore;
  frame.assign(p + kHeaderBytes, p + kHeaderBytes + length);
  read_ += kHeaderBytes + length;
  return Status::kFrame;
}

}  // namespace swarmfield::protocol
