#!/usr/bin/env python3
"""The check by name from 1k to 1M items, many runs of the peer bench, binaries run alternately.

BENCHMARKS.md, "Earshot against Cedar, and the cold check by name": the flatness target
(within 2× from 1k to 1M items). The target is
a ratio of a memory-bound figure (1M) to a cache-bound one (1k); on a shared or virtual
machine either moves by 10% from one run to the next, so one run says little about which side
of 2× the ratio sits. This runs the peer bench (`EARSHOT_PEER_SIZES=1000,1000000`) RUNS times
for each binary in turn and prints, per run, the by-name p50 at 1k and at 1M, their ratio and
Cedar's ratio to Earshot at each size; then, per binary, the median ratio with its range and
how many runs were at or under 2×.

Usage:
  cargo bench -p earshot-benches --features peer --bench peer --no-run   # prints the binary's path
  cp target/release/deps/peer-<hash> /tmp/peer-after                     # one copy per variant
  scripts/bench-flatness.py --runs 12 /tmp/peer-after [/tmp/peer-before ...]
The bench binary is run from `benches/` with `--bench`, as cargo runs it.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

# `      1000        by name       191 ns       280 ns      1913 ns      2394 ns          10.0×`
ROW = re.compile(r"^\s*(\d+)\s+by name\s+(\d+) ns\s+\d+ ns\s+(\d+) ns\s+\d+ ns\s+[\d.]+×")
BENCHES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benches")


def one_run(binary):
    """{items: (Earshot p50 ns, Cedar p50 ns)} for 1k and 1M items, by name."""
    env = dict(os.environ, EARSHOT_PEER_SIZES="1000,1000000")
    out = subprocess.run([binary, "--bench"], env=env, cwd=BENCHES, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{binary} failed (exit {out.returncode}):\n{out.stderr[-2000:]}")
    rows = {}
    for line in (out.stdout + out.stderr).splitlines():
        m = ROW.match(line)
        if m:
            rows[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    if set(rows) != {1000, 1000000}:
        sys.exit(f"{binary}: no by-name rows for 1k and 1M in its output")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=8, help="runs per binary (default 8)")
    ap.add_argument("binaries", nargs="+", help="peer bench binaries, run alternately")
    args = ap.parse_args()
    ratios = {b: [] for b in args.binaries}
    for r in range(args.runs):
        for b in args.binaries:
            rows = one_run(b)
            (small, cedar_small), (large, cedar_large) = rows[1000], rows[1000000]
            ratio = large / small
            ratios[b].append(ratio)
            print(
                f"run {r + 1}/{args.runs} {b}: 1k {small} ns, 1M {large} ns: {ratio:.2f}×; "
                f"Cedar / Earshot {cedar_small / small:.1f}× at 1k, {cedar_large / large:.1f}× at 1M",
                flush=True,
            )
    for b, rs in ratios.items():
        under = sum(1 for x in rs if x <= 2.0)
        print(
            f"{b}: {len(rs)} runs; 1M / 1k {statistics.median(rs):.2f}× at the median "
            f"({min(rs):.2f}–{max(rs):.2f}×), {under} of {len(rs)} at or under 2×"
        )


if __name__ == "__main__":
    main()
