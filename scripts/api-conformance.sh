#!/usr/bin/env bash
# API conformance: drives the running binary from its OpenAPI document with schemathesis (a
# property-based API tester from PyPI). Every response must match the document and none may be a
# 5xx. Needs the network for `pip install` the first time, so CI does not run it; the figures it
# prints are recorded in TESTING.md.
#
#   scripts/api-conformance.sh                 # defaults: 200 examples per operation
#   MAX_EXAMPLES=500 scripts/api-conformance.sh
#   VENV=/some/venv PORT=7979 scripts/api-conformance.sh
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${VENV:-${TMPDIR:-/tmp}/earshot-schemathesis}"
PORT="${PORT:-7979}"
MAX_EXAMPLES="${MAX_EXAMPLES:-200}"
SCHEMATHESIS_VERSION="${SCHEMATHESIS_VERSION:-4.32.5}"
BASE="http://127.0.0.1:${PORT}"
REPORT_DIR="${REPORT_DIR:-target/api-conformance}"

if [[ ! -x "$VENV/bin/schemathesis" ]]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "schemathesis==${SCHEMATHESIS_VERSION}"
fi

cargo build -q -p earshot
data="$(mktemp -d)"
# Authentication on, as the document declares it: an admin token for the run.
TOKEN="conformance-admin-token"
cat >"$data.toml" <<TOML
bind = "127.0.0.1:${PORT}"
data = "$data/db"
consistency_wait_ms = 200

[[tokens]]
name = "conformance"
token = "$TOKEN"
scope = "admin"
TOML
target/debug/earshot serve --config "$data.toml" >"$data.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$data" "$data.log" "$data.toml"' EXIT
for _ in $(seq 1 100); do
  curl -fs "$BASE/healthz" >/dev/null && break
  sleep 0.1
done

# A store `s` with data, so that generated requests reach real participants, items and grants.
post() { curl -fs -o /dev/null -X POST -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' "$BASE$1" -d "$2"; }
post /v1/stores '{"id":"s"}'
for p in owner alice bob carol; do post /v1/stores/s/participants "{\"id\":\"$p\",\"kind\":\"person\"}"; done
post /v1/stores/s/identities '{"transport":"email","identifier":"bob@example.com","participant":"bob"}'
post /v1/stores/s/items '{"id":"f1","owner":"owner","content":"x","origin":{"participants":["alice","bob"]}}'
post /v1/stores/s/items '{"id":"f2","owner":"owner","origin":"owner_private"}'
post /v1/stores/s/items '{"id":"p1","owner":"owner","origin":"public"}'
post /v1/stores/s/items/f2/grants '{"members":["carol"],"reason":"seed"}'
curl -fs -o /dev/null -X PUT -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' "$BASE/v1/stores/s/schema" \
  -d '{"schema":"relation family {\n opens status/*\n opens medication/**\n}\n"}'
post /v1/stores/s/devices '{"id":"fridge","owner":"owner"}'
post /v1/stores/s/relations '{"id":"e1","grantor":"owner","relation":"family","grantee":"alice"}'
post /v1/stores/s/capabilities '{"id":"k1","issuer":"owner","holder":"bob","device":"fridge","paths":["calendar/**"],"actions":["read"]}'

# Two checks are left out, for reasons of this set-up rather than of the API:
# - positive_data_acceptance expects 2xx for any schema-valid body, but a schema-valid request
#   naming a participant or item that does not exist is rightly 404/409/422;
# - ensure_resource_availability follows `POST /v1/stores` to later calls, but the config pins
#   `{store}` to the seeded store `s`, so a store created in a stateful run is never the one the
#   next call addresses (the 404 it reports is `participant_not_found`, not the store).
mkdir -p "$REPORT_DIR"
set +e
"$VENV/bin/schemathesis" --config-file scripts/schemathesis.toml run api/openapi.json \
  --url "$BASE" \
  --header "Authorization: Bearer $TOKEN" \
  --checks all \
  --exclude-checks positive_data_acceptance,ensure_resource_availability \
  --max-examples "$MAX_EXAMPLES" \
  --workers 1 \
  --report junit,ndjson --report-dir "$REPORT_DIR" \
  "$@"
status=$?
set -e
echo "schemathesis exit status: $status (reports in $REPORT_DIR)"
grep -c '"5[0-9][0-9] ' "$data.log" 2>/dev/null | sed 's/^/server log lines mentioning a 5xx: /' || true
exit "$status"
