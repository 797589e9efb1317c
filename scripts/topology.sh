#!/usr/bin/env bash
# The loopback topology of README "Running several replicas": N Earshot replicas (default 3)
# over one PostgreSQL, HAProxy in front with deploy/haproxy/haproxy.cfg (the same file the
# tests and docker-compose.yml use), as plain processes on loopback ports.
#
#   scripts/topology.sh up [--replicas N]   start what is not running yet, wait until ready
#   scripts/topology.sh down [--drop]       stop everything (--drop: also drop the tables)
#   scripts/topology.sh status              each process, and HAProxy's view of each replica
#
# Environment (all optional):
#   EARSHOT_BIN             the binary (default target/release/earshot, else target/debug/earshot)
#   TOPOLOGY_DIR            run directory: pid files, logs, config, tokens (default target/topology)
#   TOPOLOGY_PG             PostgreSQL URL (default postgres://root@127.0.0.1:5432/test)
#   TOPOLOGY_PREFIX         table prefix, i.e. which deployment (default topo_)
#   TOPOLOGY_PORT           HAProxy's port (default 7800); replica k listens on PORT+k, and
#                           HAProxy's statistics page on PORT+9
#
# `up` writes $TOPOLOGY_DIR/topology.env (source it: EARSHOT_URL, EARSHOT_TOKEN, the replicas'
# URLs) with tokens generated for this run dir, never the example's published ones.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${TOPOLOGY_DIR:-$root/target/topology}"
pg="${TOPOLOGY_PG:-postgres://root@127.0.0.1:5432/test}"
prefix="${TOPOLOGY_PREFIX:-topo_}"
port="${TOPOLOGY_PORT:-7800}"
cfg="$root/deploy/haproxy/haproxy.cfg"
max_replicas=5 # the number of replica slots in haproxy.cfg

die() { echo "topology: $*" >&2; exit 1; }
say() { echo "topology: $*" >&2; }

bin="${EARSHOT_BIN:-}"
if [[ -z "$bin" ]]; then
  for b in "$root/target/release/earshot" "$root/target/debug/earshot"; do
    if [[ -x "$b" ]]; then bin="$b"; break; fi
  done
fi

# Whether the pid in file $1 is alive and runs the program named $2 (not a recycled pid).
alive() {
  local pidfile="$1" name="$2" pid
  [[ -f "$pidfile" ]] || return 1
  pid="$(cat "$pidfile")"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$name"
}

# The datastore URL the replicas get: the table prefix rides on it (README, "Running on
# PostgreSQL").
datastore_url() {
  if [[ "$pg" == *\?* ]]; then echo "$pg&earshot_prefix=$prefix"; else echo "$pg?earshot_prefix=$prefix"; fi
}

# Whether something listens on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Stops the process of pid file $1 (program $2): SIGTERM (drains), then SIGKILL after 10 s.
stop() {
  local pidfile="$1" name="$2" pid
  if alive "$pidfile" "$name"; then
    pid="$(cat "$pidfile")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      [[ -d "/proc/$pid" ]] || break
      sleep 0.1
    done
    if [[ -d "/proc/$pid" ]]; then
      say "$name (pid $pid) did not stop within 10 s; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$pidfile"
}

# A random secret of 48 hex characters.
secret() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }

# The configuration every replica reads: generated tokens (kept for the life of the run dir,
# so that a second `up` keeps the clients' tokens valid).
write_config() {
  [[ -f "$dir/earshot.toml" ]] && return 0
  local admin reader
  admin="$(secret)"
  reader="$(secret)"
  umask 077
  cat >"$dir/earshot.toml" <<EOF
# Written by scripts/topology.sh for this run directory only.
consistency_wait_ms = 2000
follow_interval_ms = 50

[[tokens]]
name = "topology-admin"
token = "$admin"
scope = "admin"

[[tokens]]
name = "topology-reader"
token = "$reader"
scope = "reader"
EOF
  printf '%s\n' "$admin" >"$dir/admin.token"
  printf '%s\n' "$reader" >"$dir/reader.token"
}

# Waits until $1 answers 200 (at most $2 seconds) while process $3 (named $4) stays alive.
# (Liveness by pid alone: right after the fork the process may not have exec'd its program yet.)
wait_ready() {
  local url="$1" secs="$2" pid="$3" name="$4" log="$5"
  local deadline=$((SECONDS + secs))
  while ((SECONDS < deadline)); do
    if [[ ! -d "/proc/$pid" ]]; then
      tail -n 20 "$log" >&2 || true
      die "$name exited during start-up (log: $log)"
    fi
    if [[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)" == 200 ]]; then
      return 0
    fi
    sleep 0.2
  done
  tail -n 20 "$log" >&2 || true
  die "$url did not answer 200 within $secs s (log: $log)"
}

start_replica() {
  local k="$1" rport=$((port + k))
  local pidfile="$dir/r$k.pid" log="$dir/r$k.log"
  if alive "$pidfile" earshot; then
    return 0
  fi
  listening "$rport" && die "port $rport (replica $k) is taken by another process"
  EARSHOT_DATASTORE="$(datastore_url)" NO_COLOR=1 RUST_LOG="${RUST_LOG:-info}" \
    setsid "$bin" serve --bind "127.0.0.1:$rport" --config "$dir/earshot.toml" --data "$dir/unused-data" \
    </dev/null >>"$log" 2>&1 &
  echo $! >"$pidfile"
  wait_ready "http://127.0.0.1:$rport/readyz" 120 "$(cat "$pidfile")" earshot "$log"
  say "replica $k ready on 127.0.0.1:$rport (pid $(cat "$pidfile"))"
}

# The environment HAProxy's configuration is filled from (one line per variable).
haproxy_env() {
  local n="$1"
  echo "EARSHOT_LB_BIND=127.0.0.1:$port"
  echo "EARSHOT_LB_STATS=127.0.0.1:$((port + 9))"
  for k in $(seq 1 "$n"); do echo "EARSHOT_REPLICA_$k=127.0.0.1:$((port + k))"; done
}

# Each replica's status in HAProxy's `replicas` backend, from the statistics CSV ("r1 UP").
lb_states() {
  curl -s --max-time 2 "http://127.0.0.1:$((port + 9))/stats;csv" |
    awk -F, '$1 == "replicas" && $2 ~ /^r[0-9]+$/ { print $2, $18 }'
}

start_haproxy() {
  local n="$1" pidfile="$dir/haproxy.pid" log="$dir/haproxy.log"
  local want
  want="$(haproxy_env "$n")"
  # Restarted when the set of replicas changed, since the configuration lists them.
  if alive "$pidfile" haproxy && [[ "$(cat "$dir/haproxy.env" 2>/dev/null)" == "$want" ]]; then
    return 0
  fi
  stop "$pidfile" haproxy
  listening "$port" && die "port $port (HAProxy) is taken by another process"
  echo "$want" >"$dir/haproxy.env"
  (
    set -a
    # shellcheck disable=SC1091
    . "$dir/haproxy.env"
    set +a
    haproxy -c -q -f "$cfg" || die "haproxy rejects $cfg"
    # -db: stay in the foreground (this script keeps the pid), logging to stderr.
    exec setsid haproxy -db -f "$cfg" </dev/null >>"$log" 2>&1
  ) &
  local pid=$!
  echo "$pid" >"$pidfile"
  # HAProxy must see every replica UP (two /readyz successes each) before clients come.
  local deadline=$((SECONDS + 30)) states=""
  while ((SECONDS < deadline)); do
    [[ -d "/proc/$pid" ]] || { tail -n 20 "$log" >&2; die "haproxy exited (log: $log)"; }
    states="$(lb_states || true)"
    if [[ -n "$states" ]] && [[ "$(grep -c ' UP$' <<<"$states")" == "$n" ]]; then
      say "haproxy on 127.0.0.1:$port, every replica UP (statistics: http://127.0.0.1:$((port + 9))/stats)"
      return 0
    fi
    sleep 0.2
  done
  echo "$states" >&2
  die "HAProxy did not see all $n replicas UP within 30 s (log: $log)"
}

write_env() {
  local n="$1" f="$dir/topology.env"
  {
    echo "# scripts/topology.sh: source this file (its tokens are secrets of this run dir)."
    echo "EARSHOT_URL=http://127.0.0.1:$port"
    echo "EARSHOT_TOKEN=$(cat "$dir/admin.token")"
    echo "EARSHOT_READER_TOKEN=$(cat "$dir/reader.token")"
    echo "EARSHOT_LB_STATS_URL=http://127.0.0.1:$((port + 9))/stats"
    echo "EARSHOT_TOPOLOGY_REPLICAS=$n"
    for k in $(seq 1 "$n"); do echo "EARSHOT_REPLICA_${k}_URL=http://127.0.0.1:$((port + k))"; done
    echo "EARSHOT_DATASTORE='$(datastore_url)'"
  } >"$f"
  chmod 600 "$f"
  echo "$f"
}

up() {
  local n=3
  while (($#)); do
    case "$1" in
      --replicas) n="${2:?--replicas needs a number}"; shift 2 ;;
      *) die "up: unknown argument $1" ;;
    esac
  done
  [[ "$n" =~ ^[1-9][0-9]*$ ]] && ((n <= max_replicas)) || die "--replicas must be 1..$max_replicas"
  [[ -n "$bin" && -x "$bin" ]] || die "no earshot binary: build it (cargo build --release -p earshot) or set EARSHOT_BIN"
  command -v haproxy >/dev/null || die "haproxy is not installed (apt-get install -y haproxy)"
  command -v curl >/dev/null || die "curl is not installed"
  mkdir -p "$dir"
  write_config
  # Replicas beyond N from an earlier `up` are stopped.
  for k in $(seq $((n + 1)) "$max_replicas"); do stop "$dir/r$k.pid" earshot; done
  for k in $(seq 1 "$n"); do start_replica "$k"; done
  start_haproxy "$n"
  write_env "$n"
}

down() {
  local drop=0
  while (($#)); do
    case "$1" in
      --drop) drop=1; shift ;;
      *) die "down: unknown argument $1" ;;
    esac
  done
  [[ -d "$dir" ]] || { say "nothing to stop ($dir does not exist)"; return 0; }
  stop "$dir/haproxy.pid" haproxy
  for k in $(seq 1 "$max_replicas"); do stop "$dir/r$k.pid" earshot; done
  rm -f "$dir/haproxy.env"
  if ((drop)); then
    command -v psql >/dev/null || die "--drop needs psql"
    psql -q "$pg" -c "DROP TABLE IF EXISTS ${prefix}records, ${prefix}heads, ${prefix}log" ||
      die "could not drop the tables of prefix $prefix"
    rm -rf "$dir"
    say "stopped; dropped the tables ${prefix}{records,heads,log} and $dir"
  else
    say "stopped (the tables ${prefix}* and $dir stay; 'down --drop' removes them)"
  fi
}

status() {
  local k
  for k in $(seq 1 "$max_replicas"); do
    if alive "$dir/r$k.pid" earshot; then
      echo "replica $k: pid $(cat "$dir/r$k.pid"), 127.0.0.1:$((port + k)), readyz $(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$((port + k))/readyz" || true)"
    fi
  done
  if alive "$dir/haproxy.pid" haproxy; then
    echo "haproxy: pid $(cat "$dir/haproxy.pid"), 127.0.0.1:$port"
    lb_states | sed 's/^/  backend replicas: /'
  else
    echo "haproxy: not running"
  fi
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  status) status ;;
  *) echo "usage: $0 up [--replicas N] | down [--drop] | status" >&2; exit 2 ;;
esac
