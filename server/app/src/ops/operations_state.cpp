#include "swarmfield/server/ops/operations_state.hpp"

namespace swarmfield::server {

void OperationsState::set_labels(std::vector<std::string> kind_names, std::vector<const char*> drop_reasons) {
  const std::lock_guard lock(mutex_);
  kind_names_ = std::move(kind_names);
  drop_reasons_ = std::move(drop_reasons);
}

void OperationsState::publish(const MetricsSnapshot& m, Clock::time_point now) {
  {
    const std::lock_guard lock(mutex_);
    published_ = m;
  }
  mark_alive(now);
}

void OperationsState::mark_alive(Clock::time_point now) noexcept {
  last_alive_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
}

OperationsState::Clock::duration OperationsState::tick_age(Clock::time_point now) const noexcept {
  const std::int64_t ns = last_alive_ns_.load();
  if (ns < 0) return Clock::duration::max();
  return now - Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

MetricsSnapshot OperationsState::snapshot() const {
  const std::lock_guard lock(mutex_);
  return published_;
}

std::string OperationsState::metrics_text() const {
  MetricsSnapshot m;
  MetricsLabels labels;
  std::vector<std::string> kinds;
  {
    const std::lock_guard lock(mutex_);
    m = published_;
    kinds = kind_names_;
  }
  if (m.kind_count > kinds.size()) m.kind_count = kinds.size();
  if (m.drop_reason_count > drop_reasons_.size()) m.drop_reason_count = drop_reasons_.size();
  m.draining = draining_.load();
  labels.kind_names = kinds.data();
  labels.drop_reasons = drop_reasons_.data();  // set once before readers start, never changed
  std::string text = render_metrics(m, labels);
  ProcessStats process;
  if (read_process_stats(process)) text += render_process_metrics(process);
  return text;
}

}  // namespace swarmfield::server
