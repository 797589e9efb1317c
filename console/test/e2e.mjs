// End-to-end tests of the console: the real binary (EARSHOT_BIN, default target/debug/earshot)
// on a free loopback port with an admin and a reader token, the Figure 1 and four-fridges stores
// written through the API (the setup of fixtures/01_figure1.yaml and fixtures/24_four_fridges.yaml,
// plus a grant, a derivation chain and a revoked source, trust delegations, and an item with
// subjects whose grants have and lack consent), and Debian's Chromium driven headless
// by playwright-core. Every view is checked for what it must name, for Content-Security-Policy
// violations and page errors, and by axe-core (no serious or critical violation); screenshots go
// to docs/console/.
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../..");
const shots = path.join(root, "docs/console");
const bin = process.env.EARSHOT_BIN || path.join(root, "target/debug/earshot");
const browserPath = process.env.CHROMIUM || "/usr/bin/chromium";
const ADMIN = "console-e2e-admin-0123456789";
const READER = "console-e2e-reader-0123456789";
const LIMITED = "console-e2e-limited-0123456789";
const axeSource = fs.readFileSync(path.join(here, "../node_modules/axe-core/axe.min.js"), "utf8");

let failures = 0;
let passed = 0;
async function test(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}\n     ${String(e.stack || e).split("\n").slice(0, 6).join("\n     ")}`);
  }
}
function assert(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

// ---- the service ----
const work = fs.mkdtempSync(path.join(os.tmpdir(), "earshot-console-"));
const config = path.join(work, "earshot.toml");
fs.writeFileSync(
  config,
  `[[tokens]]\nname = "ops"\ntoken = "${ADMIN}"\nscope = "admin"\n\n[[tokens]]\nname = "viewer"\ntoken = "${READER}"\nscope = "reader"\n\n[[tokens]]\nname = "home-only"\ntoken = "${LIMITED}"\nscope = "reader"\nstores = ["home"]\n`,
);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const log = fs.openSync(path.join(work, "server.log"), "w");
const server = spawn(bin, ["serve", "--config", config, "--data", path.join(work, "data"), "--bind", `127.0.0.1:${port}`], { stdio: ["ignore", log, log] });
let browser;
const cleanup = async () => {
  if (browser) await browser.close().catch(() => {});
  server.kill("SIGTERM");
};

async function api(method, p, body, token = ADMIN) {
  const r = await fetch(base + p, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : {};
}

try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {
      /* not up yet */
    }
    if (server.exitCode !== null || i > 300) throw new Error(`earshot did not start:\n${fs.readFileSync(path.join(work, "server.log"), "utf8")}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  // Figure 1 (fixtures/01_figure1.yaml's setup), Carol and a grant (the README walkthrough), and a
  // provenance chain s1 -> d1 -> d2 whose root is then revoked.
  const F = "/v1/stores/figure1";
  await api("POST", "/v1/stores", { id: "figure1" });
  for (const p of ["owner", "alice", "bob", "carol"]) await api("POST", `${F}/participants`, { id: p, kind: "person" });
  await api("POST", `${F}/identities`, { transport: "email", identifier: "bob@example.com", participant: "bob" });
  await api("POST", `${F}/identities`, { transport: "chat", identifier: "U024BE7LH", participant: "bob" });
  await api("POST", `${F}/identities`, { transport: "email", identifier: "alice@example.com", participant: "alice" });
  await api("POST", `${F}/items`, { id: "f1", owner: "owner", content: "The team offsite moved to Lisbon.", origin: { identities: [{ transport: "email", identifier: "alice@example.com" }, { transport: "chat", identifier: "U024BE7LH" }] } });
  await api("POST", `${F}/items`, { id: "f2", owner: "owner", origin: { participants: ["alice"] }, content: "Alice is interviewing elsewhere." });
  await api("POST", `${F}/items`, { id: "p1", owner: "owner", origin: "public", content: "The office opens at nine." });
  await api("POST", `${F}/items`, { id: "n1", owner: "owner", origin: "owner_private", content: "Owner's own note." });
  await api("POST", `${F}/items/f2/grants`, { members: ["alice", "carol"], reason: "alice asked to loop carol in" });
  await api("POST", `${F}/items`, { id: "s1", owner: "owner", origin: { participants: ["alice", "bob"] }, content: "Lisbon flights are booked." });
  await api("POST", `${F}/derivations`, { disposition: "intersection", owner: "owner", sources: ["s1", "f1"], id: "d1", content: "Summary: Lisbon offsite, flights booked." });
  await api("POST", `${F}/derivations`, { disposition: "intersection", owner: "owner", sources: ["d1"], id: "d2", content: "Digest of the summary." });
  await api("POST", `${F}/items/s1/lifecycle`, { action: "revoke" });
  await api("POST", `${F}/items`, { id: "g1", owner: "owner", origin: { participants: ["alice"] }, content: "Alice's draft." });
  await api("POST", `${F}/derivations`, { disposition: "intersection", owner: "owner", sources: ["g1"], id: "g2", content: "Notes on the draft." });

  // Trust (SPEC §6.2): the owner trusts alice's words, trusted bob's until it was revoked, and
  // alice trusts carol's. e1 carries alice's words, e2 bob's, and e3 is derived from both.
  const trustAlice = (await api("POST", `${F}/trust`, { owner: "owner", participant: "alice", reason: "alice runs the offsite" })).ids[0];
  const trustBob = (await api("POST", `${F}/trust`, { owner: "owner", participant: "bob", reason: "bob books the travel" })).ids[0];
  await api("DELETE", `${F}/trust/${trustBob}`);
  const trustCarol = (await api("POST", `${F}/trust`, { owner: "alice", participant: "carol" })).ids[0];
  await api("POST", `${F}/items`, { id: "e1", owner: "owner", author: "alice", origin: { participants: ["alice"] }, content: "Alice: please book the venue for the team dinner." });
  await api("POST", `${F}/items`, { id: "e2", owner: "owner", author: "bob", origin: { participants: ["bob"] }, content: "Bob: forward me the budget sheet." });
  await api("POST", `${F}/derivations`, { disposition: "intersection", owner: "owner", sources: ["e1", "e2"], id: "e3", content: "To do: the venue and the budget." });

  // Consent (SPEC §6.3): m1 is about bob and carol. Its grant to bob has both consents; its grant
  // to carol has bob's only (carol consented, then withdrew), so it is pending.
  await api("POST", `${F}/items`, { id: "m1", owner: "owner", origin: { participants: ["alice"] }, subjects: ["bob", "carol"], content: "Bob and Carol are planning the team dinner." });
  const grantBob = (await api("POST", `${F}/items/m1/grants`, { members: ["bob"], reason: "bob organises it" })).ids[0];
  const grantCarol = (await api("POST", `${F}/items/m1/grants`, { members: ["carol"] })).ids[0];
  for (const g of [grantBob, grantCarol]) for (const subject of ["bob", "carol"]) await api("POST", `${F}/grants/${g}/consents`, { subject });
  await api("DELETE", `${F}/grants/${grantCarol}/consents/carol`);

  // The four fridges (fixtures/24_four_fridges.yaml's setup and its chain).
  const H = "/v1/stores/home";
  await api("POST", "/v1/stores", { id: "home" });
  for (const p of ["me", "mum", "friend", "doc", "boss"]) await api("POST", `${H}/participants`, { id: p, kind: "person" });
  for (const [d, o] of [["me-fridge", "me"], ["mum-fridge", "mum"], ["friend-fridge", "friend"], ["doc-fridge", "doc"], ["glasses", "me"], ["clock", "me"], ["vacuum", "me"]]) await api("POST", `${H}/devices`, { id: d, owner: o });
  await api("PUT", `${H}/schema`, { schema: "relation family {\n  opens status/waking\n  opens medication/**\n}\nrelation care_provider {\n  opens vitals/**\n}\nrelation colleague {\n  opens calendar/next-start\n}\n" });
  for (const [id, g, r, e] of [["mum-family-me", "mum", "family", "me"], ["me-family-mum", "me", "family", "mum"], ["mum-care-doc", "mum", "care_provider", "doc"], ["me-care-doc", "me", "care_provider", "doc"]]) await api("POST", `${H}/relations`, { id, grantor: g, relation: r, grantee: e });
  await api("POST", `${H}/capabilities`, { id: "glasses-root", issuer: "me", holder: "glasses", device: "glasses", paths: ["calendar/**"], actions: ["read"] });
  await api("POST", `${H}/capabilities`, { id: "clock-cap", issuer: "glasses", holder: "clock", device: "glasses", paths: ["calendar/next-start"], actions: ["read"], parent: "glasses-root" });
  await api("POST", `${H}/capabilities`, { id: "vacuum-cap", issuer: "clock", holder: "vacuum", device: "glasses", paths: ["calendar/next-start"], actions: ["read"], parent: "clock-cap", constraints: { uses: 5, condition: "human_in_room == false" } });

  // ---- the browser ----
  browser = await chromium.launch({ executablePath: browserPath, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  // Issue 36, item 18: every 404 (a favicon asked for on each load) and every warning (Cytoscape's
  // deprecations), over the whole run.
  const notFound = [];
  const warnings = [];
  page.on("console", (m) => {
    // (An API answer's 404 is the API's to give: only the page's own resources count here.)
    if (m.type() === "error" && /status of 404/.test(m.text()) && !new URL(m.location().url).pathname.startsWith("/v1/")) notFound.push(`${m.text()} (${m.location().url})`);
    if (m.type() === "warning") warnings.push(m.text());
    if (m.type() === "error" && !/status of 40[34]/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  fs.mkdirSync(shots, { recursive: true });

  /** Issue 36, item 14: every label of every picture on the page renders at 10 CSS px or more
   * (its font size times the picture's zoom). Checked before each screenshot. */
  async function legible(where) {
    const small = await page.$$eval(".graph", (gs) =>
      gs.flatMap((g) => (g.cy ? g.cy.elements().filter((e) => e.data("label")).map((e) => [e.data("label"), parseFloat(e.style("font-size")) * g.cy.zoom()]) : [])).filter(([, px]) => px < 10),
    );
    assert(small.length === 0, `labels of ${where} render at 10 px or more: ${small.map(([l, px]) => `${JSON.stringify(l)} at ${px.toFixed(1)} px`).join("; ")}`);
  }
  /** Issue 36, item 18: a set's title sits above its box, not on its border, on two lines at most. */
  async function titlesClear(where) {
    const bad = await page.$$eval(".graph", (gs) =>
      gs.flatMap((g) =>
        g.cy
          ? g.cy
              .nodes(":parent")
              .filter((n) => n.data("label"))
              .map((n) => {
                const body = n.boundingBox({ includeLabels: false, includeOverlays: false });
                const label = n.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false });
                const lines = Math.round(label.h / (parseFloat(n.style("font-size")) * 1.2));
                return [n.data("label"), label.y2 <= body.y1, lines];
              })
              .filter(([, above, lines]) => !above || lines > 2)
          : [],
      ),
    );
    assert(bad.length === 0, `titles of ${where} clear of their box and on two lines at most: ${JSON.stringify(bad)}`);
  }
  const shot = async (name) => {
    await legible(name);
    for (const id of await page.$$eval("figure.picture[data-testid]", (fs) => fs.map((f) => f.dataset.testid))) {
      const crossed = await crossings(id);
      assert(crossed.length === 0, `${name}, ${id}: no edge passes through a node it does not join: ${crossed.join("; ")}`);
    }
    await titlesClear(name);
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  };
  const noProblems = () => assert(problems.length === 0, `no CSP violation or page error: ${problems.join(" | ")}`);
  async function axe(where) {
    if (!(await page.evaluate(() => typeof window.axe !== "undefined"))) await page.evaluate(axeSource);
    const bad = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ["violations"] });
      return r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
    });
    assert(bad.length === 0, `axe on ${where}: ${bad.join("; ")}`);
  }
  async function connect(token, store) {
    await page.goto(`${base}/console/#store`);
    await page.fill("#token", token);
    await page.click("#connect button");
    await page.waitForFunction(() => document.querySelectorAll("#store option").length > 0);
    await page.selectOption("#store", store);
    await page.waitForSelector('[data-testid="store-info"] dl');
  }
  /** Opens a view and waits until its render (a new one, not the previous) has finished. */
  async function go(hash, ready) {
    const before = Number(await page.evaluate(() => document.getElementById("main").dataset.done || 0));
    await page.evaluate((h) => {
      if (location.hash === h) window.dispatchEvent(new HashChangeEvent("hashchange"));
      else location.hash = h;
    }, hash);
    await page.waitForFunction(([r, b]) => document.getElementById("main").dataset.ready === r && Number(document.getElementById("main").dataset.done) > b, [ready, before]);
  }
  /** Follows a link (a click) and waits until the view it opens has rendered. */
  async function follow(selector, ready) {
    const before = Number(await page.evaluate(() => document.getElementById("main").dataset.done || 0));
    await page.click(selector);
    await page.waitForFunction(([r, b]) => document.getElementById("main").dataset.ready === r && Number(document.getElementById("main").dataset.done) > b, [ready, before]);
  }
  async function graphNodes(testid) {
    const el = await page.waitForSelector(`[data-testid="${testid}"] .graph`);
    await page.waitForSelector(`[data-testid="${testid}"] canvas`);
    return Number(await el.getAttribute("data-nodes"));
  }
  const text = (sel) => page.textContent(sel);
  /** For each element, how many lines its text takes (distinct tops of its line boxes). */
  const oneLine = (els) =>
    els.map((el) => {
      const r = document.createRange();
      r.selectNodeContents(el);
      return new Set([...r.getClientRects()].map((x) => Math.round(x.top))).size;
    });
  /** Issue 36, item 13: the edges of a picture that pass through a node they do not join, as
   * drawn (each edge's path: straight segments, or its bezier sampled, against each other
   * node's bounding box). */
  async function crossings(testid) {
    return page.$eval(`[data-testid="${testid}"] .graph`, (g) => {
      const cy = g.cy;
      const within = (p, bb) => p.x > bb.x1 && p.x < bb.x2 && p.y > bb.y1 && p.y < bb.y2;
      // Liang–Barsky: does the segment a-b meet the open box?
      const hitsBox = (a, b, bb) => {
        if (within(a, bb) || within(b, bb)) return true;
        let t0 = 0;
        let t1 = 1;
        const dx = b.x - a.x;
        const dy = b.y - a.y;
        for (const [p, q] of [[-dx, a.x - bb.x1], [dx, bb.x2 - a.x], [-dy, a.y - bb.y1], [dy, bb.y2 - a.y]]) {
          if (p === 0) {
            if (q <= 0) return false;
          } else {
            const r = q / p;
            if (p < 0) t0 = Math.max(t0, r);
            else t1 = Math.min(t1, r);
            if (t0 >= t1) return false;
          }
        }
        return true;
      };
      const path = (e) => {
        const s = e.sourceEndpoint();
        const t = e.targetEndpoint();
        const seg = e.segmentPoints();
        if (seg) return [s, ...seg, t];
        const cps = e.controlPoints();
        if (!cps) return [s, t];
        // Cytoscape draws control points as successive quadratic curves through their midpoints.
        const knots = [s];
        for (let i = 0; i < cps.length - 1; i++) knots.push(cps[i], { x: (cps[i].x + cps[i + 1].x) / 2, y: (cps[i].y + cps[i + 1].y) / 2 });
        knots.push(cps[cps.length - 1], t);
        const out = [s];
        for (let i = 0; i + 2 < knots.length; i += 2) {
          const [p0, c, p1] = [knots[i], knots[i + 1], knots[i + 2]];
          for (let k = 1; k <= 16; k++) {
            const u = k / 16;
            out.push({ x: (1 - u) ** 2 * p0.x + 2 * (1 - u) * u * c.x + u * u * p1.x, y: (1 - u) ** 2 * p0.y + 2 * (1 - u) * u * c.y + u * u * p1.y });
          }
        }
        return out;
      };
      const hits = [];
      cy.edges().forEach((e) => {
        const pts = path(e);
        cy.nodes().forEach((n) => {
          // A compound box holds its children: the edges between them are meant to cross it.
          if (n.isParent() || n.same(e.source()) || n.same(e.target())) return;
          const b = n.boundingBox({ includeLabels: true, includeOverlays: false });
          const bb = { x1: b.x1 + 1, y1: b.y1 + 1, x2: b.x2 - 1, y2: b.y2 - 1 };
          for (let i = 0; i + 1 < pts.length; i++) {
            if (hitsBox(pts[i], pts[i + 1], bb)) {
              hits.push(`${e.data("source")} -> ${e.data("target")} (${e.data("label")}) crosses ${n.id()}`);
              break;
            }
          }
        });
      });
      return hits;
    });
  }
  async function explain({ owner = "owner", viewers = "", identities = "", item }) {
    await page.fill("#ex-owner", owner);
    await page.fill("#ex-viewers", viewers);
    await page.fill("#ex-identities", identities);
    await page.fill("#ex-item", item);
    await page.click('form[aria-label="Explain a decision"] button[type=submit]');
    await page.waitForSelector('[data-testid="reason"]');
    await page.waitForSelector('[data-testid="explain-picture"] canvas');
    return { reason: await text('[data-testid="reason"]'), all: await text("#explain-out") };
  }

  await test("the console is served by the binary, loads under its CSP, and is accessible before connecting", async () => {
    const r = await fetch(`${base}/console`);
    assert(r.ok && (r.headers.get("content-security-policy") || "").includes("script-src 'self'"), "CSP header on /console");
    await page.goto(`${base}/console/`);
    await page.waitForSelector("#token");
    await axe("the connect form");
    await page.waitForTimeout(300);
    assert(notFound.length === 0, `no 404 on loading the console (no favicon request): ${notFound.join(" | ")}`);
    noProblems();
  });

  await test("keyboard: tab reaches the token field and the views, Enter follows a tab", async () => {
    await page.goto(`${base}/console/`);
    await page.keyboard.press("Tab"); // skip link
    await page.keyboard.press("Tab");
    assert((await page.evaluate(() => document.activeElement.id)) === "token", "the token field is the first stop after the skip link");
    await page.fill("#token", ADMIN);
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => document.querySelectorAll("#store option").length > 0);
    for (let i = 0; i < 20 && (await page.evaluate(() => document.activeElement.textContent)) !== "Devices"; i++) await page.keyboard.press("Tab");
    assert((await page.evaluate(() => document.activeElement.textContent)) === "Devices", "the Devices tab is reachable by Tab");
    await page.keyboard.press("Enter");
    await page.waitForFunction(() => location.hash === "#devices");
  });

  await test("store over time: revision, writes per minute and decisions by reason", async () => {
    await connect(ADMIN, "figure1");
    await api("POST", "/v1/stores/figure1/check", { item: "f1", container: { owner: "owner", viewers: { participants: ["bob"] } } });
    const info = await text('[data-testid="store-info"]');
    assert(/Revision\s*\d+/.test(info) && info.includes("Writes per minute"), `store info: ${info}`);
    await page.waitForSelector('[data-testid="writes-chart"] svg');
    // An admin token reads every store: the instance's decisions, labelled as such.
    await page.waitForSelector('[data-testid="decisions-chart"], [data-testid="decisions-hidden"]', { timeout: 10000 }).catch(async () => assert(false, `no decisions panel: ${await text("#main")}`));
    assert((await text('[data-testid="decisions-chart"] figcaption')) === "Decisions by reason since start (every store of this instance, /metrics)", "the decisions' label says whose they are");
    await axe("store");
    await shot("store");
    noProblems();
  });

  await test("an item's audiences are separate sets and its provenance names the blocking source", async () => {
    await go("#item/f2", "item");
    assert((await graphNodes("audiences")) >= 7, "two sets with their members drawn apart");
    const sets = await text('[data-testid="audiences"] .facts');
    assert(sets.includes("origin audience: {alice, owner}") && /grant g?\S*: \{alice, carol, owner\}/.test(sets), `sets: ${sets}`);
    await axe("item f2");
    await shot("item-audiences");
    await go("#item/d1", "item");
    assert((await graphNodes("provenance")) === 4, "s1, f1 above d1, d2 below");
    const prov = await text('[data-testid="provenance"] .facts');
    assert(prov.includes("s1: revoked, not current — this one makes d1 non-current") && prov.includes("d2: active, not current"), `provenance: ${prov}`);
    await shot("item-provenance");
    noProblems();
  });

  await test("explain: admitted, denied, non-current and unresolved, each with its reason and audience", async () => {
    await go("#explain", "explain");
    let r = await explain({ viewers: "bob", item: "f1" });
    assert(r.reason === "admitted_origin" && r.all.includes("origin audience (shared) — ADMITS ✓"), `admitted: ${r.all}`);
    assert((await text('[data-testid="basis"]')) === "origin", "basis origin");
    await axe("explain admitted");
    await shot("explain-admitted");
    r = await explain({ viewers: "carol", item: "f2" });
    assert(r.reason === "admitted_grant" && /grant \S+ \(shared\).*ADMITS ✓/.test(r.all), `admitted by grant: ${r.all}`);
    r = await explain({ viewers: "bob", item: "f2" });
    assert(r.reason === "denied_not_in_audience" && r.all.includes("bob is outside every authorized audience."), `denied: ${r.all}`);
    await shot("explain-denied");
    r = await explain({ viewers: "alice, bob", item: "d2" });
    assert(r.reason === "denied_not_current" && (await text('[data-testid="blocked-by"]')).startsWith("s1 (revoked)") && r.all.includes("its source s1 is revoked"), `non-current: ${r.all}`);
    assert(r.all.includes("origin audience (shared) — not consulted (item not current): {alice, bob, owner}") && !r.all.includes("outside every"), `non-current audiences: ${r.all}`);
    await shot("explain-not-current");
    r = await explain({ identities: "email:mallory@example.com", item: "f1" });
    assert(r.reason === "denied_unresolved_viewers" && (await text('[data-testid="unresolved"]')).includes("unknown_identity"), `unresolved: ${r.all}`);
    assert(r.all.includes("only public items are admitted"), "the unresolved cause is explained");
    await axe("explain unresolved");
    await shot("explain-unresolved");
    noProblems();
  });

  await test("a container's view: the lookup grouped by basis, and an attempt's sealed context", async () => {
    await go("#container", "container");
    await page.fill("#ct-owner", "owner");
    await page.fill("#ct-viewers", "alice");
    await page.click('form[aria-label="Lookup"] button');
    await page.waitForSelector('[data-testid="lookup"] canvas');
    const groups = await text('[data-testid="lookup"] .facts');
    assert(groups.includes("origin: f1, f2") && groups.includes("public: p1"), `groups: ${groups}`);
    await page.fill("#ct-query", "Lisbon");
    await page.click('form[aria-label="Assemble a context"] button');
    await page.waitForSelector('[data-testid="sealed-context"] tbody tr');
    const table = await text('[data-testid="sealed-context"]');
    assert(table.includes("f1") && /\d\.\d{3}/.test(table), `sealed context: ${table}`);
    await axe("container");
    await shot("container");
    noProblems();
  });

  await test("acting as admin: a grant is confirmed with what it changes, then shown as its own set", async () => {
    await go("#item/f1", "item");
    await page.fill("#grant-members", "carol");
    await page.click('form[aria-label="Grant"] button');
    await page.waitForSelector("#confirm[open]");
    const body = await text("#confirm-body");
    assert(body.includes("exactly {carol, owner}") && body.includes("Newly able to see it (in no live audience before): carol"), `grant preview: ${body}`);
    await axe("grant confirmation");
    await page.click("#confirm-ok");
    await page.waitForFunction(() => document.querySelector('[data-testid="audiences"] .facts')?.textContent.includes("{carol, owner}"));
  });

  await test("acting as admin: a lifecycle action previews the derived items it makes non-current", async () => {
    await go("#item/g1", "item");
    await page.selectOption("#lc-action", "quarantine");
    await page.click('form[aria-label="Lifecycle"] button');
    await page.waitForSelector("#confirm[open]");
    const body = await text("#confirm-body");
    assert(body.includes("g1: active → quarantined.") && body.includes("Becomes non-current through g1: g2."), `lifecycle preview: ${body}`);
    await page.click("#confirm-ok");
    await page.waitForFunction(() => document.querySelector('[data-testid="provenance"] .facts')?.textContent.includes("g2: active, not current"));
    assert((await text('[data-testid="provenance"] .facts')).includes("g1: quarantined, not current — this one makes"), "g1 blocks");
  });

  await test("trust: every delegation with its state; one delegation with the items whose role it decides", async () => {
    await follow('#tabs a[href="#trust"]', "trust");
    assert((await graphNodes("trust-graph")) === 4, "owner, alice, bob and carol");
    assert((await page.getAttribute('[data-testid="trust-graph"] .graph', "data-edges")) === "3", "one edge per delegation");
    const rows = await page.$$eval('[data-testid="trust-list"] tbody tr', (trs) => trs.map((tr) => [tr.dataset.trust, ...[...tr.children].map((c) => c.textContent)]));
    assert(rows.map((r) => r[0]).join() === [trustAlice, trustBob, trustCarol].join(), `delegations in creation order: ${JSON.stringify(rows)}`);
    assert(rows[0].slice(2, 6).join("|") === "owner|alice|alice runs the offsite|ops" && rows[0][7] === "live", `owner trusts alice: ${rows[0]}`);
    assert(rows[1].slice(2, 5).join("|") === "owner|bob|bob books the travel" && rows[1][7] === "REVOKED", `owner trusted bob: ${rows[1]}`);
    assert(rows[2].slice(2, 5).join("|") === "alice|carol|—" && rows[2][7] === "live", `alice trusts carol: ${rows[2]}`);
    // The first delegation is shown: alice's words in the owner's memory are instructions.
    let rec = await text('[data-testid="trust-record"]');
    assert(rec.includes(`Delegation ${trustAlice}: owner trusts alice`) && rec.includes("alice's items in owner's memory, and what is derived only from trusted items, are instructions") && !rec.includes("REVOKED"), `record: ${rec}`);
    const itemRows = () => page.$$eval('[data-testid="trust-items"] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent).join("|")));
    assert(JSON.stringify(await itemRows()) === JSON.stringify(["e1|alice|instruction|—"]), `alice's words: ${await itemRows()}`);
    // The revoked one, opened from its row: bob's words, and what derives from them, are data.
    assert((await page.getAttribute(`[data-trust="${trustBob}"] a`, "href")) === `#trust/${trustBob}`, "each row links to its delegation");
    await follow(`[data-trust="${trustBob}"] a`, "trust");
    const bob = await api("GET", `${F}/trust/${trustBob}`);
    assert(bob.revoked && bob.revoked_revision > bob.created_revision, "the API answers the revocation");
    rec = await text('[data-testid="trust-record"]');
    assert(rec.includes(`Delegation ${trustBob}: owner trusts bob`) && rec.includes(`REVOKED at ${bob.revoked_at} (no longer counts from revision ${bob.revoked_revision})`) && rec.includes(`From revision ${bob.revoked_revision} on, bob's items in owner's memory, and everything derived from them, are data again`), `revoked record: ${rec}`);
    assert((await page.getAttribute(`[data-trust="${trustBob}"] a`, "aria-current")) === "true", "the shown delegation is marked in the list");
    const trustIdLines = await page.$$eval('[data-testid="trust-list"] tr[data-trust] > :first-child', oneLine);
    assert(trustIdLines.length === 3 && trustIdLines.every((n) => n === 1), `delegation ids on one line: ${trustIdLines}`);
    assert(JSON.stringify(await itemRows()) === JSON.stringify(["e2|bob|data|untrusted_author", "e3|owner|data|untrusted_source: e2 by bob"]), `bob's words: ${await itemRows()}`);
    await axe("trust");
    await shot("trust");
    await go(`#trust/${trustCarol}`, "trust");
    assert((await text('[data-testid="trust-items"]')) === "No item of alice carries carol's words.", "alice's memory holds nothing of carol's");
    noProblems();
  });

  await test("consent: each grant's subjects' consent and decisions, and whether it is in effect", async () => {
    await go("#item/m1", "item");
    assert(/Subjects\s*bob, carol/.test(await text('[data-testid="item-summary"]')), "the item's subjects");
    const row = (g) => page.$eval(`[data-testid="grant-consents"] tr[data-grant="${g}"]`, (tr) => [...tr.children].map((c) => c.textContent));
    const b = await row(grantBob);
    assert(b.slice(1, 6).join("|") === "{bob, owner}|bob, carol|bob, carol|none|IN EFFECT: every subject consented (bob, carol)", `grant to bob: ${b}`);
    const c = await row(grantCarol);
    assert(c.slice(1, 6).join("|") === "{carol, owner}|bob, carol|bob|carol (withdrew)|PENDING: admits nobody until carol consents; withdrawn by carol", `grant to carol: ${c}`);
    // Issue 36, item 18: a grant id is one line (a UUID wrapped at its hyphens read as three).
    const idLines = await page.$$eval('[data-testid="grant-consents"] tr[data-grant] > th', oneLine);
    assert(idLines.length === 2 && idLines.every((n) => n === 1), `grant ids on one line: ${idLines}`);
    const history = await page.$$eval(`tr[data-grant="${grantCarol}"] ol.history li`, (lis) => lis.map((l) => l.textContent));
    const recorded = (await api("GET", `${F}/grants?item=m1`)).results.find((g) => g.id === grantCarol).consent.history;
    assert(recorded.length === 3 && history.join("\n") === recorded.map((e) => `${e.subject} ${e.action === "consented" ? "consented" : "withdrew"} at ${e.at} (revision ${e.revision})`).join("\n"), `decisions: ${history}`);
    assert(history[2].startsWith("carol withdrew at"), "the withdrawal is the last decision");
    const sets = await text('[data-testid="audiences"] .facts');
    assert(sets.includes(`grant ${grantCarol}: {carol, owner} [CONSENT PENDING]`) && sets.includes(`grant ${grantBob}: {bob, owner}`) && !sets.includes(`grant ${grantBob}: {bob, owner} [`), `sets: ${sets}`);
    await axe("item consents");
    await shot("item-consents");
    await go("#item/f2", "item");
    const f2 = await text('[data-testid="grant-consents"]');
    assert(f2.includes("f2 names no subject other than its owner") && f2.includes("IN EFFECT: needs no consent (no subject other than the owner)"), `f2: ${f2}`);
    await go("#explain", "explain");
    let r = await explain({ viewers: "carol", item: "m1" });
    assert(r.reason === "denied_consent_pending" && r.all.includes(`grant ${grantCarol}: {carol, owner} — PENDING: admits nobody until carol consents; withdrawn by carol; not an authorized audience now.`), `pending: ${r.all}`);
    // Issue 36, item 15: the picture draws the pending grant and who has not consented, and carol
    // is not "outside every audience" (she is in a grant waiting for her consent).
    assert(!r.all.includes("outside every") && r.all.includes(`carol is in no authorized audience: only in grant ${grantCarol}, waiting for consent from carol.`), `carol waits: ${r.all}`);
    const drawn = await page.$eval('[data-testid="explain-picture"] .graph', (g) => g.cy.nodes().map((n) => n.data("label")));
    assert(drawn.includes(`grant ${grantCarol} (shared) — CONSENT PENDING, admits nobody`) && drawn.includes("no consent yet from:\ncarol (withdrew)") && drawn.includes("carol\n✗ only in a grant waiting for consent"), `pending grant drawn: ${JSON.stringify(drawn)}`);
    await shot("explain-consent-pending");
    r = await explain({ viewers: "bob", item: "m1" });
    assert(r.reason === "admitted_grant" && (await text('[data-testid="basis"]')) === `grant ${grantBob}`, `consented: ${r.all}`);
    noProblems();
  });

  await test("devices: people, devices and relation edges, unexercised relations beside", async () => {
    await page.selectOption("#store", "home");
    await go("#devices", "devices");
    assert((await graphNodes("devices-graph")) === 12, "five people and seven devices");
    const side = await text('[data-testid="unexercised"]');
    assert(/Exercised by no edge\s*colleague/.test(side), `unexercised: ${side}`);
    const crossed = await crossings("devices-graph");
    assert(crossed.length === 0, `no edge passes through a node it does not join: ${crossed.join("; ")}`);
    await axe("devices");
    await shot("devices");
    noProblems();
  });

  await test("authorize explained link by link", async () => {
    await go("#authorize", "authorize");
    await page.fill("#az-principal", "vacuum");
    await page.fill("#az-device", "glasses");
    await page.fill("#az-path", "calendar/next-start");
    await page.fill("#az-context", '{"human_in_room": false}');
    await page.click('form[aria-label="Authorize"] button');
    await page.waitForSelector('[data-testid="authorize-picture"] canvas');
    assert((await text('[data-testid="auth-reason"]')) === "allowed_capability", "allowed through the chain");
    const links = await text('[data-testid="links"]');
    assert(links.includes("Link 1, glasses-root") && links.includes("Link 3, vacuum-cap") && links.includes("✓ passes"), `links: ${links}`);
    await axe("authorize");
    await shot("authorize");
  });

  await test("a token limited to one store sees no decision figures made in other stores", async () => {
    // Issue 36, item 17: the decision counters are for the whole instance, figure1's included:
    // /metrics answers them to a token that reads every store and withholds them from this one.
    await api("POST", "/v1/stores/figure1/check", { item: "f1", container: { owner: "owner", viewers: { participants: ["bob"] } } });
    const metricsAs = async (token) => (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    assert(/earshot_decisions_total\{[^}]*\} [1-9]/.test(await metricsAs(ADMIN)), "the admin's /metrics has the instance's decisions");
    assert(!/earshot_decisions_total/.test(await metricsAs(LIMITED)), "the limited token's /metrics has none of the instance's decisions");
    await connect(LIMITED, "home");
    assert((await page.$$eval("#store option", (os) => os.map((o) => o.value))).join() === "home", "it reads store home only");
    await page.waitForSelector('[data-testid="writes-chart"] svg');
    assert((await page.$('[data-testid="decisions-chart"]')) === null, "no decisions chart for a token limited to some stores");
    assert((await text('[data-testid="decisions-hidden"]')).includes("shown only to a token that reads every store"), "it says why");
    await axe("store, limited token");
    noProblems();
  });

  await test("a reader token sees the chain but cannot act: the API's 403 is shown", async () => {
    await connect(READER, "home");
    await go("#capability/vacuum-cap", "capability");
    await graphNodes("chain");
    await page.fill("#rv-by", "me");
    await page.click('form[aria-label="Revoke"] button');
    await page.waitForSelector("#confirm[open]");
    await page.click("#confirm-ok");
    await page.waitForSelector('[data-testid="error"]');
    const err = await text("#error");
    assert(err.includes("403") && err.includes("forbidden"), `reader refusal: ${err}`);
    // Issue 36, item 16: nothing was revoked, so no link stays marked "would be revoked".
    const after = await text('[data-testid="chain"] .facts');
    assert(!after.includes("would be") && !(await text('[data-testid="chain"] figcaption')).includes("outlined"), `the preview is cleared after the refusal: ${after}`);
    assert((await page.evaluate(() => document.querySelectorAll('[data-testid="chain"]').length)) === 1, "one chain picture");
    await axe("reader refused");
    await shot("reader-refused");
    const chain = await api("GET", "/v1/stores/home/capabilities/vacuum-cap/chain");
    assert(chain.chain.every((c) => !c.revoked), "nothing was revoked");
    await go("#item", "item");
    assert((await text("#error")).includes("403"), "a reader cannot open the admin item view either");
    await go("#trust", "trust");
    assert((await text("#error")).includes("403"), "nor the trust delegations");
  });

  await test("revocation: the preview highlights what it invalidates; the chain then shows the revoked link", async () => {
    await connect(ADMIN, "home");
    await go("#capability/vacuum-cap", "capability");
    await page.selectOption("#rv-cap", "glasses-root");
    await page.fill("#rv-by", "me");
    await page.click('form[aria-label="Revoke"] button');
    await page.waitForSelector("#confirm[open]");
    assert((await text('[data-testid="invalidates"]')) === "Invalidated through it: clock-cap, vacuum-cap.", "dependents listed");
    const preview = await text('[data-testid="chain"] .facts');
    assert(preview.includes("glasses-root: valid — would be revoked") && preview.includes("clock-cap: valid — would be invalidated") && preview.includes("vacuum-cap: valid — would be invalidated"), `preview: ${preview}`);
    // Escape cancels: nothing happens until confirmed.
    await page.keyboard.press("Escape");
    await page.waitForSelector("#confirm:not([open])", { state: "attached" });
    assert((await api("GET", "/v1/stores/home/capabilities/glasses-root/chain")).chain[0].revoked === false, "cancel revokes nothing");
    await page.click('form[aria-label="Revoke"] button');
    await page.waitForSelector("#confirm[open]");
    await shot("revoke-preview");
    await page.click("#confirm-ok");
    await page.waitForFunction(() => document.querySelector('[data-testid="chain-links"]')?.textContent.includes("REVOKED"));
    const links = await text('[data-testid="chain-links"]');
    assert(links.includes("glasses-root: me → glasses") && links.includes("REVOKED") && links.includes("INVALIDATED by glasses-root"), `chain: ${links}`);
    await axe("chain revoked");
    await shot("chain-revoked");
    await go("#authorize", "authorize");
    await page.fill("#az-principal", "vacuum");
    await page.fill("#az-device", "glasses");
    await page.fill("#az-path", "calendar/next-start");
    await page.fill("#az-context", '{"human_in_room": false}');
    await page.click('form[aria-label="Authorize"] button');
    await page.waitForSelector('[data-testid="authorize-picture"] canvas');
    assert((await text('[data-testid="auth-reason"]')) === "denied_revoked", "denied after revocation");
    assert((await text('[data-testid="links"]')).includes("Link 1, glasses-root (me → glasses; calendar/**; read): ✗ FAILS"), "the revoked link named");
    await shot("authorize-revoked");
    noProblems();
  });
  await test("no 404 for the page's own resources and no warning in the console over every view drawn above", async () => {
    assert(notFound.length === 0, `404s: ${notFound.join(" | ")}`);
    assert(warnings.length === 0, `${warnings.length} warnings: ${[...new Set(warnings)].join(" | ")}`);
  });
} catch (e) {
  failures++;
  console.log(`FAIL setup: ${e.stack || e}`);
} finally {
  await cleanup();
}
console.log(`console e2e: ${passed} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
