#pragma once
// Transparent huge pages for the big per-cell arrays of big maps.
//
// On an 8192 x 8192 map the map's costs, the swarm's open-cell table, the clearance and the
// sector fields' directions are 64 MiB each, and the swarm step reads them at scattered cells
// (one agent every few hundred cells along a row of the spatial hash): with 4 KiB pages nearly
// every read misses the TLB as well as the cache, and a prefetch does not hide a page walk
// under a virtual machine. Backed by 2 MiB pages the same arrays take ~32 TLB entries each:
// the World tick's swarm phase on Boston_0_1024 tiled 8 x 8 took 11% less CPU time (bench
// world/tick, glibc's process-wide equivalent, medians of 5 alternating runs).
//
// Linux only asks: with /sys/kernel/mm/transparent_hugepage/enabled at "madvise" (Debian's
// default) an advised range gets huge pages on its first touch; at "always" it gets them
// anyway, at "never" or elsewhere nothing changes. Memory stays the same to within a page per
// array (only whole 2 MiB pages inside an array are advised), so arrays below
// kHugePageMinBytes are left alone: a 1024 x 1024 map's arrays (1 MiB) never ask.
#include <cstddef>
#include <vector>

namespace swarmfield::sim {

/// Arrays of at least this many bytes ask for huge pages (4 huge pages: below that the TLB
/// holds a small array's pages anyway).
inline constexpr std::size_t kHugePageMinBytes = std::size_t{8} << 20;

/// madvise(MADV_HUGEPAGE) over the whole 2 MiB pages inside [data, data + bytes). Returns true
/// when the kernel took the advice; false when the range holds no whole huge page, on systems
/// without transparent huge pages, or on error (nothing changes then: the advice is only a hint).
bool advise_huge_pages(const void* data, std::size_t bytes) noexcept;

/// v.assign(n, value), with the storage advised for huge pages before it is first touched when
/// it is at least kHugePageMinBytes (fresh storage when v's capacity is short; v's own
/// otherwise, advised again: pages already touched stay as they are until the kernel's
/// khugepaged merges them). Same contents and size as v.assign(n, value) in every case.
template <class T>
void assign_huge(std::vector<T>& v, std::size_t n, const T& value) {
  if (n * sizeof(T) < kHugePageMinBytes) {
    v.assign(n, value);
    return;
  }
  if (v.capacity() < n) {
    std::vector<T> fresh;
    fresh.reserve(n);
    advise_huge_pages(fresh.data(), n * sizeof(T));
    v.swap(fresh);
  } else {
    advise_huge_pages(v.data(), v.capacity() * sizeof(T));
  }
  v.assign(n, value);
}

/// Moves v's contents into storage advised for huge pages when it is at least
/// kHugePageMinBytes (one copy), for arrays that arrive filled (a parsed map). Same contents.
template <class T>
void move_to_huge_pages(std::vector<T>& v) {
  if (v.size() * sizeof(T) < kHugePageMinBytes) return;
  std::vector<T> fresh;
  fresh.reserve(v.size());
  advise_huge_pages(fresh.data(), v.size() * sizeof(T));
  fresh.assign(v.begin(), v.end());
  v.swap(fresh);
}

}  // namespace swarmfield::sim
