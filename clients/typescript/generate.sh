#!/usr/bin/env bash
# Regenerates the TypeScript client's types (clients/typescript/src/schema.ts) from
# api/openapi.json with the pinned openapi-typescript of package-lock.json.
#
#   clients/typescript/generate.sh           # rewrite src/schema.ts
#   clients/typescript/generate.sh --check   # fail if it is not what the generator makes now
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
source ./npm-ci.sh
out="src/schema.ts"
if [[ "${1:-}" == "--check" ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  npx --no-install openapi-typescript "$root/api/openapi.json" --default-non-nullable false --output "$tmp/schema.ts" >/dev/null
  if ! diff -q "$tmp/schema.ts" "$out" >/dev/null; then
    diff -u "$out" "$tmp/schema.ts" | head -n 40 >&2 || true
    echo "clients/typescript/$out is not what api/openapi.json generates: run clients/generate.sh and commit" >&2
    exit 1
  fi
  echo "typescript client: current"
else
  npx --no-install openapi-typescript "$root/api/openapi.json" --default-non-nullable false --output "$out" >/dev/null
  echo "typescript client: regenerated clients/typescript/$out from api/openapi.json"
fi
