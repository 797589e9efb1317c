#!/usr/bin/env bash
# Runs the README's walkthrough blocks against a fresh service and fails on an unexpected answer.
#
# The walkthrough blocks are the README's ```sh blocks that start with `E=http://127.0.0.1:7878/`
# (Figure 1, devices, context assembly); they run in order, in one shell, from the repository
# root, with the address replaced by the service's. Each command prints one answer followed by
# its HTTP status; every answer is compared, in order, with the expectations below (a subset
# match on the JSON body, and the status), which restate what the README's prose promises.
#
#   scripts/readme-walkthrough.sh                 # starts target/release/earshot on a free port
#   EARSHOT=path/to/earshot scripts/readme-walkthrough.sh
#   EARSHOT_URL=http://127.0.0.1:7878 scripts/readme-walkthrough.sh   # a running, empty service
#
# Needs bash, curl and python3. Build first: cargo build --release -p earshot
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d)"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [[ -z "${EARSHOT_URL:-}" ]]; then
  bin="${EARSHOT:-target/release/earshot}"
  [[ -x "$bin" ]] || { echo "no binary at $bin (cargo build --release -p earshot)" >&2; exit 2; }
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  EARSHOT_URL="http://127.0.0.1:$port"
  "$bin" serve --bind "127.0.0.1:$port" --data "$work/data" >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    curl -sf "$EARSHOT_URL/readyz" >/dev/null 2>&1 && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 2; }
    sleep 0.1
  done
fi
curl -sf "$EARSHOT_URL/readyz" >/dev/null || { echo "no service at $EARSHOT_URL" >&2; exit 2; }

# Extract the walkthrough blocks, in order, pointed at the service.
python3 - "$EARSHOT_URL" >"$work/blocks.sh" <<'PY'
import re, sys
readme = open("README.md", encoding="utf-8").read()
blocks = [b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if b.startswith("E=http://127.0.0.1:7878/")]
if len(blocks) != 3:
    sys.exit(f"expected 3 walkthrough blocks in README.md, found {len(blocks)}")
print("\n".join(b.replace("http://127.0.0.1:7878", sys.argv[1]) for b in blocks))
PY

bash -eu "$work/blocks.sh" >"$work/answers.txt"

python3 - "$work/answers.txt" <<'PY'
import json, sys

def created(*ids):
    return [(201, {"outcome": "created", "ids": [i]}) for i in ids]

GRANT = object()  # the id of the grant created in the walkthrough

EXPECT = [
    # Figure 1
    *created("demo", "owner", "alice", "bob", "carol", "email:bob@example.com", "f1", "f2", "p1"),
    (200, {"items": [{"item": "f1", "admitted": True, "reason": "admitted_origin"},
                     {"item": "p1", "admitted": True, "reason": "admitted_public"}]}),
    (200, {"item": "f2", "admitted": False, "reason": "denied_not_in_audience"}),
    (200, {"items": [{"item": "p1", "reason": "admitted_public"}]}),
    (201, {"outcome": "granted"}),
    (200, {"item": "f2", "admitted": True, "reason": "admitted_grant", "basis": "grant", "grant": GRANT}),
    (200, {"item": "f2", "admitted": False, "reason": "denied_not_in_audience"}),
    (200, {"audiences": [{"source": "origin", "members": ["alice", "owner"]},
                         {"source": "grant", "grant": GRANT, "members": ["alice", "carol", "owner"]}]}),
    # Devices, relations and capabilities
    *created("home", "me", "mum", "friend", "doc", "mum-fridge", "friend-fridge", "glasses", "clock", "vacuum"),
    (200, {"outcome": "updated", "ids": ["care_provider", "colleague", "family"]}),
    (201, {"outcome": "granted", "ids": ["mum-me"]}),
    (201, {"outcome": "granted", "ids": ["mum-doc"]}),
    (200, {"allowed": True, "reason": "allowed_relation", "authority": {"edge": "mum-me"}}),
    (200, {"allowed": False, "reason": "denied_no_authority"}),
    (200, {"allowed": False, "reason": "denied_no_authority"}),
    (200, {"unexercised": ["colleague"]}),
    *created("g", "c", "v"),
    (422, {"error": {"code": "capability_not_within_parent", "details": {"dimension": "paths"}}}),
    (200, {"allowed": True, "reason": "allowed_capability",
           "authority": {"chain": [{"capability": "g"}, {"capability": "c"}, {"capability": "v"}]}}),
    (200, {"allowed": False, "reason": "denied_condition_error"}),
    (200, {"outcome": "consumed", "decision": {"allowed": True, "reason": "allowed_capability"}}),
    (200, {"capability": "g", "invalidates": ["c", "v"]}),
    (200, {"outcome": "revoked"}),
    (200, {"allowed": False, "reason": "denied_revoked", "failure": {"link": "g"}}),
    # Context assembly (store demo)
    (200, {"items": [{"item": "f1", "reason": "admitted_origin"}, {"item": "p1", "reason": "admitted_public"}]}),
    (200, {"context": {"items": [{"item": "f1"}, {"item": "p1"}]}}),
    (409, {"error": {"code": "attempt_sealed"}}),
]

grant = None

def fits(want, got):
    global grant
    if want is GRANT:
        return isinstance(got, str) and got == grant
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and fits(v, got[k]) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(got, list) and len(want) == len(got) and all(fits(w, g) for w, g in zip(want, got))
    return want == got

lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
failures = []
for n, line in enumerate(lines):
    body, _, status = line.rpartition(" ")
    if n >= len(EXPECT):
        failures.append(f"answer {n + 1} was not expected: {line[:300]}")
        continue
    want_status, want = EXPECT[n]
    try:
        got = json.loads(body)
    except ValueError:
        failures.append(f"answer {n + 1} is not JSON: {line[:300]}")
        continue
    if want.get("outcome") == "granted" and grant is None and "ids" not in want:
        grant = (got.get("ids") or [None])[0]
    if status != str(want_status) or not fits(want, got):
        failures.append(f"answer {n + 1}: expected {want_status} {want}\n  got {line[:600]}")
if len(lines) < len(EXPECT):
    failures.append(f"only {len(lines)} answers, expected {len(EXPECT)}")
for f in failures:
    print("FAIL", f)
print(f"readme walkthrough: {len(lines)} answers, {len(failures)} unexpected")
sys.exit(1 if failures else 0)
PY
