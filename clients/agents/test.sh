#!/usr/bin/env bash
# Runs earshot_agents' tests (tests/test_agents.py) against the real `earshot serve` binary and
# the real langchain-core and llama-index-core: the LCEL chain and the LlamaIndex query engine
# over a store whose best lexical and dense match is forbidden, the async variants, the
# unresolved container, typed errors, the remember tool, and the post-filter comparison. Builds
# nothing: EARSHOT_BIN names the binary (default ${CARGO_TARGET_DIR:-target}/debug/earshot).
# Installs the pinned dependencies into a venv under the target directory (env.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/env.sh"
export EARSHOT_BIN="$(realpath -m "${EARSHOT_BIN:-$agents_target/debug/earshot}")"  # absolute: the tests run from here
if [[ ! -x "$EARSHOT_BIN" ]]; then
  echo "no earshot binary at $EARSHOT_BIN (cargo build -p earshot)" >&2
  exit 2
fi
cd "$here"
python -m unittest -v tests.test_agents
