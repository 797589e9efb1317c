// A container's view: everything it may see (POST /lookup, every page, bounded), grouped by
// basis, and an attempt's sealed context (ranks, scores, digests): open one and assemble it, or
// read one by id.
import { get, post, storePath } from "../api.js";
import { figure, node } from "../graph.js";
import { facts, field, guarded, h } from "../ui.js";
import { containerFields, containerFromForm } from "./explain.js";

const MAX_LOOKUP = 5000;

export async function containerView(main, arg) {
  main.append(h("h2", {}, "A container's view"));
  const out = h("div", { "aria-live": "polite" });
  const ctx = h("div", { "aria-live": "polite" });
  main.append(
    h("form", { "aria-label": "Lookup", class: "grid", onsubmit: (e) => (e.preventDefault(), guarded(() => lookup(out))) }, containerFields("ct"), h("button", { type: "submit" }, "Look up")),
    out,
    h("h3", {}, "An attempt's sealed context"),
    h(
      "form",
      { "aria-label": "Assemble a context", class: "row", onsubmit: (e) => (e.preventDefault(), guarded(() => assemble(ctx))) },
      field("ct-query", "Query (opens an attempt for the container above and seals its context)", { required: true }),
      field("ct-k", "k", { type: "number", min: 1, max: 100, value: 5 }),
      h("button", { type: "submit" }, "Assemble"),
    ),
    h("form", { "aria-label": "Read an attempt", class: "row", onsubmit: (e) => (e.preventDefault(), guarded(() => attempt(ctx, document.getElementById("ct-attempt").value.trim()))) }, field("ct-attempt", "Attempt id", { value: arg || "" }), h("button", { type: "submit" }, "Read")),
    ctx,
  );
  if (arg) await attempt(ctx, arg);
}

async function lookup(out) {
  out.replaceChildren();
  const container = containerFromForm("ct");
  const items = [];
  let cursor;
  let first;
  do {
    const page = await post(storePath("lookup"), { container, limit: 1000, ...(cursor ? { cursor } : {}) });
    first = first || page;
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor && items.length < MAX_LOOKUP);
  const groups = {};
  for (const it of items) {
    const key = it.basis === "grant" ? `grant ${it.grant}` : it.reason === "admitted_public" ? "public" : it.basis || it.reason;
    (groups[key] = groups[key] || []).push(it.item);
  }
  const res = first.container || { resolved: true };
  out.append(facts([["Container", res.resolved ? "resolved" : `UNRESOLVED: ${res.reason}`], ["Admissible items", String(items.length)], ["Read at", `revision ${first.revision}`]]));
  const els = [node("c", `container ${container.owner}${container.viewers.participants.length ? " + " + container.viewers.participants.join(", ") : ""}`, "focus")];
  for (const [g, ids] of Object.entries(groups)) {
    els.push(node(`g:${g}`, `basis: ${g} (${ids.length})`));
    for (const id of ids) els.push(node(`i:${id}`, id, "ok", `g:${g}`));
  }
  figure(out, { title: "Everything this container may see, grouped by basis", elements: els, layout: "grid", layoutOptions: { avoidOverlap: true }, facts: Object.entries(groups).map(([g, ids]) => `${g}: ${ids.join(", ")}`), height: 260, testid: "lookup" });
}

async function assemble(ctx) {
  const container = containerFromForm("ct");
  const a = await post(storePath("attempts"), { container });
  await post(storePath("attempts", a.attempt, "context"), { query: document.getElementById("ct-query").value, k: Number(document.getElementById("ct-k").value) || 5 });
  await attempt(ctx, a.attempt);
}

async function attempt(ctx, id) {
  ctx.replaceChildren();
  if (!id) return;
  const a = await get(storePath("attempts", id));
  const c = a.context;
  ctx.append(facts([["Attempt", a.attempt], ["Pinned revision", String(a.revision)], ["Resolved", a.resolved ? "yes" : `no: ${a.resolution?.reason}`], ["Sealed", c ? `${c.sealed_at} (query “${c.query}”, k ${c.k}, ${c.candidates} candidates)` : "not yet"]]));
  if (!c) return;
  const table = h(
    "table",
    { "data-testid": "sealed-context" },
    h("caption", {}, "Sealed context"),
    h("thead", {}, h("tr", {}, ["Rank", "Item", "Score", "Basis", "Reason", "Digest"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, c.items.map((i) => h("tr", {}, h("td", {}, String(i.rank)), h("td", {}, i.item), h("td", {}, i.score.toFixed(3)), h("td", {}, i.basis === "grant" ? `grant ${i.grant}` : i.basis || ""), h("td", {}, i.reason), h("td", {}, h("code", {}, i.digest.slice(0, 16) + "…"))))),
  );
  ctx.append(table);
}
