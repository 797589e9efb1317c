#!/usr/bin/env bash
# examples/agent/run.sh: runs the worked example (agent.py) against a built binary: EARSHOT
# (default target/debug/earshot of the repository; a relative path is taken from where it is
# called); it builds nothing. Reuses earshot_agents' venv (clients/agents/env.sh, under the target
# directory). Exits non-zero if a gated arm shows an item Bob may not see or misses the entitled
# one (or the ungated arms stop showing the leak the example is about).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
EARSHOT="$(realpath -m "${EARSHOT:-$root/target/debug/earshot}")"
cd "$root"
if [[ ! -x "$EARSHOT" ]]; then
  echo "no earshot binary at $EARSHOT (cargo build -p earshot, or set EARSHOT)" >&2
  exit 2
fi
source clients/agents/env.sh
python examples/agent/agent.py --earshot "$EARSHOT"
