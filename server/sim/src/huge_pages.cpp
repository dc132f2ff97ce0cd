// Transparent huge pages: the advice itself (see huge_pages.hpp).
#include "swarmfield/sim/huge_pages.hpp"

#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace swarmfield::sim {

bool advise_huge_pages(const void* data, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  if (data == nullptr || bytes < kHuge || begin > UINTPTR_MAX - bytes) return false;
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t last = (begin + bytes) & ~(kHuge - 1);
  if (last <= first) return false;
  // NOLINTNEXTLINE(performance-no-int-to-ptr): madvise takes the page-aligned address
  return madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE) == 0;
#else
  (void)data;
  (void)bytes;
  return false;
#endif
}

}  // namespace swarmfield::sim
