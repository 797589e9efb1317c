#!/usr/bin/env bash
# Builds the `earshot` binary with profile-guided optimization (PGO) on top of the release
# profile's whole-program LTO (BENCHMARKS.md, "Profile-guided build"):
#
#  1. an instrumented release build (`-Cprofile-generate`), in target/pgo-gen;
#  2. a training run of that binary over HTTP: the README's walkthrough (the routes of the
#     blocks it runs, scripts/readme-walkthrough.sh), then the HTTP benchmark's load (a store of 30,000 items
#     written one by one, checks, `/healthz` and durable writes from 16 clients,
#     scripts/bench-http.sh, short runs; its results in target/bench-http-results are replaced);
#  3. the profiles merged with `llvm-profdata` of rustc's own LLVM version;
#  4. the release build again with `-Cprofile-use`, in target/pgo.
#
# The result is target/pgo/<host>/release/earshot (printed at the end); the plain release build
# in target/release is untouched. Every run trains anew, so the profile is always this code's.
#
# Usage: scripts/build-pgo.sh
# Environment: PGO_TRAIN_ITEMS (30000), PGO_TRAIN_DURATION seconds per wrk run (4).
# Needs what the two training scripts need (curl, python3, wrk, GNU time) and llvm-profdata for
# rustc's LLVM major version (Debian: `apt-get install llvm-<major>`; installed here when
# missing and possible).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
die() { echo "build-pgo: $*" >&2; exit 1; }

host="$(rustc -vV | awk '/^host:/ { print $2 }')"
llvm_major="$(rustc -vV | awk '/^LLVM version:/ { split($3, v, "."); print v[1] }')"
[[ -n "$host" && -n "$llvm_major" ]] || die "cannot read the host or LLVM version from rustc -vV"

# The profile format follows LLVM's version: the merge tool must be rustc's own major version.
profdata=""
for candidate in "llvm-profdata-$llvm_major" llvm-profdata; do
  if command -v "$candidate" >/dev/null \
    && "$candidate" merge --version 2>/dev/null | grep -q "LLVM version $llvm_major\."; then
    profdata="$candidate"
    break
  fi
done
if [[ -z "$profdata" && "$(id -u)" == 0 ]] && command -v apt-get >/dev/null; then
  apt-get install -y "llvm-$llvm_major" >/dev/null 2>&1 \
    || { apt-get update >/dev/null && apt-get install -y "llvm-$llvm_major" >/dev/null; } \
    || true
  command -v "llvm-profdata-$llvm_major" >/dev/null && profdata="llvm-profdata-$llvm_major"
fi
[[ -n "$profdata" ]] || die "no llvm-profdata for LLVM $llvm_major (install llvm-$llvm_major)"

raw="$root/target/pgo-data"
rm -rf "$raw"
mkdir -p "$raw"

# `--target` keeps RUSTFLAGS off build scripts and proc macros: only the binary's code (its
# crates and their dependencies) is instrumented.
echo "== 1/4 instrumented build (target/pgo-gen)"
RUSTFLAGS="-Cprofile-generate=$raw" \
  cargo build --release --locked -p earshot --target "$host" --target-dir "$root/target/pgo-gen"
trained="$root/target/pgo-gen/$host/release/earshot"

echo "== 2/4 training run"
EARSHOT="$trained" scripts/readme-walkthrough.sh >/dev/null
EARSHOT_BIN="$trained" BENCH_ITEMS="${PGO_TRAIN_ITEMS:-30000}" BENCH_RUNS=1 \
  BENCH_DURATION="${PGO_TRAIN_DURATION:-4}" BENCH_PORT=7951 scripts/bench-http.sh >/dev/null
compgen -G "$raw/*.profraw" >/dev/null || die "the training run left no profiles in $raw"

echo "== 3/4 merging $(find "$raw" -name '*.profraw' | wc -l) profiles with $profdata"
"$profdata" merge -o "$root/target/pgo-merged.tmp" "$raw"/*.profraw
# Named by its content: cargo tracks RUSTFLAGS, not the file they name, so a new profile under
# the same name would leave the dependencies built with the old one.
merged="$root/target/pgo-$(sha256sum "$root/target/pgo-merged.tmp" | cut -c1-16).profdata"
rm -f "$root"/target/pgo-*.profdata
mv "$root/target/pgo-merged.tmp" "$merged"

echo "== 4/4 optimized build (target/pgo)"
RUSTFLAGS="-Cprofile-use=$merged" \
  cargo build --release --locked -p earshot --target "$host" --target-dir "$root/target/pgo"
echo "built $root/target/pgo/$host/release/earshot"
