// Transparent huge pages for big per-cell arrays: the helpers keep contents and sizes exactly,
// leave small arrays alone, and (where the kernel offers THP) big arrays do get huge pages.
#include "swarmfield/sim/huge_pages.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "skip.hpp"

using namespace swarmfield::sim;

namespace {

/// AnonHugePages of this process (kB), or -1 when /proc does not say.
long anon_huge_kb() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

/// The kernel's THP mode ("always", "madvise", "never"), or "" when unknown.
std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string all;
  std::getline(in, all);
  const auto open = all.find('['), close = all.find(']');
  return open != std::string::npos && close != std::string::npos && close > open ? all.substr(open + 1, close - open - 1)
                                                                                 : std::string{};
}

}  // namespace

TEST_CASE("huge pages: assign_huge gives v.assign's contents and size, small and big, fresh and reused") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, kHugePageMinBytes / 4 - 1,
                              kHugePageMinBytes / 4, kHugePageMinBytes / 4 * 3 + 5}) {
    std::vector<std::uint32_t> v(3, 7u);
    assign_huge(v, n, 0xA5A5A5A5u);
    REQUIRE(v.size() == n);
    CHECK(std::count(v.begin(), v.end(), 0xA5A5A5A5u) == static_cast<std::ptrdiff_t>(n));
    // Reused storage (capacity already there), another value.
    assign_huge(v, n / 2, 3u);
    REQUIRE(v.size() == n / 2);
    CHECK(std::count(v.begin(), v.end(), 3u) == static_cast<std::ptrdiff_t>(n / 2));
  }
}

TEST_CASE("huge pages: move_to_huge_pages keeps every element, small arrays stay where they are") {
  std::vector<std::uint8_t> small(1000);
  std::iota(small.begin(), small.end(), std::uint8_t{0});
  const std::uint8_t* before = small.data();
  move_to_huge_pages(small);
  CHECK(small.data() == before);  // below kHugePageMinBytes: untouched
  std::vector<std::uint8_t> big(kHugePageMinBytes + 12345);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 131 + 7);
  const std::vector<std::uint8_t> copy = big;
  move_to_huge_pages(big);
  CHECK(big == copy);
}

TEST_CASE("huge pages: advise_huge_pages refuses ranges without a whole huge page") {
  CHECK_FALSE(advise_huge_pages(nullptr, std::size_t{64} << 20));
  std::vector<std::uint8_t> small(std::size_t{1} << 20);
  CHECK_FALSE(advise_huge_pages(small.data(), small.size()));
}

TEST_CASE("huge pages: a big array gets huge pages where the kernel offers them (madvise or always)") {
  // Run as a ctest entry of its own (huge_pages_thp_test): where the kernel offers no THP there
  // is nothing to check, and it reports itself skipped.
  const std::string mode = thp_mode();
  const long before = anon_huge_kb();
  if ((mode != "madvise" && mode != "always") || before < 0) {
    swarmfield::test::skip_test("transparent huge pages not offered here (mode '" + mode + "')");
  }
  std::vector<std::uint8_t> v;
  assign_huge(v, std::size_t{32} << 20, std::uint8_t{1});
  const long after = anon_huge_kb();
  MESSAGE("AnonHugePages " << before << " -> " << after << " kB for a 32 MiB array (THP mode " << mode << ")");
  // At least one 2 MiB page (the kernel may fall short of all 15-16 when memory is fragmented).
  CHECK(after - before >= 2048);
}
