// Trust delegations (SPEC §6.2, docs/RULES.md §9.3), read-only: every delegation of the store
// (GET /trust, every page) as "owner trusts participant" edges and a table, and one delegation
// (GET /trust/{id}) with its state, its revocation, and the owner's items carrying the
// participant's words with the role each has now (an instruction, or data and why).
import { get, listAll, storePath } from "../api.js";
import { edge, figure, node } from "../graph.js";
import { badge, facts, h } from "../ui.js";

/** At most this many of the owner's items are read to find the participant's words. */
const MAX_READS = 200;

const state = (t) => (t.revoked ? `REVOKED at ${t.revoked_at ?? "?"} (no longer counts from revision ${t.revoked_revision ?? "?"})` : "live");

export async function trustView(main, arg) {
  main.append(h("h2", {}, "Trust delegations"));
  main.append(
    h(
      "p",
      {},
      "An owner trusts a participant's words: that participant's items in the owner's memory, and what is derived only from trusted items, are instructions; every other item is data, to be read, never obeyed. Revoking a delegation makes them data again from the next revision.",
    ),
  );
  const all = await listAll("trust");
  if (!all.length) {
    main.append(h("p", { "data-testid": "trust-none" }, "No trust delegation in this store: only items whose author is their owner are instructions."));
    return;
  }
  const id = arg || all[0].id;
  const people = [...new Set(all.flatMap((t) => [t.owner, t.participant]))];
  // Layered: owners above whom they trust (dagre breaks a cycle itself).
  figure(main, {
    title: "Who trusts whose words (owner → trusted participant)",
    elements: [
      ...people.map((p) => node(`p:${p}`, p, "person")),
      ...all.map((t) => {
        const e = edge(`p:${t.owner}`, `p:${t.participant}`, `trusts${t.revoked ? " (REVOKED)" : ""}`, `${t.revoked ? "bad" : ""}`);
        return { ...e, data: { ...e.data, id: `t:${t.id}` } };
      }),
    ],
    layout: "dagre",
    facts: all.map((t) => `${t.owner} trusts ${t.participant}: ${t.revoked ? "REVOKED" : "live"} (${t.id})`),
    height: 260,
    testid: "trust-graph",
  });
  main.append(
    h(
      "table",
      { "data-testid": "trust-list" },
      h("caption", {}, `Every trust delegation (${all.length}), in creation order`),
      h("thead", {}, h("tr", {}, ["Delegation", "Owner", "Trusts the words of", "Reason", "Recorded by", "Created", "State"].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        all.map((t) =>
          h(
            "tr",
            { "data-trust": t.id },
            h("th", { scope: "row" }, h("a", { href: `#trust/${encodeURIComponent(t.id)}`, "aria-current": t.id === id ? "true" : false }, t.id)),
            h("td", {}, t.owner),
            h("td", {}, t.participant),
            h("td", {}, t.reason || "—"),
            h("td", {}, t.issuer),
            h("td", {}, `${t.created_at} (revision ${t.created_revision})`),
            h("td", {}, badge(t.revoked ? "REVOKED" : "live", t.revoked ? "bad" : "ok")),
          ),
        ),
      ),
    ),
  );
  await showOne(main, id);
}

/** One delegation and the items it decides the role of. */
async function showOne(main, id) {
  const t = await get(storePath("trust", id));
  const effect = t.revoked
    ? `From revision ${t.revoked_revision} on, ${t.participant}'s items in ${t.owner}'s memory, and everything derived from them, are data again (unless another live delegation trusts ${t.participant}).`
    : `From revision ${t.created_revision} on, ${t.participant}'s items in ${t.owner}'s memory, and what is derived only from trusted items, are instructions.`;
  const section = h(
    "section",
    { "data-testid": "trust-record" },
    h("h3", {}, `Delegation ${t.id}: ${t.owner} trusts ${t.participant}`),
    facts([
      ["Owner (whose memory)", t.owner],
      ["Trusts the words of", t.participant],
      ["What it does", effect],
      ["Reason", t.reason],
      ["Recorded by", t.issuer],
      ["Created", `${t.created_at} (revision ${t.created_revision})`],
      ["State", badge(t.revoked ? "REVOKED" : "live", t.revoked ? "bad" : "ok")],
      ["Revoked", t.revoked ? state(t) : undefined],
    ]),
  );
  main.append(section);

  // The owner's items carrying the participant's words, or made data by one of them.
  const owned = await listAll("items", { owner: t.owner });
  const read = [];
  for (let i = 0; i < Math.min(owned.length, MAX_READS); i += 16) {
    read.push(...(await Promise.all(owned.slice(i, Math.min(i + 16, MAX_READS)).map((it) => get(storePath("items", it.id))))));
  }
  const words = read.filter((it) => it.author === t.participant || it.untrusted_source?.author === t.participant);
  section.append(h("h4", {}, `${t.owner}'s items with ${t.participant}'s words, and their role now`));
  if (owned.length > MAX_READS) section.append(h("p", { class: "note" }, `Only the first ${MAX_READS} of ${owned.length} items of ${t.owner} were read.`));
  if (!words.length) {
    section.append(h("p", { "data-testid": "trust-items" }, `No item of ${t.owner} carries ${t.participant}'s words.`));
    return;
  }
  section.append(
    h(
      "table",
      { "data-testid": "trust-items" },
      h("caption", {}, `Items of ${t.owner} authored by ${t.participant} or made data by such an item, with the role each has now`),
      h("thead", {}, h("tr", {}, ["Item", "Author", "Role", "Why data"].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        {},
        words.map((it) =>
          h(
            "tr",
            { "data-item": it.id },
            h("th", { scope: "row" }, h("a", { href: `#item/${encodeURIComponent(it.id)}` }, it.id)),
            h("td", {}, it.author),
            h("td", {}, badge(it.role, it.role === "instruction" ? "ok" : "")),
            h("td", {}, it.data_reason ? `${it.data_reason}${it.untrusted_source ? `: ${it.untrusted_source.item} by ${it.untrusted_source.author}` : ""}` : "—"),
          ),
        ),
      ),
    ),
  );
}
