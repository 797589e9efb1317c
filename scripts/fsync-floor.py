#!/usr/bin/env python3
"""The disk's sync floor (BENCHMARKS.md, "Acknowledged writes as a store grows"): p50 and p90 of
an 8 KiB append followed by fdatasync, and of an 8 KiB overwrite followed by fdatasync, 500 of
each, in a file of the directory given (default: the current one), which is then removed.

Usage: scripts/fsync-floor.py [DIRECTORY]
"""
import os
import sys
import tempfile
import time

N = 500
BLOCK = b"x" * 8192


def timed(fd, write):
    took = []
    for _ in range(N):
        t = time.perf_counter()
        write(fd)
        os.fdatasync(fd)
        took.append(time.perf_counter() - t)
    took.sort()
    return took[N // 2] * 1e6, took[N * 9 // 10] * 1e6


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "."
    fd, path = tempfile.mkstemp(prefix="fsync-floor-", dir=directory)
    try:
        append = timed(fd, lambda f: os.write(f, BLOCK))
        overwrite = timed(fd, lambda f: os.pwrite(f, BLOCK, 0))
    finally:
        os.close(fd)
        os.unlink(path)
    print("append + fdatasync:    p50 %.0f us, p90 %.0f us" % append)
    print("overwrite + fdatasync: p50 %.0f us, p90 %.0f us" % overwrite)


if __name__ == "__main__":
    main()
