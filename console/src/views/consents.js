// Grants and their data-subject consents (SPEC §6.3, docs/RULES.md §9.4), read-only: for each
// grant of an item, whose consent it needs, who consented, who is missing or withdrew, every
// recorded decision, and whether the grant is in effect because of them — exactly the
// `consent` the item's admin read (GET /items/{item}) answers for each grant.
import { badge, h } from "../ui.js";

/** Whether a grant admits now and why, in words: [text, badge kind]. */
export function grantEffect(g) {
  const c = g.consent;
  if (g.revoked) return ["NOT IN EFFECT: revoked", "bad"];
  if (!g.live) return ["NOT IN EFFECT: expired", "bad"];
  if (!c) return ["IN EFFECT: needs no consent (no subject other than the owner)", "ok"];
  if (c.effective) return [`IN EFFECT: every subject consented (${c.consented.join(", ")})`, "ok"];
  const withdrawn = c.withdrawn.length ? `; withdrawn by ${c.withdrawn.join(", ")}` : "";
  const until = c.missing.length ? ` until ${c.missing.join(", ")} consent${c.missing.length > 1 ? "" : "s"}` : "";
  return [`PENDING: admits nobody${until}${withdrawn}`, "bad"];
}

/** One recorded decision, in words. */
const decision = (e) => `${e.subject} ${e.action === "consented" ? "consented" : "withdrew"} at ${e.at} (revision ${e.revision})`;

const names = (xs) => (xs && xs.length ? xs.join(", ") : "none");

/** The table of an item's grants with their consent state and history. */
export function grantConsents(item) {
  const subjects = (item.subjects || []).filter((s) => s !== item.owner);
  const intro = subjects.length
    ? `${item.id} is about ${subjects.join(", ")}: a grant admits nobody until each of them has consented to it (a withdrawal stops it again).`
    : `${item.id} names no subject other than its owner: its grants need nobody's consent.`;
  const section = h("section", { "data-testid": "grant-consents" }, h("h3", {}, "Grants and consent"), h("p", {}, intro));
  if (!item.grants.length) {
    section.append(h("p", {}, "No grant."));
    return section;
  }
  section.append(
    h(
      "table",
      {},
      h("caption", {}, `Grants of ${item.id}, each with its subjects' consent (read only)`),
      h("thead", {}, h("tr", {}, ["Grant", "Audience", "Consent needed from", "Consented", "Missing", "In effect", "Decisions"].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        item.grants.map((g) => {
          const c = g.consent;
          const [effect, kind] = grantEffect(g);
          const missing = c ? c.missing.map((m) => (c.withdrawn.includes(m) ? `${m} (withdrew)` : m)) : [];
          return h(
            "tr",
            { "data-grant": g.id },
            h("th", { scope: "row" }, g.id),
            h("td", {}, `{${g.members.join(", ")}}`),
            h("td", {}, c ? names(c.required) : "nobody"),
            h("td", {}, c ? names(c.consented) : "—"),
            h("td", {}, c ? names(missing) : "—"),
            h("td", {}, badge(effect, kind)),
            h("td", {}, c?.history?.length ? h("ol", { class: "history" }, c.history.map((e) => h("li", {}, decision(e)))) : "none"),
          );
        }),
      ),
    ),
  );
  return section;
}
