// WorkerPool: every index exactly once, chunk boundaries independent of the thread count, many
// back-to-back loops (the pattern of a tick), and the inline fallback.
#include "swarmfield/sim/worker_pool.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

using namespace swarmfield::sim;

namespace {

/// Runs one loop and records, per index, how often it was visited and which chunk covered it;
/// and per chunk its (begin, end).
struct Visit {
  std::vector<std::uint32_t> hits;
  std::vector<std::size_t> chunk_of;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
};

Visit visit(WorkerPool* pool, std::size_t count, std::size_t chunk) {
  Visit v;
  v.hits.assign(count, 0);
  v.chunk_of.assign(count, static_cast<std::size_t>(-1));
  v.ranges.assign(WorkerPool::chunk_count(count, chunk), {0, 0});
  parallel_for(pool, count, chunk, [&](std::size_t begin, std::size_t end, std::size_t c) {
    v.ranges[c] = {begin, end};
    for (std::size_t i = begin; i < end; ++i) {
      ++v.hits[i];
      v.chunk_of[i] = c;
    }
  });
  return v;
}

}  // namespace

TEST_CASE("chunk_count is ceil(count / chunk), chunk 0 counting as 1") {
  CHECK(WorkerPool::chunk_count(0, 4) == 0);
  CHECK(WorkerPool::chunk_count(1, 4) == 1);
  CHECK(WorkerPool::chunk_count(4, 4) == 1);
  CHECK(WorkerPool::chunk_count(5, 4) == 2);
  CHECK(WorkerPool::chunk_count(7, 0) == 7);
}

TEST_CASE("parallel_for visits every index exactly once in the same chunks for any thread count") {
  WorkerPool p1(1), p2(2), p3(3), p8(8);
  CHECK(p1.threads() == 1);
  CHECK(p2.threads() == 2);
  CHECK(p3.threads() == 3);
  WorkerPool p0(0);
  CHECK(p0.threads() == 1);
  for (const auto& [count, chunk] : {std::pair<std::size_t, std::size_t>{0, 16}, {1, 16}, {16, 16}, {17, 16},
                                     {1000, 7}, {100000, 512}, {33, 0}}) {
    CAPTURE(count);
    CAPTURE(chunk);
    const Visit ref = visit(nullptr, count, chunk);
    for (std::size_t i = 0; i < count; ++i) REQUIRE(ref.hits[i] == 1);
    // Chunks tile [0, count) in order with the documented boundaries.
    const std::size_t step = chunk == 0 ? 1 : chunk;
    for (std::size_t c = 0; c < ref.ranges.size(); ++c) {
      CHECK(ref.ranges[c].first == c * step);
      CHECK(ref.ranges[c].second == std::min(count, (c + 1) * step));
    }
    for (WorkerPool* pool : {&p1, &p2, &p3, &p8}) {
      const Visit v = visit(pool, count, chunk);
      CHECK(v.hits == ref.hits);
      CHECK(v.chunk_of == ref.chunk_of);
      CHECK(v.ranges == ref.ranges);
    }
  }
}

TEST_CASE("the worker threads really take chunks, and loops run back to back") {
  WorkerPool pool(3);
  // Chunks that wait a little, so the workers (not only the caller) get some of them.
  std::set<std::thread::id> seen_threads;
  std::vector<std::thread::id> owner(64);
  for (int attempt = 0; attempt < 50 && seen_threads.size() < 2; ++attempt) {
    pool.parallel_for(owner.size(), 1, [&](std::size_t begin, std::size_t, std::size_t) {
      owner[begin] = std::this_thread::get_id();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    seen_threads.insert(owner.begin(), owner.end());
  }
  CHECK(seen_threads.size() >= 2);

  // Many short loops in a row, each reading what the previous one wrote (a tick's phases):
  // a loop returns only after all its chunks' writes are visible.
  std::vector<std::uint64_t> a(10000, 1), b(10000, 0);
  for (int round = 0; round < 2000; ++round) {
    pool.parallel_for(a.size(), 97, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t i = begin; i < end; ++i) b[i] = a[i] + a[(i + 1) % a.size()];
    });
    pool.parallel_for(a.size(), 61, [&](std::size_t begin, std::size_t end, std::size_t) {
      for (std::size_t i = begin; i < end; ++i) a[i] = b[i] % 1000003u;
    });
  }
  // The same computation on one thread.
  std::vector<std::uint64_t> ra(10000, 1), rb(10000, 0);
  for (int round = 0; round < 2000; ++round) {
    for (std::size_t i = 0; i < ra.size(); ++i) rb[i] = ra[i] + ra[(i + 1) % ra.size()];
    for (std::size_t i = 0; i < ra.size(); ++i) ra[i] = rb[i] % 1000003u;
  }
  CHECK(a == ra);
}

TEST_CASE("pools start and stop cleanly, also unused, and clamp absurd sizes") {
  for (int k = 0; k < 20; ++k) {
    WorkerPool pool(static_cast<std::size_t>(k % 4) + 1);
    if (k % 2 == 0) {
      std::atomic<int> sum{0};
      pool.parallel_for(100, 10, [&](std::size_t begin, std::size_t end, std::size_t) {
        sum.fetch_add(static_cast<int>(end - begin));
      });
      CHECK(sum.load() == 100);
    }
  }
  WorkerPool big(1000000);
  CHECK(big.threads() == WorkerPool::kMaxThreads);
}
