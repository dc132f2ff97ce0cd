#!/bin/sh
# One binary on every x86-64 CPU: runs cpu_paths_digest natively and under qemu-x86_64 with CPU
# models that lack AVX-512 (Haswell: AVX2 clones; qemu64: baseline clones; neither runs the
# AVX-512 sweep rows). Each run must exit 0 (no SIGILL, every method equal to the wavefront)
# and print the same digest; under emulation the AVX-512 sweep rows must be off.
# Usage: cpu_paths_test.sh DIGEST_BINARY. Skipped (tests/support/skip.sh) where qemu-x86_64 is
# missing or the host is not x86-64.
set -u
bin=$1
. "$(dirname "$0")/../../../support/skip.sh"
[ "$(uname -m)" = x86_64 ] || skip_test "not x86-64"
qemu=$(command -v qemu-x86_64 || command -v qemu-x86_64-static || true)
[ -n "$qemu" ] || skip_test "qemu-x86_64 not installed (package qemu-user)"

native=$("$bin") || { echo "native run failed: $native"; exit 1; }
echo "native: $(echo "$native" | tr '\n' ' ')"
want=$(echo "$native" | grep '^digest=')
for cpu in Haswell qemu64; do
  out=$("$qemu" -cpu "$cpu" "$bin"); rc=$?
  echo "qemu -cpu $cpu (exit $rc): $(echo "$out" | tr '\n' ' ')"
  [ $rc -eq 0 ] || { echo "FAIL: exit $rc under -cpu $cpu (132 = SIGILL)"; exit 1; }
  echo "$out" | grep -qx 'sweep_vector=0' || { echo "FAIL: AVX-512 sweep rows selected under -cpu $cpu"; exit 1; }
  [ "$(echo "$out" | grep '^digest=')" = "$want" ] || { echo "FAIL: digest differs under -cpu $cpu"; exit 1; }
done
echo "same fields on every CPU path"
