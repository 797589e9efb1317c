#!/usr/bin/env bash
# Acknowledged writes over HTTP as one store grows (BENCHMARKS.md, "Acknowledged writes as a
# store grows"): one `earshot serve` (the embedded default, sled in a fresh temporary directory,
# release build, one admin bearer token), one store grown through `POST /items` to each size of
# BENCH_WRITE_SIZES in turn; at each size, BENCH_RUNS runs of BENCH_DURATION seconds for every
# client count of BENCH_CLIENTS (alternated), each a new item per request
# (`scripts/bench/write.lua`, every answer must be 201), with wrk's p50 and p99 latency, the
# writes per second and the writes per durable commit (group commit's batch size, from the
# store's `earshot_writer_batch_size` histogram in `/metrics` before and after the run).
#
# The growing itself is the public write path at 16 clients: its time to each size is printed
# (set beside the in-process writer's in BENCHMARKS.md; the last round of each growth idles
# until its duration ends, so the time is an upper bound). The measured runs grow the store
# too, so each line names the store's size when the run began.
#
# Usage: cargo build --release -p earshot && scripts/bench-http-writes.sh
# Environment: BENCH_WRITE_SIZES (1000,100000,1000000), BENCH_CLIENTS ("1 16"), BENCH_DURATION
# seconds per run (5), BENCH_RUNS (3), BENCH_PORT (7951), EARSHOT_BIN (target/release/earshot),
# SERVER_LOG (info). Needs wrk (installed with apt-get when missing and possible), curl.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
sizes="${BENCH_WRITE_SIZES:-1000,100000,1000000}"
clients="${BENCH_CLIENTS:-1 16}"
duration="${BENCH_DURATION:-5}"
runs="${BENCH_RUNS:-3}"
port="${BENCH_PORT:-7951}"
bin="${EARSHOT_BIN:-$root/target/release/earshot}"
out="$root/target/bench-http-writes-results"
write_lua="$root/scripts/bench/write.lua"
url="http://127.0.0.1:$port"
token="bench-http-admin-token-0123456789"

die() { echo "bench-http-writes: $*" >&2; exit 1; }
tools="wrk curl"
# shellcheck source=scripts/bench/serve.sh
source "$root/scripts/bench/serve.sh"
results="$out/results.txt"
echo "machine at start: $(load)" >"$results"
api() { curl -sf -o /dev/null -H "authorization: Bearer $token" -H 'content-type: application/json' "$url$1" -d "$2"; }
api /v1/stores '{"id":"wbench"}'
api /v1/stores/wbench/participants '{"id":"own","kind":"agent"}'

# Items in the store so far: every 201 wrk counted (a run that stops at a limit may leave a
# request or two in flight, so the count is a floor).
items=0
tag=0
# One wrk run of write.lua; fails on any answer but 201 or a socket error. Adds the 201s to
# `items`. $1 label, then wrk's arguments before the URL, then `--` and write.lua's extra
# arguments (the per-thread limit).
write_run() {
  local label="$1" log n
  shift
  local args=() extra=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do args+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  extra=("$@")
  tag=$((tag + 1))
  log="$out/$label.txt"
  wrk "${args[@]}" --timeout 10s -s "$write_lua" "$url" -- wbench "g$tag" "$token" "${extra[@]}" >"$log" 2>&1 \
    || die "wrk failed: $log"
  grep -q "CHECKED [0-9]* answers, 0 wrong" "$log" || die "$label: answers other than 201 (see $log)"
  if grep -q "Non-2xx\|Socket errors" "$log"; then die "$label: errors (see $log)"; fi
  n="$(awk '/^CHECKED/ { print $2 }' "$log")"
  items=$((items + n))
}

# The store's group-commit totals from /metrics: "<writes> <commits>".
batch_totals() {
  curl -sf -H "authorization: Bearer $token" "$url/metrics" | awk '
    /^earshot_writer_batch_size_sum\{.*store="wbench"/ { s = $NF }
    /^earshot_writer_batch_size_count\{.*store="wbench"/ { c = $NF }
    END { printf "%d %d\n", s, c }'
}

# wrk's latency percentile ($2: 50 or 99) in µs, from its --latency table.
percentile_us() {
  awk -v p="$2%" '$1 == p {
    v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
    f = (u == "us") ? 1 : (u == "ms") ? 1000 : (u == "s") ? 1000000 : 0
    printf "%.0f", v * f
  }' "$1"
}

printf '%-9s %-8s %12s %10s %10s %10s   %s\n' "size" "clients" "writes/s" "p50 us" "p99 us" "per commit" \
  "store at the run's start" | tee -a "$results"
for size in ${sizes//,/ }; do
  if ((items < size)); then
    start="$(date +%s.%N)"
    from=$items
    # In rounds of at most 60 s (wrk runs to its duration even when its threads stop at their
    # limit): two threads, each stopping after its half of what is missing, for about the time
    # that takes at the rate seen so far (2,000 writes/s at first).
    rate=2000
    round=0
    while ((items < size)); do
      round=$((round + 1))
      missing=$((size - items))
      secs=$(((missing * 12 / 10) / rate + 1))
      ((secs > 60)) && secs=60
      was=$items
      t0="$(date +%s.%N)"
      write_run "grow-$size-$round" -t2 -c16 -d"${secs}s" -- $(((missing + 1) / 2))
      rate="$(awk -v n=$((items - was)) -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { r = n / (e - s); print (r < 100) ? 100 : int(r) }')"
    done
    took="$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')"
    echo "== grown from $from to $items items in $took s ($(awk -v n=$((items - from)) -v t="$took" 'BEGIN { printf "%.0f", n / t }') writes/s, 16 clients); $(load)" | tee -a "$results"
  fi
  for r in $(seq 1 "$runs"); do
    for c in $clients; do
      t=2
      ((c < 2)) && t=1
      before=$items
      read -r writes0 commits0 < <(batch_totals)
      write_run "size$size-c$c-r$r" -t"$t" -c"$c" -d"${duration}s" --latency
      log="$out/size$size-c$c-r$r.txt"
      rate="$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log")"
      read -r writes1 commits1 < <(batch_totals)
      per_commit="$(awk -v w=$((writes1 - writes0)) -v c=$((commits1 - commits0)) 'BEGIN { printf "%.1f", (c > 0) ? w / c : 0 }')"
      printf '%-9s %-8s %12s %10s %10s %10s   %s\n' "$size" "$c" "$rate" "$(percentile_us "$log" 50)" \
        "$(percentile_us "$log" 99)" "$per_commit" "$before" | tee -a "$results"
    done
  done
done
echo "machine at end: $(load)" | tee -a "$results"
echo "== results in $results (wrk's output per run beside it)"
