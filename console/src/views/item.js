// An item: its origin audience and each grant's audience as separate sets (never merged), each
// grant's consent state (./consents.js), its provenance up to every transitive source and down to
// every derived item, and, for an admin token, grant / revoke a grant / lifecycle actions behind a
// confirmation that previews the change.
import { del, get, listAll, post, storePath } from "../api.js";
import { edge, figure } from "../graph.js";
import { badge, confirmAction, facts, field, guarded, h, list, select, val } from "../ui.js";
import { admitsNow, audienceElements, audienceMarks, audienceName, itemNode, transition } from "./common.js";
import { grantConsents } from "./consents.js";

const MAX_GRAPH = 300;

/** Provenance: every transitive source (up) and every derived item (down), bounded. */
async function provenance(item, all) {
  const byId = new Map(all.map((i) => [i.id, i]));
  byId.set(item.id, item);
  const children = new Map();
  for (const i of all) for (const s of i.sources || []) children.set(s, [...(children.get(s) || []), i.id]);
  const nodes = new Set([item.id]);
  const edges = [];
  const up = [item.id];
  while (up.length && nodes.size < MAX_GRAPH) {
    const id = up.shift();
    const it = byId.get(id) || (await get(storePath("items", id)));
    byId.set(id, it);
    for (const s of it.sources || []) {
      edges.push([s, id]);
      if (!nodes.has(s)) {
        nodes.add(s);
        up.push(s);
      }
    }
  }
  const down = [item.id];
  while (down.length && nodes.size < MAX_GRAPH) {
    const id = down.shift();
    for (const c of children.get(id) || []) {
      if (id !== item.id || !edges.some(([a, b]) => a === id && b === c)) edges.push([id, c]);
      if (!nodes.has(c)) {
        nodes.add(c);
        down.push(c);
      }
    }
  }
  const uniq = [...new Map(edges.map((e) => [e.join(">"), e])).values()];
  return { nodes: [...nodes].map((id) => byId.get(id)).filter(Boolean), edges: uniq, children };
}

function descendants(id, children) {
  const out = [];
  const seen = new Set([id]);
  const q = [id];
  while (q.length) for (const c of children.get(q.shift()) || []) if (!seen.has(c)) (seen.add(c), out.push(c), q.push(c));
  return out;
}

export async function itemView(main, arg) {
  main.append(h("h2", {}, "Item"));
  const all = await listAll("items");
  const pick = h(
    "form",
    { class: "row", "aria-label": "Pick an item", onsubmit: (e) => (e.preventDefault(), (location.hash = `#item/${encodeURIComponent(val("item-id"))}`)) },
    select("item-id", "Item", all.map((i) => i.id), arg || all[0]?.id),
    h("button", { type: "submit" }, "Show"),
  );
  main.append(pick);
  const id = arg || all[0]?.id;
  if (!id) return;
  const item = await get(storePath("items", id));
  main.append(
    h("section", { "data-testid": "item-summary" }, h("h3", {}, `Item ${item.id}`), facts([
      ["Owner", item.owner],
      ["State", badge(item.state, item.state === "active" ? "ok" : "bad")],
      ["Current", item.current ? badge("current", "ok") : badge(`NOT current${item.blocked_by ? ` (blocked by ${item.blocked_by.item ?? "itself"}: ${item.blocked_by.state})` : ""}`, "bad")],
      ["Sources", (item.sources || []).join(", ") || "none (an origin item)"],
      ["Subjects", item.subjects?.length ? item.subjects.join(", ") : undefined],
      ["Author", item.author],
      ["Role", item.role ? `${item.role}${item.data_reason ? ` (${item.data_reason}${item.untrusted_source ? `: ${item.untrusted_source.item} by ${item.untrusted_source.author}` : ""})` : ""}` : undefined],
      ["Superseded by", item.superseded_by],
      ["Content", item.content],
      ["Read at", `revision ${item.revision}`],
    ])),
  );

  // Audiences: origin first, then every grant (revoked and expired ones drawn muted, marked).
  const audiences = [{ ...item.audience, source: "origin" }, ...item.grants.map((g) => ({ ...g, grant: g.id }))];
  const setFacts = audiences.map((a, i) => `${audienceName(a, i)}: {${(a.members || []).join(", ") || (a.kind === "public" ? "everyone" : "")}}${audienceMarks(a).length ? ` [${audienceMarks(a).join(", ")}]` : ""}`);
  figure(main, {
    title: `Audiences of ${item.id}: separate sets, never merged`,
    elements: audienceElements(audiences),
    layout: "grid",
    layoutOptions: { avoidOverlap: true },
    facts: setFacts,
    height: 260,
    testid: "audiences",
  });
  main.append(grantConsents(item));

  // Provenance.
  const prov = await provenance(item, all);
  const blocking = item.blocked_by?.item;
  const els = [
    ...prov.nodes.map((it) => itemNode(it, { focus: it.id === item.id, blocking: it.id === blocking })),
    ...prov.edges.map(([s, t]) => edge(`item:${s}`, `item:${t}`, "derives")),
  ];
  const provFacts = prov.nodes.map((it) => `${it.id}: ${it.state}, ${it.current ? "current" : "not current"}${it.id === blocking ? " — this one makes " + item.id + " non-current" : ""}`);
  figure(main, { title: `Provenance of ${item.id}: sources above, derived items below`, elements: els, layout: "dagre", facts: provFacts, height: 300, testid: "provenance" });

  // Acting (an admin token; a reader token gets the API's 403, shown as is).
  const actions = h("section", { class: "actions" }, h("h3", {}, "Act on this item"));
  main.append(actions);
  actions.append(
    h(
      "form",
      { "aria-label": "Grant", class: "row", onsubmit: (e) => (e.preventDefault(), grant(item, audiences)) },
      field("grant-members", "Grant to members (comma separated)", { required: true }),
      field("grant-reason", "Reason"),
      field("grant-expires", "Expires at (RFC 3339, optional)"),
      h("button", { type: "submit" }, "Grant…"),
    ),
  );
  for (const g of item.grants.filter((g) => g.live)) {
    actions.append(h("button", { type: "button", "data-grant": g.id, onclick: () => revokeGrant(item, g, audiences) }, `Revoke grant ${g.id}…`));
  }
  actions.append(
    h(
      "form",
      { "aria-label": "Lifecycle", class: "row", onsubmit: (e) => (e.preventDefault(), lifecycle(item, prov.children, all)) },
      select("lc-action", "Lifecycle action", ["supersede", "freeze", "unfreeze", "quarantine", "release", "revoke", "delete"], "revoke"),
      field("lc-by", "Superseded by (supersede only)"),
      h("button", { type: "submit" }, "Apply…"),
    ),
  );
}

async function grant(item, audiences) {
  const members = list("grant-members");
  const newSet = [...new Set([item.owner, ...members])].sort();
  const live = audiences.filter(admitsNow);
  const newcomers = newSet.filter((m) => !live.some((a) => (a.members || []).includes(m)));
  const subjects = (item.subjects || []).filter((x) => x !== item.owner);
  const ok = await confirmAction(`Grant ${item.id}`, [
    h("p", {}, `Adds one more authorized audience to ${item.id}: exactly {${newSet.join(", ")}}.`),
    h("p", {}, "It is a separate set: it is never unioned with the origin audience or another grant."),
    h("p", {}, newcomers.length ? `Newly able to see it (in no live audience before): ${newcomers.join(", ")}.` : "Nobody new: every member is already in a live audience."),
    subjects.length ? h("p", {}, `It starts pending: it admits nobody until ${subjects.join(", ")} consent${subjects.length > 1 ? "" : "s"} to it.`) : "",
  ]);
  if (!ok) return;
  const body = { members, reason: val("grant-reason") || null };
  if (val("grant-expires")) body.expires_at = val("grant-expires");
  if ((await guarded(() => post(storePath("items", item.id, "grants"), body))) !== undefined) window.dispatchEvent(new HashChangeEvent("hashchange"));
}

async function revokeGrant(item, g, audiences) {
  const others = audiences.filter((a) => a.grant !== g.id && admitsNow(a));
  const losing = (g.members || []).filter((m) => !others.some((a) => (a.members || []).includes(m)));
  const ok = await confirmAction(`Revoke grant ${g.id}`, [
    h("p", {}, `Removes the audience {${(g.members || []).join(", ")}} from ${item.id}, from the next decision on.`),
    h("p", {}, losing.length ? `No other live audience lists: ${losing.join(", ")}; containers with them stop seeing ${item.id}.` : `Every member is in another live audience; containers that fit only inside this grant stop seeing ${item.id}.`),
  ]);
  if (!ok) return;
  if ((await guarded(() => del(storePath("grants", g.id)))) !== undefined) window.dispatchEvent(new HashChangeEvent("hashchange"));
}

async function lifecycle(item, children, all) {
  const action = val("lc-action");
  const to = transition(item.state, action);
  const below = descendants(item.id, children);
  const current = below.filter((d) => all.find((i) => i.id === d)?.current);
  const body = [h("p", {}, to ? `${item.id}: ${item.state} → ${to}.` : `${action} does not apply to a ${item.state} item: the API will refuse it (invalid_transition).`)];
  if (to && to !== "active") body.push(h("p", {}, current.length ? `Becomes non-current through ${item.id}: ${current.join(", ")}.` : "No current derived item depends on it."));
  if (to === "active") body.push(h("p", {}, below.length ? `Derived items that may become current again: ${below.join(", ")}.` : "No derived items."));
  const ok = await confirmAction(`${action} ${item.id}`, body);
  if (!ok) return;
  const req = { action };
  if (val("lc-by")) req.by = val("lc-by");
  if ((await guarded(() => post(storePath("items", item.id, "lifecycle"), req))) !== undefined) window.dispatchEvent(new HashChangeEvent("hashchange"));
}
