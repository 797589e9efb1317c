// An authorize request explained link by link: the answer and reason, the authority it used (the
// owner, a relation edge, or a delegation chain), and for a chain each link in order with the
// one that failed marked.
import { post, storePath } from "../api.js";
import { edge, figure, node } from "../graph.js";
import { badge, facts, field, guarded, h, val } from "../ui.js";

export async function authorizeView(main) {
  main.append(h("h2", {}, "Authorize, explained"));
  const out = h("div", { "aria-live": "polite" });
  main.append(
    h(
      "form",
      { "aria-label": "Authorize", class: "grid", onsubmit: (e) => (e.preventDefault(), guarded(() => explain(out))) },
      field("az-principal", "Principal", { required: true }),
      field("az-device", "Device", { required: true }),
      field("az-path", "Path", { required: true }),
      field("az-action", "Action", { required: true, value: "read" }),
      field("az-context", "Context (JSON object, optional)"),
      h("button", { type: "submit" }, "Authorize"),
    ),
    out,
  );
}

async function explain(out) {
  out.replaceChildren();
  const req = { principal: val("az-principal"), device: val("az-device"), path: val("az-path"), action: val("az-action") };
  if (val("az-context")) req.context = JSON.parse(val("az-context"));
  const r = await post(storePath("authorize"), req);
  const a = r.authority;
  out.append(
    h(
      "section",
      { "data-testid": "authorize-answer" },
      facts([
        ["Answer", badge(r.allowed ? "ALLOWED ✓" : "DENIED ✗", r.allowed ? "ok" : "bad")],
        ["Reason code", h("code", { "data-testid": "auth-reason" }, r.reason)],
        ["Authority", a ? (a.kind === "owner" ? `owner ${a.owner} of ${a.device}` : a.kind === "relation" ? `edge ${a.edge}: ${a.grantor} --${a.relation}--> ${a.grantee}` : `chain ${a.chain.map((l) => l.capability).join(" → ")}`) : "none"],
        ["Failure", r.failure ? `${r.failure.link ? `link ${r.failure.link}: ` : ""}${r.failure.message || ""}` : undefined],
        ["Read at", `revision ${r.revision}`],
      ]),
    ),
  );
  const els = [node("dev", `${req.device}\n${req.path} (${req.action})`, `device ${r.allowed ? "ok" : "bad"}`), node("who", req.principal, "person focus")];
  const steps = [];
  if (a?.kind === "owner") {
    els.push(edge("who", "dev", "owns"));
    steps.push(`${a.owner} owns ${a.device}.`);
  } else if (a?.kind === "relation") {
    els.push(node("grantor", `${a.grantor} (owner)`, "person"), edge("grantor", "who", `${a.relation} (${a.edge})`, r.allowed ? "" : "bad"), edge("grantor", "dev", "owns", "owns"));
    steps.push(`${a.grantor} opens ${a.relation} to ${a.grantee} through edge ${a.edge}.`);
  } else if (a?.kind === "capability") {
    let failed = false;
    a.chain.forEach((l, i) => {
      const bad = r.failure?.link === l.capability;
      failed = failed || bad;
      const status = bad ? `✗ FAILS: ${r.failure.message || r.reason}` : failed ? "not reached" : "✓ passes";
      els.push(node(`l${i}`, `link ${i + 1}: ${l.capability}\n${l.issuer} → ${l.holder}\n${l.paths.join(", ")} (${l.actions.join(", ")})\n${status}`, bad ? "bad blocking" : failed ? "muted" : "ok"));
      els.push(edge(i ? `l${i - 1}` : "dev", `l${i}`, i ? "delegates" : "root on"));
      steps.push(`Link ${i + 1}, ${l.capability} (${l.issuer} → ${l.holder}; ${l.paths.join(", ")}; ${l.actions.join(", ")}): ${status}`);
    });
    els.push(edge(`l${a.chain.length - 1}`, "who", "held by"));
  } else {
    steps.push(`No authority reaches ${req.device}/${req.path} for ${req.principal}.`);
  }
  out.append(h("ol", { "data-testid": "links", "aria-label": "Link by link" }, steps.map((s) => h("li", {}, s))));
  figure(out, { title: `Why: ${r.reason}`, elements: els, layout: "dagre", facts: steps, height: 360, testid: "authorize-picture" });
}
