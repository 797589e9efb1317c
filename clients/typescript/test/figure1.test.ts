// The README's Figure 1 walkthrough, through the generated TypeScript client, against the real binary.
//
// Starts `earshot serve` (EARSHOT_BIN, default target/debug/earshot) on a free loopback port with a
// fresh data directory and one admin token, waits for /readyz, then creates the store, the people,
// Bob's identity, the items and the grant through the typed client, and asserts the decisions the
// README promises. Run it with clients/typescript/test.sh.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { createEarshotClient, type EarshotClient, type Schemas } from "../src/index.js";

// dist/test/figure1.test.js → the repository root.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
const TOKEN = "figure-1-admin-token-for-the-client-test";
const STORE = "demo";
const store = { params: { path: { store: STORE } } } as const;

let server: ChildProcess | undefined;
let work = "";
let baseUrl = "";
let client: EarshotClient;

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const address = s.address();
      s.close(() => (typeof address === "object" && address ? ok(address.port) : fail(new Error("no port"))));
    });
  });
}

before(async () => {
  const binary = process.env.EARSHOT_BIN ?? join(ROOT, "target/debug/earshot");
  assert.ok(existsSync(binary), `no earshot binary at ${binary} (cargo build -p earshot)`);
  work = mkdtempSync(join(tmpdir(), "earshot-ts-client-"));
  const config = join(work, "earshot.toml");
  writeFileSync(config, `[[tokens]]\nname = "client-test"\ntoken = "${TOKEN}"\nscope = "admin"\n`);
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  const log = openSync(join(work, "server.log"), "w");
  const child = spawn(binary, ["serve", "--config", config, "--data", join(work, "data"), "--bind", `127.0.0.1:${port}`], {
    stdio: ["ignore", log, log],
  });
  server = child;
  // /readyz is open: a client without a token.
  const probe = createEarshotClient({ baseUrl });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`earshot exited early:\n${readFileSync(join(work, "server.log"), "utf8")}`);
    try {
      const { response } = await probe.GET("/readyz");
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error("earshot did not become ready within 30 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  client = createEarshotClient({ baseUrl, token: TOKEN });
});

after(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server!.once("exit", r));
    server.kill("SIGTERM");
    await exited;
  }
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A write's answer: 201 and what it created. */
function created(
  answer: { data?: Schemas["WriteOutcome"]; error?: Schemas["Error"]; response: Response },
  ...ids: string[]
): Schemas["WriteOutcome"] {
  assert.equal(answer.response.status, 201, JSON.stringify(answer.error));
  assert.ok(answer.data);
  assert.equal(answer.data.outcome, "created");
  if (ids.length) assert.deepEqual(answer.data.ids, ids);
  assert.ok(answer.data.revision > 0);
  return answer.data;
}

async function check(item: string, ...participants: string[]): Promise<Schemas["CheckResponse"]> {
  const { data, error, response } = await client.POST("/v1/stores/{store}/check", {
    ...store,
    body: { item, container: { owner: "owner", viewers: { participants } } },
  });
  assert.equal(response.status, 200, JSON.stringify(error));
  assert.ok(data);
  return data;
}

test("Figure 1 walkthrough", async () => {
  // A store, four people, and Bob's e-mail identity.
  created(await client.POST("/v1/stores", { body: { id: STORE } }), STORE);
  for (const id of ["owner", "alice", "bob", "carol"]) {
    created(await client.POST("/v1/stores/{store}/participants", { ...store, body: { id, kind: "person" } }), id);
  }
  created(
    await client.POST("/v1/stores/{store}/identities", {
      ...store,
      body: { transport: "email", identifier: "bob@example.com", participant: "bob" },
    }),
    "email:bob@example.com",
  );

  // f1 is said in the group {owner, alice, bob}; f2 privately by Alice; p1 is public.
  const items: Schemas["NewItem"][] = [
    { id: "f1", owner: "owner", content: "the offsite moved to Lisbon", origin: { participants: ["alice", "bob"] } },
    { id: "f2", owner: "owner", content: "alice is interviewing elsewhere", origin: { participants: ["alice"] } },
    { id: "p1", owner: "owner", content: "the office is closed on friday", origin: "public" },
  ];
  let last: Schemas["WriteOutcome"] | undefined;
  for (const body of items) {
    last = created(await client.POST("/v1/stores/{store}/items", { ...store, body }), body.id!);
  }
  assert.ok(last);

  // Bob's one-to-one, identified by his e-mail: f1 and p1 are admissible, f2 never. The lookup
  // reads at least the last write's revision (a `Consistency` of the `at_least` form).
  const bobByEmail: Schemas["Container"] = {
    owner: "owner",
    viewers: { identities: [{ transport: "email", identifier: "bob@example.com" }] },
  };
  const bob = await client.POST("/v1/stores/{store}/lookup", {
    ...store,
    body: { container: bobByEmail, consistency: { at_least: last.token } },
  });
  assert.equal(bob.response.status, 200, JSON.stringify(bob.error));
  assert.ok(bob.data);
  assert.equal(bob.data.container.resolved, true);
  assert.ok(bob.data.revision >= last.revision);
  assert.deepEqual(
    bob.data.items.map((d) => [d.item, d.admitted, d.reason]),
    [
      ["f1", true, "admitted_origin"],
      ["p1", true, "admitted_public"],
    ],
  );
  const f2ForBob = await check("f2", "bob");
  assert.equal(f2ForBob.admitted, false);
  assert.equal(f2ForBob.reason, "denied_not_in_audience");

  // A viewer nobody can resolve: the container fails closed to public items.
  const unknown = await client.POST("/v1/stores/{store}/lookup", {
    ...store,
    body: {
      container: { owner: "owner", viewers: { identities: [{ transport: "sms", identifier: "+15550000000" }] } },
      consistency: "fully_consistent",
    },
  });
  assert.ok(unknown.data, JSON.stringify(unknown.error));
  assert.equal(unknown.data.container.resolved, false);
  assert.deepEqual(
    unknown.data.items.map((d) => [d.item, d.reason]),
    [["p1", "admitted_public"]],
  );

  // An explicit grant widens f2 to exactly {owner, alice, carol}: Carol may now see it, Bob still not.
  const granted = await client.POST("/v1/stores/{store}/items/{item}/grants", {
    params: { path: { store: STORE, item: "f2" } },
    body: { members: ["alice", "carol"], reason: "alice asked to loop carol in" },
  });
  assert.equal(granted.response.status, 201, JSON.stringify(granted.error));
  assert.equal(granted.data?.outcome, "granted");
  const grant = granted.data?.ids?.[0];
  assert.ok(grant);

  const carol = await check("f2", "carol");
  assert.equal(carol.admitted, true);
  assert.equal(carol.reason, "admitted_grant");
  assert.equal(carol.basis, "grant");
  assert.equal(carol.grant, grant);
  const both = await check("f2", "bob", "carol");
  assert.equal(both.admitted, false);
  assert.equal(both.reason, "denied_not_in_audience");

  const audiences = await client.GET("/v1/stores/{store}/items/{item}/audiences", {
    params: { path: { store: STORE, item: "f2" } },
  });
  assert.ok(audiences.data, JSON.stringify(audiences.error));
  assert.deepEqual(
    audiences.data.audiences.map((a) => [a.source, a.grant, a.members]),
    [
      ["origin", undefined, ["alice", "owner"]],
      ["grant", grant, ["alice", "carol", "owner"]],
    ],
  );
});

test("errors are typed", async () => {
  // Without the token: 401 with the stable code in the typed error body.
  const anonymous = createEarshotClient({ baseUrl });
  const denied = await anonymous.GET("/v1/stores/{store}", { ...store });
  assert.equal(denied.response.status, 401);
  assert.equal(denied.data, undefined);
  const code: Schemas["Error"]["error"]["code"] | undefined = denied.error?.error.code;
  assert.equal(code, "unauthenticated");
  // A store that does not exist: 404 `store_not_found`.
  const missing = await client.GET("/v1/stores/{store}", { params: { path: { store: "no-such-store" } } });
  assert.equal(missing.response.status, 404);
  assert.equal(missing.error?.error.code, "store_not_found");
});
