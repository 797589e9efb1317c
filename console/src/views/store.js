// The store over time: revision, writes per minute and decisions by reason, sampled from
// /metrics while the view is open, beside the store's own summary (GET /v1/stores/{s}). The
// decisions are the instance's (no store label), so only a token reading every store sees them.
import { get, session, storePath } from "../api.js";
import { facts, h } from "../ui.js";

/** Samples kept across re-renders (this tab only): {t, revision, decisions: {reason: n}}. */
const samples = [];
const MAX_SAMPLES = 120;

/** Parses the Prometheus text exposition lines this view needs. */
export function parseMetrics(text, store) {
  let revision;
  let items;
  let loaded;
  let unloaded;
  const decisions = {};
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = line.match(/^([a-z_]+)(?:\{([^}]*)\})?\s+([0-9.eE+-]+)/);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] || "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const v = Number(m[3]);
    if (m[1] === "earshot_store_revision" && labels.store === store) revision = v;
    if (m[1] === "earshot_store_items" && labels.store === store) items = v;
    if (m[1] === "earshot_stores_loaded") loaded = v;
    if (m[1] === "earshot_stores_unloaded") unloaded = v;
    if (m[1] === "earshot_decisions_total") {
      const key = `${labels.kind}: ${labels.reason}`;
      decisions[key] = (decisions[key] || 0) + v;
    }
  }
  // Every store of the instance, readable by this token or not (the tenancy gauges are global).
  const stores = loaded === undefined || unloaded === undefined ? undefined : loaded + unloaded;
  return { revision, items, decisions, stores };
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** Bars with their numbers written on them (a chart, not a layout: plain SVG). */
function bars(title, rows) {
  const width = 640;
  const rowH = 22;
  const max = Math.max(1, ...rows.map(([, v]) => v));
  const s = svg("svg", { viewBox: `0 0 ${width} ${rows.length * rowH + 8}`, role: "img", "aria-label": `${title}: ${rows.map(([k, v]) => `${k} ${v}`).join(", ")}` });
  rows.forEach(([k, v], i) => {
    const y = i * rowH + 4;
    s.append(svg("text", { x: 0, y: y + 14, "font-size": 12 }, k));
    s.append(svg("rect", { x: 260, y, width: Math.max(2, ((width - 330) * v) / max), height: rowH - 6, fill: k.includes("denied") ? "#c0504d" : "#4f81bd" }));
    s.append(svg("text", { x: 265 + ((width - 330) * v) / max, y: y + 14, "font-size": 12 }, String(v)));
  });
  return h("figure", { class: "chart", "data-testid": "decisions-chart" }, h("figcaption", {}, title), s);
}

/** A line of values over time. */
function line(title, pts) {
  const width = 640;
  const height = 140;
  const s = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": `${title}: ${pts.map((p) => p[1].toFixed(1)).join(", ")}` });
  const max = Math.max(1, ...pts.map((p) => p[1]));
  const path = pts.map((p, i) => `${i ? "L" : "M"}${20 + (i * (width - 40)) / Math.max(1, pts.length - 1)},${height - 20 - ((height - 40) * p[1]) / max}`).join(" ");
  s.append(svg("line", { x1: 20, y1: height - 20, x2: width - 20, y2: height - 20, stroke: "#888" }));
  s.append(svg("path", { d: path || "M0,0", fill: "none", stroke: "#1d3fbb", "stroke-width": 2 }));
  s.append(svg("text", { x: 20, y: 14, "font-size": 12 }, `max ${max.toFixed(1)}`));
  return h("figure", { class: "chart", "data-testid": "writes-chart" }, h("figcaption", {}, title), s);
}

export async function storeView(main, _arg, alive) {
  // This view's own timer: a render overtaken by a newer one stops its own sampling only.
  let timer;
  const info = await get(storePath());
  main.append(h("h2", {}, `Store ${info.id}`));
  const summary = h("div", { "data-testid": "store-info" });
  main.append(summary);
  const charts = h("div", { class: "charts" });
  main.append(charts);
  const sample = async () => {
    if (!alive()) {
      clearInterval(timer);
      return;
    }
    const [inf, text, readable] = await Promise.all([get(storePath()), get("/metrics"), get("/v1/stores?limit=1000")]);
    const m = parseMetrics(text, session.store);
    samples.push({ t: Date.now(), store: session.store, revision: inf.revision, decisions: m.decisions });
    if (samples.length > MAX_SAMPLES) samples.shift();
    const mine = samples.filter((s) => s.store === session.store);
    const rates = mine.slice(1).map((s, i) => [s.t, ((s.revision - mine[i].revision) * 60000) / Math.max(1, s.t - mine[i].t)]);
    const last = rates.length ? rates[rates.length - 1][1] : 0;
    summary.replaceChildren(
      facts([
        ["Revision", String(inf.revision)],
        ["Items", String(inf.items)],
        ["Audiences", String(inf.audiences)],
        ["Consistency token", inf.token],
        ["Writes per minute (last sample)", last.toFixed(1)],
        ["Replication", inf.replication ? `${inf.replication.behind_revisions ?? 0} revisions behind` : "single replica"],
        ["Samples", `${mine.length} (every 5 s while this view is open)`],
      ]),
    );
    const rows = Object.entries(m.decisions).sort((a, b) => b[1] - a[1]);
    // /metrics counts decisions for the whole instance (no store label). Shown only to a token
    // that reads every store, so a token limited to some stores never sees figures made in others.
    const readsEvery = !readable.next_cursor && m.stores !== undefined && readable.results.length >= m.stores;
    const decisions = !readsEvery
      ? h("p", { class: "note", "data-testid": "decisions-hidden" }, "Decisions by reason are counted for every store of this instance together (/metrics has no per-store figure): they are shown only to a token that reads every store, and this one does not.")
      : rows.length
        ? bars("Decisions by reason since start (every store of this instance, /metrics)", rows)
        : h("p", {}, "No decisions yet.");
    charts.replaceChildren(line("Writes per minute, sampled from the store's revision", rates), decisions);
  };
  await sample();
  timer = setInterval(() => sample().catch(() => clearInterval(timer)), 5000);
}
