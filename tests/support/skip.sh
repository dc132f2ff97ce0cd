# shellcheck shell=sh
# Sourced by shell tests: skip_test REASON, the rule of skip.hpp. Prints "SKIPPED: REASON" and
# exits 77 (ctest SKIP_RETURN_CODE), or with SWARMFIELD_REQUIRE_ALL=1 (CI) prints
# "FAILED: could not run: REASON" and exits 1: a run that must run everything cannot go green
# on a test that did not run.
skip_test() {
  if [ "${SWARMFIELD_REQUIRE_ALL:-0}" = 1 ]; then
    echo "FAILED: could not run: $* (SWARMFIELD_REQUIRE_ALL=1: a test that cannot run fails)"
    exit 1
  fi
  echo "SKIPPED: $*"
  exit 77
}
