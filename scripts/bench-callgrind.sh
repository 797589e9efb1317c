#!/usr/bin/env bash
# Instructions per request over HTTP, counted by callgrind (BENCHMARKS.md, "Over HTTP: checks
# next to `/healthz`, and writes"): the one measure of the check's extra cost
# over `/healthz` that a busy or uneven guest does not move (throughput and CPU time do, by 2×
# within minutes on the shared 2-vCPU machine).
#
# One `earshot serve` (the embedded default in a fresh temporary directory, one admin token,
# logs at `info` to a file) runs under `valgrind --tool=callgrind`; `scripts/bench/setup.py`
# writes BENCH_ITEMS items; then, per phase, one wrk connection (`wrk -t1 -c1`) warms up for
# 3 s, callgrind's counters are zeroed, wrk runs BENCH_DURATION seconds, the counters are dumped,
# and the phase's instructions are divided by the answers wrk counted (and verified: the same
# Lua scripts as `scripts/bench-http.sh`). Phases: healthz, check, healthz, check.
#
# User-space instructions of the server only: the kernel's loopback work and syscalls are not
# in it (the same count on both routes: strace shows one recvfrom, one writev and one write
# of the log line per request on each). valgrind's CPU has no SHA extensions, so SHA-256 runs
# in software here (about 3.5k instructions for the bearer token's digest on each check) where
# natively it is a few hundred cycles: read hashing's share of a count with that in mind.
#
# Usage: cargo build --release -p earshot && scripts/bench-callgrind.sh
# Environment: EARSHOT_BIN (target/release/earshot), BENCH_ITEMS (2000), BENCH_DURATION (8),
# BENCH_PORT (7971), BENCH_KEEP (a directory: the phases' dumps are copied there, as
# cg.out.1 to cg.out.4 in phase order, for `callgrind_annotate`). Needs valgrind, wrk, curl and
# python3.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${EARSHOT_BIN:-$root/target/release/earshot}"
items="${BENCH_ITEMS:-2000}"
duration="${BENCH_DURATION:-8}"
port="${BENCH_PORT:-7971}"
keep="${BENCH_KEEP:-}"
bench="$root/scripts/bench"
url="http://127.0.0.1:$port"
token="bench-http-admin-token-0123456789"

die() { echo "bench-callgrind: $*" >&2; exit 1; }
for tool in valgrind callgrind_control wrk curl python3; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
[[ -x "$bin" ]] || die "no binary at $bin (cargo build --release -p earshot)"

dir="$(mktemp -d)"
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
cat >"$dir/earshot.toml" <<TOML
bind = "127.0.0.1:$port"
data = "$dir/store"

[[tokens]]
name = "bench"
token = "$token"
scope = "admin"
TOML

# The option set here is what `serve` without `--huge-pages` sets for itself: left unset, the
# server would start itself again with it (`crates/earshot/src/allocator.rs`, an `exec`), and
# the new image would run outside valgrind, where callgrind_control cannot reach it.
MIMALLOC_ARENA_EAGER_COMMIT=0 NO_COLOR=1 RUST_LOG=info valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" \
  "$bin" serve --config "$dir/earshot.toml" >"$dir/server.log" 2>&1 &
pid=$!
# Under valgrind the start takes from seconds to minutes, depending on the guest.
for _ in $(seq 1 600); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz" || true)" == 200 ]] && break
  kill -0 "$pid" 2>/dev/null || die "the server stopped (log: $dir/server.log)"
  sleep 0.5
done
python3 "$bench/setup.py" --url "$url" --token "$token" --stores one --items "$items" --out "$dir/one.lua" >/dev/null

echo "server: $bin, $items items, wrk -t1 -c1, ${duration} s per phase"
for phase in healthz check healthz check; do
  if [[ "$phase" == healthz ]]; then
    args=(-s "$bench/healthz.lua" "$url")
  else
    args=(-s "$bench/check.lua" "$url" -- "$dir/one.lua" "$token")
  fi
  wrk -t1 -c1 -d3s "${args[@]}" >/dev/null 2>&1
  callgrind_control -z "$pid" >/dev/null 2>&1
  wrk -t1 -c1 -d"${duration}s" "${args[@]}" >"$dir/wrk.txt" 2>&1
  callgrind_control -d "$phase" "$pid" >/dev/null 2>&1
  grep -q "CHECKED [0-9]* answers, 0 wrong" "$dir/wrk.txt" || die "$phase: wrong answers: $(cat "$dir/wrk.txt")"
  # The newest dump is this phase's.
  dump="$(ls -t "$dir"/cg.out.* | head -1)"
  ir="$(awk '/^(summary|totals):/ { print $2; exit }' "$dump")"
  n="$(awk '/requests in/ { print $1 }' "$dir/wrk.txt")"
  printf '%-8s %8d answers  %8d instructions per request\n' "$phase" "$n" "$((ir / n))"
  if [[ -n "$keep" ]]; then mkdir -p "$keep" && cp "$dump" "$keep/$(basename "$dump")"; fi
done
