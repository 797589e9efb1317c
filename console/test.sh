#!/usr/bin/env bash
# Runs the console's end-to-end tests (test/e2e.mjs): the real binary (EARSHOT_BIN, default
# target/debug/earshot, built if missing) with the Figure 1 and four-fridges stores, driven in
# Debian's headless Chromium (CHROMIUM, default /usr/bin/chromium) by playwright-core, with
# axe-core's accessibility check on every view. Screenshots are written to docs/console/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
export EARSHOT_BIN="${EARSHOT_BIN:-$root/target/debug/earshot}"
if [[ ! -x "$EARSHOT_BIN" ]]; then
  (cd "$root" && cargo build -p earshot)
fi
if [[ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]]; then
  echo "Chromium is missing: apt-get install -y chromium (or set CHROMIUM)" >&2
  exit 1
fi
cd "$here"
if [[ ! -d node_modules/playwright-core || ! -d node_modules/axe-core ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
node test/e2e.mjs
