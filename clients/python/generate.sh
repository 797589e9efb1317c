#!/usr/bin/env bash
# Regenerates the Python client (clients/python: earshot_client/, setup.py, pyproject.toml,
# README.md, .gitignore) from api/openapi.json with the pinned openapi-python-client.
#
#   clients/python/generate.sh           # rewrite the generated files
#   clients/python/generate.sh --check   # fail if they are not what the generator makes now
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/env.sh"
check=0
[[ "${1:-}" == "--check" ]] && check=1

GENERATED=(earshot_client setup.py pyproject.toml README.md .gitignore)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# The generator runs ruff (from the venv) on its output; its own log is kept unless it fails.
if ! (cd "$tmp" && openapi-python-client generate --path "$root/api/openapi.json" --meta setup \
  --config "$here/generator-config.yml" --output-path out >"$tmp/log" 2>&1); then
  cat "$tmp/log" >&2
  exit 1
fi
# Schemas the generator could not model (they are left out of the client; see clients/README.md).
grep -E '^Unable to process schema' "$tmp/log" | sed 's/^/python client: generator warning: /' >&2 || true
rm -rf "$tmp/out/.ruff_cache"

if ((check)); then
  status=0
  for f in "${GENERATED[@]}"; do
    if ! diff -r -q -x __pycache__ "$tmp/out/$f" "$here/$f" >"$tmp/diff" 2>&1; then
      cat "$tmp/diff" >&2
      status=1
    fi
  done
  if ((status)); then
    echo "clients/python is not what api/openapi.json generates: run clients/generate.sh and commit" >&2
    exit 1
  fi
  echo "python client: current"
else
  for f in "${GENERATED[@]}"; do rm -rf "${here:?}/$f"; cp -R "$tmp/out/$f" "$here/$f"; done
  echo "python client: regenerated clients/python from api/openapi.json"
fi
