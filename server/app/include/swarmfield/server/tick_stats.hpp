#pragma once
// Tick duration statistics: keeps the last `capacity` samples (milliseconds) in a ring and
// answers percentiles over them (nearest-rank). Allocates only in the constructor and in
// percentile() (a scratch copy sized once).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace swarmfield::server {

class TickStats {
 public:
  /// `capacity` (>= 1): how many recent samples are kept.
  explicit TickStats(std::size_t capacity = 4096);

  /// Adds one sample in milliseconds. Negative or non-finite samples are stored as 0.
  void add(double ms) noexcept;
  /// Forgets every sample (the totals below too).
  void clear() noexcept;

  /// Nearest-rank percentile `q` in [0, 1] (0.5 = median, 0.99 = p99) of the kept samples;
  /// 0 when there are none. q outside [0,1] is clamped.
  [[nodiscard]] double percentile(double q) const;
  [[nodiscard]] double max() const noexcept { return max_; }
  [[nodiscard]] double mean() const noexcept { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  /// Samples added since construction / clear() (not capped by capacity).
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  /// Samples currently kept (min(count, capacity)).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

 private:
  std::vector<double> ring_;
  mutable std::vector<double> scratch_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::uint64_t count_ = 0;
  double sum_ = 0.0;
  double max_ = 0.0;
};

}  // namespace swarmfield::server
