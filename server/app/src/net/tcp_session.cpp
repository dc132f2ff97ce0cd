#include "swarmfield/server/net/tcp_session.hpp"

#include <asio/post.hpp>
#include <asio/write.hpp>

#include <algorithm>

namespace swarmfield::server {

TcpSession::TcpSession(asio::ip::tcp::socket socket, TcpSessionHandler& handler, std::uint64_t session_id,
                       std::size_t max_queue_bytes, std::size_t max_frame_bytes)
    : socket_(std::move(socket)),
      handler_(handler),
      id_(session_id),
      max_queue_bytes_(max_queue_bytes),
      max_frame_bytes_(max_frame_bytes),
      decoder_(max_frame_bytes),
      connected_at_(Clock::now()) {
  std::error_code ec;
  const auto ep = socket_.remote_endpoint(ec);
  remote_ = ec ? std::string("?") : ep.address().to_string() + ":" + std::to_string(ep.port());
  if (!ec) remote_address_ = ep.address();
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);  // snapshots are latency-sensitive
  // Bound the kernel's share of the backlog too: with send-buffer autotuning a client that stops
  // reading could park megabytes (seconds of stale snapshots) in the kernel before our queue
  // bound ever triggers.
  const auto kernel_bytes = static_cast<int>(std::min<std::size_t>(max_queue_bytes_, kMaxKernelSendBuffer));
  socket_.set_option(asio::socket_base::send_buffer_size(kernel_bytes), ec);
}

void TcpSession::start() { do_read(); }

void TcpSession::limit_frames_per_tick(std::size_t frames) {
  frames_per_tick_ = frames;
  frames_left_ = frames;
}

void TcpSession::forwarded_for(const asio::ip::address& address) {
  remote_address_ = address;
  remote_ = address.to_string() + " (web)";
  forwarded_ = true;
  // The relay is local: no round trip to cover, so a small kernel buffer, and a slow browser's
  // backlog stays in the queue where send_latest() replaces it, not in the kernel.
  std::error_code ec;
  socket_.set_option(asio::socket_base::send_buffer_size(static_cast<int>(kForwardedSendBuffer)), ec);
}

void TcpSession::do_read() {
  // One read loop for the whole life of the socket. While closing it keeps reading and
  // discarding until the peer closes: closing with unread input would make the kernel send RST
  // and the peer could lose the final frame (e.g. the Error explaining why) before reading it.
  socket_.async_read_some(asio::buffer(read_buffer_), [self = shared_from_this()](std::error_code ec, std::size_t n) {
    if (self->closed_) return;
    if (ec) {
      self->close();  // EOF or error
      return;
    }
    if (!self->closing_) {
      self->decoder_.feed(std::span<const std::uint8_t>(self->read_buffer_.data(), n));
      const bool open = self->handle_frames();
      if (self->closed_) return;
      if (self->pause_or_track_partial(open)) return;
    }
    self->do_read();
  });
}

bool TcpSession::handle_frames() {
  const bool budgeted = frames_per_tick_ > 0;
  while (!budgeted || frames_left_ > 0) {
    const auto status = decoder_.next(frame_);
    if (status == protocol::FrameDecoder::Status::kNeedMore) break;
    if (status == protocol::FrameDecoder::Status::kTooLarge) {
      handler_.on_frame_too_large(*this);
      if (is_open()) close();  // the stream can not be resynchronized
      return false;
    }
    if (budgeted) --frames_left_;
    handler_.on_frame(*this, frame_);
    if (!is_open()) return false;  // the handler answered with an error and is closing us
  }
  return true;
}

bool TcpSession::pause_or_track_partial(bool open) {
  if (open && frames_per_tick_ > 0 && frames_left_ == 0) {
    // The tick's budget is spent: no read until the next tick refills it. What it holds waits
    // for our budget, not for the peer: no trickle.
    read_paused_ = true;
    partial_since_.reset();
    return true;
  }
  // Read progress: the clock of an incomplete frame starts with its first byte and only a
  // complete frame stops it, so a byte now and then does not keep a trickle alive.
  if (decoder_.buffered() == 0) {
    partial_since_.reset();
  } else if (!partial_since_) {
    partial_since_ = Clock::now();
  }
  return false;
}

void TcpSession::refill_frame_budget() {
  if (frames_per_tick_ == 0) return;
  frames_left_ = frames_per_tick_;
  if (!read_paused_ || closed_) return;
  read_paused_ = false;
  if (!closing_) {
    const bool open = handle_frames();
    if (closed_) return;
    if (pause_or_track_partial(open)) return;
  }
  do_read();  // (closing: read on and discard until the peer closes)
}

TcpSession::SendResult TcpSession::send(Frame frame) {
  if (closed_ || closing_ || !frame) return SendResult::kClosed;
  if (queued_bytes_ + superseded_bytes_ + frame->size() > max_queue_bytes_) {
    close();  // the client does not keep up: evict rather than buffer without bound
    return SendResult::kEvicted;
  }
  enqueue(std::move(frame), false);
  return SendResult::kQueued;
}

TcpSession::SendResult TcpSession::send_latest(Frame frame) {
  if (closed_ || closing_ || !frame) return SendResult::kClosed;
  // The entry being written (the front while writing_) can not be taken back; any other
  // latest-only entry is stale now.
  const std::size_t first_waiting = writing_ ? 1 : 0;
  for (std::size_t i = queue_.size(); i > first_waiting; --i) {
    const std::size_t at = i - 1;
    if (!queue_[at].latest_only) continue;
    const std::size_t bytes = queue_[at].frame->size();
    queued_bytes_ -= bytes;
    superseded_bytes_ += bytes;
    ++superseded_frames_;
    queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(at));
  }
  if (queued_bytes_ + superseded_bytes_ + frame->size() > max_queue_bytes_) {
    close();  // nothing written for a whole queue bound's worth of snapshots: not reading
    return SendResult::kEvicted;
  }
  enqueue(std::move(frame), true);
  return SendResult::kQueued;
}

bool TcpSession::latest_waiting() const noexcept {
  for (std::size_t i = writing_ ? 1 : 0; i < queue_.size(); ++i) {
    if (queue_[i].latest_only) return true;
  }
  return false;
}

TcpSession::SendResult TcpSession::skip_latest(std::size_t bytes) {
  if (closed_ || closing_) return SendResult::kClosed;
  superseded_bytes_ += bytes;
  ++superseded_frames_;
  if (queued_bytes_ + superseded_bytes_ > max_queue_bytes_) {
    close();
    return SendResult::kEvicted;
  }
  return SendResult::kQueued;
}

void TcpSession::enqueue(Frame frame, bool latest_only) {
  queued_bytes_ += frame->size();
  queue_.push_back(Queued{std::move(frame), latest_only, send_seal_.has_value()});
  if (!writing_) do_write();
}

void TcpSession::send_and_close(Frame frame) {
  if (closed_ || closing_) return;
  ended_by_server_ = true;
  if (frame) {
    queued_bytes_ += frame->size();
    queue_.push_back(Queued{std::move(frame), false, send_seal_.has_value()});
  }
  closing_ = true;
  closing_since_ = Clock::now();
  if (!writing_) {
    if (queue_.empty()) {
      finish_close();
    } else {
      do_write();
    }
  }
}

void TcpSession::do_write() {
  writing_ = true;
  const Frame& front = queue_.front().frame;
  asio::const_buffer out = asio::buffer(*front);
  if (queue_.front().sealed && send_seal_) {
    // Sealed as it is written, not as it is queued: a send_latest() frame dropped from the
    // queue must not take a frame index the peer then waits for.
    sealed_write_.clear();
    if (front->size() < 4 ||
        !send_seal_->seal(std::span<const std::uint8_t>(*front).subspan(4), sealed_write_)) {
      writing_ = false;
      close();
      return;
    }
    out = asio::buffer(sealed_write_);
  }
  asio::async_write(socket_, out, [self = shared_from_this()](std::error_code ec, std::size_t n) {
    self->writing_ = false;
    if (self->closed_) return;
    if (ec) {
      self->close();
      return;
    }
    self->bytes_sent_ += n;
    self->handler_.on_bytes_sent(*self, n);
    self->queued_bytes_ -= self->queue_.front().frame->size();
    self->queue_.pop_front();
    self->superseded_bytes_ = 0;  // the client reads: what was dropped before no longer counts
    if (!self->queue_.empty()) {
      self->do_write();
    } else if (self->closing_) {
      self->finish_close();
    }
  });
}

void TcpSession::seal_from_now(const protocol::SessionKey& receive_key, const protocol::SessionKey& send_key) {
  receive_seal_.emplace(receive_key, protocol::Direction::kTcpClientToServer);
  send_seal_.emplace(send_key, protocol::Direction::kTcpServerToClient);
}

void TcpSession::finish_close() {
  // Everything queued is written: half-close; the read loop closes once the peer has closed.
  std::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  if (ec) close();
}

void TcpSession::close() {
  if (closed_) return;
  closed_ = true;
  closing_ = false;
  std::error_code ec;
  socket_.close(ec);
  queue_.clear();
  queued_bytes_ = 0;
  superseded_bytes_ = 0;
  // Give back what reading held (up to a whole frame) now, not when the last handler lets go.
  decoder_ = protocol::FrameDecoder(max_frame_bytes_);
  std::vector<std::uint8_t>().swap(frame_);
  partial_since_.reset();
  // Posted so that a handler iterating over sessions is never re-entered from close().
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->handler_.on_closed(*self); });
}

}  // namespace swarmfield::server
