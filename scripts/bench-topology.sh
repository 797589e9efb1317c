#!/usr/bin/env bash
# Benchmark of the loopback topology (BENCHMARKS.md, "Several replicas behind HAProxy"):
#
#  1. checks per second through HAProxy with 1, 2 and 3 replicas, next to one replica without
#     HAProxy, and next to GET /healthz on the same path (what HTTP alone costs); wrk with a
#     Lua script that verifies every answer (status 200 and the expected `admitted`). Two
#     workloads: one store of BENCH_ITEMS items (HAProxy sends a store to one replica, so this
#     is one replica's work whatever N is), and six stores of BENCH_ITEMS/6 items each (spread
#     over the replicas by the hash);
#  2. durable writes over HTTP, PostgreSQL next to sled: p50 latency with 1 client, and
#     throughput with 16 clients.
#
# Usage: cargo build --release -p earshot && scripts/bench-topology.sh
# Environment: BENCH_ITEMS (30000), BENCH_DURATION seconds per run (8), BENCH_RUNS (3; the
# median is reported), BENCH_CONNECTIONS (16), BENCH_PORT (7900; uses the next 30 ports),
# BENCH_ONLY (`writes`: part 2 alone),
# EARSHOT_BIN (target/release/earshot), TOPOLOGY_PG (as scripts/topology.sh).
# Needs wrk, haproxy, curl, python3 and a PostgreSQL; tables `bench_topo_*` are dropped first.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
items="${BENCH_ITEMS:-30000}"
duration="${BENCH_DURATION:-8}"
runs="${BENCH_RUNS:-3}"
conns="${BENCH_CONNECTIONS:-16}"
port="${BENCH_PORT:-7900}"
export EARSHOT_BIN="${EARSHOT_BIN:-$root/target/release/earshot}"
export TOPOLOGY_DIR="$root/target/bench-topology"
export TOPOLOGY_PREFIX=bench_topo_
export TOPOLOGY_PORT="$port"
out="$root/target/bench-topology-results"
bench="$root/scripts/bench"

die() { echo "bench-topology: $*" >&2; exit 1; }
for tool in wrk haproxy curl python3; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
[[ -x "$EARSHOT_BIN" ]] || die "no binary at $EARSHOT_BIN (cargo build --release -p earshot)"
topo() { "$root/scripts/topology.sh" "$@"; }
sled_pid=""
cleanup() {
  topo down >/dev/null 2>&1 || true
  if [[ -n "$sled_pid" ]]; then kill "$sled_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT
mkdir -p "$out"
: >"$out/results.txt"
# The machine's cores and load: figures from a shared machine mean little without them.
load() { echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
echo "machine at start: $(load)" >>"$out/results.txt"

# One line of results: name, median requests/s over the runs, and the runs.
record() { echo "$*" | tee -a "$out/results.txt"; }

# Runs wrk $runs times; fails if any answer was wrong. Prints "median  all-runs".
# $1 label, $2 url, then wrk's arguments (script, -- args).
measure() {
  local label="$1" url="$2"
  shift 2
  local rates=() r log
  for r in $(seq 1 "$runs"); do
    log="$out/$label.$r.txt"
    wrk -t2 -c"$conns" -d"${duration}s" --timeout 10s "$@" >"$log" 2>&1 || die "wrk failed: $log"
    grep -q "CHECKED [0-9]* answers, 0 wrong" "$log" || die "$label: wrong answers (see $log)"
    if grep -q "Non-2xx\|Socket errors" "$log"; then die "$label: errors (see $log)"; fi
    rates+=("$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log")")
  done
  local median
  median="$(printf '%s\n' "${rates[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
  record "$(printf '%-40s %8s /s   runs: %s' "$label" "$median" "${rates[*]}")"
}

topo down --drop >/dev/null 2>&1 || true
if [[ "${BENCH_ONLY:-}" != writes ]]; then
echo "== setup: ${items} items in one store, and ${items} over six stores (through HAProxy, 1 replica)"
topo up --replicas 1 >/dev/null
# shellcheck disable=SC1091
. "$TOPOLOGY_DIR/topology.env"
python3 "$bench/setup.py" --url "$EARSHOT_URL" --token "$EARSHOT_TOKEN" --stores one --items "$items" --out "$out/one.lua"
python3 "$bench/setup.py" --url "$EARSHOT_URL" --token "$EARSHOT_TOKEN" --stores m0,m1,m2,m3,m4,m5 \
  --items $((items / 6)) --out "$out/many.lua" --seed 8
topo down >/dev/null

echo "== checks per second (wrk -t2 -c$conns, ${duration} s x $runs runs, median)"
for n in 1 2 3; do
  started=$(date +%s.%N)
  topo up --replicas "$n" >/dev/null
  echo "   $n replica(s) up (each loading every store from PostgreSQL) in $(echo "$(date +%s.%N) - $started" | bc) s"
  # shellcheck disable=SC1091
  . "$TOPOLOGY_DIR/topology.env"
  if [[ "$n" == 1 ]]; then
    measure "direct-1-replica.check-one-store" "$EARSHOT_REPLICA_1_URL" -s "$bench/check.lua" "$EARSHOT_REPLICA_1_URL" -- "$out/one.lua" "$EARSHOT_TOKEN"
    measure "direct-1-replica.check-six-stores" "$EARSHOT_REPLICA_1_URL" -s "$bench/check.lua" "$EARSHOT_REPLICA_1_URL" -- "$out/many.lua" "$EARSHOT_TOKEN"
    measure "direct-1-replica.healthz" "$EARSHOT_REPLICA_1_URL" -s "$bench/healthz.lua" "$EARSHOT_REPLICA_1_URL"
  fi
  measure "haproxy-$n-replicas.check-one-store" "$EARSHOT_URL" -s "$bench/check.lua" "$EARSHOT_URL" -- "$out/one.lua" "$EARSHOT_TOKEN"
  measure "haproxy-$n-replicas.check-six-stores" "$EARSHOT_URL" -s "$bench/check.lua" "$EARSHOT_URL" -- "$out/many.lua" "$EARSHOT_TOKEN"
  measure "haproxy-$n-replicas.healthz" "$EARSHOT_URL" -s "$bench/healthz.lua" "$EARSHOT_URL"
  # Where HAProxy put the six stores (the hash decides; with N replicas).
  for s in m0 m1 m2 m3 m4 m5; do
    curl -s -o /dev/null -D - -H "authorization: Bearer $EARSHOT_TOKEN" "$EARSHOT_URL/v1/stores/$s" | tr -d '\r' |
      awk -v s="$s" 'tolower($1) == "x-earshot-replica:" { printf "%s->%s ", s, $2 }'
  done | sed 's/^/   stores: /'
  echo
  topo down >/dev/null
done
fi

echo "== durable writes over HTTP: PostgreSQL (one replica, no HAProxy) next to sled"
# Latency: one client, one write at a time. Throughput: $conns clients (group commit).
write_bench() {
  local label="$1" url="$2" token="$3" store="$4" r log p50s=() rates=()
  for r in $(seq 1 "$runs"); do
    log="$out/$label.c1.$r.txt"
    wrk -t1 -c1 -d"${duration}s" --latency -s "$bench/write.lua" "$url" -- "$store" "c1r$r$RANDOM" "$token" >"$log" 2>&1
    grep -q "CHECKED [0-9]* answers, 0 wrong" "$log" || die "$label: failed writes (see $log)"
    p50s+=("$(awk '$1 == "50%" { print $2 }' "$log")")
    log="$out/$label.c$conns.$r.txt"
    wrk -t2 -c"$conns" -d"${duration}s" -s "$bench/write.lua" "$url" -- "$store" "c${conns}r$r$RANDOM" "$token" >"$log" 2>&1
    grep -q "CHECKED [0-9]* answers, 0 wrong" "$log" || die "$label: failed writes (see $log)"
    rates+=("$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$log")")
  done
  record "$(printf '%-40s p50 %s (runs: %s)' "$label.write-1-client" "$(printf '%s\n' "${p50s[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" "${p50s[*]}")"
  record "$(printf '%-40s %8s /s   runs: %s' "$label.write-$conns-clients" "$(printf '%s\n' "${rates[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')" "${rates[*]}")"
}
setup_write_store() {
  local url="$1" token="$2" auth=()
  [[ "$token" != "-" ]] && auth=(-H "authorization: Bearer $token")
  curl -sf -o /dev/null "${auth[@]}" -H 'content-type: application/json' "$url/v1/stores" -d '{"id":"wbench"}'
  curl -sf -o /dev/null "${auth[@]}" -H 'content-type: application/json' "$url/v1/stores/wbench/participants" -d '{"id":"own","kind":"agent"}'
}
topo up --replicas 1 >/dev/null
# shellcheck disable=SC1091
. "$TOPOLOGY_DIR/topology.env"
setup_write_store "$EARSHOT_REPLICA_1_URL" "$EARSHOT_TOKEN"
write_bench "postgres" "$EARSHOT_REPLICA_1_URL" "$EARSHOT_TOKEN" wbench
topo down >/dev/null

sled_dir="$(mktemp -d)"
sled_port=$((port + 20))
NO_COLOR=1 "$EARSHOT_BIN" serve --data "$sled_dir" --bind "127.0.0.1:$sled_port" >"$out/sled.log" 2>&1 &
sled_pid=$!
for _ in $(seq 1 100); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$sled_port/readyz" || true)" == 200 ]] && break
  sleep 0.1
done
setup_write_store "http://127.0.0.1:$sled_port" -
write_bench "sled" "http://127.0.0.1:$sled_port" - wbench
kill "$sled_pid"
wait "$sled_pid" 2>/dev/null || true
sled_pid=""
rm -rf "$sled_dir"

topo down --drop >/dev/null 2>&1 || true
echo "machine at end: $(load)" >>"$out/results.txt"
echo "== results (also in $out/results.txt; wrk's output per run beside it)"
cat "$out/results.txt"
