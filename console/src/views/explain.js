// Explain a decision: a container (owner, viewer participants and identities, quality) and an
// item; the answer from POST /check, and the picture of why — the viewer set against each
// authorized audience separately, the one that contains it or the viewers outside every one,
// the blocking source when currentness fails, "unresolved" with its cause, and the grants still
// waiting for a subject's consent (no authorized audience until then).
import { ApiError, get, listAll, post, storePath } from "../api.js";
import { edge, figure, node } from "../graph.js";
import { badge, facts, field, h, select, val } from "../ui.js";
import { grantEffect } from "./consents.js";

/** The container the form describes (identities one per line or comma: `transport:identifier`). */
export function containerFromForm(prefix) {
  const owner = val(`${prefix}-owner`);
  const participants = val(`${prefix}-viewers`).split(/[\s,]+/).filter(Boolean);
  const identities = val(`${prefix}-identities`)
    .split(/[\n,]+/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      const i = s.indexOf(":");
      return { transport: s.slice(0, i), identifier: s.slice(i + 1) };
    });
  const quality = val(`${prefix}-quality`) || "fresh";
  const viewers = { participants, identities };
  if (quality !== "fresh") viewers.quality = quality;
  return { owner, viewers };
}

/** The container fields, shared with the container view. */
export function containerFields(prefix, participants = []) {
  return [
    field(`${prefix}-owner`, "Owner", { required: true, list: `${prefix}-people`, value: "owner" }),
    field(`${prefix}-viewers`, "Viewer participants (comma separated)", { list: `${prefix}-people` }),
    field(`${prefix}-identities`, "Viewer identities (transport:identifier, comma separated)"),
    select(`${prefix}-quality`, "Evidence quality", ["fresh", "stale", "low_confidence", "conflicting"], "fresh"),
    h("datalist", { id: `${prefix}-people` }, participants.map((p) => h("option", { value: p }))),
  ];
}

/** Admin-only reads come back as undefined for a reader token (403), not as a failure. */
async function adminOnly(fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError && e.status === 403) return undefined;
    throw e;
  }
}

export async function explainView(main) {
  main.append(h("h2", {}, "Explain a decision"));
  const people = (await adminOnly(() => listAll("participants"))) || [];
  const items = (await adminOnly(() => listAll("items"))) || [];
  const out = h("div", { id: "explain-out", "aria-live": "polite" });
  const form = h(
    "form",
    { "aria-label": "Explain a decision", class: "grid", onsubmit: (e) => (e.preventDefault(), explain(out)) },
    containerFields("ex", people.map((p) => p.id)),
    field("ex-item", "Item", { required: true, list: "ex-items" }),
    h("datalist", { id: "ex-items" }, items.map((i) => h("option", { value: i.id }))),
    h("button", { type: "submit" }, "Explain"),
  );
  main.append(form, out);
}

async function explain(out) {
  out.replaceChildren();
  const container = containerFromForm("ex");
  const item = val("ex-item");
  const d = await post(storePath("check"), { item, container });
  const res = d.container || { resolved: true };
  out.append(
    h(
      "section",
      { "data-testid": "decision" },
      h("h3", {}, `${d.admitted ? "Admitted" : "Denied"}: ${item}`),
      facts([
        ["Answer", badge(d.admitted ? "ADMITTED ✓" : "DENIED ✗", d.admitted ? "ok" : "bad")],
        ["Reason code", h("code", { "data-testid": "reason" }, d.reason)],
        ["Basis", d.basis ? h("span", { "data-testid": "basis" }, d.basis === "grant" ? `grant ${d.grant}` : d.basis) : "none (denied)"],
        ["Blocked by", d.blocked_by ? h("span", { "data-testid": "blocked-by" }, `${d.blocked_by.item ?? item} (${d.blocked_by.state})`) : undefined],
        ["Container", res.resolved ? "resolved" : h("span", { "data-testid": "unresolved" }, `UNRESOLVED: ${res.reason}${res.detail ? ` — ${res.detail}` : ""}`)],
        ["Read at", `revision ${d.revision} (token ${d.token})`],
      ]),
    ),
  );

  // The viewer set V(C): the owner, the participants and what the identities are bound to.
  const ids = await adminOnly(() => listAll("identities"));
  const sets = await adminOnly(() => get(storePath("items", item, "viewers")));
  if (!sets) {
    out.append(h("p", { class: "note" }, "The audiences of an item are an admin view: this token sees the answer above, not the picture."));
    return;
  }
  let viewers;
  if (res.resolved) {
    const v = new Set([container.owner, ...container.viewers.participants]);
    for (const i of container.viewers.identities) {
      const b = (ids || []).find((x) => x.transport === i.transport && x.identifier === i.identifier);
      for (const p of b?.participants || []) v.add(p);
    }
    viewers = [...v].sort();
  }
  // A non-current item admits nobody, so its viewer sets are empty: draw its audiences from the
  // admin view instead, marked as not consulted (currentness fails before any audience is tried).
  const notCurrent = sets.current === false;
  let audiences = sets.audiences;
  const iv = await get(storePath("items", item));
  if (notCurrent) {
    audiences = [{ ...iv.audience, source: "origin", everyone: iv.audience.kind === "public" }, ...iv.grants.filter((g) => g.live).map((g) => ({ ...g, grant: g.id, source: "grant", everyone: false }))];
  }
  const subsets = viewers && !notCurrent ? await post(storePath("items", item, "viewers"), { participants: viewers }) : undefined;
  const els = [];
  const factsList = [];
  els.push(node("vc", viewers ? "Viewers V(C)" : `Viewers: UNRESOLVED (${res.reason}) — everyone, including the anonymous participant`, viewers ? "" : "bad"));
  if (!viewers) {
    els.push(node("vc:U", "U: everyone", "bad", "vc"));
    factsList.push(`The container is unresolved (${res.reason}${res.detail ? `: ${res.detail}` : ""}): its viewers are everyone, so only public items are admitted.`);
  }
  const inSome = new Set();
  audiences.forEach((a, i) => {
    const s = subsets?.audiences.find((x) => x.digest === a.digest && (x.grant || "") === (a.grant || ""));
    const name = a.grant ? `grant ${a.grant}` : "origin audience";
    const admits = d.admitted && ((d.basis === "grant" && a.grant === d.grant) || (d.basis === "origin" && a.source === "origin") || (d.reason === "admitted_public" && a.everyone));
    const contains = viewers ? s?.all : a.everyone;
    const verdict = notCurrent ? " — not consulted (item not current)" : admits ? " — ADMITS ✓" : contains ? " — contains V(C)" : viewers ? ` — misses ${(s?.outside || []).join(", ")}` : " — not public";
    const label = `${name} (${a.kind})${a.expires_at ? ` expires ${a.expires_at}` : ""}${verdict}`;
    els.push(node(`a${i}`, label, admits ? "ok" : contains ? "" : "muted"));
    const members = a.everyone ? ["everyone"] : a.members || [];
    for (const m of members) {
      const isViewer = viewers?.includes(m);
      els.push(node(`a${i}:${m}`, isViewer ? `${m} (viewer)` : m, `person ${isViewer ? "focus" : ""}`, `a${i}`));
    }
    for (const m of s?.admitted || []) {
      inSome.add(m);
      els.push(edge(`vc:${m}`, `a${i}:${m}`, "in", "arc"));
    }
    factsList.push(`${label}: {${members.join(", ")}}`);
  });
  // Pending grants (SPEC §6.3) are no authorized audience, so the viewer sets leave them out; they
  // are drawn anyway, marked, each with the subjects who have not consented.
  const pending = notCurrent ? [] : iv.grants.filter((g) => g.live && g.consent && !g.consent.effective);
  const waitingFor = new Map();
  pending.forEach((g, j) => {
    const c = g.consent;
    const missing = c.missing.map((m) => (c.withdrawn.includes(m) ? `${m} (withdrew)` : m));
    const label = `grant ${g.id} (${g.kind || "shared"}) — CONSENT PENDING, admits nobody`;
    els.push(node(`pg${j}`, label, "warn"));
    for (const m of g.members) {
      const isViewer = viewers?.includes(m);
      els.push(node(`pg${j}:${m}`, isViewer ? `${m} (viewer)` : m, `person ${isViewer ? "focus" : ""}`, `pg${j}`));
      if (isViewer && !inSome.has(m)) {
        waitingFor.set(m, [...(waitingFor.get(m) || []), g]);
        els.push(edge(`vc:${m}`, `pg${j}:${m}`, "waits for consent", "arc pending"));
      }
    }
    els.push(node(`pg${j}:missing`, `no consent yet from:\n${missing.join(", ")}`, "bad", `pg${j}`));
    factsList.push(`grant ${g.id}: {${g.members.join(", ")}} — ${grantEffect(g)[0]}; not an authorized audience now.`);
  });
  // Parents before their children: the viewers go right after the V(C) box.
  const viewerNodes = (viewers || []).map((m) => {
    const outside = !notCurrent && !inSome.has(m);
    const waits = outside ? waitingFor.get(m) : undefined;
    if (waits) {
      const who = [...new Set(waits.flatMap((g) => g.consent.missing))].join(", ");
      factsList.push(`${m} is in no authorized audience: only in ${waits.map((g) => `grant ${g.id}`).join(", ")}, waiting for consent from ${who}.`);
      return node(`vc:${m}`, `${m}\n✗ only in a grant waiting for consent`, "person warn", "vc");
    }
    if (outside) factsList.push(`${m} is outside every authorized audience.`);
    return node(`vc:${m}`, outside ? `${m}\n✗ outside every audience` : m, `person ${outside ? "bad" : ""}`, "vc");
  });
  els.splice(1, 0, ...viewerNodes);
  if (d.blocked_by) {
    const b = d.blocked_by.item || item;
    els.push(node(`item:${item}`, `${item}\nNOT current`, "bad"));
    if (b !== item) {
      els.push(node(`item:${b}`, `${b}\n${d.blocked_by.state}\n⛔ blocks currentness`, "bad blocking"));
      els.push(edge(`item:${b}`, `item:${item}`, "transitive source", "bad"));
    }
    factsList.push(`${item} is not current: ${b === item ? "its own state is" : `its source ${b} is`} ${d.blocked_by.state}.`);
  }
  figure(out, { title: `Why: ${d.reason}`, elements: els, layout: "dagre", facts: factsList, height: 300, testid: "explain-picture" });
}
