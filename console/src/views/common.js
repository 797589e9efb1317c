// Pieces several views share: audiences as separate sets (never merged, a grant waiting for
// consent marked), the provenance graph, and the lifecycle transition table the confirmation
// previews use.
import { node } from "../graph.js";

/** Label of an audience: its kind and where it comes from. */
export function audienceName(a, i) {
  if (a.grant) return `grant ${a.grant}`;
  if (a.source && a.source !== "origin") return `${a.source} audience`;
  return i === 0 ? "origin audience" : `audience ${i + 1}`;
}

/** Marks for an audience: expired, revoked or waiting for consent, as words (the colour only
 * repeats them). */
export function audienceMarks(a, now = Date.now()) {
  const marks = [];
  if (a.revoked) marks.push("REVOKED");
  if (a.expires_at && Date.parse(a.expires_at) <= now) marks.push("EXPIRED");
  else if (a.expires_at) marks.push(`expires ${a.expires_at}`);
  if (a.live === false && !a.revoked && !marks.includes("EXPIRED")) marks.push("NOT LIVE");
  if (a.consent && !a.consent.effective) marks.push("CONSENT PENDING");
  return marks;
}

/** The marks of an audience that admits nobody now. */
export const DEAD_MARKS = ["REVOKED", "EXPIRED", "NOT LIVE", "CONSENT PENDING"];
/** Whether an audience admits anyone now (not revoked, expired or waiting for consent). */
export const admitsNow = (a) => !audienceMarks(a).some((m) => DEAD_MARKS.includes(m));

/**
 * Elements for audiences drawn as separate sets: one box per audience holding its own copy of
 * each member, so a person in two sets appears twice, once in each, and the sets are never
 * unioned. Members found in more than one set say so in their label.
 */
export function audienceElements(audiences, { highlight = new Set(), classesFor = () => "" } = {}) {
  const count = new Map();
  for (const a of audiences) for (const m of a.members || []) count.set(m, (count.get(m) || 0) + 1);
  const els = [];
  audiences.forEach((a, i) => {
    const setId = `set${i}`;
    const marks = audienceMarks(a);
    const dead = marks.some((m) => DEAD_MARKS.includes(m));
    const hl = highlight.has(i);
    const title = `${audienceName(a, i)} (${a.kind}${a.everyone ? ", everyone" : ""})${marks.length ? ` — ${marks.join(", ")}` : ""}${hl ? " — CONTAINS THE VIEWERS ✓" : ""}`;
    els.push(node(setId, title, `${dead ? "muted" : ""} ${hl ? "ok" : ""} ${classesFor(a, i)}`));
    const members = a.everyone || a.kind === "public" ? ["everyone"] : a.members || [];
    for (const m of members) {
      const shared = count.get(m) > 1 ? ` (in ${count.get(m)} sets)` : "";
      els.push(node(`${setId}:${m}`, `${m}${shared}`, `person ${shared ? "focus" : ""}`, setId));
    }
  });
  return els;
}

/** The lifecycle state machine (SPEC §1.7): the state after `action`, or undefined if refused. */
export function transition(from, action) {
  const T = {
    supersede: ["active", "frozen"],
    freeze: ["active"],
    unfreeze: ["frozen"],
    quarantine: ["active", "frozen"],
    release: ["quarantined"],
    revoke: ["active", "frozen", "quarantined", "superseded"],
    delete: ["active", "frozen", "quarantined", "superseded", "revoked"],
  };
  const to = { supersede: "superseded", freeze: "frozen", unfreeze: "active", quarantine: "quarantined", release: "active", revoke: "revoked", delete: "deleted" };
  return (T[action] || []).includes(from) ? to[action] : undefined;
}

/** Node label and class of an item in the provenance graph: state and currentness in words. */
export function itemNode(it, { focus = false, blocking = false } = {}) {
  const cur = it.current ? "current" : "NOT current";
  const label = `${it.id}\n${it.state} · ${cur}${blocking ? "\n⛔ makes it non-current" : ""}`;
  const cls = `${it.current ? "ok" : it.state === "active" ? "warn" : "bad"} ${focus ? "focus" : ""} ${blocking ? "blocking" : ""}`;
  return node(`item:${it.id}`, label, cls);
}
