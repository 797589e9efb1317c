#!/usr/bin/env bash
# Benchmark of one `earshot serve` over HTTP on loopback (BENCHMARKS.md, "Over HTTP: checks
# next to `/healthz`, and writes"):
#
#  1. checks per second on a store of BENCH_ITEMS items next to GET /healthz on the same server
#     and load (what HTTP alone costs): `wrk -t2 -c16`, the two interleaved run by run, median
#     of BENCH_RUNS each; `scripts/bench/check.lua` verifies every answer (status and the
#     expected `admitted`), `scripts/bench/healthz.lua` every health answer;
#  2. durable writes over HTTP with BENCH_CONNECTIONS clients (`scripts/bench/write.lua`, every
#     answer must be 201), to set beside the in-process figure;
#  3. for every run, the CPU each side spent per request, in total and as user + system time:
#     the server's (from /proc/<pid>/stat over the run) and wrk's (its own rusage), in the
#     results' last table.
#
# The server is the embedded default (sled in a fresh temporary directory), release build, with
# one admin bearer token (the auth gate runs as in production); logs at the default `info`
# (one line per request) go to a file. SERVER_LOG sets the server's RUST_LOG instead
# (`info,earshot::request=warn` drops the request lines and keeps the rest).
#
# With BENCH_SHAPE=1 each run also sends /healthz with a check's request (its headers and JSON
# body, `scripts/bench/healthz-shaped.lua`) between the two: what receiving a check's request
# costs without deciding or answering it.
#
# Usage: cargo build --release -p earshot && scripts/bench-http.sh
# Environment: BENCH_ITEMS (30000), BENCH_DURATION seconds per run (8), BENCH_RUNS (3),
# BENCH_CONNECTIONS (16), BENCH_PORT (7950), EARSHOT_BIN (target/release/earshot), BENCH_WRITES
# (1; 0 skips the write runs), BENCH_SHAPE (0; 1 adds the shaped /healthz), SERVER_LOG (info).
# Needs wrk (installed with apt-get when missing and possible), curl, python3 and GNU time.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
items="${BENCH_ITEMS:-30000}"
duration="${BENCH_DURATION:-8}"
runs="${BENCH_RUNS:-3}"
conns="${BENCH_CONNECTIONS:-16}"
port="${BENCH_PORT:-7950}"
bin="${EARSHOT_BIN:-$root/target/release/earshot}"
out="$root/target/bench-http-results"
bench="$root/scripts/bench"
url="http://127.0.0.1:$port"
token="bench-http-admin-token-0123456789"

die() { echo "bench-http: $*" >&2; exit 1; }
tools="wrk curl python3 /usr/bin/time"
# shellcheck source=scripts/bench/serve.sh
source "$root/scripts/bench/serve.sh"
echo "machine at start: $(load)" >"$out/results.txt"

echo "== setup: $items items in store \`one\` (50 participants; a tenth public)"
python3 "$bench/setup.py" --url "$url" --token "$token" --stores one --items "$items" --out "$out/one.lua"

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# The server's CPU time so far, in clock ticks: user and system (/proc/<pid>/stat).
ticks="$(getconf CLK_TCK)"
server_cpu() { awk '{ print $14, $15 }' "/proc/$pid/stat"; }

# One wrk run; fails on any wrong answer, non-2xx or socket error. Prints requests/s, and
# appends the CPU each side spent per request, user + system (the server's from /proc, wrk's
# from its rusage), to $out/cpu.txt. $1 label, $2 run number, then wrk's arguments.
run() {
  local label="$1" r="$2" log u0 s0 u1 s1
  shift 2
  log="$out/$label.$r.txt"
  read -r u0 s0 <<<"$(server_cpu)"
  /usr/bin/time -f "%U %S" -o "$out/time.txt" wrk -t2 -c"$conns" -d"${duration}s" --timeout 10s "$@" >"$log" 2>&1 \
    || die "wrk failed: $log"
  read -r u1 s1 <<<"$(server_cpu)"
  grep -q "CHECKED [0-9]* answers, 0 wrong" "$log" || die "$label: wrong answers (see $log)"
  if grep -q "Non-2xx\|Socket errors" "$log"; then die "$label: errors (see $log)"; fi
  read -r user sys <"$out/time.txt"
  awk -v k="$label" -v r="$r" -v su="$((u1 - u0))" -v ss="$((s1 - s0))" -v hz="$ticks" -v u="$user" -v s="$sys" '
    /requests in/ { n = $1 }
    END {
      us = 1e6 / n
      printf "run %s %-8s server %6.2f us/request (%5.2f + %5.2f), wrk %6.2f us/request (%5.2f + %5.2f)\n", \
        r, k, (su + ss) / hz * us, su / hz * us, ss / hz * us, (u + s) * us, u * us, s * us
    }
  ' "$log" >>"$out/cpu.txt"
  awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log"
}

echo "== checks next to /healthz (wrk -t2 -c$conns, ${duration} s per run, $runs runs each, interleaved)"
health=() checks=() ratios=() shaped=() shaped_ratios=()
for r in $(seq 1 "$runs"); do
  h="$(run healthz "$r" -s "$bench/healthz.lua" "$url")"
  if [[ "${BENCH_SHAPE:-0}" == 1 ]]; then
    s="$(run shaped "$r" -s "$bench/healthz-shaped.lua" "$url" -- "$out/one.lua" "$token")"
    shaped+=("$s")
    shaped_ratios+=("$(awk -v s="$s" -v h="$h" 'BEGIN { printf "%.1f", 100 * s / h }')")
    echo "   run $r: healthz with a check's request $s/s (${shaped_ratios[-1]}%)"
  fi
  c="$(run check "$r" -s "$bench/check.lua" "$url" -- "$out/one.lua" "$token")"
  health+=("$h") checks+=("$c")
  ratios+=("$(awk -v c="$c" -v h="$h" 'BEGIN { printf "%.1f", 100 * c / h }')")
  echo "   run $r: healthz $h/s, check $c/s (${ratios[-1]}%); $(load)"
done

writes=()
if [[ "${BENCH_WRITES:-1}" != 0 ]]; then
  echo "== durable writes over HTTP (wrk -t2 -c$conns, write.lua, ${duration} s x $runs)"
  curl -sf -o /dev/null -H "authorization: Bearer $token" -H 'content-type: application/json' \
    "$url/v1/stores" -d '{"id":"wbench"}'
  curl -sf -o /dev/null -H "authorization: Bearer $token" -H 'content-type: application/json' \
    "$url/v1/stores/wbench/participants" -d '{"id":"own","kind":"agent"}'
  for r in $(seq 1 "$runs"); do
    w="$(run write "$r" -s "$bench/write.lua" "$url" -- wbench "r$r$RANDOM" "$token")"
    writes+=("$w")
    echo "   run $r: $w writes/s"
  done
fi

hm="$(printf '%s\n' "${health[@]}" | median)"
cm="$(printf '%s\n' "${checks[@]}" | median)"
rm_="$(printf '%s\n' "${ratios[@]}" | median)"
{
  echo "machine at end: $(load)"
  printf '%-34s %10s   %s\n' "" "median" "runs"
  printf '%-34s %8s/s   %s\n' "GET /healthz" "$hm" "${health[*]}"
  printf '%-34s %8s/s   %s\n' "POST check ($items items)" "$cm" "${checks[*]}"
  printf '%-34s %9s%%   %s\n' "check / healthz, per run" "$rm_" "${ratios[*]}"
  if [[ ${#shaped[@]} -gt 0 ]]; then
    printf '%-34s %8s/s   %s\n' "GET /healthz, a check's request" "$(printf '%s\n' "${shaped[@]}" | median)" "${shaped[*]}"
    printf '%-34s %9s%%   %s\n' "shaped / healthz, per run" "$(printf '%s\n' "${shaped_ratios[@]}" | median)" "${shaped_ratios[*]}"
  fi
  if [[ ${#writes[@]} -gt 0 ]]; then
    printf '%-34s %8s/s   %s\n' "durable writes, $conns clients" "$(printf '%s\n' "${writes[@]}" | median)" "${writes[*]}"
  fi
} >>"$out/results.txt"
echo "== results (also in $out/results.txt; wrk's output per run beside it)"
{
  echo "CPU per request, by run (user + system):"
  cat "$out/cpu.txt"
} >>"$out/results.txt"
cat "$out/results.txt"
