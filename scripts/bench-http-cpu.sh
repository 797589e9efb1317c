#!/usr/bin/env bash
# CPU per request over HTTP, server and load generator apart (BENCHMARKS.md, "Over HTTP: where a
# check's extra cost goes, counted per request"): one `earshot serve` on the embedded default
# with BENCH_ITEMS items (as scripts/bench-http.sh sets it up), then BENCH_RUNS pairs of
# `wrk -t2 -c16` runs, `/healthz` then checks (every answer verified), each BENCH_DURATION
# seconds. For each run: requests/s, the server's CPU per request (user + system time from
# /proc/<pid>/stat over the run) and wrk's (from its own rusage).
#
# Usage: cargo build --release -p earshot && scripts/bench-http-cpu.sh
# Environment: BENCH_ITEMS (30000), BENCH_DURATION (6), BENCH_RUNS (3), BENCH_PORT (7951),
# EARSHOT_BIN (target/release/earshot), SERVER_LOG (the server's RUST_LOG, default `info`;
# `info,earshot::request=warn` drops the request lines). Needs wrk, curl, python3, GNU time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
items="${BENCH_ITEMS:-30000}"
duration="${BENCH_DURATION:-6}"
runs="${BENCH_RUNS:-3}"
port="${BENCH_PORT:-7951}"
bin="${EARSHOT_BIN:-$root/target/release/earshot}"
bench="$root/scripts/bench"
url="http://127.0.0.1:$port"
token="bench-http-admin-token-0123456789"

die() { echo "bench-http-cpu: $*" >&2; exit 1; }
for tool in wrk curl python3 /usr/bin/time; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
[[ -x "$bin" ]] || die "no binary at $bin (cargo build --release -p earshot)"

data="$(mktemp -d)"
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT
cat >"$data/earshot.toml" <<TOML
bind = "127.0.0.1:$port"
data = "$data/store"

[[tokens]]
name = "bench"
token = "$token"
scope = "admin"
TOML

NO_COLOR=1 RUST_LOG="${SERVER_LOG:-info}" "$bin" serve --config "$data/earshot.toml" >"$data/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz" || true)" == 200 ]] && break
  kill -0 "$pid" 2>/dev/null || die "the server stopped (see $data/server.log)"
  sleep 0.1
done
python3 "$bench/setup.py" --url "$url" --token "$token" --stores one --items "$items" --out "$data/one.lua" >/dev/null

ticks="$(getconf CLK_TCK)"
cpu() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
echo "server RUST_LOG=${SERVER_LOG:-info}, $items items, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$runs"); do
  for kind in healthz check; do
    if [[ $kind == healthz ]]; then
      args=(-s "$bench/healthz.lua" "$url")
    else
      args=(-s "$bench/check.lua" "$url" -- "$data/one.lua" "$token")
    fi
    before="$(cpu)"
    /usr/bin/time -f "%U %S" -o "$data/time.txt" wrk -t2 -c16 -d"${duration}s" "${args[@]}" >"$data/wrk.txt" 2>&1
    after="$(cpu)"
    grep -q "CHECKED [0-9]* answers, 0 wrong" "$data/wrk.txt" || die "$kind: wrong answers: $(cat "$data/wrk.txt")"
    read -r user sys <"$data/time.txt"
    awk -v k="$kind" -v r="$r" -v d="$((after - before))" -v hz="$ticks" -v u="$user" -v s="$sys" '
      /requests in/ { n = $1 }
      /^Requests\/sec:/ { rps = $2 }
      END { printf "run %s %-8s %8.0f/s   server %6.2f us/request   wrk %6.2f us/request\n", r, k, rps, d / hz * 1e6 / n, (u + s) * 1e6 / n }
    ' "$data/wrk.txt"
  done
done
