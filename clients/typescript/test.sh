#!/usr/bin/env bash
# Runs the TypeScript client's test (test/figure1.test.ts: the README's Figure 1 walkthrough
# through the generated client against the real binary). `tsc` compiles it with the client under
# `strict`, together with test/typing-checks.ts, whose every `@ts-expect-error` must be needed, so
# the client's types are shown to type the bodies. Builds target/debug/earshot if it is missing;
# EARSHOT_BIN names another binary. Installs the pinned packages with `npm ci` when needed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export EARSHOT_BIN="${EARSHOT_BIN:-$root/target/debug/earshot}"
if [[ ! -x "$EARSHOT_BIN" ]]; then
  (cd "$root" && cargo build -p earshot)
fi
cd "$here"
source ./npm-ci.sh
rm -rf dist
npx --no-install tsc -p tsconfig.json
node --test dist/test/figure1.test.js
