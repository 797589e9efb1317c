#!/usr/bin/env python3
"""CPU time and context switches of a running process, by thread name, while a load runs
(BENCHMARKS.md, "Acknowledged writes as a store grows"): where a request's CPU goes, per thread
(writer, tokio workers, sled's I/O threads, reclaimer), which `perf` on a 2-vCPU guest blurs.

Reads each thread's `/proc/<pid>/task/<tid>/stat` (user + system time) and `status`
(voluntary and involuntary context switches) before and after COMMAND, and sums them by the
thread's name (`comm`, so the seven `sled-io-N` threads are seven rows). When COMMAND is wrk,
its "N requests in" line gives the count each figure is divided by; otherwise the totals print.
A thread that ends during COMMAND is not counted (the server's threads live as long as it does).

Usage: scripts/thread-cpu.py <server pid> -- wrk -t2 -c16 -d6s -s scripts/bench/write.lua ...
(the server from `scripts/bench-http-writes.sh` or `scripts/bench/serve.sh`; Linux only)
"""

import os
import re
import subprocess
import sys


def snapshot(pid):
    """Per thread name: [cpu ticks, voluntary switches, involuntary switches]."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                status = f.read()
        except FileNotFoundError:
            continue  # the thread ended between the listing and the read
        # The name is in parentheses and may hold spaces; the fields after it are fixed.
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
        vol = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
        invol = int(re.search(r"^nonvoluntary_ctxt_switches:\s+(\d+)", status, re.M).group(1))
        row = out.setdefault(name, [0, 0, 0])
        row[0] += ticks
        row[1] += vol
        row[2] += invol
    return out


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    pid = int(sys.argv[1])
    command = sys.argv[3:]
    hz = os.sysconf("SC_CLK_TCK")
    before = snapshot(pid)
    run = subprocess.run(command, capture_output=True, text=True)
    after = snapshot(pid)
    sys.stdout.write(run.stdout)
    if run.returncode != 0:
        sys.stderr.write(run.stderr)
        sys.exit(f"thread-cpu: the command failed ({run.returncode})")
    found = re.search(r"(\d+) requests in", run.stdout)
    count = int(found.group(1)) if found else 1
    unit = "per request" if found else "in all"
    print(f"\n{'thread':<18} {'CPU us ' + unit:>22} {'voluntary':>10} {'involuntary':>12}")
    total = [0.0, 0.0, 0.0]
    for name in sorted(after):
        b = before.get(name, [0, 0, 0])
        cpu_us = (after[name][0] - b[0]) / hz * 1e6 / count
        vol = (after[name][1] - b[1]) / count
        invol = (after[name][2] - b[2]) / count
        if cpu_us < 0.005 and vol + invol < 0.0005:
            continue  # idle through the run (prints as zeros)
        total = [total[0] + cpu_us, total[1] + vol, total[2] + invol]
        print(f"{name:<18} {cpu_us:>22.2f} {vol:>10.3f} {invol:>12.3f}")
    print(f"{'all':<18} {total[0]:>22.2f} {total[1]:>10.3f} {total[2]:>12.3f}")


if __name__ == "__main__":
    main()
