#pragma once
// The one way a test program says it cannot run here (no display tool, no emulator, a kernel
// feature missing). ctest reports exit code 77 as skipped (SKIP_RETURN_CODE, which
// swarmfield_add_test sets on every test), never as passed. A run that must run everything
// (CI: .ci/run sets SWARMFIELD_REQUIRE_ALL=1) gets a failure instead, so it cannot go green on a
// test that did not run. Shell tests use the same rule from skip.sh.

#include <string_view>

namespace swarmfield::test {

/// Exit code ctest reads as "skipped".
inline constexpr int kSkipReturnCode = 77;

/// True when SWARMFIELD_REQUIRE_ALL=1 is set: a test that cannot run must fail.
[[nodiscard]] bool require_all() noexcept;

/// Ends the program: prints "SKIPPED: <reason>" and exits kSkipReturnCode, or with
/// SWARMFIELD_REQUIRE_ALL=1 prints "FAILED: could not run: <reason>" and exits 1. Call it
/// before any check, from a program (or a ctest entry of a doctest filter) that holds only
/// what cannot run: everything else in the program would go unrun too.
[[noreturn]] void skip_test(std::string_view reason);

}  // namespace swarmfield::test
