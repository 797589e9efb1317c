# Sourced by clients/agents/test.sh and examples/agent/run.sh: a virtualenv with earshot_agents'
# pinned dependencies (requirements-dev.txt) at $EARSHOT_AGENTS_VENV (default
# ${CARGO_TARGET_DIR:-target}/agents-venv), rebuilt only when requirements-dev.txt changes; puts it
# first on PATH and earshot_agents on PYTHONPATH.
agents_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
agents_target="$(realpath -m "${CARGO_TARGET_DIR:-$agents_root/target}")"
agents_venv="${EARSHOT_AGENTS_VENV:-$agents_target/agents-venv}"
agents_req="$agents_root/clients/agents/requirements-dev.txt"
agents_want="$(sha256sum "$agents_req" | cut -d' ' -f1)"
if [[ ! -x "$agents_venv/bin/python" || "$(cat "$agents_venv/.requirements.sha256" 2>/dev/null)" != "$agents_want" ]]; then
  echo "earshot_agents: installing requirements-dev.txt into $agents_venv" >&2
  rm -rf "$agents_venv"
  python3 -m venv "$agents_venv"
  "$agents_venv/bin/pip" install --quiet --disable-pip-version-check --require-virtualenv -r "$agents_req"
  echo "$agents_want" >"$agents_venv/.requirements.sha256"
fi
export PATH="$agents_venv/bin:$PATH"
export PYTHONPATH="$agents_root/clients/agents${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
# Nothing here talks to a tracing service or downloads tokenizer files.
export LANGCHAIN_TRACING_V2=false LANGSMITH_TRACING=false
