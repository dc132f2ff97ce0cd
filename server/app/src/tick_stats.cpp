#include "swarmfield/server/tick_stats.hpp"

#include <algorithm>
#include <cmath>

namespace swarmfield::server {

TickStats::TickStats(std::size_t capacity) : ring_(capacity > 0 ? capacity : 1, 0.0) {
  scratch_.reserve(ring_.size());
}

void TickStats::add(double ms) noexcept {
  if (!std::isfinite(ms) || ms < 0.0) ms = 0.0;
  ring_[head_] = ms;
  head_ = (head_ + 1) % ring_.size();
  if (size_ < ring_.size()) ++size_;
  ++count_;
  sum_ += ms;
  max_ = std::max(max_, ms);
}

void TickStats::clear() noexcept {
  head_ = 0;
  size_ = 0;
  count_ = 0;
  sum_ = 0.0;
  max_ = 0.0;
}

double TickStats::percentile(double q) const {
  if (size_ == 0) return 0.0;
  if (!(q >= 0.0)) q = 0.0;
  if (q > 1.0) q = 1.0;
  // The kept samples are the `size_` entries ending just before head_ (in ring order).
  scratch_.clear();
  const std::size_t cap = ring_.size();
  for (std::size_t i = 0; i < size_; ++i) scratch_.push_back(ring_[(head_ + cap - size_ + i) % cap]);
  // Nearest rank: the smallest value with at least q*N samples at or below it.
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(size_)));
  if (rank == 0) rank = 1;
  const auto nth = scratch_.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(scratch_.begin(), nth, scratch_.end());
  return *nth;
}

}  // namespace swarmfield::server
