#!/usr/bin/env bash
# Regenerates both typed clients from api/openapi.json (one command after the API changes):
#
#   clients/generate.sh           # rewrite clients/python and clients/typescript/src/schema.ts
#   clients/generate.sh --check   # fail if either is not what api/openapi.json generates (CI)
#
# The generators are pinned: openapi-python-client (clients/python/requirements-dev.txt, installed
# into target/clients/python-venv) and openapi-typescript (clients/typescript/package-lock.json).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
status=0
"$here/python/generate.sh" "$@" || status=1
"$here/typescript/generate.sh" "$@" || status=1
exit "$status"
