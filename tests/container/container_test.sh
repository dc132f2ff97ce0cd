#!/usr/bin/env bash
# The image, tested (ctest label `container`; .ci/run runs it with SWARMFIELD_CONTAINER_TEST=1):
# builds docker/Dockerfile with ../shared/tools/container.sh (podman, offline), starts the server
# container (host network, 127.0.0.1 only), connects swarmfield-bot from the host, checks the
# health endpoint (from the host and the image's HEALTHCHECK), stops the container with SIGTERM
# and checks that it exited 0 within 2 s. Prints image_size_mb=, startup_s=, drain_s=.
# Skipped with the reason when it cannot run here (tests/support/skip.sh: exit 77, or a failure
# under SWARMFIELD_REQUIRE_ALL=1, as in CI); never a pass then.
#   container_test.sh SOURCE_DIR BIN_DIR
set -euo pipefail
SRC=$(cd "${1:?source dir}" && pwd)
BIN=$(cd "${2:?bin dir}" && pwd)
TOOL="$SRC/../shared/tools/container.sh"
TAG=localhost/swarmfield-ci:test
NAME=swarmfield-ci-$$
. "$SRC/tests/support/skip.sh"
fail() { echo "FAILED: $*"; exit 1; }

[ "${SWARMFIELD_CONTAINER_TEST:-0}" = 1 ] || skip_test "set SWARMFIELD_CONTAINER_TEST=1 to build and run the image (a few minutes; .ci/run does)"
[ -x "$TOOL" ] || skip_test "no $TOOL (the shared tools beside the checkout)"
[ "$(id -u)" = 0 ] || skip_test "container.sh needs root (podman with runc and cgroupfs)"
podman() { "$TOOL" podman "$@"; }

# Can this machine run a container at all? (installs podman and makes the base image once)
"$TOOL" setup >/tmp/swarmfield-container-setup.log 2>&1 || skip_test "container.sh setup failed: $(tail -3 /tmp/swarmfield-container-setup.log | tr '\n' ' ')"
if ! out=$(podman run --rm --network host localhost/debian:bookworm true 2>&1); then
  skip_test "podman cannot run a container here: $(echo "$out" | tail -2 | tr '\n' ' ')"
fi

cleanup() { podman rm -f "$NAME" >/dev/null 2>&1 || true; [ -n "${KEYDIR:-}" ] && rm -rf "$KEYDIR"; true; }
trap cleanup EXIT

echo "== building the image (docker format, for HEALTHCHECK)"
t_build=$(date +%s)
"$TOOL" build "$SRC" "$TAG" -f docker/Dockerfile --format docker >/tmp/swarmfield-container-build.log 2>&1 \
  || { tail -30 /tmp/swarmfield-container-build.log; fail "image build failed (log: /tmp/swarmfield-container-build.log)"; }
echo "build_s=$(( $(date +%s) - t_build ))"
size=$(podman image inspect --format '{{.Size}}' "$TAG")
echo "image_size_mb=$(( size / 1000000 )) ($size bytes)"
user=$(podman image inspect --format '{{.Config.User}}' "$TAG")
[ "$user" = swarmfield ] || fail "image user is '$user', expected the non-root user swarmfield"
uid=$(podman run --rm --entrypoint id "$TAG" -u)
[ "$uid" = 10001 ] || fail "container runs as uid $uid, expected 10001"
health=$(podman image inspect --format '{{json .Config.Healthcheck}}' "$TAG" 2>/dev/null || true)
case "$health" in *probe*) ;; *) fail "image has no HEALTHCHECK (got '$health')" ;; esac

# Free ports on 127.0.0.1 for the game (TCP + UDP) and the operations endpoints.
read -r GAME HTTP < <(python3 - <<'PY'
import socket
def free():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p
a = free(); b = free()
while b == a: b = free()
print(a, b)
PY
)

echo "== starting the server container (game port $GAME, http $HTTP)"
t_start=$(date +%s.%N)
# Ports through the environment (as an orchestrator sets them; the HEALTHCHECK reads the same
# variable), the rest as flags.
# The image admits invited players only (SWARMFIELD_AUTH=tokens): the backend's key is mounted
# where the image reads it, and the bot gets a token for this server.
KEYDIR=$(mktemp -d)
"$BIN/swarmfield-tool" token --new-key "$KEYDIR/match.key" >/dev/null || fail "swarmfield-tool token --new-key failed"
chmod 0644 "$KEYDIR/match.key"  # the container's user (uid 10001) reads it
"$BIN/swarmfield-tool" token --key-file "$KEYDIR/match.key" --server "127.0.0.1:$GAME" --name container-bot \
  --out "$KEYDIR/bot.tok" || fail "swarmfield-tool token failed"
podman run -d --name "$NAME" --network host -e SWARMFIELD_PORT="$GAME" -e SWARMFIELD_HTTP_PORT="$HTTP" \
  -v "$KEYDIR/match.key:/run/secrets/swarmfield-token-key:ro" \
  -e SWARMFIELD_BIND=127.0.0.1 "$TAG" --city-size 128 --agents 500 >/dev/null 2>/tmp/swarmfield-container-run.log \
  || { cat /tmp/swarmfield-container-run.log; fail "podman run failed"; }
ready=0
for _ in $(seq 1 300); do
  if "$BIN/swarmfield-tool" probe --port "$HTTP" --path /readyz --timeout 1 >/dev/null 2>&1; then ready=1; break; fi
  [ "$(podman inspect --format '{{.State.Running}}' "$NAME")" = true ] || break
  sleep 0.1
done
[ $ready = 1 ] || { podman logs "$NAME" | tail -20; fail "server not ready within 30 s"; }
echo "startup_s=$(python3 -c "import time; print(round(time.time() - $t_start, 2))")"

echo "== bot from the host on 127.0.0.1"
if "$BIN/swarmfield-bot" --host 127.0.0.1 --port "$GAME" --seconds 1 >/tmp/swarmfield-container-bot.log 2>&1 \
  && grep -q "connected=1" /tmp/swarmfield-container-bot.log; then
  fail "a bot without a connect token joined the image's server (it should default to --auth tokens)"
fi
grep -q "connect token" /tmp/swarmfield-container-bot.log || { cat /tmp/swarmfield-container-bot.log; fail "the tokenless bot was not told why"; }
bot_out=$("$BIN/swarmfield-bot" --host 127.0.0.1 --port "$GAME" --seconds 3 --token-file "$KEYDIR/bot.tok" 2>/tmp/swarmfield-container-bot.log) \
  || { tail -5 /tmp/swarmfield-container-bot.log; fail "bot failed"; }
echo "$bot_out" | tail -1
case "$bot_out" in *"connected=1"*) ;; *) fail "bot did not connect: $bot_out" ;; esac
snaps=$(echo "$bot_out" | tail -1 | tr ' ' '\n' | sed -n 's/^snapshots=//p')
[ "${snaps:-0}" -gt 10 ] || fail "bot received ${snaps:-0} snapshots in 3 s"

echo "== health"
"$BIN/swarmfield-tool" probe --port "$HTTP" --path /healthz || fail "/healthz from the host failed"
metrics=$("$BIN/swarmfield-tool" probe --port "$HTTP" --path /metrics) || fail "/metrics failed"
grep -q '^swarmfield_connections_accepted_total 2$' <<<"$metrics" || fail "/metrics does not count the two bots' connections"
podman healthcheck run "$NAME" 2>/dev/null || fail "the image's HEALTHCHECK failed inside the container"

echo "== SIGTERM"
t_stop=$(date +%s.%N)
podman kill --signal TERM "$NAME" >/dev/null
code=$(podman wait "$NAME")
drain=$(python3 -c "print(round($(date +%s.%N) - $t_stop, 3))")
echo "exit_code=$code drain_s=$drain"
# The log read once into a variable: with pipefail, `podman logs | grep -q` fails whenever grep
# exits at its first match before podman has written everything (SIGPIPE), which CI hit.
logs=$(podman logs "$NAME" 2>&1)
printf '%s\n' "$logs" | tail -3
[ "$code" = 0 ] || fail "server exited $code on SIGTERM, expected 0"
python3 -c "import sys; sys.exit(0 if $drain < 2.0 else 1)" || fail "server took ${drain}s to stop, limit 2 s"
grep -q "shutting down (SIGTERM)" <<<"$logs" || fail "no 'shutting down (SIGTERM)' in the log"
grep -q "^ticks=" <<<"$logs" || fail "no summary line on stdout"
echo "container test passed"
