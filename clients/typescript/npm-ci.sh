# Sourced by generate.sh and test.sh: node_modules as package-lock.json pins it (`npm ci`),
# skipped when it already was installed from this very lock file.
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ "$(cat node_modules/.earshot-lock.sha256 2>/dev/null)" != "$lock_sum" ]]; then
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  echo "$lock_sum" >node_modules/.earshot-lock.sha256
fi
