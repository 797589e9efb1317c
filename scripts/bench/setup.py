#!/usr/bin/env python3
"""Sets up benchmark stores through the API and writes wrk's check data (scripts/bench-topology.sh).

Each store gets participants p0..p{P-1}, the owner `own`, and N items, a tenth public, the
others said among one to three participants. The data file lists checks (item, a one-viewer
container, expected `admitted`), each item once, verified against the service before use.
"""
import argparse
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse


def conn(url):
    u = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30)


def call(c, token, method, path, body=None):
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = "Bearer " + token
    c.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    r = c.getresponse()
    return r.status, json.loads(r.read() or b"null")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--token", default="")
    ap.add_argument("--stores", required=True, help="comma-separated store ids")
    ap.add_argument("--items", type=int, required=True, help="items per store")
    ap.add_argument("--participants", type=int, default=50)
    ap.add_argument("--checks", type=int, default=2000, help="checks in the data file, over all stores")
    ap.add_argument("--out", required=True, help="the wrk data file (Lua)")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    stores = a.stores.split(",")
    c = conn(a.url)
    audiences = {}  # (store, item) -> None for public, else set of participants
    for s in stores:
        st, v = call(c, a.token, "POST", "/v1/stores", {"id": s})
        if st != 201:
            sys.exit(f"creating store {s}: {st} {v}")
        for p in ["own"] + [f"p{i}" for i in range(a.participants)]:
            st, v = call(c, a.token, "POST", f"/v1/stores/{s}/participants", {"id": p, "kind": "agent" if p == "own" else "person"})
            if st != 201:
                sys.exit(f"participant {p} in {s}: {st} {v}")
        for i in range(a.items):
            item = f"{s}-i{i}"
            if rnd.random() < 0.1:
                audiences[(s, item)] = None
            else:
                audiences[(s, item)] = set(rnd.sample([f"p{j}" for j in range(a.participants)], rnd.randint(1, 3)))
    todo = list(audiences.items())
    lock = threading.Lock()
    failures = []
    started = time.time()

    def worker(part):
        c = conn(a.url)
        for (s, item), aud in part:
            origin = "public" if aud is None else {"participants": sorted(aud)}
            body = {"id": item, "owner": "own", "content": f"benchmark item {item}", "origin": origin}
            for _ in range(5):  # write_conflict is safe to retry
                st, v = call(c, a.token, "POST", f"/v1/stores/{s}/items", body)
                if st != 409 or v["error"]["code"] != "write_conflict":
                    break
            if st != 201:
                with lock:
                    failures.append(f"{item}: {st} {v}")

    threads = [threading.Thread(target=worker, args=(todo[k :: a.threads],)) for k in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.time() - started
    if failures:
        sys.exit(f"{len(failures)} writes failed, e.g. {failures[:3]}")
    print(f"setup: {len(todo)} items in {len(stores)} store(s) in {took:.1f} s ({len(todo) / took:.0f} writes/s, {a.threads} clients)")

    # A new connection: the first one sat idle past the keep-alive timeouts during the writes.
    c = conn(a.url)
    # The checks: each item once, a one-participant container; about half admitted.
    chosen = rnd.sample(todo, min(a.checks, len(todo)))
    reqs = []
    for (s, item), aud in chosen:
        if aud is None or rnd.random() < 0.5:
            viewer = rnd.choice(sorted(aud)) if aud else f"p{rnd.randrange(a.participants)}"
        else:
            viewer = rnd.choice([f"p{j}" for j in range(a.participants) if f"p{j}" not in aud])
        admitted = aud is None or viewer in aud
        body = {"item": item, "container": {"owner": "own", "viewers": {"participants": [viewer]}}}
        reqs.append((f"/v1/stores/{s}/check", body, item, admitted))
    # The expectations are checked against the service before wrk relies on them.
    for path, body, item, admitted in reqs[:200]:
        st, v = call(c, a.token, "POST", path, body)
        if st != 200 or v.get("admitted") != admitted:
            sys.exit(f"expectation wrong for {item}: expected admitted={admitted}, got {st} {v}")
    with open(a.out, "w") as f:
        f.write("return {\n")
        for path, body, item, admitted in reqs:
            f.write("  {path=%s, body=%s, item=%s, admitted=%s},\n" % (
                json.dumps(path), json.dumps(json.dumps(body)), json.dumps(item), "true" if admitted else "false"))
        f.write("}\n")
    print(f"setup: {len(reqs)} checks written to {a.out} ({sum(r[3] for r in reqs)} admitted)")


if __name__ == "__main__":
    main()
