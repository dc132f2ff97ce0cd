#pragma once
// A software prefetch the compiler keeps.
//
// GCC 12 (Debian 12's) drops a call to an inline function whose only effects are
// __builtin_prefetch: its IPA mod/ref analysis finds no side effect and dead-code elimination
// removes the call before inlining (checked: SectorFields::prefetch compiled to a bare `ret`,
// and with -fno-ipa-modref the prefetches came back). An asm volatile statement always stays.

namespace swarmfield::sim {

/// Starts loading the cache line holding `p` into every cache level (prefetcht0 on x86-64,
/// __builtin_prefetch elsewhere). Never faults, whatever `p` is; no effect on any result.
inline void prefetch_line(const void* p) noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  asm volatile("prefetcht0 (%0)" : : "r"(p));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace swarmfield::sim
