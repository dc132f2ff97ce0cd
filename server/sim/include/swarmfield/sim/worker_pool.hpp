#pragma once
// A tiny fixed pool of worker threads for data-parallel loops over index ranges, deterministic
// by construction: the work is cut into fixed-size chunks that do not depend on the thread count.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace swarmfield::sim {

/// `threads - 1` worker threads, created once in the constructor and joined in the destructor;
/// the thread that calls parallel_for() works too. A loop is cut into chunks
/// [c * chunk, min(count, (c + 1) * chunk)) whose boundaries depend only on `count` and `chunk`,
/// never on how many threads there are or which thread runs a chunk: a loop body whose result
/// for an index depends only on that index (and on data no chunk writes) gives bit-identical
/// results for any thread count. Scheduling: thread t owns the t-th contiguous share of the
/// chunks and claims them in order from an atomic counter, so consecutive loops over the same
/// range keep each thread on the same data (its own cache); a thread that runs out steals the
/// remaining chunks of the others, and a worker that is not scheduled in time simply claims
/// none, so the caller never waits for a thread that is not working. Running a loop allocates
/// nothing (no std::function: the body is called through a function pointer and a pointer to
/// it).
///
/// Not reentrant: one parallel_for() at a time, never from inside a loop body (each owner
/// -- a World, a test -- has its own pool). Loop bodies must not throw (std::terminate).
class WorkerPool {
 public:
  /// Upper bound on `threads`: larger requests are clamped to this.
  static constexpr std::size_t kMaxThreads = 64;

  /// `threads` = threads that run a loop, the caller included; 0 and 1 both mean no worker
  /// thread (loops run inline, chunk by chunk, in order). Throws std::system_error only if the
  /// system cannot start a thread (setup, never per tick).
  explicit WorkerPool(std::size_t threads = 1);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Threads that run a loop, the caller included (>= 1).
  [[nodiscard]] std::size_t threads() const noexcept { return workers_.size() + 1; }

  /// Number of chunks parallel_for(count, chunk, ...) runs: ceil(count / chunk) (chunk 0 is
  /// treated as 1).
  [[nodiscard]] static constexpr std::size_t chunk_count(std::size_t count, std::size_t chunk) noexcept {
    if (chunk == 0) chunk = 1;
    return count / chunk + (count % chunk != 0 ? 1 : 0);
  }

  /// Calls fn(begin, end, chunk_index) once for every chunk of [0, count) (see the class
  /// comment), spread over the pool's threads; returns when all chunks are done, with their
  /// writes visible to the caller. Chunks run concurrently, in no particular order: a body may
  /// write only data that belongs to its own range (or to its chunk_index).
  template <class Fn>
  void parallel_for(std::size_t count, std::size_t chunk, Fn&& fn) {
    if (chunk == 0) chunk = 1;
    using Body = std::remove_reference_t<Fn>;
    struct Job {
      Body* body;
      std::size_t count;
      std::size_t chunk;
    } job{&fn, count, chunk};
    run(chunk_count(count, chunk),
        [](void* context, std::size_t c) {
          const Job& j = *static_cast<const Job*>(context);
          const std::size_t begin = c * j.chunk;
          const std::size_t end = j.count - begin < j.chunk ? j.count : begin + j.chunk;
          (*j.body)(begin, end, c);
        },
        &job);
  }

 private:
  using ChunkFn = void (*)(void* context, std::size_t chunk_index);
  void run(std::size_t chunks, ChunkFn call, void* context) noexcept;
  // Runs chunks of the current job until none are left: first thread `self`'s share, then
  // the others'.
  void drain(std::size_t self) noexcept;
  void worker_main(std::size_t self) noexcept;

  // Per thread: the next unclaimed chunk of its share and the share's end. One cache line each
  // (threads claim concurrently).
  struct alignas(64) Share {
    std::atomic<std::size_t> next{0};
    std::size_t end = 0;
  };

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;  // workers wait here for a job (or stop_)
  std::condition_variable idle_;  // run() waits here for the workers inside the job to leave
  // The current job; written by run() under mutex_ before workers may join it.
  ChunkFn call_ = nullptr;
  void* context_ = nullptr;
  std::unique_ptr<Share[]> shares_;  // threads() entries, allocated once
  std::uint64_t generation_ = 0;  // bumped per job, so a worker joins each job at most once
  bool open_ = false;             // workers may still join the current job
  std::size_t inside_ = 0;        // workers that joined the current job and have not left
  bool stop_ = false;
};

/// pool->parallel_for(count, chunk, fn), or the same chunks run inline in order when `pool` is
/// null: the sim's loops take an optional pool.
template <class Fn>
void parallel_for(WorkerPool* pool, std::size_t count, std::size_t chunk, Fn&& fn) {
  if (pool != nullptr && pool->threads() > 1) {
    pool->parallel_for(count, chunk, fn);
    return;
  }
  if (chunk == 0) chunk = 1;
  for (std::size_t begin = 0, c = 0; begin < count; begin += chunk, ++c) {
    fn(begin, count - begin < chunk ? count : begin + chunk, c);
  }
}

}  // namespace swarmfield::sim
