// WorkerPool: fixed worker threads, one job at a time, chunks claimed from per-thread shares.
//
// Synchronisation: a job is published under mutex_ (call_, context_, the shares, open_) and a
// worker joins it under mutex_, so the job's fields happen-before the worker's chunks; a worker
// leaves under mutex_ and run() returns only once every worker that joined has left, so every
// chunk's writes happen-before run() returns. Only joining workers are waited for: once the
// caller has claimed the last chunk it closes the job, and a worker woken after that skips it.
// A chunk is claimed by one fetch_add on its share's counter, so it runs exactly once whoever
// claims it.
#include "swarmfield/sim/worker_pool.hpp"

#include <algorithm>

namespace swarmfield::sim {

WorkerPool::WorkerPool(std::size_t threads) {
  const std::size_t n = std::clamp<std::size_t>(threads, 1, kMaxThreads);
  shares_ = std::make_unique<Share[]>(n);
  workers_.reserve(n - 1);
  try {
    for (std::size_t i = 1; i < n; ++i) workers_.emplace_back([this, i] { worker_main(i); });
  } catch (...) {
    // The destructor will not run: stop the workers already started before rethrowing.
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
    throw;
  }
}

WorkerPool::~WorkerPool() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::run(std::size_t chunks, ChunkFn call, void* context) noexcept {
  if (chunks == 0) return;
  if (workers_.empty() || chunks == 1) {
    for (std::size_t c = 0; c < chunks; ++c) call(context, c);
    return;
  }
  const std::size_t n = threads();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    call_ = call;
    context_ = context;
    // Thread t's share: chunks [t * chunks / n, (t + 1) * chunks / n). No worker is inside a
    // job here, so plain stores are safe (the mutex publishes them).
    for (std::size_t t = 0; t < n; ++t) {
      shares_[t].next.store(t * chunks / n, std::memory_order_relaxed);
      shares_[t].end = (t + 1) * chunks / n;
    }
    ++generation_;
    open_ = true;
  }
  wake_.notify_all();
  drain(0);
  // Every chunk is claimed now; wait for the workers still running theirs.
  std::unique_lock<std::mutex> lock(mutex_);
  open_ = false;
  idle_.wait(lock, [this] { return inside_ == 0; });
}

void WorkerPool::drain(std::size_t self) noexcept {
  const std::size_t n = threads();
  for (std::size_t k = 0; k < n; ++k) {
    Share& share = shares_[(self + k) % n];  // own share first, then steal in turn
    for (;;) {
      const std::size_t c = share.next.fetch_add(1, std::memory_order_relaxed);
      if (c >= share.end) break;
      call_(context_, c);
    }
  }
}

void WorkerPool::worker_main(std::size_t self) noexcept {
  std::uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || (open_ && generation_ != seen); });
    if (stop_) return;
    seen = generation_;
    ++inside_;
    lock.unlock();
    drain(self);
    lock.lock();
    if (--inside_ == 0) idle_.notify_one();
  }
}

}  // namespace swarmfield::sim
