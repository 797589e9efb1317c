# Sourced by scripts/bench-http.sh and scripts/bench-http-writes.sh: what both need before their
# first request. Installs wrk when missing (with apt-get, as root), checks for the tools named
# in `tools`, then starts one `earshot serve` of `bin` on `port`: the embedded default (sled in
# a fresh temporary directory), one admin bearer token (`token`), logs at SERVER_LOG (`info`
# by default: one line per request) in `$out/server.log`. Empties `out` of its .txt files,
# stops the server and removes its data on exit, and returns once `/readyz` answers 200.
# Needs: bin, port, out, url, token, tools, and a `die` function. Sets: data, pid; defines
# `load` (the cores and load average, for the results).

if ! command -v wrk >/dev/null; then
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
    apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; }
  fi
fi
for tool in $tools; do command -v "$tool" >/dev/null || die "$tool is not installed"; done
[[ -x "$bin" ]] || die "no binary at $bin (cargo build --release -p earshot)"

data="$(mktemp -d)"
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$data"
}
trap cleanup EXIT
mkdir -p "$out"
rm -f "$out"/*.txt
cat >"$data/earshot.toml" <<TOML
bind = "127.0.0.1:$port"
data = "$data/store"

[[tokens]]
name = "bench"
token = "$token"
scope = "admin"
TOML

load() { echo "$(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"; }

NO_COLOR=1 RUST_LOG="${SERVER_LOG:-info}" "$bin" serve --config "$data/earshot.toml" >"$out/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  [[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/readyz" || true)" == 200 ]] && break
  kill -0 "$pid" 2>/dev/null || die "the server stopped (see $out/server.log)"
  sleep 0.1
done
