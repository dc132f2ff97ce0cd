#pragma once
// A benchmark's shared set-up that may throw (a map file missing, a baseline disagreeing).
#include <benchmark/benchmark.h>

#include <exception>

namespace swarmfield::bench {

/// Calls `setup()` (which returns a reference to the cached set-up) and returns its address,
/// or nullptr after marking `state` skipped with the exception's message.
template <class Setup>
auto setup_or_skip(benchmark::State& state, Setup&& setup) -> decltype(&setup()) {
  try {
    return &setup();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return nullptr;
  }
}

}  // namespace swarmfield::bench
