#include "skip.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace swarmfield::test {

bool require_all() noexcept {
  const char* v = std::getenv("SWARMFIELD_REQUIRE_ALL");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

void skip_test(std::string_view reason) {
  const std::string text(reason);
  std::fflush(stdout);
  if (require_all()) {
    std::fprintf(stderr, "FAILED: could not run: %s (SWARMFIELD_REQUIRE_ALL=1: a test that cannot run fails)\n",
                 text.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }
  std::printf("SKIPPED: %s\n", text.c_str());
  std::fflush(stdout);
  std::_Exit(kSkipReturnCode);
}

}  // namespace swarmfield::test
