# Sourced by generate.sh and test.sh: a virtualenv with the pinned generator and the client's
# dependencies (requirements-dev.txt), at $EARSHOT_PY_VENV (default target/clients/python-venv).
# It is rebuilt only when requirements-dev.txt changes.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="${EARSHOT_PY_VENV:-$root/target/clients/python-venv}"
req="$root/clients/python/requirements-dev.txt"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$req" | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/python" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  echo "python client: installing requirements-dev.txt into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --require-virtualenv -r "$req"
  echo "$want" >"$stamp"
fi
export PATH="$venv/bin:$PATH"
