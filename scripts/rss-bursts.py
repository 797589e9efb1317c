#!/usr/bin/env python3
"""RSS of `earshot serve` across bursts of concurrent connections (TESTING.md, "Hostile clients").

Starts the binary on a temporary data directory on 127.0.0.1, then runs BURSTS bursts; each opens
CONNS connections at once, sends `GET /readyz` on each, reads the answer and closes. After each
burst (and a settle pause) it prints VmRSS and VmHWM from /proc/<pid>/status. Everything stays
on loopback and every loop is bounded.

usage: scripts/rss-bursts.py [--bin target/release/earshot] [--bursts 3] [--conns 2000]
       [--mode request|silent] [--env MALLOC_ARENA_MAX=2] [--config 'max_connections = 512']
"""
import argparse
import asyncio
import os
import re
import subprocess
import tempfile
import time


def status(pid):
    text = open(f"/proc/{pid}/status").read()
    get = lambda k: int(re.search(rf"^{k}:\s+(\d+) kB", text, re.M).group(1)) // 1024
    threads = int(re.search(r"^Threads:\s+(\d+)", text, re.M).group(1))
    return get("VmRSS"), get("VmHWM"), threads


async def one(port, ok):
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
        w.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await w.drain()
        data = await asyncio.wait_for(r.read(), 10)
        ok.append(data.startswith(b"HTTP/1.1 200"))
        w.close()
    except (OSError, asyncio.TimeoutError):
        ok.append(False)


async def silent(port, ok, hold):
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
        await asyncio.sleep(hold)
        ok.append(True)
        w.close()
    except (OSError, asyncio.TimeoutError):
        ok.append(False)


async def burst(port, conns, mode, hold):
    ok = []
    if mode == "silent":
        await asyncio.gather(*(silent(port, ok, hold) for _ in range(conns)))
    else:
        await asyncio.gather(*(one(port, ok) for _ in range(conns)))
    return sum(ok)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/earshot")
    ap.add_argument("--bursts", type=int, default=3)
    ap.add_argument("--conns", type=int, default=2000)
    ap.add_argument("--settle", type=float, default=2.0)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--config", default="")
    ap.add_argument("--mode", choices=["request", "silent"], default="request",
                    help="request: GET /readyz on each connection; silent: connect, say nothing for --hold s, close")
    ap.add_argument("--hold", type=float, default=1.0)
    a = ap.parse_args()
    env = dict(os.environ, NO_COLOR="1", RUST_LOG="warn")
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    with tempfile.TemporaryDirectory() as d:
        port = 20000 + os.getpid() % 20000
        cfg = os.path.join(d, "c.toml")
        open(cfg, "w").write(a.config.replace("\\n", "\n") + "\n")
        p = subprocess.Popen([a.bin, "serve", "--data", os.path.join(d, "data"), "--bind", f"127.0.0.1:{port}",
                              "--config", cfg], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(100):
                time.sleep(0.1)
                try:
                    import socket
                    socket.create_connection(("127.0.0.1", port), 1).close()
                    break
                except OSError:
                    pass
            rss, hwm, th = status(p.pid)
            print(f"start    rss {rss:4d} MB  hwm {hwm:4d} MB  threads {th}")
            for i in range(a.bursts):
                t = time.time()
                served = asyncio.run(burst(port, a.conns, a.mode, a.hold))
                took = time.time() - t
                time.sleep(a.settle)
                rss, hwm, th = status(p.pid)
                print(f"burst {i + 1}  rss {rss:4d} MB  hwm {hwm:4d} MB  threads {th}  served {served}/{a.conns} in {took:.1f} s")
        finally:
            p.terminate()
            p.wait(10)


if __name__ == "__main__":
    main()
