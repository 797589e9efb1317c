// A capability's chain as a tree from its root: each link's paths, actions, window, uses left and
// condition, revoked / invalidated / expired / exhausted marked in words; "what would revoking
// this invalidate" (GET /dependents) highlighted in the tree before the user confirms.
import { del, get, listAll, storePath } from "../api.js";
import { edge, figure, node } from "../graph.js";
import { badge, confirmAction, field, guarded, h, select, val } from "../ui.js";

/** Why a capability is not usable, in words (empty when it is). */
export function capMarks(c, now = Date.now()) {
  const m = [];
  if (c.revoked) m.push("REVOKED");
  if (c.invalidated_by) m.push(`INVALIDATED by ${c.invalidated_by}`);
  const k = c.constraints || {};
  if (k.not_after && Date.parse(k.not_after) <= now) m.push("EXPIRED");
  if (k.not_before && Date.parse(k.not_before) > now) m.push("NOT YET VALID");
  if (c.uses_left === 0) m.push("EXHAUSTED");
  return m;
}

function capLabel(c) {
  const k = c.constraints || {};
  const window = k.not_before || k.not_after ? `window [${k.not_before || "−∞"}, ${k.not_after || "∞"})` : "no window";
  const marks = capMarks(c);
  return [
    `${c.id}  (held by ${c.holder})`,
    `paths ${c.paths.join(", ")} · ${c.actions.join(", ")}`,
    `${window} · uses left ${c.uses_left ?? "∞"}`,
    k.condition ? `if ${k.condition}` : "no condition",
    marks.length ? `✗ ${marks.join(", ")}` : "✓ valid",
  ].join("\n");
}

export async function capabilityView(main, arg) {
  main.append(h("h2", {}, "Capability chain"));
  const caps = await listAll("capabilities");
  const id = arg || caps[caps.length - 1]?.id;
  main.append(
    h(
      "form",
      { "aria-label": "Pick a capability", class: "row", onsubmit: (e) => (e.preventDefault(), (location.hash = `#capability/${encodeURIComponent(val("cap-id"))}`)) },
      select("cap-id", "Capability", caps.map((c) => c.id), id),
      h("button", { type: "submit" }, "Show"),
    ),
  );
  if (!id) return;
  const chain = (await get(storePath("capabilities", id, "chain"))).chain;
  const root = chain[0];
  // The tree: every capability descending from the same root (parent pointers), bounded.
  const byParent = new Map();
  for (const c of caps) if (c.parent) byParent.set(c.parent, [...(byParent.get(c.parent) || []), c]);
  const tree = [root];
  for (let i = 0; i < tree.length && tree.length < 300; i++) tree.push(...(byParent.get(tree[i].id) || []));
  const inChain = new Set(chain.map((c) => c.id));
  const render = (preview = new Set(), revoking = "") => {
    const els = [
      ...tree.map((c) => node(`c:${c.id}`, capLabel(c), `${capMarks(c).length ? "bad" : "ok"} ${c.id === id ? "focus" : ""} ${preview.has(c.id) ? "preview" : ""}`)),
      ...tree.filter((c) => c.parent && tree.some((p) => p.id === c.parent)).map((c) => edge(`c:${c.parent}`, `c:${c.id}`, inChain.has(c.id) ? "delegates (chain)" : "delegates")),
    ];
    holder.replaceChildren();
    figure(holder, {
      title: `Delegation tree from ${root.id} on ${root.device}${preview.size ? " — outlined: invalidated if revoked" : ""}`,
      elements: els,
      layout: "dagre",
      facts: tree.map((c) => `${c.id}: ${capMarks(c).join(", ") || "valid"}${preview.has(c.id) ? (c.id === revoking ? " — would be revoked" : " — would be invalidated") : ""}${inChain.has(c.id) ? " (in the chain of " + id + ")" : ""}`),
      height: 420,
      testid: "chain",
    });
  };
  const holder = h("div", {});
  main.append(holder);
  render();
  main.append(
    h(
      "ol",
      { "aria-label": `Chain of ${id}, root first`, "data-testid": "chain-links" },
      chain.map((c) => h("li", {}, `${c.id}: ${c.issuer} → ${c.holder}, ${c.paths.join(", ")} (${c.actions.join(", ")}) `, capMarks(c).length ? badge(capMarks(c).join(", "), "bad") : badge("valid", "ok"))),
    ),
  );
  const device = root.device;
  main.append(
    h(
      "form",
      { "aria-label": "Revoke", class: "row", onsubmit: (e) => (e.preventDefault(), guarded(() => revoke(render))) },
      select("rv-cap", "Revoke capability", chain.map((c) => c.id), id),
      field("rv-by", `Revoke as (the owner of ${device} or the holder of an ancestor)`, { required: true, value: chain[0].issuer }),
      h("button", { type: "submit" }, "Revoke…"),
    ),
  );
}

async function revoke(render) {
  const cap = val("rv-cap");
  const deps = await get(storePath("capabilities", cap, "dependents"));
  const preview = new Set([cap, ...deps.invalidates]);
  render(preview, cap);
  const ok = await confirmAction(`Revoke ${cap}`, [
    h("p", {}, `Revokes ${cap} from the next decision on.`),
    h("p", { "data-testid": "invalidates" }, deps.invalidates.length ? `Invalidated through it: ${deps.invalidates.join(", ")}.` : "No capability descends from it."),
  ]);
  if (!ok) {
    render();
    return;
  }
  try {
    await del(`${storePath("capabilities", cap)}?by=${encodeURIComponent(val("rv-by"))}`);
  } catch (e) {
    // Refused (a reader's 403, or any error): nothing was revoked, so the "would be revoked"
    // preview goes; the refusal itself is shown by the caller.
    render();
    throw e;
  }
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}
