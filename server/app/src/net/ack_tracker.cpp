#include "swarmfield/server/net/ack_tracker.hpp"

namespace swarmfield::server {

void AckTracker::on_sent(std::uint64_t sequence, Clock::time_point now) {
  if (sends_.size() >= kMaxTracked) return;
  sends_.push_back(Send{sequence, now});
}

void AckTracker::on_ack(std::uint64_t sequence) noexcept {
  while (!sends_.empty() && sends_.front().sequence <= sequence) sends_.pop_front();
}

}  // namespace swarmfield::server
