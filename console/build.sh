#!/usr/bin/env bash
# Builds the console's checked-in assets, console/dist (embedded into the binary by
# crates/earshot-api/src/console.rs), from console/src with the pinned packages of
# package-lock.json: `npm ci`, then `vite build` (fixed file names, no source maps: the output is
# a function of the sources). `--check` builds into a temporary directory and fails if it differs
# from console/dist (CI runs this, so the embedded assets always match their sources).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
if [[ "${1:-}" == "--check" ]]; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
  CONSOLE_OUT_DIR="$out" npx --no-install vite build --logLevel warn
  if ! diff -r "$out" dist; then
    echo "console/dist differs from what console/src builds: run console/build.sh and commit console/dist" >&2
    exit 1
  fi
  echo "console/dist is current"
else
  npx --no-install vite build
fi
