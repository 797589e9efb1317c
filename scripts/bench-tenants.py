# Owns the tenants benchmark (issue 33, part 5): many small stores on one `earshot serve`, on sled and on PostgreSQL.
"""Many small stores ("tenants") on one replica, measured against the release server binary.

Per datastore (sled in a data directory under target/bench-tenants/, PostgreSQL on tables
prefixed `bench_tenants_`), one server is started with a cap on loaded stores and idle eviction
(--max-loaded-stores, --idle-store-seconds), and the script measures, over HTTP on loopback:

  1. create rate: N sequential `POST /v1/stores` on one keep-alive connection (p50/p99, creates/s),
     on the server holding no store yet and again right after the fill (step 2);
  2. bulk fill: STORES stores of 1 participant and 10 short items each, imported on 16 threads
     from the export of one template store built over the API (the import takes an export of
     another store as it is: the new store is the one the path names);
  3. threads, VmRSS and the tenancy lines of /metrics right after the fill and once it settles
     (idle eviction done);
  4. idle CPU of the settled server (utime+stime from /proc/<pid>/stat over wall time, % of one
     core), nothing sent to it meanwhile;
  5. the first check on each of K stores of 1,000 items once idle eviction has unloaded them;
  6. the check p50 of one hot 1,000-item store beside all the cold ones vs a fresh server holding
     only that store (rounds alternate between the two servers so machine noise hits both
     alike; every answer is verified: status 200 and the expected `admitted`);
  7. a restart: seconds until ready, and threads and VmRSS with the stores it loads at start-up
     (up to the cap), a clean figure of memory per loaded store;
  8. PostgreSQL only: three replicas on the same tables, each touching every store once (up to
     its cap, --replica-max-loaded-stores), then the idle CPU, threads and VmRSS of each.

Looking at what is loaded (`/metrics`, `GET /v1/stores`) does not count as using a store, and a
store loaded from its records (an import, a restart) holds no past revision, so it is evicted
like any other on sled too (a store written here stays loaded while a past revision of it is
still readable with `at_exact`).

Targets (issue 33): <= 64 threads, <= 2 GB resident, <= 2% of a core idle, hot check within 10%
of a server holding only that store, store creation p50 <= 2 ms (sled) / 5 ms (PostgreSQL),
first use of an evicted store p50 <= 20 ms. A missed target prints FAIL and the script still
exits 0 (it is a measurement); it exits 1 only when the server misbehaves (an error answer, a
wrong decision, a store that stays loaded or a server that dies or never becomes ready).

Prints a table and writes target/bench-tenants/results.json. Every server it starts is stopped
at the end (also on Ctrl-C or an error), its sled data directories removed and its PostgreSQL
tables dropped. Server logs (warnings and errors) stay in target/bench-tenants/logs/.

Usage (from the repository root, after `cargo build --release -p earshot`):
  python3 scripts/bench-tenants.py                                # both datastores, 100,000 stores
  python3 scripts/bench-tenants.py --stores 10000 --datastore sled
  STORES=2000 python3 scripts/bench-tenants.py --idle-seconds 10 --datastore postgres
Options (all with defaults; --help lists them): --bin PATH ($EARSHOT_BIN, else
target/release/earshot), --port P (uses P..P+4), --pg URL (postgres://root@127.0.0.1:5432/test),
--creates N, --big-stores K, --big-items N, --hot-checks N, --threads T, --max-loaded-stores N,
--idle-store-seconds S, --retention-seconds S, --replica-max-loaded-stores N.
Runs take a while: each idle window is
--idle-seconds (60) long.
"""

import argparse
import http.client
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "target", "bench-tenants")
CLK_TCK = os.sysconf("SC_CLK_TCK")
PG_PREFIX = "bench_tenants_"
# The fresh server of the hot-store comparison keeps its own tables, so that it holds only that store.
PG_SOLO_PREFIX = "bench_tenants_solo_"
# /metrics lines reported (counters carry Prometheus' `_total` suffix).
TENANCY_METRICS = (
    "earshot_stores_loaded",
    "earshot_stores_unloaded",
    "earshot_store_evictions_total",
    "earshot_store_reloads_total",
    "earshot_store_reload_seconds_sum",
    "earshot_store_reload_seconds_max",
    "earshot_writer_threads",
)
# The container every check uses: the owner with `guest` present. A public item is admitted, an
# owner-private one is not, so half the answers are true and half false.
GUEST_CONTAINER = {"owner": "owner", "viewers": {"participants": ["guest"]}}

# Servers this process started; all stopped on the way out, whatever the way out.
SERVERS = []


class Misbehaved(Exception):
    """The server answered wrongly or died: reported, and the script exits non-zero."""


# ---------------------------------------------------------------------------------------------
# HTTP


class Client:
    """One keep-alive connection. The server closes a connection idle for header_read_timeout
    (10 s by default), so a connection idle for a few seconds is replaced before it is used,
    rather than retrying a request that may or may not have been applied."""

    IDLE_REOPEN = 5.0

    def __init__(self, port, timeout=120):
        self.port, self.timeout = port, timeout
        self.conn, self.used = None, 0.0

    def request(self, method, path, body=None, ctype="application/json"):
        if self.conn is None or time.monotonic() - self.used > self.IDLE_REOPEN:
            self.close()
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        headers = {}
        if body is not None:
            if not isinstance(body, (bytes, bytearray)):
                body = json.dumps(body).encode()
            headers["content-type"] = ctype
        try:
            self.conn.request(method, path, body=body, headers=headers)
            resp = self.conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException):
            self.close()
            raise
        self.used = time.monotonic()
        if resp.getheader("connection", "").lower() == "close":
            self.close()
        return resp.status, data

    def expect(self, method, path, body=None, status=(200,), ctype="application/json"):
        """The decoded JSON answer; a status outside `status` is the server misbehaving."""
        got, data = self.request(method, path, body, ctype)
        if got not in status:
            raise Misbehaved(f"{method} {path} answered {got}: {data[:500]!r}")
        return json.loads(data) if data and data[:1] in b"{[" else data

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def check(client, store, item, expected):
    """One check with its latency in ns; the answer must be 200 with the expected `admitted`."""
    body = json.dumps({"item": item, "container": GUEST_CONTAINER}).encode()
    t0 = time.perf_counter_ns()
    status, data = client.request("POST", f"/v1/stores/{store}/check", body)
    took = time.perf_counter_ns() - t0
    if status != 200:
        raise Misbehaved(f"check {store}/{item} answered {status}: {data[:500]!r}")
    answer = json.loads(data)
    if answer.get("admitted") is not expected or answer.get("item") != item:
        raise Misbehaved(f"check {store}/{item}: expected admitted={expected}, got {data[:500]!r}")
    return took


def parallel(items, work, threads):
    """Runs work(client, item) for every item on `threads` threads, each with its own keep-alive
    connection; answers the per-item latencies in ns. Stops at the first failure and raises it.
    Daemon threads and a polling join keep Ctrl-C effective."""
    port = work.port
    lock, failure, lat = threading.Lock(), [], []
    it = iter(items)
    stop = threading.Event()

    def run():
        client, mine = Client(port), []
        try:
            while not stop.is_set():
                with lock:
                    item = next(it, None)
                if item is None:
                    break
                t0 = time.perf_counter_ns()
                work(client, item)
                mine.append(time.perf_counter_ns() - t0)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            with lock:
                failure.append(e)
            stop.set()
        finally:
            client.close()
            with lock:
                lat.extend(mine)

    workers = [threading.Thread(target=run, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    try:
        for w in workers:
            while w.is_alive():
                w.join(0.5)
    finally:
        stop.set()
    if failure:
        raise failure[0]
    return lat


# ---------------------------------------------------------------------------------------------
# The server process


class Server:
    def __init__(self, name, binary, port, store_args, extra=()):
        self.name, self.port = name, port
        os.makedirs(os.path.join(OUT, "logs"), exist_ok=True)
        self.log_path = os.path.join(OUT, "logs", f"{name}.log")
        cmd = [binary, "serve", "--bind", f"127.0.0.1:{port}", *store_args, *extra]
        self.cmd = cmd
        env = dict(os.environ, RUST_LOG=os.environ.get("BENCH_RUST_LOG", "warn"))
        self.log = open(self.log_path, "w")
        # Its own session: a Ctrl-C in the terminal reaches this script, which stops it in order.
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        SERVERS.append(self)
        self.pid = self.proc.pid

    def wait_ready(self, timeout):
        """Waits for /readyz 200 (every store loaded that it loads at start-up)."""
        deadline = time.monotonic() + timeout
        client = Client(self.port, timeout=5)
        while time.monotonic() < deadline:
            self.alive()
            try:
                status, _ = client.request("GET", "/readyz")
                if status == 200:
                    return
            except OSError:
                client.close()
            time.sleep(0.2)
        raise Misbehaved(f"{self.name} not ready after {timeout:.0f} s (log: {self.log_path})")

    def alive(self):
        if self.proc.poll() is not None:
            raise Misbehaved(f"{self.name} exited with {self.proc.returncode}; log {self.log_path}:\n{tail(self.log_path)}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if self in SERVERS:
            SERVERS.remove(self)

    def status(self):
        """Threads, VmRSS and VmHWM (MiB) from /proc/<pid>/status."""
        text = open(f"/proc/{self.pid}/status").read()
        kb = lambda k: int(re.search(rf"^{k}:\s+(\d+) kB", text, re.M).group(1))
        return {
            "threads": int(re.search(r"^Threads:\s+(\d+)", text, re.M).group(1)),
            "rss_mib": round(kb("VmRSS") / 1024, 1),
            "hwm_mib": round(kb("VmHWM") / 1024, 1),
        }

    def cpu_seconds(self):
        """utime + stime of every thread, from /proc/<pid>/stat (fields 14 and 15; the name in
        parentheses may hold spaces, so fields are counted after its closing parenthesis)."""
        fields = open(f"/proc/{self.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def metrics(self):
        """The TENANCY_METRICS lines of /metrics."""
        client = Client(self.port)
        data = client.expect("GET", "/metrics")
        client.close()
        out = {}
        for line in data.decode().splitlines():
            name, _, value = line.partition(" ")
            if name in TENANCY_METRICS:
                out[name] = float(value) if "." in value or "e" in value else int(value)
        return out

    def snapshot(self):
        """Threads, memory and the tenancy lines of /metrics, with the machine's load average
        (the machine may be shared: a busy neighbour shows there)."""
        self.alive()
        return {**self.status(), "metrics": self.metrics(), "loadavg_1m": os.getloadavg()[0]}


def tail(path, lines=20):
    try:
        return "".join(open(path).readlines()[-lines:])
    except OSError:
        return ""


def stop_all():
    for s in list(SERVERS):
        try:
            s.stop()
        except Exception as e:  # noqa: BLE001 - keep stopping the others
            print(f"stopping {s.name}: {e}", file=sys.stderr)


def idle_cpu(servers, seconds):
    """% of one core each server used over `seconds` of wall time, nothing sent to it meanwhile."""
    t0, c0 = time.monotonic(), [s.cpu_seconds() for s in servers]
    time.sleep(seconds)
    wall = time.monotonic() - t0
    for s in servers:
        s.alive()
    return [round(100 * (s.cpu_seconds() - c) / wall, 3) for s, c in zip(servers, c0)]


# ---------------------------------------------------------------------------------------------
# Datastores


def pg_drop(url, prefix):
    sql = (
        f"DROP TABLE IF EXISTS {prefix}records, {prefix}heads, {prefix}history, {prefix}log; "
        f"DROP SEQUENCE IF EXISTS {prefix}head_changes"
    )
    out = subprocess.run(["psql", url, "-q", "-v", "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"psql {url}: {out.stderr.strip()}")


def pg_url(base, prefix):
    return f"{base}{'&' if '?' in base else '?'}earshot_prefix={prefix}"


# ---------------------------------------------------------------------------------------------
# Figures


def pct(values, q):
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def ms(ns_values):
    return {"p50_ms": round(pct(ns_values, 0.5) / 1e6, 3), "p99_ms": round(pct(ns_values, 0.99) / 1e6, 3)}


def progress(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------
# Phases


def build_store(client, store, items, participants=("owner", "guest")):
    """A store built over the API: the participants, then `items` items owned by `owner`, even
    ones public and odd ones owner-private (so `guest` is admitted to exactly the even ones)."""
    client.expect("POST", "/v1/stores", {"id": store}, status=(201,))
    for p in participants:
        client.expect("POST", f"/v1/stores/{store}/participants", {"id": p, "kind": "person"}, status=(201,))
    width = len(str(items - 1))
    for i in range(items):
        body = {
            "id": f"i{i:0{width}d}",
            "owner": "owner",
            "content": f"note {i}",
            "origin": "public" if i % 2 == 0 else "owner_private",
        }
        client.expect("POST", f"/v1/stores/{store}/items", body, status=(201,))
    return [(f"i{i:0{width}d}", i % 2 == 0) for i in range(items)]


def export(client, store):
    status, data = client.request("GET", f"/v1/stores/{store}/export")
    if status != 200:
        raise Misbehaved(f"export {store} answered {status}: {data[:500]!r}")
    return data


def importer(port, body, records):
    """A work function for `parallel`: imports `body` as the store named by its argument."""

    def work(client, store):
        answer = client.expect(
            "POST", f"/v1/stores/{store}/import", body, status=(201,), ctype="application/x-ndjson"
        )
        if answer.get("store") != store or answer.get("records") != records:
            raise Misbehaved(f"import {store}: unexpected answer {answer}")

    work.port = port
    return work


def phase_create(server, n, prefix):
    client, lat = Client(server.port), []
    t0 = time.monotonic()
    for i in range(n):
        store = f"{prefix}-{i:06d}"
        s0 = time.perf_counter_ns()
        status, data = client.request("POST", "/v1/stores", json.dumps({"id": store}).encode())
        lat.append(time.perf_counter_ns() - s0)
        if status != 201:
            raise Misbehaved(f"create {store} answered {status}: {data[:500]!r}")
    wall = time.monotonic() - t0
    client.close()
    tenth = max(1, n // 10)
    return {
        "stores": n,
        **ms(lat),
        "per_second": round(n / wall, 1),
        # A creation that slows as stores accumulate shows as a later tenth slower than the first.
        "p50_first_tenth_ms": round(pct(lat[:tenth], 0.5) / 1e6, 3),
        "p50_last_tenth_ms": round(pct(lat[-tenth:], 0.5) / 1e6, 3),
    }


def phase_fill(server, stores, threads, body, records):
    ids = [f"t-{i:06d}" for i in range(stores)]
    progress(f"fill: importing {stores} stores of 10 items ({len(body)} bytes each) on {threads} threads")
    t0 = time.monotonic()
    lat = parallel(ids, importer(server.port, body, records), threads)
    wall = time.monotonic() - t0
    return {
        "stores": stores,
        "export_bytes": len(body),
        "records_per_store": records,
        "seconds": round(wall, 1),
        "per_second": round(stores / wall, 1),
        **ms(lat),
    }, ids


def templates(server, big_items):
    """The two template stores, built over the API, and their exports: `tpl-small` (the owner and
    10 items) for the fill, `tpl-big` (owner, guest and `big_items` items) for the evicted stores
    and the hot one."""
    client = Client(server.port)
    build_store(client, "tpl-small", 10, participants=("owner",))
    small = export(client, "tpl-small")
    small_records = json.loads(small.splitlines()[-1])["earshot_export_end"]["records"]
    expected = build_store(client, "tpl-big", big_items)
    big = export(client, "tpl-big")
    big_records = json.loads(big.splitlines()[-1])["earshot_export_end"]["records"]
    client.close()
    return (small, small_records), (big, big_records, expected)


def quiet_poll_seconds(idle_store_seconds):
    """How long to wait between two looks at what is loaded: an idle window and a little more,
    so that each look can see the evictions the previous one waited for."""
    return max(idle_store_seconds, 2) + 3


def settle(server, not_before, idle_store_seconds, limit=900):
    """Waits, sending nothing, until `not_before` (when eviction may have taken every idle
    store), then looks every quiet_poll_seconds until the count of loaded stores stops moving
    (or is 0); answers the seconds waited."""
    t0 = time.monotonic()
    time.sleep(max(0.0, not_before - t0))
    last = None
    while time.monotonic() - t0 < limit:
        loaded = server.metrics().get("earshot_stores_loaded")
        if loaded == 0 or loaded == last:
            break
        last = loaded
        time.sleep(quiet_poll_seconds(idle_store_seconds))
    return round(time.monotonic() - t0, 1)


def loaded_ids(server, wanted):
    """Of `wanted`, the stores loaded now. `GET /v1/stores` gives no revision for a store that is
    not loaded and does not load it."""
    client, cursor, loaded = Client(server.port), None, set()
    while True:
        path = "/v1/stores?limit=1000" + (f"&cursor={cursor}" if cursor else "")
        page = client.expect("GET", path)
        loaded.update(s["id"] for s in page["results"] if "revision" in s and s["id"] in wanted)
        cursor = page.get("next_cursor")
        if not cursor:
            break
    client.close()
    return loaded


def phase_evicted_first_use(server, k, big, evictable_at, idle_store_seconds):
    """K copies of the big template imported, left until eviction unloads them all, then the
    first check on each (which loads it again) and a second one."""
    body, records, expected = big
    cold = [f"cold-{i:03d}" for i in range(k)]
    t0 = time.monotonic()
    parallel(cold, importer(server.port, body, records), min(8, k))
    imported = time.monotonic() - t0
    # Eviction runs once a second and spares a store used in the last 2 s; idle eviction takes
    # each after --idle-store-seconds.
    progress(f"first use: {k} stores of {len(expected)} items imported in {imported:.1f} s; waiting for their eviction")
    wanted, t0 = set(cold), time.monotonic()
    # Nothing is sent until they may all have gone, then a look every quiet_poll_seconds.
    time.sleep(max(0.0, evictable_at - t0) + idle_store_seconds + 2)
    limit = max(0.0, evictable_at - t0) + idle_store_seconds + 120
    while True:
        still = loaded_ids(server, wanted)
        if not still:
            break
        if time.monotonic() - t0 > limit:
            raise Misbehaved(f"{len(still)} of {k} stores still loaded {limit:.0f} s after their import")
        time.sleep(quiet_poll_seconds(idle_store_seconds))
    waited = time.monotonic() - t0
    before = server.metrics()
    rng = random.Random(33)
    client, first, second = Client(server.port), [], []
    for store in cold:
        item, admitted = rng.choice(expected)
        first.append(check(client, store, item, admitted))
        second.append(check(client, store, item, admitted))
    client.close()
    after = server.metrics()
    reloads = after["earshot_store_reloads_total"] - before["earshot_store_reloads_total"]
    reload_s = after["earshot_store_reload_seconds_sum"] - before["earshot_store_reload_seconds_sum"]
    return {
        "stores": k,
        "items_per_store": len(expected),
        "import_seconds": round(imported, 1),
        "eviction_wait_seconds": round(waited, 1),
        "first_check": ms(first),
        "second_check": ms(second),
        "reloads": reloads,
        "reload_mean_ms": round(1000 * reload_s / reloads, 3) if reloads else None,
    }


def hot_rounds(servers, expected, checks, rounds=10, warmup=1000):
    """Sequential checks of store `hot` on one connection per server, `rounds` rounds alternating
    between the servers; answers each server's latencies (ns)."""
    clients = [Client(s.port) for s in servers]
    lat = [[] for _ in servers]
    for c in clients:
        for n in range(warmup):
            item, admitted = expected[n % len(expected)]
            check(c, "hot", item, admitted)
    per_round = checks // rounds
    n = 0
    for _ in range(rounds):
        for i, c in enumerate(clients):
            for _ in range(per_round):
                item, admitted = expected[n % len(expected)]
                n += 1
                lat[i].append(check(c, "hot", item, admitted))
    for c in clients:
        c.close()
    return lat


def verify_stores(server, small_ids, expected_total):
    """Every store is listed, and a sample of the filled ones answers (it loads them: done last)."""
    client, cursor, listed = Client(server.port), None, 0
    while True:
        page = client.expect("GET", "/v1/stores?limit=1000" + (f"&cursor={cursor}" if cursor else ""))
        listed += len(page["results"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
    if listed != expected_total:
        raise Misbehaved(f"GET /v1/stores lists {listed} stores, expected {expected_total}")
    for store in random.Random(5).sample(small_ids, min(200, len(small_ids))):
        info = client.expect("GET", f"/v1/stores/{store}")
        if info.get("items") != 10:
            raise Misbehaved(f"store {store}: {info}")
        check(client, store, "i3", False)  # owner-private: `guest` is not a participant there, and
        # an unresolved viewer set fails closed to public items, so i3 is never admitted
        check(client, store, "i4", True)
    client.close()
    return listed


def dir_bytes(path):
    """Bytes of the files under `path` (what the data directory holds on disk)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total


def run_datastore(kind, args, results):
    r = results[kind] = {"stores": args.stores}
    idle, retention = args.idle_store_seconds, args.retention_seconds
    server_flags = [
        "--max-loaded-stores", str(args.max_loaded_stores),
        "--idle-store-seconds", str(idle),
        "--retention-seconds", str(retention),
    ]
    if kind == "sled":
        data = os.path.join(OUT, "sled-data")
        solo_data = os.path.join(OUT, "sled-solo-data")
        for d in (data, solo_data):
            shutil.rmtree(d, ignore_errors=True)
        main_args, solo_args = ["--data", data], ["--data", solo_data]
        cleanup = lambda: [shutil.rmtree(d, ignore_errors=True) for d in (data, solo_data)]
        # An imported store holds only its newest revision: evictable at once on sled too.
        pinned_for = 0
    else:
        for p in (PG_PREFIX, PG_SOLO_PREFIX):
            pg_drop(args.pg, p)
        main_args = ["--datastore", pg_url(args.pg, PG_PREFIX)]
        solo_args = ["--datastore", pg_url(args.pg, PG_SOLO_PREFIX)]
        cleanup = lambda: [pg_drop(args.pg, p) for p in (PG_PREFIX, PG_SOLO_PREFIX)]
        pinned_for = 0
    r["server_flags"] = server_flags
    try:
        server = Server(f"{kind}-main", args.bin, args.port, main_args, server_flags)
        server.wait_ready(60)
        progress(f"{kind}: server pid {server.pid}: {' '.join(server.cmd)}")
        r["started"] = server.snapshot()

        progress(f"{kind}: building the templates over the API")
        (small, small_records), big = templates(server, args.big_items)
        templates_done = time.monotonic()

        progress(f"{kind}: creating {args.creates} stores one after another, on a server holding none")
        r["create"] = phase_create(server, args.creates, "new")
        progress(f"{kind}: create p50 {r['create']['p50_ms']} ms, {r['create']['per_second']}/s")

        # (Kept for a server that pins stores whose last commit is inside the retention window.)
        wait = templates_done + pinned_for + 1 - time.monotonic()
        if pinned_for and wait > 0:
            progress(f"{kind}: waiting {wait:.0f} s for the templates' last commit to leave the {retention} s "
                     "retention window (until then no copy of them can be evicted)")
            time.sleep(wait)
        r["fill"], small_ids = phase_fill(server, args.stores, args.threads, small, small_records)
        progress(f"{kind}: fill {r['fill']['per_second']} stores/s")
        r["after_fill"] = server.snapshot()
        progress(f"{kind}: after the fill: {fmt_snap(r['after_fill'])}")
        if kind == "sled":
            r["disk_mib"] = round(dir_bytes(data) / (1 << 20), 1)
            progress(f"{kind}: the data directory holds {r['disk_mib']} MiB")
        # Creation again, now beside every filled store (while idle eviction takes them).
        r["create_after_fill"] = phase_create(server, args.creates, "late")
        progress(f"{kind}: create beside {args.stores} stores: p50 {r['create_after_fill']['p50_ms']} ms")
        last_write = time.monotonic()
        not_before = last_write + (idle + 3 if idle > 0 else 5)
        r["settle_seconds"] = settle(server, not_before, idle)
        r["settled"] = server.snapshot()
        progress(f"{kind}: settled after {r['settle_seconds']} s: {fmt_snap(r['settled'])}")

        progress(f"{kind}: idle CPU over {args.idle_seconds} s")
        r["idle_cpu_pct"] = idle_cpu([server], args.idle_seconds)[0]
        r["after_idle"] = server.snapshot()
        progress(f"{kind}: idle CPU {r['idle_cpu_pct']}% of a core")

        c = Client(server.port)
        c.expect("POST", "/v1/stores/hot/import", big[0], status=(201,), ctype="application/x-ndjson")
        c.close()
        if idle > 0:
            fu = phase_evicted_first_use(server, args.big_stores, big, templates_done + pinned_for, idle)
            r["evicted_first_use"] = fu
            progress(f"{kind}: first use of an evicted store: p50 {fu['first_check']['p50_ms']} ms")
        else:
            r["evicted_first_use"] = None  # nothing evicts them under the cap in time: skipped

        progress(f"{kind}: hot store beside the cold ones vs a fresh server holding only it")
        solo = Server(f"{kind}-solo", args.bin, args.port + 1, solo_args, server_flags)
        solo.wait_ready(60)
        c = Client(solo.port)
        c.expect("POST", "/v1/stores/hot/import", big[0], status=(201,), ctype="application/x-ndjson")
        c.close()
        many, alone = hot_rounds([server, solo], big[2], args.hot_checks)
        h = r["hot"] = {
            "checks_each": len(many),
            "items": len(big[2]),
            "beside_cold_p50_us": round(pct(many, 0.5) / 1e3, 1),
            "alone_p50_us": round(pct(alone, 0.5) / 1e3, 1),
            "beside_cold_p99_us": round(pct(many, 0.99) / 1e3, 1),
            "alone_p99_us": round(pct(alone, 0.99) / 1e3, 1),
        }
        h["ratio"] = round(h["beside_cold_p50_us"] / h["alone_p50_us"], 3)
        progress(f"{kind}: hot check p50 {h['beside_cold_p50_us']} us beside vs {h['alone_p50_us']} us alone")
        r["solo"] = solo.snapshot()
        solo.stop()

        # tpl-small, tpl-big and hot besides the created, filled and evicted ones
        total = 2 * args.creates + args.stores + (args.big_stores if idle > 0 else 0) + 3
        r["total_stores"] = total
        r["end"] = server.snapshot()
        verify_stores(server, small_ids, total)
        progress(f"{kind}: all {total} stores listed; a sample of 200 filled ones answers")
        server.stop()

        # A restart loads stores up to the cap at start-up, nothing else running: how long it
        # takes, and a clean figure of memory per loaded store.
        server = Server(f"{kind}-restarted", args.bin, args.port, main_args, server_flags)
        t0 = time.monotonic()
        server.wait_ready(120 + total / 50)
        r["restart"] = {"ready_seconds": round(time.monotonic() - t0, 1), **server.snapshot()}
        progress(f"{kind}: restarted in {r['restart']['ready_seconds']} s: {fmt_snap(r['restart'])}")
        server.stop()

        if kind == "postgres":
            r["replicas"] = phase_replicas(args, total)
    finally:
        stop_all()
        cleanup()


def fmt_snap(snap):
    m = snap["metrics"]
    return (
        f"{snap['threads']} threads, VmRSS {snap['rss_mib']} MiB, loaded {m.get('earshot_stores_loaded')}, "
        f"unloaded {m.get('earshot_stores_unloaded')}, evictions {m.get('earshot_store_evictions_total')}"
    )


def phase_replicas(args, total):
    """Three replicas on the same tables, each touching every store once (a GET, which loads it
    if it is not loaded: up to the replica's cap, the least recently used evicted above it), then
    left alone: the CPU each spends following the stores it holds."""
    flags = ["--max-loaded-stores", str(args.replica_max_loaded_stores)]
    url = pg_url(args.pg, PG_PREFIX)
    replicas = [
        Server(f"postgres-replica-{i + 1}", args.bin, args.port + 2 + i, ["--datastore", url], flags) for i in range(3)
    ]
    t0 = time.monotonic()
    for s in replicas:
        s.wait_ready(120 + total / 50)
    started = time.monotonic() - t0
    progress(f"replicas ready in {started:.1f} s; touching every store on each")
    ids = all_ids(replicas[0])
    if len(ids) != total:
        raise Misbehaved(f"replica lists {len(ids)} stores, expected {total}")

    def touch_on(server):
        def work(client, store):
            client.expect("GET", f"/v1/stores/{store}")

        work.port = server.port
        return work

    t0 = time.monotonic()
    for s in replicas:
        parallel(ids, touch_on(s), 8)
    touched = time.monotonic() - t0
    time.sleep(5)
    out = {"flags": flags, "ready_seconds": round(started, 1), "touch_seconds": round(touched, 1), "each": []}
    before = [s.snapshot() for s in replicas]
    progress(f"replicas: idle CPU over {args.idle_seconds} s, all three at once")
    cpu = idle_cpu(replicas, args.idle_seconds)
    for s, b, c in zip(replicas, before, cpu):
        out["each"].append({"name": s.name, "idle_cpu_pct": c, "before_idle": b, "after_idle": s.snapshot()})
    return out


def all_ids(server):
    client, cursor, ids = Client(server.port), None, []
    while True:
        page = client.expect("GET", "/v1/stores?limit=1000" + (f"&cursor={cursor}" if cursor else ""))
        ids.extend(s["id"] for s in page["results"])
        cursor = page.get("next_cursor")
        if not cursor:
            return ids


# ---------------------------------------------------------------------------------------------
# Report


def verdict(ok):
    return "PASS" if ok else "FAIL"


def report(results):
    rows = []
    for kind in ("sled", "postgres"):
        r = results.get(kind)
        if not r or "settled" not in r:
            continue
        create_target = 2 if kind == "sled" else 5
        for label, c in (("create (no store yet)", r["create"]), ("create (after the fill)", r.get("create_after_fill"))):
            if not c:
                continue
            rows.append((kind, f"{label} p50 / p99", f"{c['p50_ms']} / {c['p99_ms']} ms, {c['per_second']}/s "
                         f"(p50 first tenth {c['p50_first_tenth_ms']}, last {c['p50_last_tenth_ms']})",
                         f"p50 <= {create_target} ms", verdict(c["p50_ms"] <= create_target)))
        f = r["fill"]
        rows.append((kind, f"fill {f['stores']} stores (10 items)", f"{f['per_second']} stores/s in {f['seconds']} s",
                     "", ""))
        if "disk_mib" in r:
            per = r["disk_mib"] * 1024 / max(1, f["stores"] + r["create"]["stores"])
            rows.append((kind, "data directory after the fill", f"{r['disk_mib']} MiB ({per:.1f} KiB per store)", "", ""))
        for label, snap in (("after fill", r["after_fill"]), ("settled", r["settled"]), ("end", r.get("end")),
                            ("restarted", r.get("restart"))):
            if not snap:
                continue
            m = snap["metrics"]
            rows.append((kind, f"threads {label}", str(snap["threads"]), "<= 64", verdict(snap["threads"] <= 64)))
            rows.append((kind, f"VmRSS {label}", f"{snap['rss_mib']} MiB (peak {snap['hwm_mib']})", "<= 2 GB",
                         verdict(snap["rss_mib"] <= 2048)))
            rows.append((kind, f"loaded/unloaded {label}",
                         f"{m.get('earshot_stores_loaded')}/{m.get('earshot_stores_unloaded')}, evictions "
                         f"{m.get('earshot_store_evictions_total')}, reloads {m.get('earshot_store_reloads_total')}, "
                         f"writer threads {m.get('earshot_writer_threads')}", "", ""))
        rows.append((kind, "idle CPU", f"{r['idle_cpu_pct']}% of a core, "
                     f"{r['settled']['metrics'].get('earshot_stores_loaded')} stores loaded", "<= 2%",
                     verdict(r["idle_cpu_pct"] <= 2)))
        fu = r.get("evicted_first_use")
        if fu:
            rows.append((kind, f"first check, evicted {fu['items_per_store']}-item store",
                         f"p50 {fu['first_check']['p50_ms']} / p99 {fu['first_check']['p99_ms']} ms "
                         f"(then {fu['second_check']['p50_ms']} ms; reload mean {fu['reload_mean_ms']} ms)",
                         "p50 <= 20 ms", verdict(fu["first_check"]["p50_ms"] <= 20)))
        rs = r.get("restart")
        if rs and rs["metrics"].get("earshot_stores_loaded"):
            loaded = rs["metrics"]["earshot_stores_loaded"]
            grown = rs["rss_mib"] - r["started"]["rss_mib"]
            rows.append((kind, "restart: ready, VmRSS per loaded store", f"{rs['ready_seconds']} s; "
                         f"{1024 * grown / loaded:.0f} KiB ({grown:.0f} MiB over the {loaded} loaded at start-up)", "", ""))
        h = r.get("hot")
        if not h:
            continue
        rows.append((kind, f"hot check p50 ({h['checks_each']} each)",
                     f"{h['beside_cold_p50_us']} us beside cold vs {h['alone_p50_us']} us alone: {h['ratio']}x",
                     "within 10%", verdict(h["ratio"] <= 1.10)))
        for rep in (r.get("replicas") or {}).get("each", []):
            a, name = rep["after_idle"], rep["name"]
            rows.append((kind, f"{name} idle CPU", f"{rep['idle_cpu_pct']}% of a core, "
                         f"{a['metrics'].get('earshot_stores_loaded')} stores loaded", "<= 2%",
                         verdict(rep["idle_cpu_pct"] <= 2)))
            rows.append((kind, f"{name} threads", str(a["threads"]), "<= 64", verdict(a["threads"] <= 64)))
            loaded = a["metrics"].get("earshot_stores_loaded") or 1
            per = 1024 * (a["rss_mib"] - r["started"]["rss_mib"]) / loaded
            rows.append((kind, f"{name} VmRSS", f"{a['rss_mib']} MiB ({per:.0f} KiB per loaded store)", "<= 2 GB",
                         verdict(a["rss_mib"] <= 2048)))
    widths = [max(len(str(row[i])) for row in rows) for i in range(5)] if rows else [0] * 5
    print()
    for row in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datastore", choices=("sled", "postgres", "both"), default="both")
    ap.add_argument("--stores", type=int, default=int(os.environ.get("STORES", 100_000)),
                    help="small stores of the bulk fill (default $STORES or 100000)")
    ap.add_argument("--idle-seconds", type=float, default=60, help="idle CPU window (default 60)")
    ap.add_argument("--bin", default=os.environ.get("EARSHOT_BIN", os.path.join(ROOT, "target", "release", "earshot")))
    ap.add_argument("--port", type=int, default=7950, help="first port; P..P+4 are used (default 7950)")
    ap.add_argument("--pg", default="postgres://root@127.0.0.1:5432/test", help="PostgreSQL URL (no prefix)")
    ap.add_argument("--creates", type=int, default=2000, help="sequential store creations (default 2000)")
    ap.add_argument("--big-stores", type=int, default=50, help="stores evicted then used once (default 50)")
    ap.add_argument("--big-items", type=int, default=1000, help="items of each of those (default 1000)")
    ap.add_argument("--hot-checks", type=int, default=20_000, help="hot checks per server (default 20000)")
    ap.add_argument("--threads", type=int, default=16, help="client threads of the bulk fill (default 16)")
    ap.add_argument("--max-loaded-stores", type=int, default=5000, help="the server's cap (default 5000)")
    ap.add_argument("--idle-store-seconds", type=int, default=10,
                    help="the server's idle eviction (default 10; 0 skips the first-use measure)")
    ap.add_argument("--retention-seconds", type=int, default=300,
                    help="the server's --retention-seconds (default 300, the server's own default); on sled "
                    "a store is not evicted while its last commit is younger than this")
    ap.add_argument("--replica-max-loaded-stores", type=int, default=10_000,
                    help="cap of each of the three following replicas (default 10000, the server's default; "
                    "0: no cap, each loads and follows every store, about 140 KiB of memory per store)")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"no server binary at {args.bin}: cargo build --release -p earshot, or --bin / EARSHOT_BIN")
    os.makedirs(OUT, exist_ok=True)
    # Ctrl-C and SIGTERM unwind through the `finally` blocks that stop the servers (SIGINT too
    # when this was started with it ignored, as a background job of a script is).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    results = {
        "meta": {
            "binary": os.path.abspath(args.bin),
            "args": vars(args),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "cpus": os.cpu_count(),
        }
    }
    path = os.path.join(OUT, "results.json")
    kinds = ["sled", "postgres"] if args.datastore == "both" else [args.datastore]
    status = 0
    try:
        for kind in kinds:
            try:
                run_datastore(kind, args, results)
            except Misbehaved as e:
                print(f"\n{kind}: THE SERVER MISBEHAVED: {e}", file=sys.stderr)
                results[kind]["misbehaved"] = str(e)
                status = 1
            with open(path, "w") as f:
                json.dump(results, f, indent=2)
    except KeyboardInterrupt:
        print("\ninterrupted: servers stopped, data removed; partial results follow", file=sys.stderr)
        status = 130
        with open(path, "w") as f:
            json.dump(results, f, indent=2)
    finally:
        stop_all()
    report(results)
    print(f"\nresults: {os.path.relpath(path, ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
