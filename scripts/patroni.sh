#!/usr/bin/env bash
# A highly available PostgreSQL on loopback, the standard Patroni pattern: etcd as the
# distributed configuration store, two PostgreSQL 15 nodes managed by Patroni (a primary and a
# synchronous standby: `synchronous_mode`, `synchronous_commit = on`, so a commit is
# acknowledged only once it is on both), and HAProxy in front that routes connections to the
# current primary by Patroni's REST health check (`OPTIONS /primary`), with
# `deploy/haproxy/patroni.cfg`. Earshot replicas use the HAProxy address as their datastore.
#
# Usage:
#   scripts/patroni.sh up        start etcd, both nodes and HAProxy; wait for a primary and a
#                                synchronous standby; write $PATRONI_DIR/patroni.env
#   scripts/patroni.sh primary   print the name of the current primary (pg1 or pg2)
#   scripts/patroni.sh kill NODE SIGKILL a node's Patroni and PostgreSQL (a machine lost)
#   scripts/patroni.sh down      stop everything (the data stays in $PATRONI_DIR)
#   scripts/patroni.sh down --drop   and remove $PATRONI_DIR
#
# Environment (defaults in brackets): PATRONI_DIR [target/patroni], PATRONI_BASE_PORT [5440]:
# HAProxy listens on it, the nodes on +1 and +2, their REST APIs on +11 and +12, etcd on +21
# (clients) and +22 (peers); each port can be set alone (PATRONI_LB_PORT, PATRONI_PG1_PORT,
# PATRONI_PG2_PORT, PATRONI_REST1_PORT, PATRONI_REST2_PORT, PATRONI_ETCD_PORT,
# PATRONI_ETCD_PEER_PORT). Needs Debian's patroni, etcd-server, postgresql-15 and haproxy.
# PostgreSQL refuses to run as root: as root, the nodes and etcd run as the `postgres` user.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${PATRONI_DIR:-$root/target/patroni}"
base="${PATRONI_BASE_PORT:-5440}"
lb_port="${PATRONI_LB_PORT:-$base}"
pg_port=("${PATRONI_PG1_PORT:-$((base + 1))}" "${PATRONI_PG2_PORT:-$((base + 2))}")
rest_port=("${PATRONI_REST1_PORT:-$((base + 11))}" "${PATRONI_REST2_PORT:-$((base + 12))}")
etcd_port="${PATRONI_ETCD_PORT:-$((base + 21))}"
etcd_peer="${PATRONI_ETCD_PEER_PORT:-$((base + 22))}"
bin_dir="${PATRONI_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)}"

die() { echo "patroni.sh: $*" >&2; exit 1; }
# Runs a program in place of the (background) shell that calls this, as the `postgres` user
# when root: `setpriv` and `exec` replace the process, so `$!` is the program's own pid.
as_pg() {
  if [[ "$(id -u)" == 0 ]]; then exec setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"; else exec "$@"; fi
}
pid_alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }
rest() { curl -s -o /dev/null -w '%{http_code}' -m 2 "http://127.0.0.1:${rest_port[$1]}$2" || true; }

node_config() {
  local i="$1" name="pg$(($1 + 1))"
  cat >"$dir/$name.yml" <<EOF
scope: earshot
name: $name
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:${rest_port[$i]}
  connect_address: 127.0.0.1:${rest_port[$i]}
etcd:
  host: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    # A lost primary's leader key expires within ttl; the standby then takes over.
    ttl: 10
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1048576
    # Commits wait for the synchronous standby: an acknowledged write is on two nodes.
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        synchronous_commit: "on"
        wal_level: replica
        hot_standby: "on"
        max_wal_senders: 5
        max_replication_slots: 5
        wal_log_hints: "on"
        max_connections: 100
  initdb:
    - encoding: UTF8
    - auth: trust
  pg_hba:
    - local all all trust
    - host replication all 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${pg_port[$i]}
  connect_address: 127.0.0.1:${pg_port[$i]}
  data_dir: $dir/$name/data
  bin_dir: $bin_dir
  pgpass: $dir/$name/pgpass
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
  parameters:
    unix_socket_directories: $dir/$name
EOF
}

up() {
  for tool in patroni etcd haproxy curl; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
  [[ -x "$bin_dir/postgres" ]] || die "no PostgreSQL binaries in $bin_dir"
  mkdir -p "$dir"
  if [[ "$(id -u)" == 0 ]]; then chown postgres "$dir"; fi
  # etcd (a cluster of one: the configuration store of this loopback demonstration).
  if ! pid_alive "$dir/etcd.pid"; then
    as_pg etcd --name e1 --data-dir "$dir/etcd" --enable-v2=true \
      --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
      --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
      --initial-cluster "e1=http://127.0.0.1:$etcd_peer" >"$dir/etcd.log" 2>&1 &
    echo $! >"$dir/etcd.pid"
  fi
  for _ in $(seq 1 100); do
    [[ "$(curl -s -o /dev/null -w '%{http_code}' -m 1 "http://127.0.0.1:$etcd_port/health" || true)" == 200 ]] && break
    sleep 0.1
  done
  for i in 0 1; do
    local name="pg$((i + 1))"
    node_config "$i"
    mkdir -p "$dir/$name"
    if [[ "$(id -u)" == 0 ]]; then chown -R postgres "$dir/$name" "$dir/$name.yml"; fi
    chmod 700 "$dir/$name"
    if ! pid_alive "$dir/$name.pid"; then
      as_pg patroni "$dir/$name.yml" >"$dir/$name.log" 2>&1 &
      echo $! >"$dir/$name.pid"
    fi
    # The first node bootstraps the cluster before the second asks to join it.
    if [[ "$i" == 0 ]]; then
      for _ in $(seq 1 300); do
        [[ "$(rest 0 /primary)" == 200 ]] && break
        sleep 0.2
      done
      [[ "$(rest 0 /primary)" == 200 ]] || die "pg1 did not become the primary (see $dir/pg1.log)"
    fi
  done
  # HAProxy: the current primary, by Patroni's health check.
  if ! pid_alive "$dir/haproxy.pid"; then
    PATRONI_LB_BIND="127.0.0.1:$lb_port" \
      PATRONI_PG1="127.0.0.1:${pg_port[0]}" PATRONI_PG1_REST="${rest_port[0]}" \
      PATRONI_PG2="127.0.0.1:${pg_port[1]}" PATRONI_PG2_REST="${rest_port[1]}" \
      haproxy -D -p "$dir/haproxy.pid" -f "$root/deploy/haproxy/patroni.cfg" >"$dir/haproxy.log" 2>&1
  fi
  # Ready: one primary and one synchronous standby.
  local ok=""
  for _ in $(seq 1 600); do
    if { [[ "$(rest 0 /primary)" == 200 ]] && [[ "$(rest 1 /synchronous)" == 200 ]]; } ||
       { [[ "$(rest 1 /primary)" == 200 ]] && [[ "$(rest 0 /synchronous)" == 200 ]]; }; then
      ok=1
      break
    fi
    sleep 0.2
  done
  [[ -n "$ok" ]] || die "no synchronous standby (see $dir/pg1.log, $dir/pg2.log)"
  for _ in $(seq 1 100); do
    pg_isready -q -h 127.0.0.1 -p "$lb_port" && break
    sleep 0.1
  done
  cat >"$dir/patroni.env" <<EOF
PATRONI_DATASTORE=postgres://postgres@127.0.0.1:$lb_port/postgres
PATRONI_LB_PORT=$lb_port
EOF
  echo "patroni: primary $(primary), synchronous standby up; HAProxy at 127.0.0.1:$lb_port"
}

primary() {
  for i in 0 1; do
    if [[ "$(rest "$i" /primary)" == 200 ]]; then
      echo "pg$((i + 1))"
      return
    fi
  done
  echo none
}

kill_node() {
  local name="$1"
  [[ "$name" == pg1 || "$name" == pg2 ]] || die "kill: pg1 or pg2"
  local postmaster=""
  [[ -f "$dir/$name/data/postmaster.pid" ]] && postmaster="$(head -n1 "$dir/$name/data/postmaster.pid")"
  # Patroni first, so that it does not restart PostgreSQL; then PostgreSQL and its children.
  if [[ -f "$dir/$name.pid" ]]; then kill -9 "$(cat "$dir/$name.pid")" 2>/dev/null || true; fi
  if [[ -n "$postmaster" ]]; then
    pkill -9 -P "$postmaster" 2>/dev/null || true
    kill -9 "$postmaster" 2>/dev/null || true
  fi
}

down() {
  for f in haproxy pg1 pg2 etcd; do
    if [[ -f "$dir/$f.pid" ]]; then
      local pid
      pid="$(cat "$dir/$f.pid")"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/$f.pid"
    fi
  done
  for name in pg1 pg2; do
    if [[ -f "$dir/$name/data/postmaster.pid" ]]; then
      local pm
      pm="$(head -n1 "$dir/$name/data/postmaster.pid")"
      kill -9 "$pm" 2>/dev/null || true
    fi
  done
  if [[ "${1:-}" == --drop ]]; then rm -rf "$dir"; fi
}

case "${1:-}" in
  up) up ;;
  primary) primary ;;
  kill) kill_node "${2:-}" ;;
  down) down "${2:-}" ;;
  *) die "usage: $0 up | primary | kill pg1|pg2 | down [--drop]" ;;
esac
