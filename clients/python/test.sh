#!/usr/bin/env bash
# Runs the Python client's tests against the real binary (tests/test_figure1.py: the README's
# Figure 1 walkthrough through the generated client; tests/test_facade.py: the same and the error
# answers through the hand-written façade, earshot_client_extras.Earshot) and type-checks them and
# the extras with mypy, so the client's models are shown to type the bodies. Builds
# target/debug/earshot if it is missing; EARSHOT_BIN names another binary. Installs its pinned
# tools into target/clients/python-venv (env.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
source "$here/env.sh"
export EARSHOT_BIN="${EARSHOT_BIN:-$root/target/debug/earshot}"
if [[ ! -x "$EARSHOT_BIN" ]]; then
  (cd "$root" && cargo build -p earshot)
fi
cd "$here"
export PYTHONPATH="$here" PYTHONDONTWRITEBYTECODE=1
python -m unittest -v tests/test_figure1.py tests/test_facade.py
# The client's types are real: the tests and the extras type-check under --strict, every misuse in
# tests/typing_checks.py is refused (an unneeded `type: ignore` is an error under --strict), and
# the façade's answers are used there as the success models they are.
mypy --strict --no-incremental --cache-dir=/dev/null earshot_client_extras \
  tests/test_figure1.py tests/test_facade.py tests/typing_checks.py
