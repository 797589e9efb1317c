#!/usr/bin/env bash
# Runs the Python client's test (tests/test_figure1.py: the README's Figure 1 walkthrough through
# the generated client against the real binary) and type-checks it with mypy, so the client's
# models are shown to type the bodies. Builds target/debug/earshot if it is missing; EARSHOT_BIN
# names another binary. Installs its pinned tools into target/clients/python-venv (env.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/env.sh"
export EARSHOT_BIN="${EARSHOT_BIN:-$root/target/debug/earshot}"
if [[ ! -x "$EARSHOT_BIN" ]]; then
  (cd "$root" && cargo build -p earshot)
fi
cd "$here"
export PYTHONPATH="$here" PYTHONDONTWRITEBYTECODE=1
python -m unittest -v tests/test_figure1.py
# The client's types are real: the test type-checks under --strict, and every misuse in
# tests/typing_checks.py is refused (an unneeded `type: ignore` is an error under --strict).
mypy --strict --no-incremental --cache-dir=/dev/null tests/test_figure1.py tests/typing_checks.py
