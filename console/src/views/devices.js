// Devices: people, devices and directed relation edges as a graph, with the declared relations
// no edge exercises listed beside it (GET /schema).
import { ApiError, get, listAll, storePath } from "../api.js";
import { edge, figure, node } from "../graph.js";
import { h } from "../ui.js";

export async function devicesView(main) {
  main.append(h("h2", {}, "Devices and relations"));
  const [devices, relations, schema] = await Promise.all([listAll("devices"), listAll("relations"), get(storePath("schema"))]);
  let people;
  try {
    people = (await listAll("participants")).filter((p) => p.kind !== "device").map((p) => p.id);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 403)) throw e;
    people = [];
  }
  const deviceIds = new Set(devices.map((d) => d.id));
  const persons = new Set([...people, ...devices.map((d) => d.owner), ...relations.flatMap((r) => [r.grantor, r.grantee])].filter((p) => !deviceIds.has(p)));
  const els = [
    ...[...persons].map((p) => node(`p:${p}`, p, "person")),
    ...devices.map((d) => node(`d:${d.id}`, `${d.id}\n(device)`, "device")),
    ...devices.map((d) => edge(`p:${d.owner}`, `d:${d.id}`, "owns", "owns")),
    ...relations.map((r) => ({ ...edge(`${deviceIds.has(r.grantor) ? "d" : "p"}:${r.grantor}`, `${deviceIds.has(r.grantee) ? "d" : "p"}:${r.grantee}`, `${r.relation}${r.revoked ? " (REVOKED)" : ""}`, r.revoked ? "bad" : ""), data: { id: `e:${r.id}`, source: `${deviceIds.has(r.grantor) ? "d" : "p"}:${r.grantor}`, target: `${deviceIds.has(r.grantee) ? "d" : "p"}:${r.grantee}`, label: `${r.relation}${r.revoked ? " (REVOKED)" : ""}` } })),
  ];
  const wrap = h("div", { class: "side" });
  main.append(wrap);
  const left = h("div", {});
  wrap.append(left);
  figure(left, {
    title: "People, devices and directed relation edges (grantor → grantee)",
    elements: els,
    // Layered (grantor above grantee, owner above device), each edge routed around the nodes
    // between its ends, so no edge reads as passing through a node it does not join.
    layout: "dagre",
    facts: [...relations.map((r) => `${r.grantor} --${r.relation}--> ${r.grantee}${r.revoked ? " (revoked)" : ""}`), ...devices.map((d) => `${d.owner} owns ${d.id}`)],
    height: 420,
    testid: "devices-graph",
  });
  wrap.append(
    h(
      "aside",
      { "aria-label": "Relations of the schema", "data-testid": "unexercised" },
      h("h3", {}, "Declared relations"),
      h("ul", {}, schema.relations.map((r) => h("li", {}, h("strong", {}, r.name), `: ${r.edges} live edge(s); opens ${r.opens.map((o) => `${o.pattern} (${o.actions.join(", ")})`).join(", ")}${r.includes.length ? `; includes ${r.includes.join(", ")}` : ""}`))),
      h("h3", {}, "Exercised by no edge"),
      schema.unexercised.length ? h("ul", {}, schema.unexercised.map((u) => h("li", {}, u))) : h("p", {}, "none"),
    ),
  );
}
