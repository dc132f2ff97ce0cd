#pragma once
// Counting replacements of the global operator new/delete, for tests asserting that a hot path
// allocates nothing once warm. Include from exactly ONE source file of a test executable (the
// replacements are program-wide, which is why such tests are executables of their own).
// Read g_allocations before and after the code under test.
#include <atomic>
#include <cstdlib>
#include <new>

// The replacements pair malloc with free; GCC's -Wmismatched-new-delete cannot tell them from
// the library's operator new once they are inlined (it fires in the sanitizer build) and would
// flag every delete in the including file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
/// Heap allocations made through operator new since the program started.
std::atomic<std::size_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  if (void* p = std::malloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
