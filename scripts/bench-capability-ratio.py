#!/usr/bin/env python3
"""The capability decision at 100 and 10,000 held, many passes, binaries run alternately.

BENCHMARKS.md, "The capability decision at 10,000 held". On a shared or virtual
machine a single pass's p50 can move by half from one second to the next, so one run says
little about the 10k / 100 ratio. This runs the authorize bench's per-call report for the
`capability_allowed` row (3 passes per run) ROUNDS times for each binary in turn, and prints,
per binary, the medians over all passes of the p50 at 100 and at 10,000 held and of the
per-pass ratio, with their ranges, the share of passes at or under 1.5, and the median peak
resident set (from /usr/bin/time when it is installed). `--raw FILE` appends every pass as a
line `binary p50_100 p50_10000`, so passes from several sets can be pooled later
(`--pool FILE` prints the same summary from such a file without running anything).

Usage:
  cargo bench -p earshot-benches --bench authorize --no-run     # prints the binary's path
  cp target/release/deps/authorize-<hash> /tmp/authorize-after   # one copy per variant
  scripts/bench-capability-ratio.py --rounds 15 /tmp/authorize-before /tmp/authorize-after
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys

ROW = re.compile(r"^\s*capability_allowed\s+(\d+)\s+\d+\s+(\d+) ns")


def one_run(binary):
    """(p50 at 100 held, p50 at 10,000 held) per pass, and the peak RSS in KiB or None."""
    env = dict(
        os.environ,
        EARSHOT_AUTHORIZE_CASES="capability_allowed",
        EARSHOT_AUTHORIZE_HELD="100,10000",
        EARSHOT_AUTHORIZE_REPEAT="3",
    )
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    cmd = ([timer, "-f", "rss %M"] if timer else []) + [binary, "authorize/latency"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    by_held, rss = {"100": [], "10000": []}, None
    for line in (out.stdout + out.stderr).splitlines():
        m = ROW.match(line)
        if m:
            by_held[m.group(1)].append(int(m.group(2)))
        elif line.startswith("rss "):
            rss = int(line.split()[1])
    if not by_held["100"] or len(by_held["100"]) != len(by_held["10000"]):
        sys.exit(f"{binary}: no capability_allowed rows in its output")
    return list(zip(by_held["100"], by_held["10000"])), rss


def span(values, fmt="{:.0f}"):
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--raw", help="append every pass to this file")
    ap.add_argument("--pool", help="summarise the passes in this file instead of running")
    ap.add_argument("binaries", nargs="*")
    args = ap.parse_args()
    passes, rss = {}, {}
    if args.pool:
        with open(args.pool) as f:
            for line in f:
                b, small, large = line.split()
                passes.setdefault(b, []).append((int(small), int(large)))
                rss.setdefault(b, [])
    else:
        if not args.binaries:
            ap.error("name at least one binary (or --pool FILE)")
        passes = {b: [] for b in args.binaries}
        rss = {b: [] for b in args.binaries}
        for r in range(args.rounds):
            for b in args.binaries:
                got, peak = one_run(b)
                passes[b].extend(got)
                if peak is not None:
                    rss[b].append(peak)
                if args.raw:
                    with open(args.raw, "a") as f:
                        f.writelines(f"{b} {x} {y}\n" for x, y in got)
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    for b in passes:
        small = [p[0] for p in passes[b]]
        large = [p[1] for p in passes[b]]
        ratios = [y / x for x, y in passes[b]]
        under = 100 * sum(1 for x in ratios if x <= 1.5) / len(ratios)
        peak = f", peak RSS {statistics.median(rss[b]) / 1024:.0f} MB" if rss[b] else ""
        print(
            f"{b}: {len(ratios)} passes; p50 at 100 held {span(small)} ns, at 10,000 held {span(large)} ns; "
            f"10k / 100 {span(ratios, '{:.2f}')}, {under:.0f}% of passes <= 1.5{peak}"
        )


if __name__ == "__main__":
    main()
