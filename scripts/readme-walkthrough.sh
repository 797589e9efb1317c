#!/usr/bin/env bash
# Runs every ```sh block of README.md, in order, against a fresh service, and fails on an
# unexpected answer.
#
# Every ```sh block runs, in one shell, from the repository root, with the address
# http://127.0.0.1:7878 replaced by the service's, except a block whose fence follows the line
#
#   <!-- readme-walkthrough: skip: <why it cannot run here> -->
#
# (the reason is required; a marker before anything but a ```sh block fails the run). So a block
# is never skipped silently: a new block runs, or says why not. Each command prints one answer
# followed by its HTTP status; every answer is compared, in order, with the expectations below
# (a subset match on the JSON body, and the status), which restate what the README's prose
# promises, so an answer that changes, or a block that answers more or less, fails the run.
#
#   scripts/readme-walkthrough.sh                 # starts target/release/earshot on a free port
#   EARSHOT=path/to/earshot scripts/readme-walkthrough.sh
#   EARSHOT_URL=http://127.0.0.1:7878 scripts/readme-walkthrough.sh   # a running, empty service
#
# Needs bash, curl and python3. Build first: cargo build --release -p earshot (CI runs it on the
# debug build, .ci/run).
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

# Extract the blocks, in order, pointed at the service; list the skipped ones with their reasons.
python3 - "$EARSHOT_URL" >"$work/blocks.sh" <<'PY'
import re, sys
lines = open("README.md", encoding="utf-8").read().split("\n")
marker = re.compile(r"^<!-- readme-walkthrough: skip: (\S.*\S) -->$")
out, ran, skipped, errors = [], 0, [], []
i = 0
while i < len(lines):
    line = lines[i]
    if line.startswith("<!-- readme-walkthrough"):
        nxt = next((j for j in range(i + 1, len(lines)) if lines[j].strip()), None)
        if not marker.match(line):
            errors.append(f"README.md:{i + 1}: a marker is `<!-- readme-walkthrough: skip: <reason> -->`")
        elif nxt is None or lines[nxt] != "```sh":
            errors.append(f"README.md:{i + 1}: the skip marker is not followed by a ```sh block")
    if line.startswith("```") and line != "```":
        end = next((j for j in range(i + 1, len(lines)) if lines[j] == "```"), None)
        if end is None:
            errors.append(f"README.md:{i + 1}: a code block that never ends")
            break
        if line == "```sh":
            prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
            m = marker.match(prev)
            if m:
                skipped.append(f"README.md:{i + 1}: {m.group(1)}")
            else:
                ran += 1
                body = "\n".join(lines[i + 1:end]).replace("http://127.0.0.1:7878", sys.argv[1])
                out.append(f"# README.md:{i + 1}\n{body}")
        i = end + 1
        continue
    i += 1
if errors:
    sys.exit("\n".join(errors))
if ran == 0:
    sys.exit("no ```sh block of README.md runs")
print("\n".join(out))
print(f"readme walkthrough: running {ran} blocks, skipping {len(skipped)}:", file=sys.stderr)
for s in skipped:
    print(f"  skipped {s}", file=sys.stderr)
PY

bash -eu "$work/blocks.sh" >"$work/answers.txt"

python3 - "$work/answers.txt" <<'PY'
import json, sys

def created(*ids):
    return [(201, {"outcome": "created", "ids": [i]}) for i in ids]

GRANT = object()  # the id of the grant created in the walkthrough
ANY = object()  # any value but null

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
    # Instructions and data: Alice trusts Bob's words (store demo)
    (201, {"outcome": "created"}),
    # Reading the data (store demo): the first page of two items, and Alice's audience memberships
    (200, {"results": [{"id": "f1"}, {"id": "f2"}], "next_cursor": ANY}),
    (200, {"results": [{"resource": {"type": "audience"}, "relation": "member",
                        "subject": {"type": "participant", "id": "alice"}}] * 3}),
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
    if want is ANY:
        return got is not None
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
