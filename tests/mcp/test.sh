#!/usr/bin/env bash
# Runs `earshot mcp` under the official MCP Python SDK as a real client (test_mcp.py): Figure 1
# through the tools over stdio, embedded (`--data-dir`) and against a running `earshot serve`
# (`--url`, admin and reader tokens), and a streamable-HTTP smoke test (`--listen`). Builds the
# binary if missing (EARSHOT_BIN names another); installs the pinned SDK (requirements.txt) into
# a venv under the target directory, rebuilt only when requirements.txt changes.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
# Absolute, since the tests run from this directory (.ci/run passes a path relative to the root).
export EARSHOT_BIN="$(realpath -m "${EARSHOT_BIN:-$target/debug/earshot}")"
if [[ ! -x "$EARSHOT_BIN" ]]; then
  (cd "$root" && cargo build -p earshot)
fi
venv="${EARSHOT_MCP_VENV:-$target/mcp-venv}"
req="$here/requirements.txt"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/python" || "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]]; then
  echo "mcp test: installing requirements.txt into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --require-virtualenv -r "$req"
  echo "$want" >"$venv/.requirements.sha256"
fi
cd "$here"
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m unittest -v test_mcp.py
